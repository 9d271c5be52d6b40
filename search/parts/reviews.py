"""The reviews of every paper as a part of the index, read one paper at a time; and search within them.

The reviews hold about ten times the abstracts' text (250 MB at ICLR 2026's 19,630 submissions), so
papers.jsonl leaves them out and the page never loads them at start: `reviews.jsonl` holds one line per
paper in index order and `reviews_offsets.npy` where each line starts, so a paper's reviews are one seek.

Search within reviews is BM25 over each review's text fields (summary, strengths, weaknesses, questions,
...), one document per field, in `review_bm25/`. A paper ranks by its best-matching field; the card shows
that field's best paragraph and its reviewer. It loads on the first search in this scope (memory-mapped).
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..corpus import Paper
from .lexical import FILLER, Matrix, query_terms, tokenize
from ..manifest import ReviewsEntry
from .part import Context

REVIEWS = "reviews.jsonl"
OFFSETS = "reviews_offsets.npy"
SEARCH_DIR = "review_bm25"
FIELDS = "review_fields.npy"
# the order a review's texts are shown and searched in; other text fields of a form follow in their own order
TEXT_ORDER = ("summary", "strengths", "weaknesses", "questions", "strengths_and_weaknesses", "review",
              "limitations")
# words of a question about reviews, not about their content: "reviewers asked for a comparison with DPO"
REVIEW_FILLER = FILLER | frozenset("""reviewer reviewers review reviews asked ask asks asking request requested
requests said say says wanted wants comment comments complained complain paper papers authors author
""".split())
DESCRIPTION = "BM25 (bm25s) over each review's text fields, one document per field; a paper ranks by its best field"


def record_of(p: Paper) -> dict:
    """What the reviews part keeps of a paper."""
    out: dict = {"id": p.id, "reviews": p.reviews}
    if p.meta_review:
        out["meta_review"] = p.meta_review
    if p.decision_text:
        out["decision_text"] = p.decision_text
    return out


def texts_of(review: dict) -> list[tuple[str, str]]:
    """A review's text fields as (name, text), in the order they are shown."""
    names = [n for n in TEXT_ORDER if n in review] + \
            [n for n, v in review.items() if n not in TEXT_ORDER and isinstance(v, str) and n not in ("reviewer", "date", "modified")]
    return [(n, review[n]) for n in names if isinstance(review.get(n), str) and review[n].strip()]


