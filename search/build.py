"""The offline build: read the corpus, embed it (through the cache), write and publish the index, in stages.

`build_index` runs a short list of stages over one `Build`. When many abstracts are not in the embedding
cache, the papers with their metadata, reviews and BM25 are published first (the words stage: the whole venue
answers by words within a minute, any cached vectors by meaning); then the papers with their abstract vectors,
so the index answers by meaning while the rest is built; each later stage (a part of parts.registry.PARTS, each
declared in its own module) is published as it lands, the folder of the one before hard-linked into it. The build
names no part: it runs what each declares. Each part of the folder is written by its
owner (manifest.py lists them), and the manifest gathers their entries."""
from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import numpy as np

from . import index as ix
from .build_options import BuildOptions
from .parts import history, lexical, registry, reviews
from .parts.part import Part, announce, embed
from .encoding import packed
from .encoding import query_encoder as qe
from .corpus import Paper, input_files, load_corpus
from .encoding.embed import (EmbeddingCache, Encoder, ModelFacts, TorchEncoder, cpu_description, encode_cached,
                              from_cache, known_model_facts, load_model, model_dimension, model_fingerprint,
                              remember_model_facts, vectors_fingerprint)
from .manifest import NAMED, Manifest, ManifestError, ModelEntry, vectors_entry
from .progress import Progress
from .text import text_hash

T = TypeVar("T")


@dataclass
class BuildReport:
    path: Path
    count: int
    embedded: int                      # abstracts that were not in the cache
    seconds: float
    embedded_sentences: int = 0        # sentences (for "why this result") not in the cache
    timings: dict = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what reading the inputs merged or kept apart, and why
    explore_reused: bool = False       # topics and map taken whole from the previous build
    reused: list = field(default_factory=list)     # the parts taken whole from the previous build (reusable)
    published: dict = field(default_factory=dict)  # stage -> seconds from the start to its publishing
    history: object = None             # the manifest's history entry (manifest.HistoryEntry), None without


def inputs_digest(inputs: list[Path], digests: dict[Path, str] | None = None) -> str:
    """sha256 over the input files' names and bytes, in any order: equal digests, equal index inputs.
    `digests` gets each file's own."""
    digests = {} if digests is None else digests
    for f in input_files(inputs):
        digests[f] = ix.file_digest(f)
    parts = sorted(f"{f.name}\t{d}" for f, d in digests.items())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def default_cache_dir(out: Path) -> Path:
    return out.parent / ".embedding_cache"


