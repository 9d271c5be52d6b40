"""The offline build: read the corpus, embed it (through the cache), write and publish the index.

`build_index` runs a short list of stages over one `Build`; each part of the folder is written by its
owner (manifest.py lists them), and the manifest gathers their entries."""
from __future__ import annotations

import hashlib
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import evidence, explore, lexical, reviews
from . import index as ix
from . import packed
from . import query_encoder as qe
from .corpus import Paper, input_files, load_corpus
from .embed import (DEFAULT_BACKEND, DEFAULT_MODEL, EmbeddingCache, Encoder, TorchEncoder, cpu_description,
                    encode_cached, load_model, model_dimension, model_fingerprint, start_pool, vectors_fingerprint)
from .manifest import Manifest, ModelEntry, vectors_entry
from .multilingual import MultilingualEncoder, write_space
from .progress import Progress


@dataclass(frozen=True)
class BuildOptions:
    """What to build and how. index_build.py turns the multilingual space on; a library call leaves it off."""
    model_name: str = DEFAULT_MODEL
    batch_size: int = 32
    cache_dir: Path | None = None      # default: .embedding_cache/ beside the index
    device: str | None = None          # torch's device; anything but the CPU embeds with torch
    skip_bad: bool = False             # skip malformed lines (each reported) instead of stopping
    sentences: bool = True             # sentence vectors for "why this result"; an evaluation run can skip them
    multilingual: bool = False
    explore: bool = True               # topics and the map; an evaluation run can skip them
    query_encoder: bool = True         # ship the ONNX export, so queries need no torch
    index_spec: str = ix.AUTO
    processes: int = 0                 # torch worker processes (sentence-transformers' pool)
    backend: str = DEFAULT_BACKEND     # openvino, onnxruntime or torch
    ml_processes: int = min(os.cpu_count() or 1, 4)  # worker processes of the multilingual space
    review_search: bool = True         # BM25 over the reviews' texts (benchmarks/results/reviews.md: its cost)


@dataclass
class BuildReport:
    path: Path
    count: int
    embedded: int                      # abstracts that were not in the cache
    seconds: float
    embedded_sentences: int = 0        # sentences (for "why this result") not in the cache
    timings: dict = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    explore_reused: bool = False       # topics and map copied from the previous build


def inputs_digest(inputs: list[Path]) -> str:
    """sha256 over the input files' names and bytes, in any order: equal digests, equal index inputs."""
    parts = sorted(f"{f.name}\t{ix.file_digest(f)}" for f in input_files(inputs))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _announce(progress: Progress | None, stage: str) -> None:
    """A stage without a count starts (topics, map, writing): the bar names it instead of sitting full."""
    if progress:
        progress(stage, 0, 1)


def default_cache_dir(out: Path) -> Path:
    return out.parent / ".embedding_cache"


@dataclass
class Build:
    """One build as its stages fill it in."""
    inputs: list[Path]
    out: Path
    options: BuildOptions
    progress: Progress | None
    model: object = None
    papers: list[Paper] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    fingerprint: str = ""
    onnx_file: Path | None = None
    packed_file: Path | None = None     # the export that embeds sentences several to a row
    encoder: Encoder | None = None
    embedding: dict = field(default_factory=dict)
    vectors_key: str = ""
    corpus_fingerprint: str = ""        # index.corpus_fingerprint of the papers read
    sentence_groups: list[list[str]] = field(default_factory=list)
    vectors: np.ndarray | None = None
    sentence_vectors: np.ndarray | None = None
    embedded: int = 0
    embedded_sentences: int = 0
    multilingual: tuple | None = None   # abstracts, sentences, titles, fingerprint
    explore: explore.Explore | None = None

    @property
    def cache_dir(self) -> Path:
        return self.options.cache_dir or default_cache_dir(self.out)

    @contextmanager
    def timed(self, stage: str):
        t = time.perf_counter()
        yield
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - t


