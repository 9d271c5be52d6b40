"""The sidebar: the ranking, each filter's widget (set from the address, which it writes back), the sort, the
number of results, and the saved searches with what is new for each since the previous fetch."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from search.engine import MODES, SORT_POOL, Catalog, Engine
from search.filters import (CHANGES, DECISION_GROUPS, FILTERS, NEED_TWO_FETCHES, Filters, default_decisions,
                            sort_choices)
from search.render import plain_markdown
from search.saved import Saved, SavedError, add, forget, load, news, saved_file

from .address import set_param, synced
from .build import get_engine
from .cards import short

K_CHOICES = [5, 10, 20, 50]
MODE_HELP = {"hybrid": "meaning and words together", "semantic": "meaning only", "keyword": "exact words (BM25)",
             "reviews": "what the reviews say (their words)"}
DECISION_LABELS = {"accepted": "accepted papers", "all": "every submission", "rejected": "rejected",
                   "withdrawn": "withdrawn", "undecided": "no decision yet", "oral": "orals", "spotlight": "spotlights",
                   "poster": "posters", "active": "every submission not withdrawn"}


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


def present_decisions(catalog: Catalog) -> set[str]:
    """The decision groups this index's submissions fall in."""
    return {g for g, ds in DECISION_GROUPS.items() if set(ds) & set(catalog.decisions)}


def decision_label(choice: str) -> str:
    """A choice of the Submissions box in words."""
    return " + ".join(DECISION_LABELS.get(c, c) for c in choice.split(","))


def declared_widgets(catalog: Catalog, filters: Filters) -> None:
    """The widget of each filter that declares one (filters.Widget), where the index has what it needs: a venue
    filter on an index of one venue and year, or an author filter on anonymous records, is not drawn."""
    for f in FILTERS:
        w, value, wkey = f.widget, getattr(filters, f.field), f"{f.key}_w"
        if w is None or not f.shown(catalog.facts):
            continue
        if w.kind == "choices":
            offers = f.offers(catalog.facts)
            if len(offers) < 2 and not value:
                continue
            synced(wkey, list(value))
            st.multiselect(w.label, list(dict.fromkeys([*offers, *value])), key=wkey, on_change=set_param,
                           args=(f.key, wkey), help=w.help)
        else:
            synced(wkey, (value or ("",))[0])
            st.text_input(w.label, key=wkey, on_change=set_param, args=(f.key, wkey), placeholder=w.placeholder,
                          help=w.help)


def sidebar(engine: Engine, index_dir: Path, k: int, mode: str, filters: Filters) -> None:
    """Every setting of the list, each drawn only where this index has what it needs."""
    catalog = engine.catalog
    with st.sidebar:
        modes = page_modes(engine)
        synced("mode_w", mode)
        st.radio("Ranking", modes, key="mode_w", on_change=set_param,
                 args=("mode", "mode_w"), format_func=lambda m: f"{m} — {MODE_HELP[m]}")
        if catalog.has_decisions:
            default = default_decisions(catalog.decisions)[0]
            current = ",".join(filters.decisions) or default
            present = present_decisions(catalog)
            choices = list(dict.fromkeys([default, "all", *(d for d in ("accepted", "active", "rejected", "withdrawn",
                                                                         "undecided", "oral", "spotlight", "poster")
                                                             if d in present), current]))
            synced("decision_w", current)
            st.selectbox("Submissions", choices, key="decision_w",
                         on_change=set_param, args=("decision", "decision_w"), format_func=decision_label,
                         help="Which submissions to search: the accepted papers by default once decisions are "
                              "out (every submission not withdrawn before), or every submission (related work "
                              "often sits among the rejected)")
        if catalog.areas:
            synced("area_w", list(filters.areas))
            st.multiselect("Primary area", catalog.areas, key="area_w", on_change=set_param, args=("area", "area_w"))
        declared_widgets(catalog, filters)
        if not catalog.has_authors and catalog.has_decisions:
            st.caption("No author filter: these records name no authors (OpenReview keeps a venue's authors "
                       "hidden until it makes them public, for accepted papers after the decisions).")
        sorts = {s.name: s.label for s in sort_choices(catalog.sub_scores, catalog.facts)}
        if len(sorts) > 1:
            synced("sort_w", filters.sort)
            st.selectbox("Sort by", list(sorts), key="sort_w", on_change=set_param,
                         args=("sort", "sort_w"), format_func=sorts.get,
                         help=f"A sort keeps, of the {SORT_POOL} papers most relevant to a query, those close to "
                              "the best match, and re-orders them (a topic or reading list: all of it); it "
                              "never fetches other papers.")
        if catalog.has_ratings:
            synced("min_rating_w", filters.min_rating)
            st.number_input("Minimum rating", min_value=0.0, max_value=10.0, step=0.5, value=None,
                            key="min_rating_w", on_change=set_param, args=("min_rating", "min_rating_w"),
                            placeholder="any", help="only reviewed papers whose mean rating is at least this")
            given = dict(filters.min_scores)
            for name in catalog.sub_scores:
                synced(f"min_{name}_w", given.get(name))
                st.number_input(f"Minimum {name}", min_value=0.0, max_value=10.0, step=0.5, value=None,
                                key=f"min_{name}_w", on_change=set_param, args=(f"min_{name}", f"min_{name}_w"),
                                placeholder="any", help=f"only papers whose reviews' mean {name} is at least this")
        if m := engine.manifest.history:
            offered = [c for c in CHANGES if m.fetches > 1 or c not in NEED_TWO_FETCHES]
            synced("changed_w", [c for c in filters.changed if c in offered])
            st.multiselect("Changed since the previous fetch" if m.fetches > 1 else "Changed since first posted",
                           offered, key="changed_w", on_change=set_param, args=("changed", "changed_w"),
                           format_func=CHANGES.get, help="papers that changed in any of these ways")
            synced("moved_w", filters.min_move)
            st.number_input("Rating moved by at least", min_value=0.0, max_value=10.0, step=0.25, value=None,
                            key="moved_w", on_change=set_param, args=("moved", "moved_w"), placeholder="any",
                            help="up or down, since " + (m.baseline[:10] if m.fetches > 1 else
                                                         "the reviews were first posted"))
            saved_sidebar(engine, index_dir)
        synced("k_w", k)
        st.selectbox("Results", K_CHOICES, key="k_w", on_change=set_param, args=("k", "k_w"))
        m = engine.manifest
        st.caption(f"{m.count:,} papers · model {m.model.name.split('/')[-1]} · built {m.built_at}")