@dataclass
class Build:
    """One build as its stages fill it in."""
    inputs: list[Path]
    out: Path
    options: BuildOptions
    progress: Progress | None
    model: object = None                # the sentence-transformers model, once something needs it (loaded_model)
    started: float = 0.0
    previous: Path | None = None        # the build published before this one started (parts to reuse)
    papers: list[Paper] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)  # BM25 tokens of the records' texts, as read (joined)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    fingerprint: str = ""
    facts: ModelFacts | None = None
    onnx_file: Path | None = None
    packed_file: Path | None = None     # the export that embeds sentences several to a row
    encoder: Encoder | None = None
    sentence_encoder: Encoder | None = None
    caches: dict[str, EmbeddingCache] = field(default_factory=dict)
    embedding: dict = field(default_factory=dict)
    vectors_key: str = ""
    corpus_fingerprint: str = ""        # index.corpus_fingerprint of the papers read
    vectors: np.ndarray | None = None
    unembedded: np.ndarray | None = None  # rows whose abstract the cache lacks, before the abstracts' stage
    vectors_reused: bool = False        # read from the previous build's file: nothing to embed or look up
    embedded: int = 0
    history: history.History | None = None  # the previous build's with this fetch's states added
    rows_key: str = ""                  # the papers' ids and texts in index order (what each part's rows are)
    # the inputs' digest, taken before they are read: a re-fetch that replaces the file while this build runs (it is
    # then replaced: background.job_lock) must not have its digest published with the papers read before it
    digest: str = ""
    reuse: dict = field(default_factory=dict)   # part -> the previous build's files of it, or None (reusable)
    linked: dict = field(default_factory=dict)  # files hard-linked into the build being written, with checksums
    done: list[str] = field(default_factory=list)       # stages computed
    pending: list[str] = field(default_factory=list)    # stages still to compute
    entries: dict = field(default_factory=dict)         # manifest entries of the parts written so far
    last: Path | None = None            # the folder this build published last
    last_files: dict = field(default_factory=dict)      # its manifest's files
    published_at: dict[str, float] = field(default_factory=dict)
    parts: dict[str, Part] = field(default_factory=dict)    # the later parts it makes, by name (registry.PARTS)
    state: dict[str, object] = field(default_factory=dict)  # each part's own (Part.state), by the part's name
    shared: dict[str, object] = field(default_factory=dict)  # what several parts derive from the papers (`derived`)

    @property
    def cache_dir(self) -> Path:
        return self.options.cache_dir or default_cache_dir(self.out)

    def cache(self, key: str) -> EmbeddingCache:
        """The embedding cache of one vector space, loaded once a build (its shards are read whole)."""
        if key not in self.caches:
            self.caches[key] = EmbeddingCache(self.cache_dir, key)
        return self.caches[key]

    def loaded_model(self):
        if self.model is None:
            self.model = load_model(self.options.model_name, self.options.device)
        return self.model

    @cached_property
    def previous_manifest(self) -> Manifest | None:
        """The previous build's manifest, read once a build (each part's reuse asks it)."""
        return ix.read_manifest(self.previous) if self.previous else None

    def derived(self, name: str, make: Callable[[], T]) -> T:
        """`make()`, once a build: what several parts derive from the papers (parts.part.Context.derived)."""
        if name not in self.shared:
            self.shared[name] = make()
        return self.shared[name]

    def wanted(self, part: Part) -> bool:
        return part.wanted(self, self.state[part.name])

    @contextmanager
    def timed(self, stage: str):
        t = time.perf_counter()
        yield
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - t


# Seconds each stage took for 4,315 papers on 2 cores (benchmarks/experiments/results/floor.md and first_run.md;
# review search scaled from 40 s at 19,630, the reviewers' summaries from 2.27x the abstracts' time at
# 19,630 submissions in first_run_venue.md: 990 s against 436 s): only their ratios matter, for the whole build's
# time left (progress.ProgressLog scales them by the pace of the stage running). Each later part declares its own
# (PARTS); these are the abstracts' and the last publish's.
ABSTRACTS_COST, WRITING_COST = 85.0, 1.2
# The least share of the abstracts' stage spent embedding rather than publishing the papers embedded so far: a
# publish of 19,630 papers rewrites papers.jsonl and the vectors (some seconds), so on a fast CPU the publishes
# are spaced further apart than `publish_every`.
PUBLISH_SHARE = 0.95


