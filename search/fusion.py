"""Fusion: how the rankings by meaning and by words become one list, and what decides their weights.

A name or acronym ("JanusVLN", "KV cache") is found by its letters; a question or a pasted abstract by
its meaning. The weights below were chosen on the development sets and confirmed on held-out ones
(benchmarks/bench_ranking.py, docs/quality.md, "Search quality").
"""
from __future__ import annotations

from collections.abc import Iterable

import re
from dataclasses import dataclass

import numpy as np

from .parts.lexical import FILLER

QUESTION_START = frozenset("how what why which who when where whether can could would should do does did "
                           "is are was were will".split())
_WORD = re.compile(r"[^\W_][\w-]*", re.UNICODE)


def words(query: str) -> list[str]:
    return _WORD.findall(query)


def content_words(query: str) -> list[str]:
    return [w for w in words(query) if w.lower() not in FILLER]


def looks_like_name(word: str) -> bool:
    """A coined name or acronym: a capital after the first letter, or letters mixed with digits."""
    return any(c.isupper() for c in word[1:]) or (any(c.isdigit() for c in word) and any(c.isalpha() for c in word))


def is_title(all_words: list[str]) -> bool:
    """Title Case: most of four or more words, short ones aside, start with a capital."""
    long_words = [w for w in all_words if len(w) > 3]
    return len(all_words) >= 4 and len(long_words) >= 3 and sum(w[0].isupper() for w in long_words) >= 0.75 * len(long_words)


def is_list(query: str) -> bool:
    """Topics separated by commas or semicolons ("diffusion models, video, editing")."""
    parts = [p for p in re.split(r"[,;]", query) if p.strip()]
    return len(parts) >= 2 and max(len(words(p)) for p in parts) <= 4


def query_kind(query: str) -> str:
    """How a query reads: 'name' (a name, an acronym, one or two words), 'topic', 'title' (Title Case),
    'question' (asks something) or 'description' (a sentence or more, as a paraphrase or an abstract)."""
    all_words = words(query)
    if not all_words:
        return "topic"
    content = content_words(query)
    if query.rstrip().endswith("?") or all_words[0].lower() in QUESTION_START:
        return "question"
    if len(content) <= 2 or (len(content) <= 3 and any(looks_like_name(w) for w in content)):
        return "name"
    if is_title(all_words):
        return "title"
    if len(content) >= LONG_WORDS and not is_list(query):
        return "description"
    return "topic"


# A question that asks to make something cheaper, faster or smaller asks for efficiency: "how can I make
# LLM inference cheaper?". As words, "cheaper" is rare enough to drive BM25 to any paper that says it
# (a view-synthesis model "faster, cheaper and better"), and MiniLM barely weighs it. Read as "more
# efficient" (whose words BM25 leaves to the dense side, being common), the development questions of
# this shape went from P@10 0.16 to 0.24 in hybrid mode, the other development questions stayed at 0.260;
# held-out: 0.08 to 0.10, the others 0.355 to 0.350 (benchmarks/results/sorted.md, section 2).
_CHEAPER = re.compile(r"\b(?:cheaper|faster|quicker|smaller|lighter|leaner|fewer|less)\b", re.IGNORECASE)


def as_asked(query: str, kind: str) -> str:
    """The query as the rankers should read it: a question's "cheaper / faster / smaller" as efficiency."""
    return _CHEAPER.sub("more efficient", query) if kind == "question" else query


KINDS = ("name", "topic", "title", "question", "description")
LONG_WORDS = 8  # content words from which a query reads as a description, not a topic


@dataclass(frozen=True)
class Weights:
    """The dense share α of the blend per query kind, and how the dense score is made.

    English dense score = (1 - sentence) · cosine to the paper + sentence · cosine to its closest
    sentence, except for names: a name is found by its letters, and the sentence that holds it changed
    which paper came first for GRPO and JanusVLN (docs/quality.md, "Search quality"). Across languages, the dense score mixes the abstract, the real title (a title derived
    from the abstract counts as the abstract) and the closest sentence by the ml_ weights.
    """
    name: float = 0.3
    topic: float = 0.4
    title: float = 0.3
    question: float = 0.7
    description: float = 0.8
    sentence: float = 0.3
    multilingual: float = 0.8
    ml_abstract: float = 1.0
    ml_title: float = 0.0     # one-line queries written from what a paper does match its title no better
    ml_sentence: float = 0.5

    def alpha(self, kind: str) -> float:
        return getattr(self, kind)


