"""The reading list: its papers (kept in the address, ?list=), their export, and the papers most like them."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from search.engine import Engine, UnknownPaper
from search.filters import Filters
from search.render import FORMATS, card, export

from .cards import show_cards
from .hits import show_hits


def list_view(engine: Engine, index_dir: Path, k: int, filters: Filters, listed: list[str]) -> None:
    """The list's cards, its downloads, and more like it."""
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
    show_hits(engine, index_dir, result, "m", listed,
              "closest to all of them together (a linear SVM trained on this list)" if len(listed) > 1 else "")
