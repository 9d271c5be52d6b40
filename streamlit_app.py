"""The page: layout only. Every decision about papers and ranking lives in search/."""
from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import quote

import streamlit as st

from search import background
from search.engine import (DEFAULT_MODE, EXAMPLE_QUERIES, MAX_QUERY_CHARS, MODES, Engine, IndexLoadError,
                           Result, UnknownPaper, load_query_model, open_engine)
from search.filters import FILTERS, Filters, address_key, fold, sort_named
from search.progress import meaning_note, part_note, searchable_now, status_text, still_coming, with_build_notes
from search.render import (COLOUR_WORDS, FORMATS, Card, box_figure, card, cards_html, decision_figure, export,
                           fared_figure, fields_html, histogram_figure, map_colours, map_figure, plain_markdown,
                           plain_title, rating_figure, result_cards, review_folds, review_table, similar_card,
                           where_figure)
from search.uploads import UploadError, texts_from_upload

INDEX_DIR = Path(os.environ.get("SEARCH_INDEX") or "index")
SEED_DIR = Path(__file__).parent / "seeds"
# conference files (e.g. from `python -m search fetch`) that the page builds in the background, seeds
# served meanwhile: `make app DATA=FILE` sets this (several files separated by os.pathsep)
DATA = [Path(p) for p in os.environ.get("SEARCH_DATA", "").split(os.pathsep) if p.strip()]
DATA_DIR = Path(__file__).parent / "data"   # where `python -m search fetch` writes by default
K_CHOICES = [5, 10, 20, 50]
MODE_HELP = {"hybrid": "meaning and words together", "semantic": "meaning only", "keyword": "exact words (BM25)",
             "reviews": "what the reviews say (their words)"}
BY_WORDS_RANKING = "keyword (by words, until the abstracts are embedded)"  # a list's words, never a mode
FARED_K = 50  # neighbours of the "how papers like this fared" and "where work like this appears" panels

# the map and the statistics want the whole width; reading a list of cards is easier in a column
st.set_page_config(page_title="Paper search · ICLR 2026", page_icon=":material/search:",
                   layout="wide" if st.query_params.get("view") in ("map", "stats") else "centered")


@st.cache_resource(show_spinner="Loading the model…")
def get_model(name: str):
    """The sentence-transformers model, for an index built without its ONNX export (loaded once a server)."""
    return load_query_model(name)


@st.cache_resource(show_spinner="Loading the index…", max_entries=2)
def get_engine(build_path: str) -> Engine:
    """One engine per published build: a rebuild publishes a new path, so the next run picks it up.

    Queries are encoded by the ONNX export the build shipped (no torch import); an index without
    one falls back to the sentence-transformers model."""
    engine = open_engine(Path(build_path), fallback=get_model)
    # Streamlit runs a full garbage collection after every script run; over the engine's long-lived
    # objects that took 86 ms a rerun at 4,302 papers (benchmarks/bench_page.py), holding the GIL while
    # the results wait to be sent. Frozen objects are left out of it (and still freed by reference counting).
    gc.freeze()
    return engine


@st.cache_resource(show_spinner=False, max_entries=16)
def per_build(build_path: str, name: str, _make):
    """What a view computes from a build's papers alone, made once a build and shared by every session (the
    statistics' groups and charts: 0.7 s of CPU a rerun at 19,632 papers, benchmarks/results/start.md)."""
    return _make()


def once(engine: Engine, name: str, make):
    return per_build(str(engine.data.path), name, make)


@st.cache_resource(show_spinner=False, max_entries=8)
def start_build(out: str, steps: tuple[tuple[str, ...], ...], target: str) -> bool:
    """Start the background build of these steps once per server and target inputs (the digest of
    their bytes: a file changed after a failed build is built again); the job's lock covers other servers."""
    return background.start(Path(out), [[Path(p) for p in step] for step in steps])


@st.fragment(run_every=1.5)
def build_panel(serving: str | None, count: int = 0, pending: tuple[str, ...] = (), left: int = 0) -> None:
    """The background build's progress; when it has published a new index the whole page reruns on it."""
    status = background.status(INDEX_DIR)
    current = background.serving(INDEX_DIR)
    if (str(current) if current else None) != serving or not background.busy(INDEX_DIR):
        st.rerun(scope="app")
    if serving is None:
        st.info("No index yet: building one from the 66 seed abstracts (about a minute on two cores); "
                "the page opens as soon as it is ready." + (" The whole conference follows in the background."
                                                            if DATA else ""))
    elif "abstracts" in pending:  # the words stage, and the abstracts published as they come
        st.info(searchable_now(count, list(pending), left, status))
    elif pending:  # an earlier stage of the build running now
        st.info(f"Searchable now by meaning and words: {count:,} papers. Still coming: "
                f"{still_coming(list(pending), status)}. The page adds each as it lands.")
    else:
        st.info("Building the whole conference in the background; you are searching the "
                f"{count:,} papers already indexed meanwhile. "
                "The page switches over by itself when the build is done.")
    if status.get("replaced"):
        st.caption(status["replaced"][0].upper() + status["replaced"][1:] + ".")
    fill, words = status_text(status)
    st.progress(fill, text=words)


