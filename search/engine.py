"""The engine that answers queries: search by text, and papers similar to papers."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .corpus import Paper
from .embed import load_model, model_dimension, model_fingerprint, token_count
from .index import REBUILD, IndexData, IndexLoadError, load_index

# Shown on the empty page; tests check that each one finds its paper among the seeds.
EXAMPLE_QUERIES = [
    "extending the context window of a language model without finetuning",
    "neural network equivariant to any symmetry subgroup",
    "benchmark of chemical reasoning over molecular graphs",
    "which tasks should be trained together in multi-task learning",
]

MAX_QUERY_CHARS = 20_000  # longer input is cut before tokenising; the model sees 256 tokens anyway


class UnknownPaper(LookupError):
    """One or more ids name no paper in the index."""

    def __init__(self, ids: list[str]):
        self.ids = ids
        super().__init__(f"no paper with id {', '.join(repr(i) for i in ids)} in this index")


@dataclass
class Hit:
    paper: Paper
    score: float              # cosine similarity
    rank: int

    def to_dict(self) -> dict:
        p = self.paper
        return {"id": p.id, "score": round(float(self.score), 6), "title": p.title,
                "title_derived": p.title_derived, "abstract": p.abstract, "sources": p.sources,
                "url": p.url, "keywords": p.keywords, "primary_area": p.primary_area, "venue": p.venue}


@dataclass
class Result:
    hits: list[Hit] = field(default_factory=list)
    message: str = ""         # shown instead of, or above, the hits
    truncated: bool = False   # the query was longer than the model's window


class Engine:
    def __init__(self, data: IndexData, model, fingerprint: str | None = None, query_cache: int = 256):
        expected = data.manifest["model"]
        if model_dimension(model) != data.manifest["dimension"]:
            raise IndexLoadError(f"the index at {data.path} has {data.manifest['dimension']}-d vectors but "
                                 f"the query model makes {model_dimension(model)}-d ones; {REBUILD}")
        if (fingerprint or model_fingerprint(model)) != expected["fingerprint"]:
            raise IndexLoadError(f"the index at {data.path} was built with another model "
                                 f"({expected['name']}); {REBUILD} with this one")
        self.data = data
        self.model = model
        self.papers = data.papers
        self.max_tokens = int(model.max_seq_length)
        self._row = {}
        for row, p in enumerate(self.papers):
            for pid in [p.id, *p.aliases]:
                self._row.setdefault(pid, row)
        # FAISS keeps its own copy; this one serves similar() without a reconstruct per call
        self.vectors = data.vectors.reconstruct_n(0, data.vectors.ntotal)
        self._cache: OrderedDict[str, tuple[np.ndarray, bool]] = OrderedDict()
        self._cache_size = query_cache

    @property
    def manifest(self) -> dict:
        return self.data.manifest

    def paper(self, pid: str) -> Paper | None:
        row = self._row.get(pid.strip())
        return None if row is None else self.papers[row]

    def row(self, pid: str) -> int | None:
        return self._row.get(pid.strip())

    def encode_query(self, query: str) -> tuple[np.ndarray, bool]:
        """The query vector and whether the model had to cut the query; repeated queries are free."""
        if query in self._cache:
            self._cache.move_to_end(query)
            return self._cache[query]
        text = query[:MAX_QUERY_CHARS]
        truncated = len(query) > MAX_QUERY_CHARS or token_count(self.model, text) > self.max_tokens
        vec = self.model.encode([text], normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False).astype(np.float32)
        self._cache[query] = (vec, truncated)
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return vec, truncated

    def _hits(self, scores: np.ndarray, rows: np.ndarray, k: int, exclude: set[int]) -> list[Hit]:
        hits = []
        for s, r in zip(scores, rows):
            if r < 0 or int(r) in exclude:
                continue
            hits.append(Hit(self.papers[int(r)], float(s), len(hits) + 1))
            if len(hits) == k:
                break
        return hits

    def search(self, query: str, k: int = 10) -> Result:
        """The k papers whose abstracts are closest in meaning to the query."""
        query = (query or "").strip()
        if not query:
            return Result(message="Type a question or a topic to search.")
        if not self.papers:
            return Result(message="The index holds no papers.")
        vec, truncated = self.encode_query(query)
        k = max(1, min(int(k), len(self.papers)))
        scores, rows = self.data.vectors.search(vec, k)
        message = (f"Your text is longer than the model's window of {self.max_tokens} tokens; "
                   "only its beginning was searched.") if truncated else ""
        return Result(self._hits(scores[0], rows[0], k, set()), message, truncated)

    def similar(self, ids: list[str], k: int = 10) -> Result:
        """The papers nearest to the given ones together, never one of them."""
        ids = [i.strip() for i in ids if i.strip()]
        unknown = [i for i in ids if self.row(i) is None]
        if unknown or not ids:
            raise UnknownPaper(unknown or ids)
        rows = sorted({self.row(i) for i in ids})
        vec = self.vectors[rows].mean(axis=0, keepdims=True)
        vec /= max(float(np.linalg.norm(vec)), 1e-12)
        k = max(1, min(int(k), len(self.papers) - len(rows)))
        scores, found = self.data.vectors.search(vec.astype(np.float32), k + len(rows))
        return Result(self._hits(scores[0], found[0], k, set(rows)))


def open_engine(index_dir: Path, model=None, fingerprint: str | None = None) -> Engine:
    """Load an index and the model it was built with (or check the one given against it)."""
    data = load_index(index_dir)
    if model is None:
        model = load_model(data.manifest["model"]["name"])
    return Engine(data, model, fingerprint)