def scores_of(review: dict) -> dict[str, float]:
    """A review's numbers (rating, confidence, soundness, ...)."""
    return {k: v for k, v in review.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def write(build_dir: Path, papers: list[Paper], key: str) -> ReviewsEntry | None:
    """reviews.jsonl and its offsets; the manifest entry (not yet searchable), or None without reviews."""
    if not any(p.reviews or p.meta_review for p in papers):
        return None
    try:  # msgspec writes the 250 MB of ICLR 2026's reviews several times faster than json.dumps line by line
        from msgspec.json import Encoder
        encode = Encoder().encode
    except ImportError:
        def encode(obj) -> bytes:
            return json.dumps(obj, ensure_ascii=False).encode("utf-8")
    lines = [encode(record_of(p)) + b"\n" for p in papers]
    offsets = np.zeros(len(papers) + 1, dtype=np.int64)
    np.cumsum([len(line) for line in lines], out=offsets[1:])
    with open(build_dir / REVIEWS, "wb") as f:
        f.writelines(lines)
    np.save(build_dir / OFFSETS, offsets)
    return ReviewsEntry(papers=sum(1 for p in papers if p.reviews), reviews=sum(len(p.reviews) for p in papers),
                        searchable=False, fields=0, key=key)


def search_key(papers: list[Paper]) -> str:
    """What the search within reviews is built from: each row's id and review texts. A re-fetch that
    changes ratings or decisions only keeps it, and the build reuses the previous one (40 s at 19,630)."""
    h = hashlib.sha256(DESCRIPTION.encode())
    for p in papers:
        h.update(json.dumps([p.id, [texts_of(r) for r in p.reviews]], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


@dataclass
class SearchPart:
    """The search within reviews as the build holds it before writing."""
    fields: np.ndarray                 # (row, review, field) of each document
    retriever: object = None           # bm25s.BM25, None without a text to index


def build_search(papers: list[Paper]) -> SearchPart:
    """BM25 over every review's text fields, one document per field. A build whose reviews' texts are the
    previous build's (`search_key`) takes that build's files whole instead (`carried`; review_search.py
    declares it as a part)."""
    fields: list[tuple[int, int, int]] = []
    docs: list[list[str]] = []
    for row, p in enumerate(papers):
        for r, review in enumerate(p.reviews):
            for k, (_, text) in enumerate(texts_of(review)):
                fields.append((row, r, k))
                docs.append(tokenize(text) or ["\x00"])
    if not docs:
        return SearchPart(np.zeros((0, 3), dtype=np.int32))
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(docs, show_progress=False)
    return SearchPart(np.asarray(fields, dtype=np.int32), retriever)


def write_search(build_dir: Path, part: SearchPart, entry: ReviewsEntry) -> ReviewsEntry:
    """The search's files into a build; the reviews' entry, now searchable."""
    if part.retriever is None:
        return entry
    part.retriever.save(str(build_dir / SEARCH_DIR), show_progress=False)
    np.save(build_dir / FIELDS, part.fields)
    return replace(entry, searchable=True, fields=len(part.fields))


def carried(entry: ReviewsEntry, previous: ReviewsEntry) -> ReviewsEntry:
    """The reviews' entry (`entry`, this build's) with the search the previous build's entry describes, its
    files taken whole."""
    return replace(entry, searchable=True, fields=previous.fields)


@dataclass
class Passage:
    row: int
    reviewer: str
    field: str
    text: str          # the field's paragraph that matches best
    score: float


def paragraphs(text: str) -> list[str]:
    """A review text's paragraphs and list items."""
    parts = re.split(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)", text)
    return [p.strip() for p in parts if p.strip()]


class Reviews:
    """One paper's reviews on demand; the search within all of them, loaded on first use."""

    def __init__(self, path: Path, entry: ReviewsEntry, count: int, verify: Callable[..., None] = lambda *f: None):
        self.path, self.entry = path, entry
        self.verify = verify  # checks files against the manifest before their first read (IndexData.verified)
        verify(OFFSETS)
        self.offsets = np.load(path / OFFSETS)
        if len(self.offsets) != count + 1:
            raise ValueError(f"{path / OFFSETS} has {len(self.offsets) - 1} papers, the index {count}")
        self._search = None

    @property
    def searchable(self) -> bool:
        return self.entry.searchable

    def of(self, row: int) -> dict:
        """{"id", "reviews": [...], "meta_review"?, "decision_text"?} of the paper at this row."""
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        self.verify(REVIEWS)
        with open(self.path / REVIEWS, "rb") as f:
            f.seek(start)
            return json.loads(f.read(end - start))

    def _load_search(self):
        if self._search is None:
            self.verify(SEARCH_DIR + "/", FIELDS)
            matrix = Matrix(self.path / SEARCH_DIR, mmap=True)
            self._search = (matrix, matrix.vocab, np.load(self.path / FIELDS))
        return self._search

    def search(self, query: str, allowed: np.ndarray | None = None, k: int = 10) -> list[Passage]:
        """Papers ranked by their best-matching review field, best first, with that field's best paragraph."""
        if not self.searchable:
            return []
        retriever, vocab, fields = self._load_search()
        terms = [t for t in dict.fromkeys(query_terms(query, REVIEW_FILLER)) if t in vocab]
        if not terms:
            return []
        scores = retriever.scores([vocab[t] for t in terms])
        order = np.argsort(-scores, kind="stable")
        out: list[Passage] = []
        seen: set[int] = set()
        for doc in order:
            if scores[doc] <= 0 or len(out) >= k:
                break
            row, r, k_field = (int(x) for x in fields[doc])
            if row in seen or (allowed is not None and not allowed[row]):
                continue
            seen.add(row)
            review = self.of(row)["reviews"][r]
            name, text = texts_of(review)[k_field]
            out.append(Passage(row, review.get("reviewer", ""), name, best_paragraph(text, set(terms)),
                               float(scores[doc])))
        return out


def best_paragraph(text: str, terms: set[str], limit: int = 700) -> str:
    """The paragraph of a text holding most of the query's terms (the first on a tie), cut to `limit`."""
    parts = paragraphs(text) or [text]
    best = max(parts, key=lambda p: len(terms & set(tokenize(p))))
    return best if len(best) <= limit else best[:limit - 1].rsplit(" ", 1)[0] + "…"


def load(path: Path, entry: ReviewsEntry | None, count: int,
         verify: Callable[..., None] = lambda *f: None) -> Reviews | None:
    return Reviews(path, entry, count, verify) if entry else None


def key_of(ctx: Context) -> str:
    """`search_key` of the build's papers, hashed once a build: the reviews' entry (the words stage's) and the
    search's key both hold it."""
    return ctx.derived("reviews' search key", lambda: search_key(ctx.papers))