def fetch_conference(inputs: list[str] | None = None) -> None:
    # $OPENREVIEW_API_BASEURL_V2, as for the CLI's fetch; a re-fetch into the file the index was built from
    background.fetch_conference(INDEX_DIR, SEED_DIR, DATA_DIR, inputs=[Path(p) for p in inputs] if inputs else None)


def fetch_offer(engine: Engine) -> None:
    """One click downloads the conference from OpenReview and builds it meanwhile: on the seeds alone, and again
    (a re-fetch) on the index of the fetched venue, also while its build runs (the new fetch's build replaces it)."""
    seeds_only = not DATA and engine.manifest.inputs_digest == background.digest([SEED_DIR])
    fetched = background.refetchable(engine.manifest.inputs)
    # a file of SEARCH_DATA's own, or none: the page would build SEARCH_DATA again over the re-fetch's index
    again = fetched is not None and (not DATA or fetched.resolve() in [p.resolve() for p in DATA])
    if not (seeds_only or again):
        return
    # the fetched file last: the fetch writes the last input of the build
    inputs = None if seeds_only else [p for p in engine.manifest.inputs if Path(p) != fetched] + [str(fetched)]
    status = background.status(INDEX_DIR)
    if status.get("state") == "failed" and str(status.get("target", "")).startswith("fetch:"):
        st.error(f"The download stopped: {status.get('message', 'unknown error')}")
    elif status.get("fetch_failed") and background.busy(INDEX_DIR):
        st.warning(f"The download stopped ({status['fetch_failed']}); the build goes on with the data fetched "
                   "before.")
    fetching = background.fetching(INDEX_DIR)
    if seeds_only:
        st.markdown(f"These are the {len(engine.papers)} seed papers. The whole conference is a click away:")
    st.button("Get all of ICLR 2026 from OpenReview" if seeds_only else "Fetch ICLR 2026 again from OpenReview",
              icon=":material/download:", on_click=fetch_conference, args=(inputs,), disabled=fetching,
              key="fetch-conference",
              help="Downloads every submission with its reviews and decision (python -m search fetch), "
                   "then builds their index in the background; you keep searching meanwhile.")
    if fetching:
        st.caption("Downloading now; the build follows.")
    elif background.build_running(INDEX_DIR):
        st.caption("A build of this index is running: fetching again replaces it with a build of the new data, "
                   "which takes every vector it embedded from the cache. This index is served until the new one "
                   "is published.")


def engine_or_stop() -> Engine:
    """The engine of the published index; starts (once) the background build of what is missing."""
    steps, unreadable = background.planned(INDEX_DIR, SEED_DIR, DATA)
    if unreadable:
        st.error(f"Cannot build from SEARCH_DATA: {unreadable}")
    problem = background.failed(INDEX_DIR, steps)
    if problem:
        st.error(f"The background build stopped: {problem}. Fix the input and restart the page; "
                 "the index it serves stays as it was.")
    elif steps:
        start_build(str(INDEX_DIR), tuple(tuple(str(p) for p in step) for step in steps),
                    background.digest(steps[-1]))
    building = not problem and background.busy(INDEX_DIR)
    if not INDEX_DIR.exists():
        if building or steps and not problem:
            build_panel(None)
        st.stop()
    try:
        engine = get_engine(str(background.serving(INDEX_DIR)))
    except IndexLoadError as e:
        st.error(str(e))
        st.stop()
    if building:
        build_panel(str(engine.data.path), len(engine.papers), tuple(engine.manifest.pending),
                    engine.manifest.unembedded or 0)
    elif engine.manifest.pending and background.build_running(INDEX_DIR):
        st.caption(f"Another process (`python index_build.py`) is building this index. Still coming: "
                   f"{still_coming(engine.manifest.pending, build_status())}; everything else works, and your next search "
                   "takes each part as it lands.")
    elif engine.manifest.pending:
        st.caption(f"This index's build stopped before {still_coming(engine.manifest.pending)}; everything else "
                   "works. `python index_build.py` (or restarting the page) finishes it from the cache.")
    return engine


def build_status() -> dict | None:
    """The running build's status (the page's job or `index_build.py`), None when none runs: a stopped
    build's time left would be a promise nobody keeps."""
    return background.status(INDEX_DIR) if background.build_running(INDEX_DIR) else None


# ---------------------------------------------------------------- URL state

KEEP = ("k", "mode", "list")  # what survives moving between views, with every filter's keys (filters.address_key)


def kept(key: str) -> bool:
    return key in KEEP or address_key(key)


def go(**params: str) -> None:
    """Move to a new URL state (a browser history entry), keeping the settings and filters."""
    kept_now = {key: st.query_params.get_all(key) for key in st.query_params.keys()
                if kept(key) and st.query_params.get_all(key)}
    st.query_params.from_dict({**kept_now, **params})