def build_index(inputs: list[Path], out: Path, options: BuildOptions | None = None, *, model=None,
                progress: Progress | None = None, **settings) -> BuildReport:
    """Build an index from input files and publish it at `out`; the old index stays until then.

    With `staged` (the default) the papers, their abstract vectors and BM25 are published before the first
    later stage that has work to do, and again before each such stage: a build whose vectors are all cached
    and whose topics and review search are reusable publishes once. `settings` are BuildOptions' fields, for a call that changes a few (`explore=False`)."""
    options = replace(options or BuildOptions(), **settings)
    t0 = time.perf_counter()
    with ix.build_lock(out):
        parts = {p.name: p for p in registry.PARTS}
        b = Build(inputs, out, options, progress, model, started=t0, previous=_published(out), parts=parts,
                  state={name: p.state() for name, p in parts.items()})
        for name, stage in (("read", _read), ("history", _history), ("model", _load_model), ("export", _export),
                            ("encoders", _encoders), ("words", _cached_abstracts)):
            with b.timed(name):
                stage(b)
        b.done.append("words")
        if options.staged and len(b.unembedded) >= options.words_first:
            b.pending = ["abstracts", *([] if options.first_stage_only else [p.name for p in b.parts.values()
                                                                            if b.wanted(p)])]
            _publish(b)
        with b.timed("abstracts"):
            _embed_abstracts(b)
        b.done.append("abstracts")
        b.pending = []
        # stages with nothing to compute (cached vectors, reusable topics) first: the first publish then
        # holds all they give, and comes just before the first stage that takes time
        work = {p.name: _has_work(b, p) for p in b.parts.values() if b.wanted(p)}
        b.pending = sorted(work, key=work.get)
        for name in list(b.pending) if not options.first_stage_only else []:
            if options.staged and work[name]:
                _publish(b)
            with b.timed(name):
                _run_part(b, b.parts[name])
            b.pending.remove(name)
            b.done.append(name)
        final = _publish(b)
        if progress:
            progress("published", 1, 1)
    reused = [name for name in b.done if b.reuse.get(name)]
    reported = {k: v for p in b.parts.values() if p.name in b.done
                for k, v in p.report(b.state[p.name], p.name in reused).items()}
    return BuildReport(path=final, count=len(b.papers), embedded=b.embedded, seconds=time.perf_counter() - t0,
                       timings=b.timings, skipped=b.skipped, notes=b.notes, reused=reused,
                       published=dict(b.published_at), history=b.entries.get("history"), **reported)


def _published(out: Path) -> Path | None:
    return ix.resolve(out) if out.exists() else None


def _read(b: Build) -> None:
    digests: dict[Path, str] = {}
    b.digest = inputs_digest(b.inputs, digests)
    b.papers, b.skipped = load_corpus(b.inputs, skip_bad=b.options.skip_bad, notes=b.notes,
                                      cache_dir=b.cache_dir, digests=digests, tokens=b.tokens)
    b.corpus_fingerprint = ix.corpus_fingerprint(b.papers)
    h = hashlib.sha256()
    for p in b.papers:
        h.update("\x1f".join((p.id, p.title, p.abstract, p.text)).encode("utf-8") + b"\x1e")
    b.rows_key = h.hexdigest()


def _history(b: Build) -> None:
    """The previous build's history with this fetch's states added; each paper marked with where it stood."""
    try:
        before = history.load(b.previous)
    except history.HistoryError as e:  # never a reason to refuse a build: the history starts again
        b.notes.append(f"{e}; the history starts again from this fetch")
        before = history.History()
    b.history = history.update(before, b.papers, history.fetched_at(input_files(b.inputs)),
                               b.digest)
    history.mark(b.papers, b.history)


def _load_model(b: Build) -> None:
    """The model's facts; the model itself is loaded here only the first time a cache sees it (recorded
    by its files), and otherwise when something is to be exported or embedded in torch."""
    o = b.options
    b.facts = known_model_facts(o.model_name, b.cache_dir) if b.model is None else None
    if b.facts is None:
        given = b.model is not None
        m = b.loaded_model()
        b.facts = ModelFacts(model_fingerprint(m), model_dimension(m), int(m.max_seq_length), qe.exportable(m))
        if not given:  # a model handed in need not be the one its name loads
            remember_model_facts(o.model_name, b.cache_dir, b.facts)
    b.fingerprint = b.facts.fingerprint
    ix.check_spec(o.index_spec, b.facts.dimension)  # before any embedding is spent


def _export(b: Build) -> None:
    """The model's ONNX export (cached): shipped for queries, and what the build embeds with but in torch."""
    o = b.options
    exportable = b.facts.exportable
    if o.device not in (None, "cpu") or o.processes > 1 or not exportable:
        b.options = o = replace(o, backend="torch")
    if (o.query_encoder or o.backend != "torch") and exportable:
        b.onnx_file = (qe.cached(qe.export_path(b.fingerprint, b.cache_dir, quantize=False))
                       or qe.exported(b.loaded_model(), b.fingerprint, b.cache_dir, quantize=False))
    if o.backend != "torch" and o.sentences and exportable:
        b.packed_file = (qe.cached(packed.packed_path(b.fingerprint, b.cache_dir))
                         or packed.exported_packed(b.loaded_model(), b.fingerprint, b.cache_dir))


