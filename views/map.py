"""The map of the papers (coloured by area, venue or decision, a query's hits numbered on it) and a topic's page
(its papers a page at a time, with its own ratings)."""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import streamlit as st

from search.engine import DEFAULT_MODE, Engine
from search.filters import Filters, sort_named
from search.progress import part_note, with_build_notes
from search.render import COLOUR_WORDS, card, histogram_figure, map_colours, map_figure, plain_markdown
from search.stats import summarise

from .address import go, url_int
from .build import build_status, get_engine
from .cards import share, show_cards
from .query import search_box

TOPIC_PAGE = 25  # cards a topic page shows at once


def topic_view(engine: Engine, index_dir: Path, raw: str, filters: Filters, listed: list[str]) -> None:
    """A topic's papers, a page at a time, under its terms and (where the index has ratings) its own."""
    topic = engine.catalog.topics.get(int(raw)) if raw.strip().isdigit() else None
    if topic is None and {"abstracts", "topics and map"} & set(engine.manifest.pending):
        st.info(f"Topics come with the map, which this index does not have yet. "
                f"{part_note('topics and map', build_status(index_dir))}")
        return
    if topic is None:
        st.error(f"No topic “{plain_markdown(raw)}” in this index; the map and the topic links show "
                 f"the {len(engine.catalog.topics)} topics there are.")
        return
    papers = engine.catalog.topic_papers(topic.id, filters)
    st.subheader(plain_markdown(f"Topic: {topic.label}"))
    filtered = f", {len(papers)} matching the filters" if filters.narrows else ""
    order = ("closest to the topic's centre first" if filters.sort == "relevance"
             else sort_named(filters.sort, [filters.sort]).label)
    st.caption(plain_markdown(f"{topic.size} papers{filtered} · {order} · terms: {', '.join(topic.terms)}"))
    if engine.catalog.has_ratings:
        own = summarise(topic.label, [engine.catalog.paper(pid) for pid in topic.papers])
        if own.rated:

            st.caption(f"{own.orals} orals ({share(own.oral_share)}) · {own.rated} with reviews · mean rating "
                       f"{own.mean:.2f}, median {own.median:.2f}, middle half {own.q1:.2f}–{own.q3:.2f} "
                       f"(the conference: {engine.catalog.rating_summary})")
            venue = engine.fate()  # tallied once per index
            if own.decided:
                st.caption(f"Accepted: {own.acceptance_words()} of this topic's submissions; the venue: "
                           f"{venue.words()}")
            st.plotly_chart(histogram_figure(own.ratings, topic.label), width="stretch", key="topic-hist",
                            config={"displayModeBar": False})
    pages = max(1, -(-len(papers) // TOPIC_PAGE))
    page = min(max(url_int("page", 1), 1), pages)
    shown = papers[(page - 1) * TOPIC_PAGE:page * TOPIC_PAGE]
    first = (page - 1) * TOPIC_PAGE
    show_cards([card(engine, p, listed, rank=first + i, topic=False) for i, p in enumerate(shown, 1)], "t", listed)
    if pages > 1:
        cols = st.columns([1, 2, 1])
        cols[0].button("← Previous", key="topic-prev", disabled=page == 1, on_click=go,
                       kwargs={"topic": str(topic.id), "page": str(page - 1)})
        cols[1].caption(f"Papers {first + 1}–{first + len(shown)} of {len(papers)} · page {page} of {pages}")
        cols[2].button("Next →", key="topic-next", disabled=page == pages, on_click=go,
                       kwargs={"topic": str(topic.id), "page": str(page + 1)})


@st.cache_resource(max_entries=16, show_spinner=False)
def map_of(build_path: str, hits: tuple[str, ...], listed: tuple[str, ...], colour: str, focus: str | None,
           address: str = "{}"):
    """The map's figure for a build, hits, list, colouring, focus and filters (their address as JSON: the
    papers they allow are drawn, thousands of points): a rerun reuses it."""
    engine = get_engine(build_path)
    filters = engine.catalog.known(Filters.from_address(json.loads(address))[0])
    return map_figure(engine.papers, engine.catalog.map_xy, engine.catalog.topics, list(hits), list(listed), colour,
                      focus, engine.catalog.mask(filters))


def map_view(engine: Engine, index_dir: Path, query: str, k: int, mode: str, filters: Filters,
             listed: list[str]) -> None:
    """The map with the search box above it, the colouring, a topic finder and the query's hits beside it."""
    if engine.catalog.map_xy is None:
        if {"abstracts", "topics and map"} & set(engine.manifest.pending):
            st.info(("The map places papers by meaning: it comes once the abstracts are embedded. "
                     if "abstracts" in engine.manifest.pending else "The map is not built yet. ")
                    + part_note("topics and map", build_status(index_dir)))
        else:
            st.error("This index has no map; rebuild it with `python index_build.py`.")
        return
    search_box(engine, query)
    mode = DEFAULT_MODE if mode == "reviews" else mode  # the map places papers by their abstracts
    result = engine.search(query, k, mode, filters, evidence=False) if query.strip() else None
    if result is not None and result.message:
        (st.warning if result.truncated else st.info)(with_build_notes(result, partial(build_status, index_dir)))
    hits = result.hits if result is not None else []
    colours = map_colours(engine.venue_years(), engine.catalog.has_decisions)
    colour = st.query_params.get("color") if st.query_params.get("color") in colours else "area"
    focus = st.query_params.get("focus")
    focus = focus if focus and engine.catalog.paper(focus) is not None else None
    left, right = st.columns([3, 1])
    with right:
        st.radio("Colour by", colours, index=colours.index(colour), horizontal=True,
                 key="colour_w", format_func=COLOUR_WORDS.get,
                 on_change=lambda: go(view="map", **({"q": query} if query else {}),
                                      **({"color": st.session_state["colour_w"]}
                                         if st.session_state["colour_w"] != "area" else {})))
        labels = {f"{t.label} ({t.size})": t.id for t in sorted(engine.catalog.topics.values(), key=lambda t: t.label)}
        st.selectbox("Find a topic", list(labels), index=None, placeholder="type to search the topics",
                     key="topic_pick", on_change=lambda: go(topic=str(labels[st.session_state["topic_pick"]])))
        if hits:
            st.markdown(f"**Your query's {len(hits)} hits**, numbered on the map. Pick one to ring it:")
            for h in hits:
                st.button(f"{h.rank}. {h.paper.title[:80]}", key=f"hit-{h.paper.id}", width="stretch",
                          type="primary" if h.paper.id == focus else "tertiary",
                          on_click=go, kwargs=map_state(query, colour, h.paper.id))
            if focus:
                st.button("Open the ringed paper →", key="open-focus", on_click=go, kwargs={"paper": focus},
                          type="primary")
    with left:
        shown = engine.catalog.count(filters)
        st.caption(f"{shown:,} papers" + (f" (of {len(engine.papers):,}: those the filters allow)"
                                          if shown < len(engine.papers) else "") + f", coloured by {COLOUR_WORDS[colour]}. "
                   "Hover for the title, click a point to open the paper."
                   + (f" Your query's {len(hits)} hits are the numbered red points." if hits else "")
                   + (" Stars: your reading list." if listed else ""))
        map_chart(str(engine.data.path), tuple(h.paper.id for h in hits), tuple(listed), colour, focus,
                  json.dumps(filters.to_address(), sort_keys=True))


def map_state(query: str, colour: str, focus: str) -> dict:
    """The map's address with this paper ringed."""
    return {"view": "map", **({"q": query} if query else {}), **({"color": colour} if colour != "area" else {}),
            "focus": focus}


@st.fragment
def map_chart(build_path: str, hits: tuple[str, ...], listed: tuple[str, ...], colour: str,
              focus: str | None, address: str = "{}") -> None:
    """The map alone reruns on a click (a fragment); only a click on a paper reruns the whole page, once."""
    engine = get_engine(build_path)
    event = st.plotly_chart(map_of(build_path, hits, listed, colour, focus, address), on_select="rerun",
                            selection_mode="points", key="map", width="stretch", config={"displayModeBar": False})
    points = event.selection.points if event else []
    data = next((pt["customdata"] for pt in points if pt.get("customdata")), None)
    chosen = str(data[0] if isinstance(data, list) else data) if data else None
    if chosen and engine.catalog.paper(chosen) is not None:
        go(paper=chosen)
        st.rerun(scope="app")
