"""The search view: the query box, its hits (hits.py) with the panels on how work like this fared and where it
appears, the notes on which submissions the list holds, and the box that finds papers like uploaded ones
(uploads.py)."""
from __future__ import annotations

import streamlit as st

from search.engine import EXAMPLE_QUERIES, MAX_QUERY_CHARS, Engine, Result
from search.filters import Filters
from search.stats import active_note, scope_words, submissions, undecided_note

from .address import go
from .build import Setup, fetch_offer
from .changes import changes_panel
from .hits import fared_panel, show_hits, where_panel
from .sidebar import save_search
from .uploads import upload_box

BY_WORDS_RANKING = "keyword (by words, until the abstracts are embedded)"  # a list's words, never a mode

QUERY_HELP = ("A question, a topic, a method's name, or a whole pasted abstract. The model reads the first "
              "256 tokens (about 200 words); the page says so when it cuts a longer text.")


def submit_query() -> None:
    """The box's text into the address (cut to what the model reads), on the map where it was sent from."""
    text = st.session_state["query_box"].strip()
    if len(text) > MAX_QUERY_CHARS:  # the model reads 256 tokens anyway; the address stays a sane size
        text = text[:MAX_QUERY_CHARS]
        st.session_state["cut_query"] = True
    on_map = {"view": "map"} if st.query_params.get("view") == "map" else {}
    if text:
        go(q=text, **on_map)
    else:
        go(**on_map)


def search_box(engine: Engine, query: str) -> None:
    # the box follows the URL (examples, Back), and keeps its identity across reruns
    if st.session_state.get("query_from_url") != query:
        st.session_state["query_box"] = query
        st.session_state["query_from_url"] = query
    with st.form("search", border=False):
        label = ("Search papers by words (by meaning once the abstracts are embedded)" if not engine.has_vector()
                 else "Search papers by meaning")
        st.text_area(label, key="query_box", height=68, help=QUERY_HELP,
                     placeholder="e.g. how can a language model read longer documents? (any language)"
                     if engine.multilingual else "e.g. how can a language model read longer documents? "
                     "Or paste an abstract.")
        st.form_submit_button("Find papers", type="primary", on_click=submit_query)


def decision_note(engine: Engine, filters: Filters, query: str) -> None:
    """On an index with decisions, which submissions the list holds, and one click to all of them."""
    catalog = engine.catalog
    if not catalog.has_decisions:
        return
    again = {"q": query} if query else {}
    if filters.decisions == ("accepted",):
        cols = st.columns([3, 1])
        cols[0].caption("Searching the accepted papers. Related work often sits among the rejected and withdrawn "
                        "submissions" + (", and some have no decision yet." if catalog.undecided else "."))
        cols[1].button("Search every submission", key="all-decisions", on_click=go,
                       kwargs={"decision": "all", **again})
    elif filters.decisions == ("active",):
        st.caption(active_note(catalog.decisions))
    if catalog.undecided and filters.decisions == ("accepted",) and not query:
        st.caption(undecided_note(catalog.undecided))


def undecided_left_out(result: Result, query: str) -> None:
    """The undecided matches an accepted-only list leaves out, one click away."""
    if not result.left_out:
        return
    cols = st.columns([3, 1])
    cols[0].info(result.left_out)
    cols[1].button(f"Show the {result.undecided} undecided", key="undecided-matches", on_click=go,
                   kwargs={"decision": "undecided", "q": query})


def search_view(engine: Engine, setup: Setup, query: str, k: int, mode: str, filters: Filters,
                listed: list[str]) -> None:
    """The query's hits; with no query, the examples, the upload box and the offer to fetch the conference."""
    search_box(engine, query)
    if st.session_state.pop("cut_query", False):
        st.warning(f"Your text was longer than {MAX_QUERY_CHARS:,} characters; only its first "
                   f"{MAX_QUERY_CHARS:,} were kept (the model reads about 200 words of them).")
    if not query.strip():
        scope = scope_words(engine.catalog.count(filters), filters.decisions, submissions(engine.papers),
                            len(engine.papers))
        changes_panel(engine)  # after a re-fetch, what changed comes first
        st.markdown(f"Search {scope} by what they are about, in your own words, or by the name of a method. "
                    "Try one of these:")
        cols = st.columns(2)
        for i, example in enumerate(EXAMPLE_QUERIES):
            cols[i % 2].button(example, key=f"ex-{i}", on_click=go, kwargs={"q": example},
                               width="stretch")
        decision_note(engine, filters, query)
        upload_box(engine, setup.index_dir, k, filters, listed)
        fetch_offer(engine, setup)
        return
    decision_note(engine, filters, query)
    if mode == "reviews":
        result = engine.search_reviews(query, k, filters)
        show_hits(engine, setup.index_dir, result, "q", listed,
                  f"papers whose reviews say this, of {engine.catalog.count(filters):,} · "
                  "each with the review paragraph that matched")
        return
    result = engine.search(query, k, mode, filters)
    scope = f"{engine.catalog.count(filters):,} papers" + (" matching the filters" if filters.narrows else "")
    across = " · searched across languages" if result.space == "multilingual" else ""
    # words for the ranking, kept apart from `mode` (the data a saved search keeps: it ranks by meaning once
    # the abstracts are embedded)
    ranking = BY_WORDS_RANKING if result.by_words else mode
    if result.order:  # a sort keeps what answers the query, then re-orders it: show_hits says both
        note = f"found by {ranking} ranking among {scope}{across}"
    else:
        note = f"{len(result.hits)} best of {scope} · {ranking} ranking{across}"
    undecided_left_out(result, query)
    show_hits(engine, setup.index_dir, result, "q", listed, note)
    if engine.manifest.history:
        st.button("Save this search", icon=":material/bookmark_add:", key="save-search", on_click=save_search,
                  args=(setup.index_dir, query, mode, filters),
                  help="Kept beside the index: after each re-fetch the sidebar says which papers newly match it or moved")
        if "saved_said" in st.session_state:
            st.caption(st.session_state.pop("saved_said"))
    if result.hits:
        fared_panel(engine, setup.index_dir, query=query, key="q")
        where_panel(engine, query=query, key="q")
