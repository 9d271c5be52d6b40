"""Papers like uploaded ones: a .txt of abstracts (one a line) or a .bib file's, as a list of hits with the
panels that describe their neighbours."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from search.engine import Engine
from search.filters import Filters
from search.render import plain_markdown
from search.uploads import UploadError, texts_from_upload

from .hits import fared_panel, show_hits, where_panel


def upload_box(engine: Engine, index_dir: Path, k: int, filters: Filters, listed: list[str]) -> None:
    """Papers like uploaded ones: abstracts one a line, or a BibTeX file's."""
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
        show_hits(engine, index_dir, engine.like_texts(texts, k, filters), "u", listed)
        fared_panel(engine, index_dir, texts=texts, key="u")
        where_panel(engine, texts=texts, key="u")
