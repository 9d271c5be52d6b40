"""Filters: one typed object from the address or the flags, checked in one place."""
import pytest

from search.filters import SORTS, FilterError, Filters, decisions_of, default_decisions


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
    assert ignored == ["decision=maybe (use accepted, rejected, withdrawn, undecided, oral, spotlight, poster, active, all)",
                       f"sort=Stars! (use {', '.join(SORTS)} or a sub-score)",
                       "min_rating=eleven (use a rating from 0 to 10)",
                       "min_soundness=many (use a score from 0 to 10)"]  # in FILTERS' order
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
                                         "Workshop track", "Under review"}
    assert Filters(decisions=("withdrawn",)).known([], [], season).decisions == ("withdrawn",)
    assert default_decisions([]) == () and default_decisions(["Oral", "Under review"]) == ("accepted",)


def test_an_author_filter_on_an_index_without_authors_is_named_not_applied():
    f = Filters(authors=("LeCun",)).known([], [], has_authors=False)
    assert f.authors == () and f.unknown == ("author 'LeCun' (this index has no authors' names)",)
    assert Filters(authors=("LeCun",)).known([], []).authors == ("LeCun",)
    assert not Filters(decisions=("all",)).narrows and Filters(decisions=("Rejected",)).narrows
    dropped = Filters(decisions=("rejected",), min_scores=(("soundness", 3),)).known([], [])
    assert dropped.decisions == () and dropped.min_scores == ()
    assert dropped.unknown == ("decision 'rejected' (this index holds no decisions)", "sub-score 'soundness'")
    with pytest.raises(FilterError, match="unknown decision 'maybe'"):
        Filters(decisions=("maybe",))


def test_values_an_index_lacks_are_dropped_and_named():
    f = Filters(areas=("optimization", "astrology"), venues=("ICLR 2026 Oral",)).known(["optimization"], [])
    assert f.areas == ("optimization",) and f.venues == ()
    assert f.unknown == ("area 'astrology'", "venue 'ICLR 2026 Oral' (this index names no venues)")


def test_a_minimum_rating_on_an_index_without_ratings_is_named_not_applied():
    f = Filters(min_rating=6).known([], [], has_ratings=False)
    assert f.min_rating is None and f.unknown == ("min_rating=6 (this index has no review ratings)",)
    assert Filters(min_rating=6).known([], []).min_rating == 6


def test_every_filter_is_declared_once_and_written_back_as_it_was_read():
    from dataclasses import fields

    from search.filters import FILTERS, address_key

    assert [f.field for f in FILTERS] == sorted({f.field for f in FILTERS}, key=[f.field for f in FILTERS].index)
    assert {f.field for f in FILTERS} == {f.name for f in fields(Filters)} - {"unknown"}
    full = Filters(areas=("optimization", "robotics"), venues=("ICLR 2026 Oral",), authors=("Müller",),
                   min_rating=6.5, sort="soundness", decisions=("accepted", "undecided"),
                   min_scores=(("presentation", 2.5), ("soundness", 3.0)))
    address = full.to_address()
    assert Filters.from_address(address) == (full, [])
    assert all(address_key(k) for k in address) and not address_key("q") and not address_key("paper")
    assert Filters().to_address() == {} and Filters.from_address({}) == (Filters(), [])


