"""Reading an uploaded .txt or .bib into texts for "papers like these"; bad files get one clear message."""
from __future__ import annotations

from pathlib import PurePath

from . import decoding

MAX_UPLOAD_BYTES = 2_000_000
MAX_TEXTS = 500
SUFFIXES = (".txt", ".bib")


class UploadError(ValueError):
    """The upload cannot be used; the message says why, naming the file."""


def _decode(name: str, data: bytes) -> str:
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(f"{name} is {len(data):,} bytes; the limit is {MAX_UPLOAD_BYTES:,}")
    try:
        return decoding.decode(name, data)
    except decoding.DecodeError as e:
        raise UploadError(str(e)) from None


def bib_texts(text: str) -> list[str]:
    """Each entry's abstract, else its title, with BibTeX braces dropped."""
    import bibtexparser

    out = []
    for entry in bibtexparser.parse_string(text).entries:
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        value = fields.get("abstract") or fields.get("title") or ""
        value = value.replace("{", "").replace("}", "").strip()
        if value:
            out.append(value)
    return out


def texts_from_upload(name: str, data: bytes) -> list[str]:
    """The texts of an uploaded file: .txt one per non-empty line, .bib entries' abstracts or titles."""
    suffix = PurePath(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise UploadError(f"{name}: use a .txt file (one abstract per line) or a .bib file")
    text = _decode(name, data)
    texts = bib_texts(text) if suffix == ".bib" else [line.strip() for line in text.splitlines() if line.strip()]
    if not texts:
        what = "no entry with an abstract or a title" if suffix == ".bib" else "no text"
        raise UploadError(f"{name} holds {what}")
    return texts[:MAX_TEXTS]