def _encoders(b: Build) -> None:
    o = b.options
    if o.backend == "torch":
        b.encoder = b.sentence_encoder = TorchEncoder(b.loaded_model(), b.fingerprint)
    else:
        b.encoder = qe.document_encoder(b.onnx_file, b.facts.max_seq_length, b.fingerprint, o.backend)
        b.sentence_encoder = (packed.PackedEncoder(b.packed_file, b.facts.max_seq_length, b.fingerprint,
                                                   o.backend) if b.packed_file else b.encoder)
    b.embedding = {"backend": b.encoder.backend, "sentences_backend": b.sentence_encoder.backend,
                   "batch_size": o.batch_size, "cpu": cpu_description(), "seconds": {}, "embedded": {}}
    b.vectors_key = vectors_fingerprint(b.fingerprint, b.embedding["backend"])


def _cached_abstracts(b: Build) -> None:
    """The abstracts' vectors the cache holds (zeros for the rest): what the words stage publishes."""
    if reusable(b, "abstracts") and b.reuse["abstracts"][1].index.exact:
        # linked whole from the previous build: its exact file gives them back as written, without loading the
        # cache (2.8 s at 19,630 papers, benchmarks/results/history.md before this)
        b.vectors, b.unembedded = ix.read_exact_vectors(b.previous), np.zeros(0, dtype=np.int64)
        b.vectors_reused = True
        return
    b.vectors, b.unembedded = from_cache(b.cache(b.vectors_key), [text_hash(p.text) for p in b.papers],
                                         b.facts.dimension)
    if reusable(b, "abstracts"):  # the previous build's vectors are linked whole, whatever the cache holds
        b.unembedded = b.unembedded[:0]


def _embed_abstracts(b: Build) -> None:
    if b.vectors_reused:
        b.embedding["seconds"]["abstracts"], b.embedding["embedded"]["abstracts"] = 0.0, 0
        return
    announce(b.progress, f"embedding with {b.embedding['backend']} on {b.embedding['cpu']['name']} "
                         f"({', '.join(b.embedding['cpu']['flags']) or 'no AVX2'})")
    texts = [p.text for p in b.papers]
    every = b.options.publish_every
    if not ("words" in b.published_at and every and len(b.unembedded) > every):
        b.vectors, b.embedded = embed(b, "abstracts", b.encoder, texts, b.vectors_key)
        return
    _embed_publishing(b, texts, every)


def _embed_publishing(b: Build, texts: list[str], every: int) -> None:
    """The abstracts the words stage published without a vector, embedded a group at a time in index order, the
    papers published again after each group: those embedded are ranked by meaning, the rest by words
    (`unembedded` in the manifest counts the rest), as a re-fetch's new papers are. A group is embedded
    longest text first (batches of like length, little padding), and the groups follow the index's order,
    which is not the texts' length: the pace of the first groups is the whole stage's, so its time left is
    right early (longest first over the whole venue, the first 3% ran at 0.8x the stage's mean pace)."""
    keys = [text_hash(t) for t in texts]
    cache = b.cache(b.vectors_key)
    rows = b.unembedded.tolist()
    total = len({keys[i] for i in rows})
    stage = dict(seconds=0.0, publishing=0.0, embedded=0)
    start, size = 0, every
    while start < len(rows):
        group, start = rows[start:start + size], start + size
        t = time.perf_counter()
        shifted = _shifted(b.progress, stage["embedded"], total)
        vectors, embedded = encode_cached(b.encoder, [texts[i] for i in group], cache, b.options.batch_size,
                                          shifted, desc="abstracts")
        b.vectors[group] = vectors
        stage["embedded"] += embedded
        embedding = time.perf_counter() - t
        stage["seconds"] += embedding
        b.unembedded = np.array(rows[start:], dtype=np.int64)
        if start < len(rows):
            t = time.perf_counter()
            _publish(b, quiet=True)
            spent = time.perf_counter() - t
            stage["publishing"] += spent
            # the next group long enough that publishing takes at most 1 - PUBLISH_SHARE of the time
            size = max(every, int(len(group) * spent * PUBLISH_SHARE / ((1 - PUBLISH_SHARE) * max(embedding, 1e-3))))
    b.embedded = stage["embedded"]
    b.embedding["seconds"]["abstracts"] = round(stage["seconds"], 3)
    b.embedding["seconds"]["abstracts published as they came"] = round(stage["publishing"], 3)
    b.embedding["embedded"]["abstracts"] = b.embedded