# Seconds each stage took for 4,315 papers on 2 cores (benchmarks/experiments/results/floor.md and first_run.md): only
# their ratios matter, for the whole build's time left (progress.ProgressLog scales them by the pace of
# the stage running).
STAGE_COSTS = {"abstracts": 85.0, "sentences": 81.0, "multilingual abstracts": 30.0,
               "multilingual sentences": 32.0, "multilingual titles": 7.0, "topics": 4.0, "map": 5.0,
               "writing the index": 1.2}


def stage_costs(options: BuildOptions | None = None) -> dict[str, float]:
    """The stages a build with these options runs, in order, with their relative costs."""
    o = options or BuildOptions()
    skip = {"sentences": not o.sentences, "multilingual abstracts": not o.multilingual,
            "multilingual sentences": not (o.multilingual and o.sentences), "multilingual titles": not o.multilingual,
            "topics": not o.explore, "map": not o.explore}
    return {stage: cost for stage, cost in STAGE_COSTS.items() if not skip.get(stage)}


def build_index(inputs: list[Path], out: Path, options: BuildOptions | None = None, *, model=None,
                progress: Progress | None = None, **settings) -> BuildReport:
    """Build an index from input files and publish it at `out`; the old index stays until then.

    `settings` are BuildOptions' fields, for a call that changes a few (`explore=False`)."""
    options = replace(options or BuildOptions(), **settings)
    t0 = time.perf_counter()
    with ix.build_lock(out):
        b = Build(inputs, out, options, progress, model)
        for name, stage in (("read", _read), ("model", _load_model), ("export", _export), ("embed", _embed),
                            ("multilingual", _embed_multilingual), ("topics_map", _explore)):
            with b.timed(name):
                stage(b)
        final = _write(b, t0)
        if progress:
            progress("published", 1, 1)
    return BuildReport(path=final, count=len(b.papers), embedded=b.embedded, embedded_sentences=b.embedded_sentences,
                       seconds=time.perf_counter() - t0, timings=b.timings, skipped=b.skipped,
                       explore_reused=b.explore is not None and b.explore.reused_from is not None)


def _read(b: Build) -> None:
    b.papers, b.skipped = load_corpus(b.inputs, skip_bad=b.options.skip_bad)
    b.corpus_fingerprint = ix.corpus_fingerprint(b.papers)


def _load_model(b: Build) -> None:
    o = b.options
    b.model = b.model if b.model is not None else load_model(o.model_name, o.device)
    b.fingerprint = model_fingerprint(b.model)
    ix.check_spec(o.index_spec, model_dimension(b.model))  # before any embedding is spent


def _export(b: Build) -> None:
    """The model's ONNX export (cached): shipped for queries, and what the build embeds with but in torch."""
    o = b.options
    if o.device not in (None, "cpu") or o.processes > 1 or not qe.exportable(b.model):
        b.options = o = replace(o, backend="torch")
    if (o.query_encoder or o.backend != "torch") and qe.exportable(b.model):
        b.onnx_file = qe.exported(b.model, b.fingerprint, b.cache_dir, quantize=False)
    if o.backend != "torch" and o.sentences and qe.exportable(b.model):
        b.packed_file = packed.exported_packed(b.model, b.fingerprint, b.cache_dir)


def _embed(b: Build) -> None:
    o = b.options
    if o.backend == "torch":
        b.encoder = sentence_encoder = TorchEncoder(b.model, b.fingerprint)
    else:
        b.encoder = qe.document_encoder(b.onnx_file, b.model, b.fingerprint, o.backend)
        sentence_encoder = (packed.PackedEncoder(b.packed_file, int(b.model.max_seq_length), b.fingerprint, o.backend)
                            if b.packed_file else b.encoder)
    b.embedding = {"backend": b.encoder.backend, "sentences_backend": sentence_encoder.backend,
                   "batch_size": o.batch_size, "cpu": cpu_description()}
    _announce(b.progress, f"embedding with {b.embedding['backend']} on {b.embedding['cpu']['name']} "
                          f"({', '.join(b.embedding['cpu']['flags']) or 'no AVX2'})")
    b.vectors_key = vectors_fingerprint(b.fingerprint, b.embedding["backend"])
    cache = EmbeddingCache(b.cache_dir, b.vectors_key)
    # packed sentences agree with unpacked ones to a cosine of 0.99997, not bit for bit: their own key
    sentence_cache = EmbeddingCache(b.cache_dir, vectors_fingerprint(b.fingerprint, sentence_encoder.backend))
    b.sentence_groups = evidence.paper_sentences(b.papers) if o.sentences else []
    with start_pool(b.model, o.processes if o.backend == "torch" else 0, o.device) as pool:
        t = time.perf_counter()
        b.vectors, b.embedded = encode_cached(b.encoder, [p.text for p in b.papers], cache, o.batch_size,
                                              b.progress, desc="abstracts", pool=pool)
        t_sentences = time.perf_counter()
        b.sentence_vectors, b.embedded_sentences = encode_cached(
            sentence_encoder, evidence.flat_texts(b.sentence_groups), sentence_cache, o.batch_size, b.progress,
            desc="sentences", pool=pool, chunk=packed.CHUNK if b.packed_file else None)
    b.embedding["seconds"] = {"abstracts": round(t_sentences - t, 3),
                              "sentences": round(time.perf_counter() - t_sentences, 3)}
    b.embedding["embedded"] = {"abstracts": b.embedded, "sentences": b.embedded_sentences}


