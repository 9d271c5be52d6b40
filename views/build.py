"""The engine the page serves and the background build behind it: loading the published index once a server,
starting the build of what is missing, its progress, and the offer to fetch the whole conference."""
from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import streamlit as st

from search import background
from search.engine import Engine, IndexLoadError, load_query_model, open_engine
from search.progress import searchable_now, status_text, still_coming

T = TypeVar("T")


@dataclass(frozen=True)
class Setup:
    """Where the page's index is and what it builds from; streamlit_app.py reads them from the environment on
    every run (SEARCH_INDEX, SEARCH_DATA) and hands them here."""
    index_dir: Path  # the published index (a link to one finished build)
    seed_dir: Path  # the seed lists, built first and served until the conference is in
    # conference files (e.g. from `python -m search fetch`) that the page builds in the background, seeds
    # served meanwhile: `make app DATA=FILE` sets them
    data: list[Path]
    data_dir: Path  # where `python -m search fetch` writes by default


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


def once(engine: Engine, name: str, make: Callable[[], T]) -> T:
    """`make()` once per build of this engine's index, under `name` (per_build)."""
    return per_build(str(engine.data.path), name, make)


@st.cache_resource(show_spinner=False, max_entries=8)
def start_build(out: str, steps: tuple[tuple[str, ...], ...], target: str) -> bool:
    """Start the background build of these steps once per server and target inputs (the digest of
    their bytes: a file changed after a failed build is built again); the job's lock covers other servers."""
    return background.start(Path(out), [[Path(p) for p in step] for step in steps])


@st.fragment(run_every=1.5)
def build_panel(index_dir: Path, more: bool, serving: str | None, count: int = 0, pending: tuple[str, ...] = (),
                left: int = 0) -> None:
    """The background build's progress; when it has published a new index the whole page reruns on it.
    `more`: conference files (SEARCH_DATA) follow the seeds."""
    status = background.status(index_dir)
    current = background.serving(index_dir)
    if (str(current) if current else None) != serving or not background.busy(index_dir):
        st.rerun(scope="app")
    if serving is None:
        st.info("No index yet: building one from the 66 seed abstracts (about a minute on two cores); "
                "the page opens as soon as it is ready." + (" The whole conference follows in the background."
                                                            if more else ""))
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


def fetch_conference(setup: Setup, inputs: list[str] | None = None) -> None:
    # $OPENREVIEW_API_BASEURL_V2, as for the CLI's fetch; a re-fetch into the file the index was built from
    background.fetch_conference(setup.index_dir, setup.seed_dir, setup.data_dir,
                                inputs=[Path(p) for p in inputs] if inputs else None)


def fetch_offer(engine: Engine, setup: Setup) -> None:
    """One click downloads the conference from OpenReview and builds it meanwhile: on the seeds alone, and again
    (a re-fetch) on the index of the fetched venue, also while its build runs (the new fetch's build replaces it)."""
    seeds_only = not setup.data and engine.manifest.inputs_digest == background.digest([setup.seed_dir])
    fetched = background.refetchable(engine.manifest.inputs)
    # a file of SEARCH_DATA's own, or none: the page would build SEARCH_DATA again over the re-fetch's index
    again = fetched is not None and (not setup.data or fetched.resolve() in [p.resolve() for p in setup.data])
    if not (seeds_only or again):
        return
    # the fetched file last: the fetch writes the last input of the build
    inputs = None if seeds_only else [p for p in engine.manifest.inputs if Path(p) != fetched] + [str(fetched)]
    status = background.status(setup.index_dir)
    if status.get("state") == "failed" and str(status.get("target", "")).startswith("fetch:"):
        st.error(f"The download stopped: {status.get('message', 'unknown error')}")
    elif status.get("fetch_failed") and background.busy(setup.index_dir):
        st.warning(f"The download stopped ({status['fetch_failed']}); the build goes on with the data fetched "
                   "before.")
    fetching = background.fetching(setup.index_dir)
    if seeds_only:
        st.markdown(f"These are the {len(engine.papers)} seed papers. The whole conference is a click away:")
    st.button("Get all of ICLR 2026 from OpenReview" if seeds_only else "Fetch ICLR 2026 again from OpenReview",
              icon=":material/download:", on_click=fetch_conference, args=(setup, inputs),
              disabled=fetching,
              key="fetch-conference",
              help="Downloads every submission with its reviews and decision (python -m search fetch), "
                   "then builds their index in the background; you keep searching meanwhile.")
    if fetching:
        st.caption("Downloading now; the build follows.")
    elif background.build_running(setup.index_dir):
        st.caption("A build of this index is running: fetching again replaces it with a build of the new data, "
                   "which takes every vector it embedded from the cache. This index is served until the new one "
                   "is published.")


def engine_or_stop(setup: Setup) -> Engine:
    """The engine of the published index; starts (once) the background build of what is missing."""
    steps, unreadable = background.planned(setup.index_dir, setup.seed_dir, setup.data)
    if unreadable:
        st.error(f"Cannot build from SEARCH_DATA: {unreadable}")
    problem = background.failed(setup.index_dir, steps)
    if problem:
        st.error(f"The background build stopped: {problem}. Fix the input and restart the page; "
                 "the index it serves stays as it was.")
    elif steps:
        start_build(str(setup.index_dir), tuple(tuple(str(p) for p in step) for step in steps),
                    background.digest(steps[-1]))
    building = not problem and background.busy(setup.index_dir)
    if not setup.index_dir.exists():
        if building or steps and not problem:
            build_panel(setup.index_dir, bool(setup.data), None)
        st.stop()
    try:
        engine = get_engine(str(background.serving(setup.index_dir)))
    except IndexLoadError as e:
        st.error(str(e))
        st.stop()
    if building:
        build_panel(setup.index_dir, bool(setup.data), str(engine.data.path), len(engine.papers),
                    tuple(engine.manifest.pending), engine.manifest.unembedded or 0)
    elif engine.manifest.pending and background.build_running(setup.index_dir):
        st.caption(f"Another process (`python index_build.py`) is building this index. Still coming: "
                   f"{still_coming(engine.manifest.pending, build_status(setup.index_dir))}; everything else works, "
                   "and your next search takes each part as it lands.")
    elif engine.manifest.pending:
        st.caption(f"This index's build stopped before {still_coming(engine.manifest.pending)}; everything else "
                   "works. `python index_build.py` (or restarting the page) finishes it from the cache.")
    return engine


def build_status(index_dir: Path) -> dict | None:
    """The running build's status (the page's job or `index_build.py`), None when none runs: a stopped
    build's time left would be a promise nobody keeps."""
    return background.status(index_dir) if background.build_running(index_dir) else None