def _shifted(progress: Progress | None, before: int, total: int) -> Progress | None:
    """A group's progress as the whole stage's: `before` texts done before it, `total` in all."""
    if progress is None:
        return None
    return lambda stage, done, _total: progress(stage, before + done, total)


# ---------------------------------------------------------------- writing and publishing

def _write_words(b: Build, build_dir: Path) -> None:
    """The papers' reviews, BM25 and the query encoder; before the abstracts' stage, the cached vectors too."""
    o = b.options
    b.entries["reviews"] = reviews.write(build_dir, b.papers, reviews.key_of(b))
    b.entries["history"] = history.write(build_dir, b.history)
    if _link_part(b, build_dir, "abstracts"):  # the previous build's vectors, BM25 and export, whole
        previous = b.reuse["abstracts"][1]
        b.entries.update(index=previous.index, lexical=previous.lexical, query_encoder=previous.query_encoder)
        return
    b.entries["lexical"] = lexical.build([p.text for p in b.papers], build_dir / lexical.BM25_DIR, b.tokens)
    b.entries["query_encoder"] = (qe.write_encoder(build_dir, b.onnx_file)
                                  if b.onnx_file and o.query_encoder else None)
    if "abstracts" not in b.done:
        # exact search over the cached vectors: an approximate index trained on rows of zeros would be skewed
        _write_embedded_so_far(b, build_dir)


def _write_embedded_so_far(b: Build, build_dir: Path) -> None:
    """The vectors embedded so far, zeros for the rest, and which rows those are: the words stage's files again."""
    b.entries["index"] = vectors_entry(ix.write_vectors(build_dir / ix.VECTORS, b.vectors, ix.EXACT))
    ix.write_unembedded(build_dir / ix.UNEMBEDDED, b.unembedded)
    b.entries["unembedded"] = len(b.unembedded)


def _write_abstracts(b: Build, build_dir: Path) -> None:
    if reusable(b, "abstracts"):  # linked with the words stage's files
        return
    with b.timed("faiss"):
        b.entries["index"] = vectors_entry(ix.write_vectors(build_dir / ix.VECTORS, b.vectors,
                                                            b.options.index_spec, trained=_trained(b)))
    b.entries["unembedded"] = 0


def _trained(b: Build) -> tuple[Path, dict] | None:
    """The previous build's vectors file and manifest entry, where it was trained (an approximate index) and
    holds nearly all of these papers (ix.RETRAIN_BELOW): other papers' centroids would not fit these."""
    entry = b.previous_manifest.index if b.previous_manifest else None
    if entry is None or not entry.trained_on:
        return None
    try:
        before = ix.read_ids(b.previous / ix.PAPERS)
    except (OSError, ValueError):
        return None
    if sum(p.id in before for p in b.papers) < ix.RETRAIN_BELOW * len(b.papers):
        return None
    return b.previous / ix.VECTORS, {"factory": entry.factory, "trained_on": entry.trained_on}


# ---------------------------------------------------------------- parts taken whole from the previous build

