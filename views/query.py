"""The search view: the query box, its hits, the panels on how work like this fared and where it appears,
the notes on which submissions the list holds, and the box that finds papers like uploaded ones. The hits and
the panels serve the paper view and the reading list too."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import streamlit as st

from search.engine import EXAMPLE_QUERIES, MAX_QUERY_CHARS, Engine, Result
from search.filters import Filters
from search.progress import meaning_note, with_build_notes
from search.render import fared_figure, plain_markdown, result_cards, where_figure
from search.stats import active_note, scope_words, submissions, undecided_note
from search.uploads import UploadError, texts_from_upload

from .address import go
from .build import Setup, build_status, fetch_offer
from .cards import show_cards
from .changes import changes_panel
from .sidebar import save_search

BY_WORDS_RANKING = "keyword (by words, until the abstracts are embedded)"  # a list's words, never a mode
FARED_K = 50  # neighbours of the "how papers like this fared" and "where work like this appears" panels

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


def show_hits(engine: Engine, index_dir: Path, result: Result, key: str, listed: list[str],
              note: str = "") -> None:
    """A result's cards under its notes: what the build still owes it, its order and `note`."""
    message = with_build_notes(result, partial(build_status, index_dir))
    if message:
        (st.warning if result.truncated else st.info)(message)
    order = result.order[:1].upper() + result.order[1:]
    note = " · ".join(x for x in (order, note) if x)
    if result.hits and note:
        st.caption(note)
    show_cards(result_cards(engine, result, listed), key, listed)


def fared_panel(engine: Engine, index_dir: Path, query: str = "", pid: str = "", texts: list[str] = (),
                key: str = "") -> None:
    """How the nearest submissions fared, beside the area and the venue: a chart with its numbers in words."""
    if not engine.catalog.has_decisions:
        return
    if not engine.has_vector(pid or None):
        st.caption("How submissions like this fared comes once the abstracts are embedded (it compares "
                   f"meanings). {meaning_note(build_status(index_dir))}")
        return
    # computed only once opened (the expander reruns the page then): a query pays nothing for it
    with st.expander(f"How submissions like this fared (the {FARED_K} nearest, every decision)",
                     key=f"fared-open-{key}", on_change="rerun"):
        if not st.session_state.get(f"fared-open-{key}"):
            return
        fared = engine.fared(query=query, pid=pid, texts=texts, k=FARED_K)
        st.plotly_chart(fared_figure(fared), width="stretch", key=f"fared-{key}", config={"displayModeBar": False})
        st.markdown("\n".join(f"- **{plain_markdown(name)}**: {plain_markdown(fate.words())}"
                               for name, fate in fared.rows()))
        st.caption("This describes how similar submissions fared; it does not predict a decision. Left out of "
                   "its own neighbours, a submission's neighbours' accepted share tells accepted from rejected "
                   "ones little better than its area's rate (benchmarks/results/fared.md).")


def where_panel(engine: Engine, query: str = "", pid: str = "", texts: list[str] = (), key: str = "") -> None:
    """Where work like this appears: the venues and years of the nearest papers, and how they fared where a
    venue-year's record holds its rejections. Only on an index of more than one venue-year."""
    if len(engine.venue_years()) < 2 or not engine.has_vector(pid or None):
        return
    with st.expander(f"Where work like this appears (the {FARED_K} nearest papers' venues and years)",
                     key=f"where-open-{key}", on_change="rerun"):
        if not st.session_state.get(f"where-open-{key}"):
            return
        fared = engine.fared(query=query, pid=pid, texts=texts, k=FARED_K)
        st.plotly_chart(where_figure(fared.places), width="stretch", key=f"where-{key}",
                        config={"displayModeBar": False})
        st.markdown("\n".join(f"- {plain_markdown(x.words())}" for x in fared.places))
        st.caption("This describes where similar papers appear and, where a venue's record holds its rejections, "
                   "how they fared there; it does not predict where a paper would be accepted. A list of accepted "
                   "papers only gives no rate: it does not name the papers it left out.")


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


def upload_box(engine: Engine, index_dir: Path, k: int, filters: Filters, listed: list[str]) -> None:
    """Papers like uploaded ones: abstracts one a line, or a BibTeX file's."""
    with st.expander("Papers like these: upload a .txt (one abstract per line) or a .bib"):
        upload = st.file_uploader("Abstracts or BibTeX", type=["txt", "bib"], key="upload")
        if upload is None:
            return
        try:
            texts = texts_from_upload(upload.name, upload.getvalue())
        except UploadError as e:
            st.error(str(e))
            return
        st.caption(f"{len(texts)} text(s) read from {plain_markdown(upload.name)}")
        show_hits(engine, index_dir, engine.like_texts(texts, k, filters), "u", listed)
        fared_panel(engine, index_dir, texts=texts, key="u")
        where_panel(engine, texts=texts, key="u")


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
