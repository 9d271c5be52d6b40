"""The page: layout only. Every decision about papers and ranking lives in search/."""
from __future__ import annotations

import os
import time
from pathlib import Path

import streamlit as st

from search.build import build_index
from search.corpus import CorpusError, Paper
from search.embed import load_model, model_fingerprint
from search.engine import EXAMPLE_QUERIES, Engine, Hit, Result, UnknownPaper
from search.index import BuildBusy, IndexLoadError, load_index, resolve
from search.text import plain_markdown, to_markdown

INDEX_DIR = Path(os.environ.get("SEARCH_INDEX") or "index")
SEED_DIR = Path(__file__).parent / "seeds"
K_CHOICES = [5, 10, 20, 50]

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
    model, _ = get_model("sentence-transformers/all-MiniLM-L6-v2")
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


# ---------------------------------------------------------------- navigation

def go(**params: str) -> None:
    """Move to a new URL state (a browser history entry), keeping the top-k choice."""
    k = st.query_params.get("k")
    st.query_params.from_dict({**({"k": k} if k else {}), **params})


def top_k() -> int:
    try:
        k = int(st.query_params.get("k", 10))
    except ValueError:
        k = 10
    return k if k in K_CHOICES else 10


# ---------------------------------------------------------------- pieces

def paper_header(p: Paper, score: float | None = None, rank: int | None = None) -> None:
    prefix = f"{rank}. " if rank else ""
    st.markdown(f"##### {plain_markdown(prefix + p.title)}")
    bits = []
    if score is not None:
        bits.append(f"similarity {score:.3f}")
    if p.title_derived:
        bits.append("title derived from the abstract")
    bits.append("from " + "; ".join(p.sources))
    st.caption(plain_markdown(" · ".join(bits)))


def hit_card(h: Hit, key: str) -> None:
    with st.container(border=True):
        paper_header(h.paper, h.score, h.rank)
        with st.expander("Abstract", expanded=h.rank <= 3):
            st.markdown(to_markdown(h.paper.abstract))
        st.button("Similar papers →", key=f"sim-{key}-{h.paper.id}", on_click=go,
                  kwargs={"paper": h.paper.id})


def results(result: Result, key: str) -> None:
    if result.message:
        (st.warning if result.truncated else st.info)(result.message)
    for h in result.hits:
        hit_card(h, key)


# ---------------------------------------------------------------- views

def submit_query() -> None:
    text = st.session_state["query_box"].strip()
    go(q=text) if text else go()


def search_view(engine: Engine, query: str, k: int) -> None:
    # the box follows the URL (examples, Back), and keeps its identity across reruns
    if st.session_state.get("query_from_url") != query:
        st.session_state["query_box"] = query
        st.session_state["query_from_url"] = query
    with st.form("search", border=False):
        st.text_input("Search papers by meaning", key="query_box", max_chars=20_000,
                      placeholder="e.g. how can a language model read longer documents?")
        st.form_submit_button("Search", type="primary", on_click=submit_query)
    if not query.strip():
        st.markdown(f"Search **{len(engine.papers)} papers** by what they are about, in your own words. "
                    "Try one of these:")
        cols = st.columns(2)
        for i, example in enumerate(EXAMPLE_QUERIES):
            cols[i % 2].button(example, key=f"ex-{i}", on_click=go, kwargs={"q": example},
                               use_container_width=True)
        return
    result = engine.search(query, k)
    if result.hits:
        st.caption(f"{len(result.hits)} closest of {len(engine.papers)} papers")
    results(result, "q")


def paper_view(engine: Engine, pid: str, k: int) -> None:
    paper = engine.paper(pid)
    st.button("← New search", on_click=go)
    if paper is None:
        st.error(f"No paper with id “{pid}” in this index. It may come from another index; "
                 "search for it instead.")
        return
    with st.container(border=True):
        paper_header(paper)
        st.markdown(to_markdown(paper.abstract))
        st.caption(plain_markdown(f"id {paper.id}"))
    st.subheader("Most similar papers")
    try:
        results(engine.similar([paper.id], k), "p")
    except UnknownPaper as e:
        st.error(str(e))


def main() -> None:
    st.title("🔎 Paper search")
    engine = engine_or_stop()
    k = top_k()
    with st.sidebar:
        choice = st.selectbox("Results per page", K_CHOICES, index=K_CHOICES.index(k))
        if choice != k:
            st.query_params["k"] = str(choice)
            st.rerun()
        m = engine.manifest
        st.caption(f"{m['count']} papers · model {m['model']['name'].split('/')[-1]} · built {m['built_at']}")
    pid = st.query_params.get("paper")
    if pid is not None:
        paper_view(engine, pid, k)
    else:
        search_view(engine, st.query_params.get("q", ""), k)


main()