# A re-fetch that changed only scores and decisions leaves a part's rows as they were: the build links the
# previous build's files instead of writing them again (at 19,630 papers, writing them and reading their vectors
# from the cache took 12 s of a 44 s rebuild: benchmarks/results/refetch.md before the links, in its git
# history). The abstracts' files are these; each later part declares its own (Part.files, Part.key), some keyed
# not by the papers' rows (Part.rows) but by what they are computed from (topics and map, search within reviews).
ABSTRACT_FILES = (ix.VECTORS, lexical.BM25_DIR + "/", qe.ONNX, qe.TOKENIZER)


def _abstracts_key(b: Build) -> list[str]:
    return [b.vectors_key, b.options.index_spec, lexical.DESCRIPTION, str(bool(b.options.query_encoder))]


def _reused(b: Build, part: str) -> tuple[tuple[str, ...], Callable[[Build], list[str]], bool]:
    """A reusable part's files, what they are made of, and whether they are made of the papers' rows."""
    if part == "abstracts":
        return ABSTRACT_FILES, _abstracts_key, True
    declared = b.parts[part]
    return declared.files, lambda b: declared.key(b, b.state[part]), declared.rows


def part_key(b: Build, part: str) -> str:
    """What a part's files are made of: the papers' rows in order (where they are: Part.rows), and the part's
    method."""
    files, key, rows = _reused(b, part)
    return hashlib.sha256("\n".join([*([b.rows_key] if rows else []), part, *key(b)]).encode()).hexdigest()


def reusable(b: Build, part: str) -> bool:
    """Whether the previous build holds this part made of the same, with its files (checked once a build): the
    one decision to take a part whole (the abstracts' and each of PARTS with files)."""
    if part not in b.reuse:
        b.reuse[part] = None
        try:
            previous = b.previous_manifest
            if (previous and previous.part_keys.get(part) == part_key(b, part)
                    and (part == "abstracts" or previous.entry(b.parts[part].entry, b.parts[part].kind) is not None)):
                files = {n: m for n, m in previous.files.items()
                         if any(n == f or (f.endswith("/") and n.startswith(f)) for f in _reused(b, part)[0])}
                ix.verify_files(b.previous, files)
                b.reuse[part] = (files, previous) if files else None
        except (ix.IndexLoadError, ManifestError, OSError):
            b.reuse[part] = None
    return b.reuse[part] is not None


def _link_part(b: Build, build_dir: Path, part: str) -> bool:
    if not reusable(b, part):
        return False
    files, _ = b.reuse[part]
    for name in files:
        _link(b.previous / name, build_dir / name)
    b.linked.update(files)
    return True


def _link(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)
    except OSError:  # a filesystem without hard links
        shutil.copy2(src, dest)




def _link_previous_stage(b: Build, build_dir: Path, rewritten: set[str], papers: bool = False) -> dict:
    """The files the last published stage wrote (all but `rewritten`, and the papers unless `papers`: they are
    rewritten each time, topics set theirs), hard-linked: no byte copied, and their checksums carried over. A
    file written again must not be a link: writing it would change the published build's file."""
    known = {}
    for name, meta in b.last_files.items():
        if (name == ix.PAPERS and not papers) or name in rewritten:
            continue
        _link(b.last / name, build_dir / name)
        known[name] = meta
    return known


