"""Lexical scores: BM25 (bm25s) over cleaned titles and abstracts, built offline and stored as .npy/.json."""
from __future__ import annotations

import json
import logging
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..text import stem_of, stemmer

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
# A word of at least this many papers is one the index's English uses: at 1, "une ... plus sure" passed as
# English (1 of 92 foreign queries); at 3, none did, and 197 of 206 English questions still passed.
ENGLISH_IN = 3

logging.getLogger("bm25s").setLevel(logging.ERROR)


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    """bm25s's English stop words, read from its module alone: importing the package imports scipy and numba."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_bm25s_stopwords", Path(importlib.util.find_spec("bm25s").origin).parent / "stopwords.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(module.STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """Lower-cased, stop words out, Snowball-stemmed: 'KV caches' -> ['kv', 'cach']."""
    stop = _stopwords()
    words = [w for w in _WORD.findall(text.lower()) if w not in stop]
    return stemmer().stemWords(words)


def query_terms(text: str, filler: frozenset[str] = FILLER) -> list[str]:
    """The query's stems that can drive BM25: its topic, not its question frame ("how do I ...")."""
    return tokenize(" ".join(w for w in _WORD.findall(text.lower()) if w not in filler))


def marker(terms: set[str]):
    """A predicate for words whose stem is one of the query's terms (for marking matches)."""
    return lambda word: bool(terms) and word.lower() not in _stopwords() and stem_of(word) in terms


DESCRIPTION = ("BM25 (bm25s, Lucene variant, k1=1.5, b=0.75) over cleaned title + abstract, English stop words, "
               "Snowball stems")


K1, B = 1.5, 0.75  # bm25s's defaults, which DESCRIPTION names
PLACEHOLDER = "\x00"  # an empty document's one token: bm25s dropped empty rows, and the rows must stay aligned


def build(texts: list[str], out_dir: Path, known: dict[str, str] | None = None) -> str:
    """Index texts (one per paper, in index order), save the BM25 matrices to out_dir as bm25s saves them
    (Matrix reads them; bm25s.BM25.load too); returns the manifest entry.

    The scores are bm25s's Lucene variant, computed over all papers at once with numpy, in its dtypes' steps:
    bm25s's loop over the documents took 13 s at 70,130 papers (py-spy), this about 2. `known`: texts'
    tokens already made, joined by spaces (a record's, kept in the record cache): only the others are tokenized."""
    known = known or {}
    docs = [known[t].split() if t in known else tokenize(t) for t in texts]
    docs = [d or [PLACEHOLDER] for d in docs]
    vocab: dict[str, int] = {}
    for d in docs:
        for w in d:
            if w not in vocab:
                vocab[w] = len(vocab)
    lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    terms = np.fromiter((vocab[w] for d in docs for w in d), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
    # each (term, document) pair once, with its count: sorted by term, then document, as the CSC matrix is
    pairs, tf = np.unique(terms * len(docs) + rows, return_counts=True)
    term, doc = np.divmod(pairs, len(docs))
    df = np.bincount(term, minlength=len(vocab))
    n = len(docs)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    norm = K1 * ((1 - B) + B * lengths / lengths.mean())   # float64, as bm25s's numpy mean makes it
    tf = tf.astype(np.float32)
    data = idf[term] * (tf / (norm[doc] + tf))
    indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
    out_dir.mkdir(parents=True, exist_ok=True)
    np.save(out_dir / "data.csc.index.npy", data.astype(np.float32))
    np.save(out_dir / "indices.csc.index.npy", doc.astype(np.int32))
    np.save(out_dir / "indptr.csc.index.npy", indptr)
    (out_dir / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    params = {"k1": K1, "b": B, "delta": 0.5, "method": "lucene", "idf_method": "lucene", "dtype": "float32",
              "int_dtype": "int32", "num_docs": n, "version": _bm25s_version(), "backend": "numpy"}
    (out_dir / "params.index.json").write_text(json.dumps(params, indent=4), encoding="utf-8")
    return DESCRIPTION


def _bm25s_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bm25s")
    except PackageNotFoundError:
        return ""


class Lexical:
    """Loaded BM25 index; scores every paper for a query in one sparse pass.

    The matrices bm25s saved are read here with numpy alone: importing bm25s pulls in scipy and numba, 0.6 s of
    CPU on a command's start (benchmarks/results/start.md), for a sum of a few columns."""

    def __init__(self, index_dir: Path, count: int):
        self.matrix = Matrix(index_dir / BM25_DIR)
        self.vocab = self.matrix.vocab
        self.count = count
        self.doc_freq = np.diff(self.matrix.indptr)  # papers holding each vocabulary stem

    def meaningful(self, terms: list[str]) -> set[str]:
        """The terms worth marking in a result: in the vocabulary and not in most papers."""
        return {t for t in terms if t in self.vocab and self.doc_freq[self.vocab[t]] <= COMMON * self.count}

    def english_word(self, word: str) -> bool:
        """Whether the papers' English uses `word`: a stop word, or a stem in at least ENGLISH_IN papers."""
        word = word.lower()
        if word in _stopwords() or word in FILLER:
            return True
        row = self.vocab.get(stem_of(word))
        return row is not None and int(self.doc_freq[row]) >= ENGLISH_IN

    def scores(self, query: str, question: bool = True) -> np.ndarray:
        """BM25 of every paper; question=False for a paper's own text, whose every word counts."""
        terms = query_terms(query) if question else tokenize(query)
        ids = [self.vocab[t] for t in dict.fromkeys(terms) if t in self.vocab]
        if not ids:
            return np.zeros(self.count, dtype=np.float32)
        return self.matrix.scores(ids)


class Matrix:
    """A BM25 index as bm25s saves it (params.index.json, vocab.index.json and the CSC matrix of each stem's
    scores as .npy), scored as bm25s scores it: the columns of the query's stems summed, in its dtype. A method
    that adds a score for absent stems (bm25l, bm25+) is left to bm25s itself."""

    def __init__(self, folder: Path, mmap: bool = False):
        params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        self.vocab: dict[str, int] = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
        self.num_docs, self.dtype = int(params["num_docs"]), np.dtype(params.get("dtype", "float32"))
        self._bm25s = None
        if params.get("method") in ("bm25l", "bm25+"):
            import bm25s

            self._bm25s = bm25s.BM25.load(str(folder), mmap=mmap, show_progress=False)
        mode = "r" if mmap else None
        self.data, self.indices, self.indptr = (np.load(folder / f"{name}.csc.index.npy", mmap_mode=mode)
                                                for name in ("data", "indices", "indptr"))

    def scores(self, ids: list[int]) -> np.ndarray:
        """Every document's score for these vocabulary ids (float32)."""
        if self._bm25s is not None:
            return np.asarray(self._bm25s.get_scores(ids), dtype=np.float32)
        out = np.zeros(self.num_docs, dtype=self.dtype)
        for i in ids:
            start, end = self.indptr[i], self.indptr[i + 1]
            np.add.at(out, self.indices[start:end], self.data[start:end])
        return out.astype(np.float32, copy=False)
