"""Lexical scores: BM25 (bm25s) over cleaned titles and abstracts, built offline and stored as .npy/.json."""
from __future__ import annotations

import logging
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

BM25_DIR = "bm25"
_WORD = re.compile(r"(?u)\b\w\w+\b")

# Words of a question's frame, not of its topic: they never drive BM25 and are never marked.
FILLER = frozenset("""
how what why which who whom whose when where whether can could would should shall may might must
do does did done is are was were be been being am i me my mine we us our you your one someone
there here this that these those it its they them their thing things something anything way ways
make makes making made get gets getting got use uses using used want wants need needs help helps
find finding know tell show shows let lets try trying give gives really actually
much many more most lot lots good better best new kind kinds type types sort also just like
""".split())
COMMON = 0.25  # a word in more than this share of the papers says little about any one of them

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


def query_terms(text: str, filler: frozenset[str] = FILLER) -> list[str]:
    """The query's stems that can drive BM25: its topic, not its question frame ("how do I ...")."""
    return tokenize(" ".join(w for w in _WORD.findall(text.lower()) if w not in filler))


def stem_of(word: str) -> str:
    return _stemmer().stemWord(word.lower())


def marker(terms: set[str]):
    """A predicate for words whose stem is one of the query's terms (for marking matches)."""
    return lambda word: bool(terms) and word.lower() not in _stopwords() and stem_of(word) in terms


DESCRIPTION = ("BM25 (bm25s, Lucene variant, k1=1.5, b=0.75) over cleaned title + abstract, English stop words, "
               "Snowball stems")


def build(texts: list[str], out_dir: Path) -> str:
    """Index texts (one per paper, in index order), save the BM25 matrices to out_dir; returns the
    manifest entry."""
    import bm25s

    retriever = bm25s.BM25()
    # an empty document would make bm25s drop its row; a placeholder keeps rows aligned
    retriever.index([tokenize(t) or ["\x00"] for t in texts], show_progress=False)
    retriever.save(str(out_dir), show_progress=False)
    return DESCRIPTION


class Lexical:
    """Loaded BM25 index; scores every paper for a query in one sparse pass."""

    def __init__(self, index_dir: Path, count: int):
        import bm25s

        self.retriever = bm25s.BM25.load(str(index_dir / BM25_DIR), show_progress=False, verbosity=0)
        self.vocab = self.retriever.vocab_dict
        self.count = count
        self.doc_freq = np.diff(self.retriever.scores["indptr"])  # papers holding each vocabulary stem

    def meaningful(self, terms: list[str]) -> set[str]:
        """The terms worth marking in a result: in the vocabulary and not in most papers."""
        return {t for t in terms if t in self.vocab and self.doc_freq[self.vocab[t]] <= COMMON * self.count}

    def scores(self, query: str, question: bool = True) -> np.ndarray:
        """BM25 of every paper; question=False for a paper's own text, whose every word counts."""
        terms = query_terms(query) if question else tokenize(query)
        ids = [self.vocab[t] for t in dict.fromkeys(terms) if t in self.vocab]
        if not ids:
            return np.zeros(self.count, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(ids), dtype=np.float32)
