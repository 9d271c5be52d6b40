"""The sidebar: the ranking, each filter's and the sort's widget as its declaration says (set from the address,
which it writes back), the number of results, and the saved searches with what is new for each since the previous fetch."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from search.engine import DEFAULT_MODE, MODES, Engine
from search.filters import FILTERS, Filter, Filters, IndexFacts, Widget
from search.render import plain_markdown
from search.saved import Saved, SavedError, add, forget, load, news, saved_file

from .address import set_param, synced
from .build import get_engine
from .cards import short

K_CHOICES = [5, 10, 20, 50]
K_DEFAULT = 10
MODE_HELP = {"hybrid": "meaning and words together", "semantic": "meaning only", "keyword": "exact words (BM25)",
             "reviews": "what the reviews say (their words)"}


def saved_path(index_dir: Path) -> Path:
    """The saved searches' file, beside the index."""
    return saved_file(index_dir)


def save_search(index_dir: Path, query: str, mode: str, filters: Filters) -> None:
    """Keep this search beside the index; what was done (or why not) is said under the button."""
    try:
        add(saved_path(index_dir), query, mode, filters)
        st.session_state["saved_said"] = f"Saved “{query}”: the sidebar lists what is new for it after each re-fetch."
    except (SavedError, OSError) as e:
        st.session_state["saved_said"] = f"Not saved: {e}"


def saved_sidebar(engine: Engine, index_dir: Path) -> None:
    """The saved searches, each with what is new for it since the previous fetch, a link to its address."""
    try:
        searches = load(saved_path(index_dir))
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
        st.button("Remove", key=f"unsave-{i}", type="tertiary", icon=":material/close:", on_click=unsave,
                  args=(index_dir, s), help="Remove this saved search")


@st.cache_data(show_spinner=False, max_entries=64)
def saved_news(build_path: str, link: str, _s: Saved) -> str:
    """A saved search's news in words, once per build: a search of 50 papers per saved search on every rerun
    would sit on each click's path, and the news change only when a build lands. The link is the search's key."""
    return news(get_engine(build_path), _s).words()


def unsave(index_dir: Path, s: Saved) -> None:
    """Remove a saved search; why it could not be is kept in saved_said, as the Save button's failure is."""
    try:
        forget(saved_path(index_dir), s)
    except (SavedError, OSError) as e:
        st.session_state["saved_said"] = f"Not removed: {e}"


def page_modes(engine: Engine) -> tuple[str, ...]:
    """The rankings this index offers: search within reviews where it holds them, or where its build has it still
    to come (the list then says when: progress.with_build_notes)."""
    coming = "review search" in engine.manifest.pending
    return (*MODES, "reviews") if engine.reviews and (engine.reviews.searchable or coming) else MODES


def filter_widget(f: Filter, w: Widget, value, facts: IndexFacts) -> None:
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
            said = name.replace("_", " ")  # a form's field name as words: "reviewer_confidence"
            st.number_input(w.label.format(name=said), min_value=0.0, max_value=10.0, step=w.step, value=None,
                            key=nkey, on_change=set_param, args=(key, nkey), placeholder=w.placeholder,
                            help=w.help.format(name=said) or None)
    elif w.kind == "flag":
        synced(wkey, bool(value))
        st.checkbox(w.label, key=wkey, on_change=set_param, args=(f.key, wkey), help=w.help or None)
    else:
        raise ValueError(f"{f.key}: no widget of kind {w.kind!r}")


def sidebar(engine: Engine, index_dir: Path, k: int, mode: str, filters: Filters) -> None:
    """Every setting of the list, each drawn only where this index has what it needs."""
    catalog = engine.catalog
    with st.sidebar:
        modes = page_modes(engine)
        synced("mode_w", mode)
        st.radio("Ranking", modes, key="mode_w", on_change=set_param,
                 args=("mode", "mode_w", DEFAULT_MODE), format_func=lambda m: f"{m} — {MODE_HELP[m]}")
        for f in FILTERS:  # each filter's widget, where the index has what it needs (filters.FILTERS)
            if (w := f.widget_for(catalog.facts)) is not None:
                filter_widget(f, w, getattr(filters, f.field), catalog.facts)
        if not catalog.has_authors and catalog.has_decisions:
            st.caption("No author filter: these records name no authors (OpenReview keeps a venue's authors "
                       "hidden until it makes them public, for accepted papers after the decisions).")
        if engine.manifest.history:
            saved_sidebar(engine, index_dir)
        synced("k_w", k)
        st.selectbox("Results", K_CHOICES, key="k_w", on_change=set_param, args=("k", "k_w", K_DEFAULT))
        m = engine.manifest
        st.caption(f"{m.count:,} papers · model {m.model.name.split('/')[-1]} · built {m.built_at}")