def _publish(b: Build, quiet: bool = False) -> Path:
    """Every stage computed so far into a new build folder, the manifest last, then publish it.

    quiet: a publish within the abstracts' stage (the vectors so far), which the progress does not hear of:
    the stage's pace and time left go on across it."""
    o = b.options
    t = time.perf_counter()
    if not quiet:
        # the last publish is the costed stage "writing the index"; one with stages still to come is not: taken for it,
        # the time left read "about 3s until every stage is built" with 13 minutes to come (a new user's run)
        announce(b.progress, "writing the index" if not b.pending else "publishing the stages built so far")
    build_dir = ix.new_build_dir(b.out)
    written = set(b.published_at)
    # the words stage's vectors (cached ones, zeros for the rest) give way to those embedded since, and at last
    # to the abstracts' own
    partial = "words" in written and "abstracts" not in b.done and "abstracts" not in written
    rewritten = {ix.VECTORS, ix.UNEMBEDDED} if partial or ("abstracts" in b.done and "abstracts" not in written) \
        else set()
    # the papers as the words stage wrote them where no stage since sets theirs (only their vectors are new)
    same_papers = bool(b.last) and "words" in written and set(b.done) - written <= {"abstracts"}
    known = _link_previous_stage(b, build_dir, rewritten, papers=same_papers) if b.last else {}
    b.linked = {}
    if not same_papers:
        ix.write_papers(build_dir / ix.PAPERS, b.papers)
    for stage in b.done:
        if stage not in written:
            if stage in FIRST_WRITERS:
                FIRST_WRITERS[stage](b, build_dir)
            else:
                _write_part(b, build_dir, b.parts[stage])
    if partial:
        _write_embedded_so_far(b, build_dir)
    e = b.entries
    stamp = round(time.perf_counter() - b.started, 3)
    manifest = Manifest(  # each part's entry a field of the manifest, or under its `parts` (Part.kind)
        model=ModelEntry(o.model_name, b.fingerprint, b.facts.max_seq_length), dimension=b.facts.dimension,
        count=len(b.papers), corpus_fingerprint=b.corpus_fingerprint, **{k: v for k, v in e.items() if k in NAMED},
        parts={k: v for k, v in e.items() if k not in NAMED and v is not None}, embedding=b.embedding, inputs=[str(p) for p in b.inputs], inputs_digest=b.digest,
        skipped_lines=len(b.skipped), built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        library_versions=ix.library_versions(), pending=list(b.pending),
        published={**b.published_at, **{s: stamp for s in b.done if s not in written}})
    b.timings["write"] = b.timings.get("write", 0.0) + time.perf_counter() - t
    manifest.build_seconds = stamp
    manifest.stage_seconds = {k: round(v, 3) for k, v in b.timings.items()}
    reusable_parts = ["abstracts", *(p.name for p in b.parts.values() if p.files)]
    manifest.part_keys = {part: part_key(b, part) for part in reusable_parts if part in b.done}
    ix.write_manifest(build_dir, manifest, {**known, **b.linked})
    b.last = ix.publish(build_dir, b.out, spare=b.previous if b.pending else None)
    b.last_files = manifest.files
    b.published_at = dict(manifest.published)
    return b.last


FIRST_WRITERS = {"words": _write_words, "abstracts": _write_abstracts}   # what each publish of the papers writes


def _run_part(b: Build, part: Part) -> None:
    """A later part: taken whole from the previous build where it is made of the same (`reusable`), else computed."""
    if part.files and reusable(b, part.name):
        part.adopt(b, b.state[part.name])
    else:
        part.compute(b, b.state[part.name])


def _write_part(b: Build, build_dir: Path, part: Part) -> None:
    """A part's files: the previous build's, linked, where they are made of the same (its manifest entry carried
    over), else written."""
    if part.files and _link_part(b, build_dir, part.name):
        b.entries[part.entry] = part.carry(b, b.reuse[part.name][1].entry(part.entry, part.kind))
    else:
        b.entries[part.entry] = part.write(b, b.state[part.name], build_dir)


def _has_work(b: Build, part: Part) -> bool:
    """Whether a later part has real work (a text to embed, topics to compute, reviews to index) or only reads
    what the cache and the previous build hold."""
    return not (part.files and reusable(b, part.name)) and part.has_work(b, b.state[part.name])


def stage_costs(options: BuildOptions | None = None, reviews: bool = True) -> dict[str, float]:
    """The stages a build with these options runs, in order, with their relative costs; `reviews`: whether
    its inputs carry reviews (corpus.carries_reviews), without which two stages have nothing to do."""
    o = options or BuildOptions()
    later = {k: v for p in registry.PARTS if p.enabled(o, reviews) for k, v in p.costs(o).items()}
    return {"abstracts": ABSTRACTS_COST, **later, "writing the index": WRITING_COST}
