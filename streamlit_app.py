"""The page: layout only. Every decision about papers and ranking lives in search/."""
from __future__ import annotations

import os
import time
from pathlib import Path

import streamlit as st

from search.build import build_index
from search.corpus import CorpusError, Paper
from search.embed import DEFAULT_MODEL, load_model, model_fingerprint
from search.engine import DEFAULT_MODE, EXAMPLE_QUERIES, MODES, Engine, Hit, Result, UnknownPaper
from search.index import BuildBusy, IndexLoadError, load_index, resolve
from search.lexical import marker
from search.text import plain_markdown, to_markdown

INDEX_DIR = Path(os.environ.get("SEARCH_INDEX") or "index")
SEED_DIR = Path(__file__).parent / "seeds"
K_CHOICES = [5, 10, 20, 50]
MODE_HELP = {"hybrid": "meaning and words together", "semantic": "meaning only", "keyword": "exact words (BM25)"}

st.set_page_config(page_title="Paper search · ICLR 2026", page_icon="🔎", layout="centered")


@st.cache_resource(show_spinner="Loading the model…")
def get_model(name: str):
    model = load_model(name)
    return model, model_fingerprint(model)


@st.cache_resource(show_spinner="Loading the index…", max_entries=2)
def get_engine(build_path: str) -> Engine:
    """One engine per published build: a rebuild publishes a new path, so the next run picks it up."""
    data = load_index(Path(build_path))
    model, fingerprint = get_model(data.manifest["model"]["name"])
    return Engine(data, model, fingerprint)


def first_build() -> None:
    """No index yet: build one from the shipped seeds, with a visible progress bar."""
    st.info(f"No index at `{INDEX_DIR}` yet: building it from the seed abstracts once.")
    bar = st.progress(0.0, text="Embedding abstracts…")
    model, _ = get_model(DEFAULT_MODEL)
    build_index([SEED_DIR], INDEX_DIR, model=model,
                progress=lambda done, total: bar.progress(done / total, text=f"Embedding {done}/{total}"))
    bar.empty()


def engine_or_stop() -> Engine:
    if not INDEX_DIR.exists():
        try:
            first_build()
        except BuildBusy:
            st.info("The index is being built in another session; this page reloads when it is ready.")
            time.sleep(2)
            st.rerun()
        except CorpusError as e:
            st.error(f"Cannot build the index from the seeds: {e}")
            st.stop()
    try:
        return get_engine(str(resolve(INDEX_DIR)))
    except IndexLoadError as e:
        st.error(str(e))
        st.stop()


# ---------------------------------------------------------------- URL state

KEEP = ("k", "mode", "area", "venue")  # settings that survive moving between views


def go(**params: str) -> None:
    """Move to a new URL state (a browser history entry), keeping the settings."""
    kept = {key: st.query_params.get_all(key) for key in KEEP if st.query_params.get_all(key)}
    st.query_params.from_dict({**kept, **params})


def top_k() -> int:
    try:
        k = int(st.query_params.get("k", 10))
    except ValueError:
        k = 10
    return k if k in K_CHOICES else 10


def set_param(key: str, widget_key: str) -> None:
    value = st.session_state[widget_key]
    if isinstance(value, list):
        st.query_params[key] = value
    else:
        st.query_params[key] = str(value)


# ---------------------------------------------------------------- pieces

def meta_line(p: Paper, score: float | None = None) -> str:
    bits = []
    if p.venue:
        bits.append(p.venue.replace("ICLR 2026 ", "") if p.venue.startswith("ICLR 2026") else p.venue)
    if p.primary_area:
        bits.append(p.primary_area)
    if score is not None:
        bits.append(f"similarity {score:.3f}")
    if p.title_derived:
        bits.append("title derived from the abstract")
    bits.append("from " + "; ".join(p.sources))
    return plain_markdown(" · ".join(bits))


def paper_header(p: Paper, score: float | None = None, rank: int | None = None) -> None:
    prefix = f"{rank}. " if rank else ""
    st.markdown(f"##### {plain_markdown(prefix + p.title)}")
    st.caption(meta_line(p, score))
    if p.keywords:
        st.caption("Keywords: " + plain_markdown(", ".join(p.keywords)))


def actions(p: Paper, key: str) -> None:
    left, right = st.columns([1, 1])
    left.button("Similar papers →", key=f"sim-{key}-{p.id}", on_click=go, kwargs={"paper": p.id})
    if p.url.startswith(("https://", "http://")):
        right.link_button("OpenReview ↗", p.url)  # st.link_button opens a new tab


def hit_card(h: Hit, key: str, result: Result) -> None:
    with st.container(border=True):
        paper_header(h.paper, h.score, h.rank)
        if h.evidence:
            mark = marker(result.terms)
            quote = " … ".join(to_markdown(s, mark) for s, _ in h.evidence)
            st.markdown(f"**Why:** {quote}")
        with st.expander("Abstract"):
            st.markdown(to_markdown(h.paper.abstract))
        actions(h.paper, key)


