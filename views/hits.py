"""A list of hits as cards, and the panels under it that describe the query's nearest papers: how submissions
like them fared, and where work like them appears (the search, a paper's and the uploads' views share them)."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import streamlit as st

from search.engine import Engine, Result
from search.progress import meaning_note, with_build_notes
from search.render import fared_figure, plain_markdown, result_cards, where_figure

from .build import build_status
from .cards import show_cards

FARED_K = 50  # neighbours of the "how papers like this fared" and "where work like this appears" panels


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


def lazy_panel(label: str, key: str, draw: Callable[[], None]) -> None:
    """A folded panel whose content is computed only once opened (the expander reruns the page then): a query
    pays nothing for it."""
    with st.expander(label, key=key, on_change="rerun"):
        if st.session_state.get(key):
            draw()


def fared_panel(engine: Engine, index_dir: Path, query: str = "", pid: str = "", texts: list[str] = (),
                key: str = "") -> None:
    """How the nearest submissions fared, beside the area and the venue: a chart with its numbers in words."""
    if not engine.catalog.has_decisions:
        return
    if not engine.has_vector(pid or None):
        st.caption("How submissions like this fared comes once the abstracts are embedded (it compares "
                   f"meanings). {meaning_note(build_status(index_dir))}")
        return

    def draw() -> None:
        fared = engine.fared(query=query, pid=pid, texts=texts, k=FARED_K)
        st.plotly_chart(fared_figure(fared), width="stretch", key=f"fared-{key}", config={"displayModeBar": False})
        st.markdown("\n".join(f"- **{plain_markdown(name)}**: {plain_markdown(fate.words())}"
                               for name, fate in fared.rows()))
        st.caption("This describes how similar submissions fared; it does not predict a decision. Left out of "
                   "its own neighbours, a submission's neighbours' accepted share tells accepted from rejected "
                   "ones little better than its area's rate (benchmarks/results/fared.md).")

    lazy_panel(f"How submissions like this fared (the {FARED_K} nearest, every decision)", f"fared-open-{key}", draw)


def where_panel(engine: Engine, query: str = "", pid: str = "", texts: list[str] = (), key: str = "") -> None:
    """Where work like this appears: the venues and years of the nearest papers, and how they fared where a
    venue-year's record holds its rejections. Only on an index of more than one venue-year."""
    if len(engine.venue_years()) < 2 or not engine.has_vector(pid or None):
        return

    def draw() -> None:
        fared = engine.fared(query=query, pid=pid, texts=texts, k=FARED_K)
        st.plotly_chart(where_figure(fared.places), width="stretch", key=f"where-{key}",
                        config={"displayModeBar": False})
        st.markdown("\n".join(f"- {plain_markdown(x.words())}" for x in fared.places))
        st.caption("This describes where similar papers appear and, where a venue's record holds its rejections, "
                   "how they fared there; it does not predict where a paper would be accepted. A list of accepted "
                   "papers only gives no rate: it does not name the papers it left out.")

    lazy_panel(f"Where work like this appears (the {FARED_K} nearest papers' venues and years)", f"where-open-{key}",
               draw)
