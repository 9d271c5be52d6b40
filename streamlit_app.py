"""The page: it reads its configuration, then routes the address to a view (views/). Layout only: every decision
about papers and ranking lives in search/."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from search.engine import DEFAULT_MODE, Engine
from search.filters import Filters
from search.render import plain_markdown
from views.address import go, kept, one_of, reading_list, url_setting
from views.build import Setup, engine_or_stop
from views.changes import changes_view
from views.map import map_view, topic_view
from views.paper import author_view, paper_view
from views.query import search_view
from views.reading_list import list_view
from views.sidebar import K_CHOICES, K_DEFAULT, page_modes, sidebar
from views.stats import stats_view

INDEX_DIR = Path(os.environ.get("SEARCH_INDEX") or "index")
SEED_DIR = Path(__file__).parent / "seeds"
# conference files (e.g. from `python -m search fetch`) that the page builds in the background, seeds
# served meanwhile: `make app DATA=FILE` sets this (several files separated by os.pathsep)
DATA = [Path(p) for p in os.environ.get("SEARCH_DATA", "").split(os.pathsep) if p.strip()]
DATA_DIR = Path(__file__).parent / "data"   # where `python -m search fetch` writes by default

# the map and the statistics want the whole width; reading a list of cards is easier in a column
st.set_page_config(page_title="Paper search · ICLR 2026", page_icon=":material/search:",
                   layout="wide" if st.query_params.get("view") in ("map", "stats") else "centered")


def nav(engine: Engine, view: str, listed: list[str]) -> None:
    """The views' buttons above every view, the current one marked."""
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


def main() -> None:
    st.title("Paper search")
    setup = Setup(index_dir=INDEX_DIR, seed_dir=SEED_DIR, data=DATA, data_dir=DATA_DIR)
    engine = engine_or_stop(setup)
    ignored: list[str] = []
    k = url_setting("k", K_DEFAULT, one_of(K_CHOICES), ", ".join(map(str, K_CHOICES)), ignored)
    modes = page_modes(engine)
    mode = url_setting("mode", DEFAULT_MODE, one_of(modes), ", ".join(modes), ignored)
    asked, bad = Filters.from_address({key: st.query_params.get_all(key) for key in st.query_params.keys()
                                       if kept(key)})
    filters = engine.catalog.known(asked)
    ignored += bad + [what if what.endswith(")") else f"{what} (not in this index)" for what in filters.unknown]
    if ignored:
        st.warning("Ignored in the address: " + plain_markdown("; ".join(ignored)) + ". The defaults apply.")
    sidebar(engine, setup.index_dir, k, mode, filters)
    listed = reading_list(engine)
    pid, topic = st.query_params.get("paper"), st.query_params.get("topic")
    view = st.query_params.get("view", "")
    query = st.query_params.get("q", "")
    author = st.query_params.get("author") if not (view or query) else None
    nav(engine, view if view in ("map", "list", "stats") else "search", listed)
    if pid is not None:
        paper_view(engine, setup.index_dir, pid, k, filters, listed)
    elif author is not None and len(st.query_params.get_all("author")) == 1:
        author_view(engine, author)
    elif topic is not None:
        topic_view(engine, setup.index_dir, topic, filters, listed)
    elif view == "map":
        map_view(engine, setup.index_dir, query, k, mode, filters, listed)
    elif view == "list":
        list_view(engine, setup.index_dir, k, filters, listed)
    elif view == "stats":
        stats_view(engine)
    elif view == "changes":
        changes_view(engine, filters, listed)
    else:
        search_view(engine, setup, query, k, mode, filters, listed)


# Streamlit runs this file as __main__. A multiprocessing worker started later in the same process
# (the build's embedding pool) would run it again as __mp_main__, and must not start the page there.
if __name__ == "__main__":
    main()