def url_setting(name: str, default, parse: Callable[[str], object], allowed: str, ignored: list[str]):
    """A setting from the URL; a value that does not parse is named in `ignored` and the default used."""
    raw = st.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return parse(raw)
    except ValueError:
        ignored.append(f"{name}={raw[:40]} (use {allowed})")
        return default


def one_of(choices) -> Callable[[str], object]:
    def parse(raw: str):
        for c in choices:
            if str(c) == raw.strip():
                return c
        raise ValueError(raw)
    return parse


def reading_list(engine: Engine) -> list[str]:
    """The ids in ?list=, valid ones only; unknown ones are named once above the page."""
    raw = st.query_params.get("list", "")
    known, unknown = engine.catalog.listed(raw)
    if unknown:
        st.warning("Not in this index, left out of the reading list: "
                   + plain_markdown(", ".join(unknown[:10]) + (" …" if len(unknown) > 10 else "")))
    return known


def set_list(ids: list[str]) -> None:
    if ids:
        st.query_params["list"] = ",".join(ids)
    elif "list" in st.query_params:
        del st.query_params["list"]


def toggle_list(pid: str, ids: list[str]) -> None:
    set_list([i for i in ids if i != pid] if pid in ids else [*ids, pid])


def set_param(key: str, widget_key: str) -> None:
    value = st.session_state[widget_key]
    if value is None or value == "" or value is False:  # an unticked box is no filter: nothing in the address
        st.query_params.pop(key, None)
    elif value is True:
        st.query_params[key] = "1"
    elif isinstance(value, list):
        st.query_params[key] = value
    else:
        st.query_params[key] = f"{value:g}" if isinstance(value, float) else str(value)


# ---------------------------------------------------------------- pieces

# One element for a whole list of cards: drawn as Streamlit elements, ten cards were ~120 elements and
# most of a query's time in the browser (benchmarks/results/page.md). Its buttons send back
# {"kind", "id"}; `on_card_action` acts on them before the rerun draws the page.
ASSETS = Path(__file__).parent / "assets"
CARDS = st.components.v2.component("paper_search_cards", css=(ASSETS / "cards.css").read_text(encoding="utf-8"),
                                   js=(ASSETS / "cards.js").read_text(encoding="utf-8"), isolate_styles=False)


def show_cards(cards: list[Card], key: str, listed: list[str]) -> None:
    if cards:
        CARDS(data={"html": cards_html(cards)}, key=f"cards-{key}",
              on_action_change=partial(on_card_action, f"cards-{key}", listed))


def on_card_action(key: str, listed: list[str]) -> None:
    action = st.session_state[key].get("action") or {}
    kind, target = action.get("kind"), str(action.get("id", ""))
    if kind == "similar":
        go(paper=target)
    elif kind == "topic":
        go(topic=target)
    elif kind == "author":
        go(author=target)
    elif kind == "list":
        toggle_list(target, listed)


# ---------------------------------------------------------------- views

QUERY_HELP = ("A question, a topic, a method's name, or a whole pasted abstract. The model reads the first "
              "256 tokens (about 200 words); the page says so when it cuts a longer text.")


def submit_query() -> None:
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


def show_hits(engine: Engine, result: Result, key: str, listed: list[str], note: str = "") -> None:
    message = with_build_notes(result, build_status)
    if message:
        (st.warning if result.truncated else st.info)(message)
    order = result.order[:1].upper() + result.order[1:]
    note = " · ".join(x for x in (order, note) if x)
    if result.hits and note:
        st.caption(note)
    show_cards(result_cards(engine, result, listed), key, listed)


def fared_panel(engine: Engine, query: str = "", pid: str = "", texts: list[str] = (), key: str = "") -> None:
    """How the nearest submissions fared, beside the area and the venue: a chart with its numbers in words."""
    if not engine.catalog.has_decisions:
        return
    if not engine.has_vector(pid or None):
        st.caption("How submissions like this fared comes once the abstracts are embedded (it compares "
                   f"meanings). {meaning_note(build_status())}")
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
    from search.stats import active_note, undecided_note

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


def undecided_left_out(result, query: str) -> None:
    """The undecided matches an accepted-only list leaves out, one click away."""
    if not result.left_out:
        return
    cols = st.columns([3, 1])
    cols[0].info(result.left_out)
    cols[1].button(f"Show the {result.undecided} undecided", key="undecided-matches", on_click=go,
                   kwargs={"decision": "undecided", "q": query})


def upload_box(engine: Engine, k: int, filters: Filters, listed: list[str]) -> None:
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
        show_hits(engine, engine.like_texts(texts, k, filters), "u", listed)
        fared_panel(engine, texts=texts, key="u")
        where_panel(engine, texts=texts, key="u")


