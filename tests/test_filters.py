"""Filters: one typed object from the address or the flags, checked in one place."""
import pytest

from search.filters import FilterError, Filters, decisions_of, default_decisions


def test_values_are_cleaned_and_checked_once():
    f = Filters(areas=(" optimization ", "", "optimization"), authors=("LeCun",), min_rating=6, sort="rating")
    assert f.areas == ("optimization",) and f.narrows
    assert not Filters(sort="oral").narrows  # a sort alone leaves no paper out
    with pytest.raises(FilterError, match="unknown sort 'Stars!'"):
        Filters(sort="Stars!")
    # a word may name a sub-score of the reviews: the index says whether it has one
    assert Filters(sort="stars").known([], []).sort == "relevance"
    assert Filters(sort="stars").known([], []).unknown == ("sort 'stars'",)
    assert Filters(sort="soundness").known([], [], sub_scores=["soundness"]).sort == "soundness"
    with pytest.raises(FilterError, match="from 0 to 10"):
        Filters(min_rating=11)


def test_the_address_gives_filters_and_names_what_it_ignored():
    f, ignored = Filters.from_address({"area": ["optimization", "robotics"], "author": ["  Müller "],
                                        "sort": ["Stars!"], "min_rating": ["eleven"], "decision": ["maybe,all"],
                                        "min_soundness": ["many"], "min_presentation": ["2.5"]})
    assert f == Filters(areas=("optimization", "robotics"), authors=("Müller",), decisions=("all",),
                        min_scores=(("presentation", 2.5),))
    assert ignored == ["sort=Stars! (use relevance, rating, oral, controversy, reviews or a sub-score)",
                       "decision=maybe (use accepted, rejected, withdrawn, undecided, oral, spotlight, poster, active, all)",
                       "min_soundness=many (use a score from 0 to 10)",
                       "min_rating=eleven (use a rating from 0 to 10)"]
    assert Filters.from_address({"min_rating": ["6.5"], "sort": ["oral"]}) == (Filters(min_rating=6.5, sort="oral"), [])


def test_decisions_default_to_accepted_where_an_index_has_them():
    decided = ["Poster", "Rejected", "Under review", "Withdrawn"]
    assert Filters().known([], [], decided).decisions == ("accepted",)
    assert Filters(decisions=("all",)).known([], [], decided).decisions == ("all",)


def test_in_the_review_season_the_default_is_every_submission_not_withdrawn():
    """Between reviews and decisions every submission is under review: an accepted-only default was empty."""
    season = ["Under review", "Withdrawn"]
    assert Filters().known([], [], season).decisions == ("active",)
    assert decisions_of(("active",)) == {"Oral", "Spotlight", "Poster", "Accepted", "Rejected", "Desk rejected",
                                         "Under review"}
    assert Filters(decisions=("withdrawn",)).known([], [], season).decisions == ("withdrawn",)
    assert default_decisions([]) == () and default_decisions(["Oral", "Under review"]) == ("accepted",)


def test_an_author_filter_on_an_index_without_authors_is_named_not_applied():
    f = Filters(authors=("LeCun",)).known([], [], has_authors=False)
    assert f.authors == () and f.unknown == ("author 'LeCun' (this index has no authors' names)",)
    assert Filters(authors=("LeCun",)).known([], []).authors == ("LeCun",)
    assert not Filters(decisions=("all",)).narrows and Filters(decisions=("Rejected",)).narrows
    dropped = Filters(decisions=("rejected",), min_scores=(("soundness", 3),)).known([], [])
    assert dropped.decisions == () and dropped.min_scores == ()
    assert dropped.unknown == ("decision 'rejected'", "sub-score 'soundness'")
    with pytest.raises(FilterError, match="unknown decision 'maybe'"):
        Filters(decisions=("maybe",))


def test_values_an_index_lacks_are_dropped_and_named():
    f = Filters(areas=("optimization", "astrology"), venues=("ICLR 2026 Oral",)).known(["optimization"], [])
    assert f.areas == ("optimization",) and f.venues == ()
    assert f.unknown == ("area 'astrology'", "venue 'ICLR 2026 Oral'")


def test_a_minimum_rating_on_an_index_without_ratings_is_named_not_applied():
    f = Filters(min_rating=6).known([], [], has_ratings=False)
    assert f.min_rating is None and f.unknown == ("min_rating=6 (this index has no review ratings)",)
    assert Filters(min_rating=6).known([], []).min_rating == 6
