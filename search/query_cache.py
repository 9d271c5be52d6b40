"""Query vectors with a small LRU in front of the encoders: a repeated query costs no second encode."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from .encoding.embed import Encoder

MAX_QUERY_CHARS = 20_000  # longer input is cut before tokenising; the model sees 256 tokens anyway


class QueryCache:
    def __init__(self, encoder: Encoder, multilingual: Callable[[], object] = lambda: None, size: int = 256):
        """multilingual: gives the multilingual encoder (None without one) when a query first needs it."""
        self.encoder, self.multilingual, self.size = encoder, multilingual, size
        self._vectors: OrderedDict[str, tuple[np.ndarray, bool]] = OrderedDict()

    def _cached(self, key: str, compute: Callable[[], tuple[np.ndarray, bool]]) -> tuple[np.ndarray, bool]:
        if key in self._vectors:
            self._vectors.move_to_end(key)
        else:
            self._vectors[key] = compute()
            if len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return self._vectors[key]

    def english(self, query: str) -> tuple[np.ndarray, bool]:
        """The query's vector (1 x d) and whether the model had to cut the query."""
        def compute() -> tuple[np.ndarray, bool]:
            text = query[:MAX_QUERY_CHARS]
            truncated = (len(query) > MAX_QUERY_CHARS
                         or self.encoder.count_tokens(text) > self.encoder.max_seq_length)
            return self.encoder.encode([text]), truncated

        return self._cached(query, compute)

    def across_languages(self, query: str) -> np.ndarray:
        """The query's vector in the multilingual space (the same LRU, under keys an English query cannot have)."""
        return self._cached("\x00ml\x00" + query, lambda: (self.multilingual().encode([query]), False))[0]

    def clear(self) -> None:
        """Forget every vector (for timing runs that must encode every query)."""
        self._vectors.clear()