def test_a_filter_is_applied_from_its_declaration_to_the_index_columns():
    import numpy as np

    from search.catalog import Catalog
    from search.corpus import Paper

    papers = [Paper(id=f"p{i}", title=f"t{i}", title_derived=False, abstract="a", text="a", primary_area=area,
                    decision=decision,
                    avg_rating=rating, ratings=[rating] if rating is not None else [], authors=authors,
                    sub_scores={"soundness": score} if score is not None else {})
              for i, (area, decision, rating, authors, score) in enumerate([
                  ("optimization", "Poster", 6.0, ["Yann LeCun"], 3.0),
                  ("robotics", "Rejected", 4.0, ["Ana Müller"], 2.0),
                  ("optimization", "Under review", None, [], None)])]
    catalog = Catalog(papers)
    mask = lambda **kw: catalog.mask(catalog.known(Filters(**kw)))  # noqa: E731
    assert mask(decisions=("all",)) is None
    assert mask().tolist() == [True, False, False]  # the default: the accepted papers
    assert mask(areas=("optimization",), decisions=("all",)).tolist() == [True, False, True]
    assert mask(authors=("muller",), decisions=("all",)).tolist() == [False, True, False]
    assert mask(min_rating=5, decisions=("all",)).tolist() == [True, False, False]
    assert mask(min_scores=(("soundness", 2.5),), decisions=("active",)).tolist() == [True, False, False]
    assert np.array_equal(mask(decisions=("rejected", "undecided")), [False, True, True])


def test_the_change_filters_hide_where_no_rating_can_have_moved():
    """One build of venue lists is a history of one fetch whose papers date no review: "changed since first
    posted" and "rating moved by at least" would only ever find nothing, so neither is offered."""
    from dataclasses import replace as with_

    from search.catalog import Catalog
    from search.corpus import Paper
    from search.filters import Changed, MinMove

    listed = [Paper(id=f"p{i}", abstract="a", text="a", title="t", title_derived=False, avg_rating=6.0)
              for i in range(3)]
    for papers, shown in ((listed, False), ([with_(listed[0], rating_from=5.0), *listed[1:]], True)):
        facts = Catalog(papers, fetches=1).facts
        assert (Changed().widget_for(facts) is not None) is shown and (MinMove().widget_for(facts) is not None) is shown
    assert Changed().widget_for(Catalog(listed, fetches=2).facts) is not None   # two fetches: new papers, decisions
    assert Filters(min_move=0.5).fitted(Catalog(listed, fetches=1).facts).min_move is None


def test_ratings_on_different_scales_are_named_where_a_sort_or_a_minimum_compares_them():
    """CoRL 2024 rates 1 to 4 and COLM 1 to 10: a list sorted by rating across both puts every CoRL paper last,
    and a minimum of 5 leaves them all out. The list says so, naming the venues by their scales."""
    from types import SimpleNamespace

    from search.catalog import Catalog
    from search.corpus import Paper
    from search.engine import Engine

    def paper(i: int, conference: str, year: int, ratings: list[float]) -> Paper:
        return Paper(id=f"p{i}", abstract="a", text="a", title="t", title_derived=False, conference=conference,
                     year=year, ratings=ratings, avg_rating=sum(ratings) / len(ratings))

    papers = [paper(0, "CoRL", 2024, [3, 4]), paper(1, "COLM", 2024, [6, 8]), paper(2, "COLM", 2025, [5, 7]),
              paper(3, "COLM", 2024, [9, 10])]
    catalog = Catalog(papers)
    assert catalog.mixed_scales() == ["COLM 2024 up to 10", "COLM 2025 up to 10", "CoRL 2024 up to 4"]
    assert catalog.mixed_scales([1, 2, 3]) == []   # one scale among these rows: nothing to say
    assert catalog.scales_said() == "up to 10: COLM 2024, COLM 2025; up to 4: CoRL 2024"   # the statistics' words
    engine = SimpleNamespace(catalog=catalog)
    said = Engine._mixed_scales(engine, Filters(), "rating", [0, 1, 2])
    assert said.words.startswith("These papers' venues rate on different scales (up to 10: COLM 2024, COLM 2025; "
                                 "up to 4: CoRL 2024)")
    assert Engine._mixed_scales(engine, Filters(), "relevance", [0, 1]) is None   # relevance compares no rating
    assert Engine._mixed_scales(engine, Filters(), "cited", [0, 1]) is None
    assert Engine._mixed_scales(engine, Filters(min_rating=5.0), "relevance", []) is not None  # the minimum's rows