def similar_card(engine: Engine, source: Paper, h: Hit) -> None:
    with st.container(border=True):
        paper_header(h.paper, h.score, h.rank)
        keywords, (mine, theirs, _) = engine.shared(source.id, h.paper.id)
        if keywords:
            st.caption("Shared keywords: " + plain_markdown(", ".join(keywords)))
        st.markdown("**Closest sentences.** This paper: " + to_markdown(mine)
                    + "  \nThat paper: " + to_markdown(theirs))
        with st.expander("Abstract"):
            st.markdown(to_markdown(h.paper.abstract))
        actions(h.paper, "p")


# ---------------------------------------------------------------- views

def submit_query() -> None:
    text = st.session_state["query_box"].strip()
    go(q=text) if text else go()


def search_view(engine: Engine, query: str, k: int, mode: str, areas: list[str], venues: list[str]) -> None:
    # the box follows the URL (examples, Back), and keeps its identity across reruns
    if st.session_state.get("query_from_url") != query:
        st.session_state["query_box"] = query
        st.session_state["query_from_url"] = query
    with st.form("search", border=False):
        st.text_input("Search papers by meaning", key="query_box", max_chars=20_000,
                      placeholder="e.g. how can a language model read longer documents? (any language)"
                      if engine.multilingual else "e.g. how can a language model read longer documents?")
        st.form_submit_button("Search", type="primary", on_click=submit_query)
    if not query.strip():
        st.markdown(f"Search **{len(engine.papers):,} papers** by what they are about, in your own words, "
                    "or by the name of a method. Try one of these:")
        cols = st.columns(2)
        for i, example in enumerate(EXAMPLE_QUERIES):
            cols[i % 2].button(example, key=f"ex-{i}", on_click=go, kwargs={"q": example},
                               use_container_width=True)
        return
    result = engine.search(query, k, mode, areas, venues)
    if result.message:
        (st.warning if result.truncated else st.info)(result.message)
    if result.hits:
        filtered = " matching the filters" if areas or venues else ""
        across = " · searched across languages" if result.space == "multilingual" else ""
        st.caption(f"{len(result.hits)} best of {len(engine.papers):,} papers{filtered} · {mode} ranking{across}")
    for h in result.hits:
        hit_card(h, "q", result)


def paper_view(engine: Engine, pid: str, k: int, areas: list[str], venues: list[str]) -> None:
    paper = engine.paper(pid)
    st.button("← New search", on_click=go)
    if paper is None:
        st.error(f"No paper with id “{pid}” in this index. It may come from another index; "
                 "search for it instead.")
        return
    with st.container(border=True):
        paper_header(paper)
        st.markdown(to_markdown(paper.abstract))
        st.caption(plain_markdown(f"id {paper.id}" + (f" (also {', '.join(paper.aliases)})" if paper.aliases else "")))
        if paper.url.startswith(("https://", "http://")):
            st.link_button("OpenReview ↗", paper.url)
    st.subheader("Most similar papers")
    try:
        result = engine.similar([paper.id], k, areas, venues)
    except UnknownPaper as e:
        st.error(str(e))
        return
    if result.message:
        st.info(result.message)
    for h in result.hits:
        similar_card(engine, paper, h)


def sidebar(engine: Engine, k: int, mode: str, areas: list[str], venues: list[str]) -> None:
    with st.sidebar:
        st.radio("Ranking", MODES, index=MODES.index(mode), key="mode_w", on_change=set_param,
                 args=("mode", "mode_w"), format_func=lambda m: f"{m} — {MODE_HELP[m]}")
        if engine.areas:
            st.multiselect("Primary area", engine.areas, default=[a for a in areas if a in engine.areas],
                           key="area_w", on_change=set_param, args=("area", "area_w"))
        if engine.venues:
            st.multiselect("Venue", engine.venues, default=[v for v in venues if v in engine.venues],
                           key="venue_w", on_change=set_param, args=("venue", "venue_w"),
                           format_func=lambda v: v.replace("ICLR 2026 ", ""))
        st.selectbox("Results", K_CHOICES, index=K_CHOICES.index(k), key="k_w", on_change=set_param,
                     args=("k", "k_w"))
        m = engine.manifest
        st.caption(f"{m['count']:,} papers · model {m['model']['name'].split('/')[-1]} · built {m['built_at']}")


def main() -> None:
    st.title("🔎 Paper search")
    engine = engine_or_stop()
    k = top_k()
    mode = st.query_params.get("mode", DEFAULT_MODE)
    mode = mode if mode in MODES else DEFAULT_MODE
    areas = [a for a in st.query_params.get_all("area") if a in engine.areas]
    venues = [v for v in st.query_params.get_all("venue") if v in engine.venues]
    sidebar(engine, k, mode, areas, venues)
    pid = st.query_params.get("paper")
    if pid is not None:
        paper_view(engine, pid, k, areas, venues)
    else:
        search_view(engine, st.query_params.get("q", ""), k, mode, areas, venues)


main()