DEFAULT_WEIGHTS = Weights()


def dense_english(doc: np.ndarray, sentence: np.ndarray | None, w: Weights) -> np.ndarray:
    return doc if sentence is None else (1 - w.sentence) * doc + w.sentence * sentence


def dense_multilingual(abstract: np.ndarray, title: np.ndarray, derived: np.ndarray,
                       sentence: np.ndarray | None, w: Weights) -> np.ndarray:
    title = np.where(derived, abstract, title)  # a derived title repeats the abstract: it adds nothing
    total = w.ml_abstract * abstract + w.ml_title * title
    norm = w.ml_abstract + w.ml_title
    if sentence is not None:
        total, norm = total + w.ml_sentence * sentence, norm + w.ml_sentence
    return total / max(norm, 1e-9)


def blend(dense: np.ndarray, lexical: np.ndarray, alpha: float) -> np.ndarray:
    """α · dense + (1 - α) · BM25, each scaled to [0, 1] over the candidates (a score in [0, 1])."""
    lo, hi = float(dense.min()), float(dense.max())
    dense_n = (dense - lo) / max(hi - lo, 1e-9)
    lex_n = lexical / max(float(lexical.max()), 1e-9)
    return alpha * dense_n + (1 - alpha) * lex_n


def best_sentence(vectors: np.ndarray, offsets: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """For each row, the cosine of its sentence closest to the query (every paper has one or more)."""
    starts, ends = offsets[rows], offsets[rows + 1]
    idx = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if len(rows) else np.zeros(0, int)
    scores = vectors[idx] @ query.ravel()
    bounds = np.concatenate([[0], np.cumsum(ends - starts)[:-1]]).astype(np.int64)
    return np.maximum.reduceat(scores, bounds) if len(rows) else np.zeros(0, np.float32)


@dataclass
class Candidates:
    """The papers a hybrid search weighs (the dense and the BM25 pools together), with their raw signals."""
    rows: np.ndarray
    lexical: np.ndarray                 # BM25
    doc: np.ndarray                     # cosine to the paper (English) or to its abstract (multilingual)
    sentence: np.ndarray | None = None  # cosine to the paper's closest sentence
    title: np.ndarray | None = None     # multilingual: cosine to the title
    derived: np.ndarray | None = None   # multilingual: the title was derived from the abstract

    def dense(self, w: Weights, kind: str = "") -> np.ndarray:
        if self.title is None:
            return dense_english(self.doc, None if kind == "name" else self.sentence, w)
        return dense_multilingual(self.doc, self.title, self.derived, self.sentence, w)


def rank(c: Candidates, w: Weights, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Candidate rows best first, with the blended score each is ranked by."""
    alpha = w.multilingual if c.title is not None else w.alpha(kind)
    scores = blend(c.dense(w, kind), c.lexical, alpha)
    order = np.argsort(-scores, kind="stable")
    return c.rows[order], scores[order]


# ---------------------------------------------------------------- fusing the rankings

RRF_K = 60


def rrf(rankings: Iterable[np.ndarray], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal-rank fusion of ranked row lists."""
    fused: dict[int, float] = {}
    for ranked in rankings:
        for rank, row in enumerate(ranked):
            fused[int(row)] = fused.get(int(row), 0.0) + 1.0 / (k + rank + 1)
    return fused


def rrf_ranked(rankings: Iterable[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows by reciprocal-rank fusion, best first, with scores scaled so that first in all rankings is 1.0."""
    rankings = list(rankings)
    fused = rrf(rankings)
    rows = np.array(sorted(fused, key=lambda r: -fused[r]), dtype=np.int64)
    return rows, np.array([fused[r] for r in rows.tolist()]) * (RRF_K + 1) / len(rankings)


def fuse(cands: Candidates, kind: str, method: str, weights: Weights) -> tuple[np.ndarray, np.ndarray]:
    """Candidates ranked by the blend of `weights` for the query's kind, or ("rrf") by reciprocal-rank fusion."""
    if method == "rrf":
        dense = cands.rows[np.argsort(-cands.dense(weights, kind), kind="stable")]
        has_word = cands.lexical > 0
        lex = cands.rows[has_word][np.argsort(-cands.lexical[has_word], kind="stable")]
        return rrf_ranked([dense, lex])
    return rank(cands, weights, kind)
