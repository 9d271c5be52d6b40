"""The rankers a query runs through: nearest vectors (FAISS), BM25, the multilingual space, the candidates
they give together (fused in fusion.py), and the per-list SVM of "papers like these". They score rows; the
engine turns rows into results."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Protocol

import numpy as np

from . import fusion
from .parts import lexical
from .parts.evidence import Evidence
from .encoding.multilingual import MultilingualSpace
from .parts.summaries import Summaries

POOL = 100     # candidates each ranker contributes to the fusion
SVM_C = 0.01   # arxiv-sanity's setting for "papers like my library"


FLOAT32_UP_TO = 200_000  # papers whose vectors the engine keeps in float32 beside an approximate index (300 MB)


def top_rows(scores: np.ndarray, n: int) -> np.ndarray:
    """Rows of the n highest finite scores, best first."""
    n = min(n, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top], kind="stable")]
    return top[np.isfinite(scores[top])]


def unit(vec: np.ndarray) -> np.ndarray:
    """A vector scaled to length 1 (the centre of several papers or texts, compared by cosine)."""
    return (vec / max(float(np.linalg.norm(vec)), 1e-12)).astype(np.float32)


def all_vectors(index, dtype=np.float32, chunk: int = 100_000) -> np.ndarray:
    """Every vector of a FAISS index by row, decoded chunk by chunk (no float32 copy of all at once)."""
    import faiss

    try:
        faiss.extract_index_ivf(index).make_direct_map()  # IVF lists need it to find a row
    except RuntimeError:
        pass  # not an IVF index
    out = np.empty((index.ntotal, index.d), dtype=dtype)
    for start in range(0, index.ntotal, chunk):
        n = min(chunk, index.ntotal - start)
        out[start:start + n] = index.reconstruct_n(start, n)
    return out


def by_words_closeness(cosines: np.ndarray, their_words: np.ndarray, words: np.ndarray) -> np.ndarray:
    """A closeness for papers without a vector, from their words: the cosine that stands among the embedded
    candidates (`cosines`, with BM25 scores `their_words`) where the paper's BM25 score (`words`) stands among
    theirs. A paper without a vector is so ranked by its words on the embedded papers' scale, neither lifted nor
    sunk beside them, while the build publishes the vectors as they come: given the least cosine of the embedded
    (as before), every paper without a vector fell below each embedded one its words matched as well.""" 
    if not len(cosines):
        return np.zeros(len(words), np.float32)
    share = np.searchsorted(np.sort(their_words), words, side="right") / len(their_words)
    return np.quantile(cosines, np.clip(share, 0.0, 1.0)).astype(np.float32)


class LaterParts(Protocol):
    """The later parts of the index the rankers read (engine.Parts), each loaded at its first use."""
    sentences: Evidence | None
    multilingual: MultilingualSpace | None
    summaries: Summaries | None


class Rankers:
    """Every signal a paper can be ranked by, over one index's papers (rows)."""

    def __init__(self, index, exact: bool, bm25: Callable[[], lexical.Lexical], parts: LaterParts,
                 derived: np.ndarray, unembedded: np.ndarray | None = None):
        """bm25: loads the BM25 index; parts: the index's later parts (engine.Parts), each loaded when
        first asked for. Each signal is read on its first use: a command ranks by what it needs."""
        self.index, self.exact = index, exact
        # rows whose abstract is not embedded yet (the words stage's index): a zero vector each, never a
        # nearest neighbour; None when every row has its vector
        self.embedded: np.ndarray | None = None
        if unembedded is not None and len(unembedded):
            self.embedded = np.ones(index.ntotal, dtype=bool)
            self.embedded[unembedded] = False
        self._bm25, self._parts = bm25, parts
        self.derived = derived  # titles made from the abstract: no title signal across languages

    @cached_property
    def vectors(self) -> np.ndarray:
        # FAISS keeps its own copy; this one serves similar(), fusion and filtered scoring directly.
        # Beside an approximate index it is float32 up to FLOAT32_UP_TO papers (a filtered query scores every
        # row in one product: 70,130 papers' float16 rows gathered and converted took 280 ms a query,
        # benchmarks/results/page_many.md), float16 above: half the memory, cosines within 1e-3.
        small = self.index.ntotal <= FLOAT32_UP_TO
        return all_vectors(self.index, np.float32 if self.exact or small else np.float16)

    @cached_property
    def lexical(self) -> lexical.Lexical:
        return self._bm25()

    @cached_property
    def evidence(self) -> Evidence | None:
        return self._parts.sentences

    @cached_property
    def multilingual(self) -> MultilingualSpace | None:
        return self._parts.multilingual

    @cached_property
    def summaries(self) -> Summaries | None:
        """The reviewers' summaries of each paper, a view to re-score by."""
        return self._parts.summaries

    @cached_property
    def ml_evidence(self) -> Evidence | None:
        ml, evidence = self.multilingual, self.evidence
        if ml is not None and ml.sentences is not None and evidence is not None:
            return Evidence(evidence.sentences, ml.sentences, evidence.offsets)
        return None

    def with_vectors(self, mask: np.ndarray | None) -> np.ndarray | None:
        """The rows a mask allows that have their vector (the mask itself when every row has one)."""
        if self.embedded is None:
            return mask
        return self.embedded if mask is None else mask & self.embedded

    def cosines(self, rows: np.ndarray | list[int], vec: np.ndarray) -> np.ndarray:
        return self.vectors[rows] @ vec.ravel() if len(rows) else np.zeros(0, np.float32)

    def dense(self, vec: np.ndarray, pool: int, mask: np.ndarray | None) -> np.ndarray:
        """The pool nearest rows by FAISS, among those the mask allows."""
        import faiss

        # one query: waking FAISS's OpenMP team costs more than it saves, and its spinning threads take
        # the core the query encoder needs. The setting holds for the calling thread only.
        faiss.omp_set_num_threads(1)
        mask = self.with_vectors(mask)
        if mask is not None and not mask.any():
            return np.zeros(0, dtype=np.int64)
        if mask is None:
            _, rows = self.index.search(vec, pool)
        elif not self.exact:  # an approximate index misses filtered rows; the allowed ones are scored exactly
            if self.vectors.dtype == np.float32:  # every row in one product, the others left out after
                scores = np.where(mask, self.vectors @ vec.ravel(), -np.inf)
                return top_rows(scores, pool)
            allowed = np.flatnonzero(mask)
            scores = self.vectors[allowed].astype(np.float32) @ vec.ravel()
            return allowed[top_rows(scores, pool)]
        else:
            allowed = np.flatnonzero(mask).astype(np.int64)
            params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed))
            _, rows = self.index.search(vec, min(pool, len(allowed)) or 1, params=params)
        return rows[0][rows[0] >= 0]

    @staticmethod
    def lexical_rows(scores: np.ndarray, pool: int, mask: np.ndarray | None) -> np.ndarray:
        """The pool best rows by BM25 that share a word with the query, among those the mask allows."""
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        nonzero = np.flatnonzero(scores > 0)
        if len(nonzero) > pool:
            nonzero = nonzero[np.argpartition(-scores[nonzero], pool)[:pool]]
        return nonzero[np.argsort(-scores[nonzero], kind="stable")]

    def multilingual_candidates(self, vec: np.ndarray) -> fusion.Candidates:
        """Every paper's multilingual signals: cosine to its abstract, its title and its closest sentence."""
        ml, q = self.multilingual, vec.ravel()
        sentence = None
        if self.ml_evidence is not None:
            sentence = np.maximum.reduceat(self.ml_evidence.vectors @ q, self.ml_evidence.offsets[:-1])
        n = len(ml.abstracts)
        return fusion.Candidates(np.arange(n), np.zeros(n, np.float32), ml.abstracts @ q, sentence,
                                  ml.titles @ q, self.derived)

    def candidates(self, vec: np.ndarray, dense_rows: np.ndarray, lex_rows: np.ndarray, lex_scores: np.ndarray,
                   ml: fusion.Candidates | None = None) -> fusion.Candidates:
        """The union of the dense and BM25 pools with each paper's signals (for the blend, and for tuning it)."""
        rows = np.unique(np.concatenate([dense_rows, lex_rows])).astype(np.int64)
        if ml is not None:
            return fusion.Candidates(rows, lex_scores[rows], ml.doc[rows],
                                      None if ml.sentence is None else ml.sentence[rows], ml.title[rows],
                                      ml.derived[rows])
        sentence = None
        if self.evidence is not None:
            sentence = fusion.best_sentence(self.evidence.vectors, self.evidence.offsets, rows, vec)
        cosines = self.cosines(rows, vec)
        if self.embedded is not None:
            has = self.embedded[rows]
            cosines = np.where(has, cosines, by_words_closeness(cosines[has], lex_scores[rows][has],
                                                                lex_scores[rows]))
        return fusion.Candidates(rows, lex_scores[rows], cosines, sentence)

    def svm_scores(self, rows: list[int], extra: np.ndarray | None = None) -> np.ndarray:
        """Papers like a list: a linear SVM per list, the list against all other papers (as arxiv-sanity).

        Measured better than the mean of the list's vectors for same-area neighbours (benchmarks/).
        `extra` adds positives that are not papers of the index (uploaded texts).
        """
        from sklearn.svm import LinearSVC

        labels = np.zeros(len(self.vectors), dtype=np.int8)
        labels[rows] = 1
        train = self.vectors
        if self.embedded is not None:  # a zero vector is no paper to learn from
            train, labels = train[self.embedded], labels[self.embedded]
        if extra is not None and len(extra):
            train = np.vstack([train, extra])
            labels = np.concatenate([labels, np.ones(len(extra), dtype=np.int8)])
        svm = LinearSVC(C=SVM_C, class_weight="balanced", max_iter=10_000, tol=1e-6, random_state=0)
        scores = svm.fit(train, labels).decision_function(self.vectors)
        return scores if self.embedded is None else np.where(self.embedded, scores, -np.inf)
