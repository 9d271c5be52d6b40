"""Filters: one typed object from the address or the flags, checked in one place."""
import pytest

from search.filters import FilterError, Filters


def test_values_are_cleaned_and_checked_once():
    f = Filters(areas=(" optimization ", "", "optimization"), authors=("LeCun",), min_rating=6, sort="rating")
    assert f.areas == ("optimization",) and f.narrows
    assert not Filters(sort="oral").narrows  # a sort alone leaves no paper out
    with pytest.raises(FilterError, match="unknown sort 'stars'"):
        Filters(sort="stars")
    with pytest.raises(FilterError, match="from 0 to 10"):
        Filters(min_rating=11)


def test_the_address_gives_filters_and_names_what_it_ignored():
    f, ignored = Filters.from_address({"area": ["optimization", "robotics"], "author": ["  Müller "],
                                        "sort": ["stars"], "min_rating": ["eleven"]})
    assert f == Filters(areas=("optimization", "robotics"), authors=("Müller",))
    assert ignored == ["sort=stars (use relevance, rating, oral)", "min_rating=eleven (use a rating from 0 to 10)"]
    assert Filters.from_address({"min_rating": ["6.5"], "sort": ["oral"]}) == (Filters(min_rating=6.5, sort="oral"), [])


def test_values_an_index_lacks_are_dropped_and_named():
    f = Filters(areas=("optimization", "astrology"), venues=("ICLR 2026 Oral",)).known(["optimization"], [])
    assert f.areas == ("optimization",) and f.venues == ()
    assert f.unknown == ("area 'astrology'", "venue 'ICLR 2026 Oral'")
