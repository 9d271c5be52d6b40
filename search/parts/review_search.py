"""Search within reviews declared as a later part of the index (`PART`): BM25 over the reviews' text fields,
built after the abstracts. The reviews themselves are the words stage's (reviews.write, loaded with the papers);
building, writing and reading their search is reviews.py's. Kept apart from reviews.py so that the build, which
writes the reviews in its words stage, imports no module that declares a later part."""
from __future__ import annotations

from dataclasses import dataclass

from .part import Context, Part, announce
from .reviews import FIELDS, SEARCH_DIR, SearchPart, build_search, carried, key_of, write_search


@dataclass
class State:
    """What the review search stage holds in one build."""
    search: SearchPart | None = None


def _compute(ctx: Context, state: State) -> None:
    announce(ctx.progress, "review search")
    state.search = build_search(ctx.papers)


PART = Part(
    "review search", enabled=lambda o, r: o.review_search and r, costs=lambda o: {"review search": 9.0},
    compute=_compute, write=lambda ctx, state, build_dir: write_search(build_dir, state.search, ctx.entries["reviews"]),
    state=State, files=(FIELDS, SEARCH_DIR + "/"), key=lambda ctx, state: [key_of(ctx)], rows=False,
    carry=lambda ctx, entry: carried(ctx.entries["reviews"], entry), entry="reviews")
