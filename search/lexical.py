"""Lexical scores: BM25 (bm25s) over cleaned titles and abstracts, built offline and stored as .npy/.json."""
from __future__ import annotations

import logging
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

BM25_DIR = "bm25"
_WORD = re.compile(r"(?u)\b\w\w+\b")

logging.getLogger("bm25s").setLevel(logging.ERROR)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """Lower-cased, stop words out, Snowball-stemmed: 'KV caches' -> ['kv', 'cach']."""
    stop = _stopwords()
    words = [w for w in _WORD.findall(text.lower()) if w not in stop]
    return _stemmer().stemWords(words)


def stem_of(word: str) -> str:
    return _stemmer().stemWord(word.lower())


def marker(terms: set[str]):
    """A predicate for words whose stem is one of the query's terms (for marking matches)."""
    return lambda word: bool(terms) and word.lower() not in _stopwords() and stem_of(word) in terms


def build(texts: list[str], out_dir: Path) -> None:
    """Index texts (one per paper, in index order) and save the BM25 matrices to out_dir."""
    import bm25s

    retriever = bm25s.BM25()
    # an empty document would make bm25s drop its row; a placeholder keeps rows aligned
    retriever.index([tokenize(t) or ["\x00"] for t in texts], show_progress=False)
    retriever.save(str(out_dir), show_progress=False)


class Lexical:
    """Loaded BM25 index; scores every paper for a query in one sparse pass."""

    def __init__(self, index_dir: Path, count: int):
        import bm25s

        self.retriever = bm25s.BM25.load(str(index_dir / BM25_DIR), show_progress=False, verbosity=0)
        self.vocab = self.retriever.vocab_dict
        self.count = count

    def scores(self, query: str) -> np.ndarray:
        ids = [self.vocab[t] for t in dict.fromkeys(tokenize(query)) if t in self.vocab]
        if not ids:
            return np.zeros(self.count, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(ids), dtype=np.float32)