def search_view(engine: Engine, query: str, k: int, mode: str, filters: Filters, listed: list[str]) -> None:
    from search.stats import scope_words, submissions

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
        upload_box(engine, k, filters, listed)
        fetch_offer(engine)
        return
    decision_note(engine, filters, query)
    if mode == "reviews":
        result = engine.search_reviews(query, k, filters)
        show_hits(engine, result, "q", listed, f"papers whose reviews say this, of {engine.catalog.count(filters):,} · "
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
    show_hits(engine, result, "q", listed, note)
    if engine.manifest.history:
        st.button("Save this search", icon=":material/bookmark_add:", key="save-search", on_click=save_search,
                  args=(query, mode, filters), help="Kept beside the index: after each re-fetch the sidebar says "
                  "which papers newly match it or moved")
        if "saved_said" in st.session_state:
            st.caption(st.session_state.pop("saved_said"))
    if result.hits:
        fared_panel(engine, query=query, key="q")
        where_panel(engine, query=query, key="q")


def paper_view(engine: Engine, pid: str, k: int, filters: Filters, listed: list[str]) -> None:
    paper = engine.catalog.paper(pid)
    if paper is None:
        st.error(f"No paper with id “{plain_markdown(pid)}” in this index. It may come from another index; "
                 "search for it instead.")
        return
    ids = f"id {paper.id}" + (f" (also {', '.join(paper.aliases)})" if paper.aliases else "")
    show_cards([card(engine, paper, listed, more=(ids,), similar=False, abstract_open=True)], "v", listed)
    reviews_section(engine, paper.id)
    history_section(engine, paper.id)
    fared_panel(engine, pid=paper.id, key="p")
    where_panel(engine, pid=paper.id, key="p")
    st.subheader("Most similar papers")
    try:
        result = engine.similar([paper.id], k, filters)
    except UnknownPaper as e:
        st.error(str(e))
        return
    message = with_build_notes(result, build_status)
    if message:
        st.info(message)
    if result.order:
        st.caption(result.order[:1].upper() + result.order[1:])
    show_cards([similar_card(engine, paper, h, listed, result.score_name) for h in result.hits], "p", listed)


def author_link(name: str) -> str:
    return f"[{plain_markdown(name)}](?author={quote(name)})"


def author_view(engine: Engine, name: str) -> None:
    """An author's papers by venue and year, with co-authors and the affiliations their papers give; nothing
    where the records name no one (an anonymous record is on nobody's page)."""
    if not engine.catalog.has_authors:
        st.info("This index has no authors' names: OpenReview hides a submission's authors until it makes them "
                "public, and the seed lists name none. Paper Copilot's lists and fetches made after the decisions "
                "do.")
        return
    found = engine.author(name)
    if found is None:
        like = engine.authors_like(name, 10)
        st.warning(f"No author named “{plain_markdown(name)}” in this index."
                   + (" Authors whose names contain it: " + ", ".join(map(author_link, like)) if like else ""))
        return
    n = len(found.papers)
    st.subheader(plain_markdown(found.name))
    st.caption(f"{n:,} paper{'s' if n != 1 else ''} in this index, by venue and year"
               + (" · affiliations as their papers give them: " + plain_markdown("; ".join(
                   f"{a} ({c})" for a, c in found.affiliations)) if found.affiliations else ""))
    for place, papers in found.by_place():
        st.markdown(f"#### {plain_markdown(place)}")
        lines = []
        for p in papers:
            others = [a for a in p.authors if fold(a) != fold(found.name)]
            lines.append(f"- [{plain_markdown(plain_title(p.title))}](?paper={quote(p.id)})"
                         + (f" · {plain_markdown(p.decision)}" if p.decision else "")
                         + (" · with " + ", ".join(map(author_link, others)) if others else ""))
        st.markdown("\n".join(lines))
    if found.coauthors:
        st.markdown("#### Co-authors")
        st.markdown(", ".join(f"{author_link(a)} ({c})" for a, c in found.coauthors[:60])
                    + (f" and {len(found.coauthors) - 60} more" if len(found.coauthors) > 60 else ""))


def reviews_section(engine: Engine, pid: str) -> None:
    """The decision, the meta-review, a table of every review's scores and each review's texts, folded."""
    record = engine.review_record(pid)
    if not record["reviews"] and not record.get("meta_review"):
        return
    decision = record["decision"] or "no decision known"
    said = f" ({record['decision_text']})" if record.get("decision_text") else ""
    st.subheader(f"Reviews · {decision}")
    if said or record.get("meta_review"):
        with st.container(border=True):
            st.markdown(f"**Decision**: {plain_markdown(decision + said)}")
            if record.get("meta_review"):  # drawn as the cards are: st.html's sanitizer deletes MathML
                CARDS(data={"html": fields_html(record["meta_review"].items(), "b")}, key="cards-review-meta")
    elif record["reviews"]:
        st.caption("No meta-review is public for this paper.")
    rows = review_table(record["reviews"])
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch")
    for i, (head, texts) in enumerate(review_folds(record["reviews"])):
        with st.expander(head):
            CARDS(data={"html": texts}, key=f"cards-review-{i}")


def history_section(engine: Engine, pid: str) -> None:
    """A paper's ratings over time: each review as posted and edited, each fetch; the mean as a small chart."""
    points = engine.rating_history(pid)
    if not engine.manifest.history or not points:
        return
    st.subheader("Rating history")
    if len({p.mean for p in points}) < 2 and len(points) < 2:
        st.caption("No move yet: " + ("one fetch so far, and no review of this paper was edited after it was "
                                      "posted." if engine.manifest.history.fetches == 1 else
                                      "its ratings are the same in every fetch."))
        return
    st.plotly_chart(rating_figure(points), width="stretch", key="rating-history", config={"displayModeBar": False})
    reviewers = list(dict.fromkeys(r for p in points for r in p.ratings))
    words = {"posted": "posted", "edited": "edited", "fetch": "fetched"}
    same_day = len({p.at[:10] for p in points}) < len(points)  # two points of one day need their times
    rows = [{"when": f"{p.at[:16 if same_day else 10].replace('T', ' ')} ({words[p.source]})", "mean": round(p.mean, 2),
             **{r: f"{p.ratings[r]:g}" if r in p.ratings else "" for r in reviewers}} for p in points]
    st.dataframe(rows, hide_index=True, width="stretch")
    st.caption("Each review's rating as it was posted and after each edit (OpenReview keeps a review's versions), "
               "and as each fetch found it; the mean is of the reviews posted by then.")


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
    st.subheader("What changed")
    changes_panel(engine, full=True)
    if not engine.manifest.history:
        return
    if not filters.changed and filters.min_move is None:
        st.caption("Choose a kind of change above, or in the sidebar.")
        return
    if "decision" not in st.query_params:  # the panel counts every submission: so does its list
        from dataclasses import replace

        filters = replace(filters, decisions=("all",))
    papers = engine.catalog.browse(filters)
    st.caption(f"{len(papers):,} papers · {sort_named(filters.sort, [filters.sort]).label if filters.sort != 'relevance' else 'in the order of the records'}"
               + (f" · the first {LIST_MAX}" if len(papers) > LIST_MAX else ""))
    show_cards([card(engine, p, listed, rank=i) for i, p in enumerate(papers[:LIST_MAX], 1)], "c", listed)


LIST_MAX = 100  # cards a list of changes shows


def saved_path() -> Path:
    from search.saved import saved_file

    return saved_file(INDEX_DIR)


def save_search(query: str, mode: str, filters: Filters) -> None:
    from search.saved import SavedError, add

    try:
        add(saved_path(), query, mode, filters)
        st.session_state["saved_said"] = f"Saved “{query}”: the sidebar lists what is new for it after each re-fetch."
    except (SavedError, OSError) as e:
        st.session_state["saved_said"] = f"Not saved: {e}"


def saved_sidebar(engine: Engine) -> None:
    """The saved searches, each with what is new for it since the previous fetch, a link to its address."""
    from search.saved import SavedError, load

    try:
        searches = load(saved_path())
    except SavedError as e:
        st.warning(str(e))
        return
    if not searches:
        return
    st.subheader("Saved searches")
    for i, s in enumerate(searches):  # each a link to its own address: its query, ranking and filters
        if s.problem:  # named and skipped; its Remove below still works
            st.caption(plain_markdown(s.skipped()))
        else:
            st.markdown(f"[{plain_markdown(short(saved_news(str(engine.data.path), s.link(), s), 110))}]({s.link()})")
        st.button("Remove", key=f"unsave-{i}", type="tertiary", icon=":material/close:", on_click=unsave, args=(s,),
                  help="Remove this saved search")


@st.cache_data(show_spinner=False, max_entries=64)
def saved_news(build_path: str, link: str, _s) -> str:
    """A saved search's news in words, once per build: a search of 50 papers per saved search on every rerun
    would sit on each click's path, and the news change only when a build lands. The link is the search's key."""
    from search.saved import news

    return news(get_engine(build_path), _s).words()


def unsave(s) -> None:
    from search.saved import SavedError, forget

    try:
        forget(saved_path(), s)
    except (SavedError, OSError) as e:
        st.session_state["saved_said"] = f"Not removed: {e}"


TOPIC_PAGE = 25  # cards a topic page shows at once


def topic_view(engine: Engine, raw: str, filters: Filters, listed: list[str]) -> None:
    from search.stats import summarise

    topic = engine.catalog.topics.get(int(raw)) if raw.strip().isdigit() else None
    if topic is None and {"abstracts", "topics and map"} & set(engine.manifest.pending):
        st.info(f"Topics come with the map, which this index does not have yet. "
                f"{part_note('topics and map', build_status())}")
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


def url_int(name: str, default: int) -> int:
    try:
        return int(st.query_params.get(name, default))
    except ValueError:
        return default


@st.cache_resource(max_entries=16, show_spinner=False)
def map_of(build_path: str, hits: tuple[str, ...], listed: tuple[str, ...], colour: str, focus: str | None,
           address: str = "{}"):
    """The map's figure for a build, hits, list, colouring, focus and filters (their address as JSON: the
    papers they allow are drawn, thousands of points): a rerun reuses it."""
    engine = get_engine(build_path)
    filters = engine.catalog.known(Filters.from_address(json.loads(address))[0])
    return map_figure(engine.papers, engine.catalog.map_xy, engine.catalog.topics, list(hits), list(listed), colour,
                      focus, engine.catalog.mask(filters))


def map_view(engine: Engine, query: str, k: int, mode: str, filters: Filters, listed: list[str]) -> None:
    if engine.catalog.map_xy is None:
        if {"abstracts", "topics and map"} & set(engine.manifest.pending):
            st.info(("The map places papers by meaning: it comes once the abstracts are embedded. "
                     if "abstracts" in engine.manifest.pending else "The map is not built yet. ")
                    + part_note("topics and map", build_status()))
        else:
            st.error("This index has no map; rebuild it with `python index_build.py`.")
        return
    search_box(engine, query)
    mode = DEFAULT_MODE if mode == "reviews" else mode  # the map places papers by their abstracts
    result = engine.search(query, k, mode, filters, evidence=False) if query.strip() else None
    if result is not None and result.message:
        (st.warning if result.truncated else st.info)(with_build_notes(result, build_status))
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


def list_view(engine: Engine, k: int, filters: Filters, listed: list[str]) -> None:
    st.subheader(f"Reading list ({len(listed)})")
    if not listed:
        st.info("Your reading list is empty. Add papers with “+ Reading list” on any result; the list lives "
                "in this page's address, so bookmark or share it.")
        return
    papers = engine.catalog.in_order(listed, filters.sort)
    labels = engine.catalog.topic_labels(papers)
    cols = st.columns(len(FORMATS))
    for col, fmt, (name, mime) in zip(cols, FORMATS, (("reading-list.bib", "application/x-bibtex"),
                                                      ("reading-list.csv", "text/csv"),
                                                      ("reading-list.md", "text/markdown"))):
        col.download_button(f"Download {fmt.upper() if fmt != 'bibtex' else 'BibTeX'}",
                            export(papers, fmt, labels), file_name=name, mime=mime, key=f"dl-{fmt}")
    show_cards([card(engine, p, listed, rank=i) for i, p in enumerate(papers, 1)], "l", listed)
    st.subheader("More like my list")
    try:
        result = engine.similar(listed, k, filters)
    except UnknownPaper as e:
        st.error(str(e))
        return
    show_hits(engine, result, "m", listed, "closest to all of them together (a linear SVM trained on this list)"
              if len(listed) > 1 else "")


def stats_table(engine: Engine, rows, rated: bool) -> str:
    """A Markdown table of group summaries (screen readers read it; the chart shows the same), the
    best-rated paper of each as a link to it. Without ratings (the seeds) it counts papers only."""
    def fmt(v: float | None) -> str:
        return f"{v:.2f}" if v is not None else "–"

    if not rated:
        out = ["| | papers |", "|---|---|"]
        for r in rows:
            name = plain_markdown(r.name) if r.id is None else f"[{plain_markdown(r.name)}](?topic={r.id})"
            out.append(f"| {name} | {r.papers:,} |")
        return "\n".join(out)
    decided = any(r.decisions or r.listed_only for r in rows)
    out = ["| | papers | orals | " + ("accepted (of decided) | " if decided else "") +
           "mean rating | median | middle half | best rated (mean rating) |",
           "|---|---|---|" + ("---|" if decided else "") + "---|---|---|---|"]
    for r in rows:
        best = ""
        if r.best:
            best = "; ".join(f"[{plain_markdown(short(plain_title(p.title), 48))}](?paper={p.id}) "
                             f"({p.avg_rating:.2f})" for p in map(engine.catalog.paper, r.best))
        name = plain_markdown(r.name) if r.id is None else f"[{plain_markdown(r.name)}](?topic={r.id})"
        accepted = r.acceptance_words() + " | " if decided else ""
        out.append(f"| {name} | {r.papers:,} | {share(r.oral_share)} | {accepted}"
                   f"{fmt(r.mean)} | {fmt(r.median)} | {fmt(r.q1)}–{fmt(r.q3)} | {best} |")
    return "\n".join(out)


def share(value: float | None) -> str:
    """A share as a percentage, or "–" where it is not known."""
    return "–" if value is None else f"{value:.0%}"


def short(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"


SHOWN_GROUPS = 20  # rows of a long statistics table until the reader asks for all


def stats_view(engine: Engine) -> None:
    from search.stats import groups as stats_groups, papers_words, submissions

    groups = once(engine, "stats groups", lambda: dict(stats_groups(engine.papers, engine.catalog.topics)))
    whole = groups["all"][0]
    rated = whole.rated > 0
    st.subheader("The conference at a glance")
    if rated:
        st.caption(f"{papers_words(submissions(engine.papers), whole.papers)}, {whole.orals:,} orals "
                   f"({share(whole.oral_share)}); {whole.rated:,} "
                   f"with public reviews, mean rating {whole.mean:.2f} (median {whole.median:.2f}). Each box spans "
                   "the middle half of its papers' mean ratings, the line inside is the median.")
    else:
        st.caption(f"{whole.papers:,} papers. This index holds no review ratings (the seed lists have none): "
                   "the figures below count papers. The conference fetched from OpenReview "
                   "(`python -m search fetch`) brings ratings, decisions and their charts.")
    if whole.decisions:
        decisions_panel(engine, whole)
    sections = [("venue", "venue and year", "By venue and year"), ("area", "primary area", "By primary area"),
                ("affiliation", "affiliation", "By affiliation (the 20 with most papers)"), ("topic", "topic", "By topic")]
    for key, axis, heading in sections:
        if not groups.get(key):
            continue
        st.markdown(f"#### {heading}")
        rows = groups[key]
        if len(rows) > SHOWN_GROUPS + 5 and not st.toggle(f"All {len(rows):,} ({axis}s)", key=f"all-{key}"):
            # a long table is most of the view's time in the browser: the tables of 140 topics took 0.6 s of
            # 2.4 s (benchmarks/results/start.md)
            largest = set(sorted(range(len(rows)), key=lambda i: -rows[i].papers)[:SHOWN_GROUPS])
            rows = [r for i, r in enumerate(rows) if i in largest]
            st.caption(f"The {SHOWN_GROUPS} with most papers of {len(groups[key]):,}.")
        shown = f"{key} {len(rows)}"
        if rated:
            st.plotly_chart(once(engine, f"stats {shown}", lambda: box_figure(rows, axis)), width="stretch",
                            config={"displayModeBar": False}, key=f"stats-{key}")
        st.markdown(once(engine, f"stats table {shown}", lambda: stats_table(engine, rows, rated)))


def decisions_panel(engine: Engine, whole) -> None:
    """Mean ratings by decision, and the papers reviewers disagreed on most."""
    from search.filters import MIN_DECIDED
    from search.stats import CONTROVERSIAL, RATED_GROUPS, controversial, ratings_by_decision, undecided_note

    st.markdown("#### By decision")
    counts = ", ".join(f"{n:,} {g}" for g, n in whole.decisions.items())
    rated = once(engine, "ratings by decision", lambda: ratings_by_decision(engine.papers))
    named = [RATED_GROUPS[g] for g in rated]
    st.caption(f"{counts}; accepted: {whole.acceptance_words()}. No rate is shown from fewer than {MIN_DECIDED} "
               f"decided papers. Mean review ratings by decision ({', '.join(named)}):")
    said = undecided_note(engine.catalog.undecided)
    if said:
        st.info(said + " Their areas' rates wait for those decisions.")
    st.plotly_chart(once(engine, "decision figure", lambda: decision_figure(rated)), width="stretch",
                    key="stats-decision", config={"displayModeBar": False})
    cols = st.columns(2)
    for col, (fate, papers) in zip(cols, once(engine, "controversial", lambda: controversial(engine.papers)).items()):
        col.markdown(f"**Most controversial {CONTROVERSIAL[fate]}** (widest spread of ratings)")
        col.markdown("\n".join(f"- [{plain_markdown(short(plain_title(p.title), 60))}](?paper={p.id}) "
                               f"({' '.join(f'{x:g}' for x in p.ratings)})" for p in papers) or "none")


def nav(engine: Engine, view: str, listed: list[str]) -> None:
    cols = st.columns(4 if engine.catalog.has_ratings else 3)
    cols[0].button("Search", icon=":material/search:", key="nav-search", on_click=go, width="stretch",
                   type="primary" if view == "search" else "secondary")
    if engine.catalog.map_xy is not None:
        q = st.query_params.get("q", "")
        cols[1].button("Map", icon=":material/map:", key="nav-map", on_click=go, kwargs={"view": "map", **({"q": q} if q else {})},
                       width="stretch", type="primary" if view == "map" else "secondary")
    cols[2].button(f"Reading list ({len(listed)})", icon=":material/bookmarks:", key="nav-list", on_click=go, kwargs={"view": "list"},
                   width="stretch", type="primary" if view == "list" else "secondary")
    if engine.catalog.has_ratings:
        cols[3].button("Statistics", icon=":material/bar_chart:", key="nav-stats", on_click=go,
                       kwargs={"view": "stats"}, width="stretch", type="primary" if view == "stats" else "secondary")


def page_modes(engine: Engine) -> tuple[str, ...]:
    """The rankings this index offers: search within reviews where it holds them, or where its build has it still
    to come (the list then says when: progress.with_build_notes)."""
    coming = "review search" in engine.manifest.pending
    return (*MODES, "reviews") if engine.reviews and (engine.reviews.searchable or coming) else MODES


def synced(key: str, value) -> None:
    """A widget keeps its own state across reruns, but the address is the truth: a button that moves to
    another address ("Search every submission") or the browser's Back left the sidebar saying what the list
    was no longer. Each widget's state is set from the address before it is drawn (and drawn with no
    default of its own, which Streamlit would otherwise warn about)."""
    if key not in st.session_state or st.session_state[key] != value:
        st.session_state[key] = value


def filter_widget(f, w, value, facts) -> None:
    """One filter's widget as its declaration says (filters.Widget), its state set from the address first."""
    wkey = f"{f.key}_w"
    if w.kind in ("choices", "choice"):
        options = f.options(value, facts)
        if len(options) < 2 and not (w.kind == "choices" and value):
            return
        if w.kind == "choices":
            synced(wkey, list(value))
            st.multiselect(w.label, options, key=wkey, on_change=set_param, args=(f.key, wkey), help=w.help or None,
                           format_func=f.label)
        else:  # one choice, which may join several of the address's values ("accepted,withdrawn")
            synced(wkey, (",".join(value) if isinstance(value, tuple) else value) or options[0])
            st.selectbox(w.label, options, key=wkey, on_change=set_param, args=(f.key, wkey), help=w.help or None,
                         format_func=f.label)
    elif w.kind == "text":
        synced(wkey, (value or ("",))[0])
        st.text_input(w.label, key=wkey, on_change=set_param, args=(f.key, wkey), placeholder=w.placeholder,
                      help=w.help or None)
    elif w.kind == "number":
        synced(wkey, value)
        st.number_input(w.label, min_value=0.0, max_value=10.0, step=w.step, value=None, key=wkey,
                        on_change=set_param, args=(f.key, wkey), placeholder=w.placeholder, help=w.help or None)
    elif w.kind == "numbers":
        given = dict(value)
        for name in f.options(value, facts):
            key, nkey = f"{f.key}{name}", f"{f.key}{name}_w"
            synced(nkey, given.get(name))
            st.number_input(w.label.format(name=name), min_value=0.0, max_value=10.0, step=w.step, value=None,
                            key=nkey, on_change=set_param, args=(key, nkey), placeholder=w.placeholder,
                            help=w.help.format(name=name) or None)
    elif w.kind == "flag":
        synced(wkey, bool(value))
        st.checkbox(w.label, key=wkey, on_change=set_param, args=(f.key, wkey), help=w.help or None)
    else:
        raise ValueError(f"{f.key}: no widget of kind {w.kind!r}")


def sidebar(engine: Engine, k: int, mode: str, filters: Filters) -> None:
    catalog = engine.catalog
    with st.sidebar:
        modes = page_modes(engine)
        synced("mode_w", mode)
        st.radio("Ranking", modes, key="mode_w", on_change=set_param,
                 args=("mode", "mode_w"), format_func=lambda m: f"{m} — {MODE_HELP[m]}")
        for f in FILTERS:  # each filter's widget, where the index has what it needs (filters.FILTERS)
            if (w := f.widget_for(catalog.facts)) is not None:
                filter_widget(f, w, getattr(filters, f.field), catalog.facts)
        if not catalog.has_authors and catalog.has_decisions:
            st.caption("No author filter: these records name no authors (OpenReview keeps a venue's authors "
                       "hidden until it makes them public, for accepted papers after the decisions).")
        if engine.manifest.history:
            saved_sidebar(engine)
        synced("k_w", k)
        st.selectbox("Results", K_CHOICES, key="k_w", on_change=set_param, args=("k", "k_w"))
        m = engine.manifest
        st.caption(f"{m.count:,} papers · model {m.model.name.split('/')[-1]} · built {m.built_at}")


def main() -> None:
    st.title("Paper search")
    engine = engine_or_stop()
    ignored: list[str] = []
    k = url_setting("k", 10, one_of(K_CHOICES), ", ".join(map(str, K_CHOICES)), ignored)
    modes = page_modes(engine)
    mode = url_setting("mode", DEFAULT_MODE, one_of(modes), ", ".join(modes), ignored)
    asked, bad = Filters.from_address({key: st.query_params.get_all(key) for key in st.query_params.keys()
                                       if kept(key)})
    filters = engine.catalog.known(asked)
    ignored += bad + [what if what.endswith(")") else f"{what} (not in this index)" for what in filters.unknown]
    if ignored:
        st.warning("Ignored in the address: " + plain_markdown("; ".join(ignored)) + ". The defaults apply.")
    sidebar(engine, k, mode, filters)
    listed = reading_list(engine)
    pid, topic = st.query_params.get("paper"), st.query_params.get("topic")
    view = st.query_params.get("view", "")
    query = st.query_params.get("q", "")
    author = st.query_params.get("author") if not (view or query) else None
    nav(engine, view if view in ("map", "list", "stats") else "search", listed)
    if pid is not None:
        paper_view(engine, pid, k, filters, listed)
    elif author is not None and len(st.query_params.get_all("author")) == 1:
        author_view(engine, author)
    elif topic is not None:
        topic_view(engine, topic, filters, listed)
    elif view == "map":
        map_view(engine, query, k, mode, filters, listed)
    elif view == "list":
        list_view(engine, k, filters, listed)
    elif view == "stats":
        stats_view(engine)
    elif view == "changes":
        changes_view(engine, filters, listed)
    else:
        search_view(engine, query, k, mode, filters, listed)


# Streamlit runs this file as __main__. A multiprocessing worker started later in the same process
# (the build's embedding pool) would run it again as __mp_main__, and must not start the page there.
if __name__ == "__main__":
    main()
