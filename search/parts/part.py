"""What a later part of the index is (`Part`, declared once in its own module and listed in registry.py) and
what the build running it gives it (`Context`, with the services a part uses: embedding through the cache,
the progress line). Neither the parts nor this module import the build: the build and the engine both read
the declarations."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from ..build_options import BuildOptions
from ..corpus import Paper
from ..encoding.embed import EmbeddingCache, Encoder, encode_cached, start_pool
from ..index import IndexData
from ..progress import Progress
from ..text import text_hash

S = TypeVar("S")   # what a part holds between its steps in one build (its state)
T = TypeVar("T")


class Context(Protocol):
    """What a part reads of the build running it (build.Build is one): the papers, their abstracts' vectors once
    the abstracts' stage is done, the options, the previous build, the encoders and the build's services."""
    options: BuildOptions
    papers: list[Paper]
    progress: Progress | None
    previous: Path | None               # the build published before this one started
    model: Any                          # the sentence-transformers model, where one is loaded (torch's pool)
    corpus_fingerprint: str
    vectors: np.ndarray | None
    vectors_key: str                    # what the abstracts' vectors are made with (embed.vectors_fingerprint)
    fingerprint: str                    # the model's
    encoder: Encoder | None
    sentence_encoder: Encoder | None
    packed_file: Path | None            # the export that embeds sentences several to a row, where there is one
    embedding: dict                     # the manifest's `embedding`: each stage's seconds and texts embedded
    entries: dict                       # the manifest entries written so far (review search adds to the reviews')

    def cache(self, key: str) -> EmbeddingCache:
        """The embedding cache of one vector space, loaded once a build."""

    def derived(self, name: str, make: Callable[[], T]) -> T:
        """`make()`, computed once a build: what several parts derive from the papers (the sentences of each
        abstract, which the sentences and the multilingual space both embed)."""


def _always(ctx: Context, state: object) -> bool:
    return True


def _nothing(ctx: Context, state: object) -> None:
    pass


def _same(ctx: Context, entry: object) -> object:
    return entry


def _no_state() -> None:
    return None


def _no_report(state: object, reused: bool) -> dict:
    return {}


@dataclass(frozen=True)
class Part(Generic[S]):
    """A part of the index computed after the abstracts (a later stage), all the build and the engine need of it
    in one place: whether a build makes it, what it costs, whether it has work, how it is computed and written,
    which of its files a build takes whole from the previous one and what they are made of, its manifest entry,
    and how the engine loads it. What it computes lives in its state (`state()`, one a build), never in the
    build's: each step below that takes a state gets the same one."""
    name: str
    enabled: Callable[[BuildOptions, bool], bool]       # with these options, on inputs with (True) or without reviews
    costs: Callable[[BuildOptions], dict[str, float]]   # the progress stages it reports, relative seconds at 4,315
    compute: Callable[[Context, S], None]
    write: Callable[[Context, S, Path], object]   # its files into the build folder; returns its manifest entry
    state: Callable[[], S] = _no_state            # a fresh state, made at the start of each build
    # something to compute, beyond what the cache and previous build hold; sets nothing (a part whose check reads
    # what its compute needs keeps it in its state, and says so)
    has_work: Callable[[Context, S], bool] = _always
    # Taken whole from the previous build where `key` gives what it gave (build.reusable): its files linked, its
    # entry carried over (`carry`), `adopt` run instead of `compute`.
    files: tuple[str, ...] = ()
    key: Callable[[Context, S], list[str]] | None = None
    rows: bool = True                     # its files are made row by row of the papers: their rows are in its key
    adopt: Callable[[Context, S], None] = _nothing   # what taking it whole still sets (each paper's topic)
    carry: Callable[[Context, object], object] = _same  # the previous build's entry as this build's
    entry: str = ""                       # its manifest entry: a field of manifest.Manifest, else under its parts
    kind: type | None = None              # the entry's type, where it is under the manifest's parts (its module's)
    # what the engine holds of it (engine.Parts), of the index and the part's entry; None: the engine loads none
    load: Callable[[IndexData, Any], object] | None = None
    what: str = ""                        # its name in the engine's message that it cannot be read
    applies: Callable[[Context, S], bool] = _always   # whether the papers give it anything to do
    # the build report's fields it fills (build.BuildReport), of its state and whether it was taken whole
    report: Callable[[S, bool], dict] = _no_report

    def __post_init__(self):
        object.__setattr__(self, "entry", self.entry or self.name)
        object.__setattr__(self, "what", self.what or self.name)

    def wanted(self, ctx: Context, state: S) -> bool:
        return self.enabled(ctx.options, any(p.reviews for p in ctx.papers)) and self.applies(ctx, state)


def announce(progress: Progress | None, stage: str) -> None:
    """A stage without a count starts (topics, map, writing): the bar names it instead of sitting full."""
    if progress:
        progress(stage, 0, 1)


def embed(ctx: Context, stage: str, encoder: Encoder, texts: list[str], key: str,
          chunk: int | None = None) -> tuple[np.ndarray, int]:
    """Vectors of texts through the cache; the stage's seconds and newly embedded count in the manifest."""
    o = ctx.options
    t = time.perf_counter()
    with start_pool(ctx.model, o.processes if o.backend == "torch" else 0, o.device) as pool:
        vectors, embedded = encode_cached(encoder, texts, ctx.cache(key), o.batch_size, ctx.progress, desc=stage,
                                          pool=pool, chunk=chunk)
    ctx.embedding["seconds"][stage] = round(time.perf_counter() - t, 3)
    ctx.embedding["embedded"][stage] = embedded
    return vectors, embedded


def misses(cache: EmbeddingCache, texts: list[str]) -> bool:
    """Whether the cache lacks any of these texts' vectors."""
    return any(cache.get(text_hash(t)) is None for t in texts)