def _embed_multilingual(b: Build) -> None:
    o = b.options
    if not o.multilingual:
        return
    ml = MultilingualEncoder(processes=o.ml_processes)
    try:
        cache = EmbeddingCache(b.cache_dir, ml.fingerprint)
        texts = {"abstracts": [p.text for p in b.papers], "sentences": evidence.flat_texts(b.sentence_groups),
                 "titles": [p.title for p in b.papers]}
        vectors = [encode_cached(ml, batch, cache, o.batch_size, b.progress, desc=f"multilingual {name}")[0]
                   for name, batch in texts.items()]
    finally:
        ml.close()
    b.multilingual = (*vectors, ml.fingerprint)


def _explore(b: Build) -> None:
    if b.options.explore:
        key = explore.key(b.papers, b.corpus_fingerprint, b.vectors_key)
        b.explore = explore.compute(b.papers, b.vectors, key, b.out, lambda stage: _announce(b.progress, stage))


def _write(b: Build, t0: float) -> Path:
    """Every part into a new build directory, the manifest last, then publish it."""
    o = b.options
    t = time.perf_counter()
    _announce(b.progress, "writing the index")
    build_dir = ix.new_build_dir(b.out)
    ix.write_papers(build_dir / ix.PAPERS, b.papers)
    with b.timed("faiss"):
        vectors = vectors_entry(ix.write_vectors(build_dir / ix.VECTORS, b.vectors, o.index_spec))
    sentences = evidence.write(build_dir, b.sentence_groups, b.sentence_vectors) if o.sentences else 0
    bm25 = lexical.build([p.text for p in b.papers], build_dir / lexical.BM25_DIR)
    encoder = qe.write_encoder(build_dir, b.onnx_file, b.model) if b.onnx_file and o.query_encoder else None
    explored = explore.write(build_dir, b.explore, b.papers) if b.explore else None
    multilingual = write_space(build_dir, *b.multilingual, o.ml_processes) if b.multilingual else None
    with b.timed("reviews"):
        reviewed = reviews.write(build_dir, b.papers, o.review_search)
    manifest = Manifest(
        model=ModelEntry(o.model_name, b.fingerprint, int(b.model.max_seq_length)),
        dimension=model_dimension(b.model), count=len(b.papers), corpus_fingerprint=b.corpus_fingerprint,
        index=vectors, lexical=bm25, sentences=sentences, explore=explored, query_encoder=encoder,
        multilingual=multilingual, reviews=reviewed, embedding=b.embedding, inputs=[str(p) for p in b.inputs],
        inputs_digest=inputs_digest(b.inputs), skipped_lines=len(b.skipped),
        built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), library_versions=ix.library_versions())
    b.timings["write"] = time.perf_counter() - t - b.timings["faiss"] - b.timings["reviews"]
    manifest.build_seconds = round(time.perf_counter() - t0, 3)
    manifest.stage_seconds = {k: round(v, 3) for k, v in b.timings.items()}
    ix.write_manifest(build_dir, manifest)
    return ix.publish(build_dir, b.out)
