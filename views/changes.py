"""What changed since the previous fetch: the panel above the search examples, and the changes view that
lists each kind."""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from search.engine import Engine
from search.filters import Filters, sort_named
from search.render import card, plain_markdown, plain_title

from .address import go
from .cards import short, show_cards


# each kind of change: the `changed` filter's value, its words for one and for several, the list's sort
CHANGE_KINDS = (("new", "new submission", "new submissions", "relevance"),
                ("up", "rating moved up", "ratings moved up", "improved"),
                ("down", "rating moved down", "ratings moved down", "dropped"),
                ("decision", "decision changed", "decisions changed", "rating"),
                ("withdrawn", "withdrawn", "withdrawn", "rating"),
                ("reviews", "with new reviews", "with new reviews", "rating"))


def changes_panel(engine: Engine, full: bool = False) -> None:
    """What changed since the previous fetch, each kind a link to its list (nothing on an index no fetch
    built); with one fetch, the moves made since the reviews were first posted."""
    if not engine.manifest.history:
        if full:
            st.info("This index has no fetch history: it holds no fetched venue (seed lists only). Fetch a "
                    "conference; each re-fetch then shows here what changed.")
        return
    c = engine.changes()
    if c.first_posted and not engine.catalog.facts.has("moves"):
        # one build of records that date no review's versions (venue lists): nothing has moved, nor can yet
        if full:
            st.info("This index's records carry no rating history yet (venue lists give each paper's ratings as "
                    "they stand): a later build from newer records shows here what changed.")
        return
    counts = {"new": len(c.new), "up": len(c.up), "down": len(c.down), "decision": len(c.decisions),
              "withdrawn": len(c.withdrawn), "reviews": len(c.new_reviews)}
    with st.container(border=True):
        if c.first_posted:
            st.markdown(f"**One fetch so far** ({c.until[:10]}): the next re-fetch shows what changed. Meanwhile, "
                        f"ratings moved since the reviews were first posted: **{len(c.moved):,} papers**.")
        else:
            since, until = (c.since[:10], c.until[:10]) if c.since[:10] != c.until[:10] else \
                (c.since[:16].replace("T", " "), c.until[:16].replace("T", " ") + " UTC")
            st.markdown(f"**What changed** since the fetch of {since} (latest {until})"
                        + ("" if not c.empty else ": nothing."))
        kinds = [(kind, one if counts[kind] == 1 else many, sort) for kind, one, many, sort in CHANGE_KINDS
                 if counts[kind]]
        cols = st.columns(3)  # three a row: five in one cut their words short
        for i, (kind, label, sort) in enumerate(kinds):
            cols[i % 3].button(f"{counts[kind]:,} {label}", key=f"changes-{kind}", on_click=go, width="stretch",
                       kwargs={"view": "changes", "changed": kind, "sort": sort, "decision": "all"})
        if full:
            return
        moves = [("▲", m) for m in c.up[:3]] + [("▼", m) for m in c.down[:3]]
        if moves:
            st.markdown("\n".join(f"- {arrow} {m['from']:.2f} → {m['to']:.2f} · "
                                   f"[{plain_markdown(short(plain_title(m['title']), 80))}](?paper={m['id']})"
                                   for arrow, m in moves))


def changes_view(engine: Engine, filters: Filters, listed: list[str]) -> None:
    """The papers that changed in the ways the filters name, every submission unless the address narrows it."""
    st.subheader("What changed")
    changes_panel(engine, full=True)
    if not engine.manifest.history:
        return
    if not filters.changed and filters.min_move is None:
        st.caption("Choose a kind of change above, or in the sidebar.")
        return
    if "decision" not in st.query_params:  # the panel counts every submission: so does its list
        filters = replace(filters, decisions=("all",))
    papers = engine.catalog.browse(filters)
    st.caption(f"{len(papers):,} papers · {sort_named(filters.sort, [filters.sort]).label if filters.sort != 'relevance' else 'in the order of the records'}"
               + (f" · the first {LIST_MAX}" if len(papers) > LIST_MAX else ""))
    show_cards([card(engine, p, listed, rank=i) for i, p in enumerate(papers[:LIST_MAX], 1)], "c", listed)


LIST_MAX = 100  # cards a list of changes shows
