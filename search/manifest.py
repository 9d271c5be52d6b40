"""What is in an index folder: the manifest, typed. Each part of the folder has an entry here, written by the
one module that writes and loads that part; docs/architecture.md ("The index folder") names every entry,
its files and its owner.

The JSON keeps these names; reading it checks each entry's type, so a damaged manifest is refused with
the name of what is wrong instead of failing deep inside the engine. A part declared with an entry type of its
own (parts.part.Part's `kind`, defined in its module) has its entry under `parts` instead of a field here, typed when
it is asked for (`Manifest.entry`).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

FORMAT = 1
MANIFEST = "manifest.json"
METRIC = "cosine (inner product of L2-normalised vectors)"


class ManifestError(ValueError):
    """The manifest lacks an entry or holds one of the wrong type; the message names it."""


@dataclass(frozen=True)
class ModelEntry:
    name: str
    fingerprint: str     # sha256 of the weights (encoding.embed.model_fingerprint)
    max_seq_length: int


@dataclass(frozen=True)
class VectorsEntry:
    """How vectors.faiss was made and searches."""
    factory: str          # the FAISS factory string: "Flat", "IVF1024,SQfp16", ...
    search_params: str    # "nprobe=32", or "" for exact search
    exact: bool
    trained_on: int       # vectors an approximate index was trained on (0 for Flat)
    cls: str              # FAISS's class name


@dataclass(frozen=True)
class ExploreEntry:
    key: str              # what the topics and map were computed from (parts.explore.key)
    topics: int
    topics_method: str
    map_method: str
    reused: bool          # copied from the previous build, the key being the same
    vectors_key: str = ""  # the vectors they were computed from (a new paper is placed only among its own kind)
    placed: int = 0        # papers placed onto topics and a map computed without them (parts.explore.PLACE_UP_TO)


@dataclass(frozen=True)
class EncoderEntry:
    file: str             # the ONNX export of the model: queries need no torch
    tokenizer: str
    runtime: str = "onnxruntime"
    weights: str = "float32"


@dataclass(frozen=True)
class MultilingualEntry:
    model: str
    fingerprint: str
    dimension: int
    sentences: int = 0
    processes: int = 1
    tokenizer: str = "sentencepiece"


@dataclass(frozen=True)
class ReviewsEntry:
    papers: int           # papers with at least one review
    reviews: int
    searchable: bool      # review_bm25/ was built (search within reviews)
    fields: int = 0       # its documents: the reviews' text fields
    key: str = ""         # parts.reviews.search_key: what the search was (or will be) built from


@dataclass(frozen=True)
class HistoryEntry:
    fetches: int          # fetches that changed something, the first included (parts.history.FETCHES lists them)
    papers: int           # papers some fetch described
    latest: str           # when the latest was fetched
    baseline: str         # what moves are measured from: the previous fetch's date, or parts.history.FIRST_POSTED


@dataclass
class Manifest:
    model: ModelEntry
    dimension: int
    count: int
    corpus_fingerprint: str   # index.corpus_fingerprint: ids and model texts, in any order
    index: VectorsEntry
    lexical: str              # what BM25 was built over, in words
    sentences: int = 0        # sentence vectors for "why this result" (0: built without)
    explore: ExploreEntry | None = None
    query_encoder: EncoderEntry | None = None
    multilingual: MultilingualEntry | None = None
    reviews: ReviewsEntry | None = None
    summaries: int = 0        # reviewers' summaries embedded as a view of their papers (0: none)
    # papers whose abstract is not embedded yet (index.UNEMBEDDED lists their rows): the words stage's index,
    # published before the abstracts' vectors, holds a zero vector for each and finds them by words only
    unembedded: int = 0
    history: HistoryEntry | None = None
    parts: dict = field(default_factory=dict)  # part -> its entry, for a part whose entry type is its module's
    embedding: dict = field(default_factory=dict)  # backend, CPU, batch size, seconds (for reading, not loading)
    inputs: list[str] = field(default_factory=list)
    inputs_digest: str = ""   # build.inputs_digest: the input files' bytes
    skipped_lines: int = 0
    built_at: str = ""
    library_versions: dict = field(default_factory=dict)
    build_seconds: float = 0.0
    stage_seconds: dict = field(default_factory=dict)
    pending: list = field(default_factory=list)     # parts.registry.STAGES still to come: this is an earlier stage's index
    published: dict = field(default_factory=dict)   # stage -> seconds from the build's start to its publishing
    part_keys: dict = field(default_factory=dict)   # part -> what its files are made of (build.part_key)
    files: dict = field(default_factory=dict)  # name -> {"bytes", "sha256"}, filled by index.write_manifest
    metric: str = METRIC
    format: int = FORMAT

    def entry(self, name: str, kind: type | None = None):
        """A part's entry by its name: a field of the manifest, or one of `parts`, of type `kind` (a dataclass,
        int, str or dict; ManifestError names one that is not), None where the index has none."""
        if name in NAMED:
            return getattr(self, name)
        value = self.parts.get(name)
        if value is None or kind is None or isinstance(value, kind):
            return value
        return _optional(kind, self.parts, name) if is_dataclass(kind) else _entry(self.parts, name, kind)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["index"] = _vectors_json(self.index)
        out["index_type"] = self.index.cls
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, d: Any) -> "Manifest":
        """The manifest of a JSON object; ManifestError names the first entry that is missing or wrong."""
        if not isinstance(d, dict):
            raise ManifestError("not a JSON object")
        if d.get("format") != FORMAT:
            raise ManifestError(f"format {d.get('format')!r}, not {FORMAT}")
        index = _entry(d, "index", dict)
        vectors = {**index, "cls": index.get("class", d.get("index_type", ""))}
        vectors.pop("class", None)
        return cls(
            model=_typed(ModelEntry, _entry(d, "model", dict), "model"),
            dimension=_entry(d, "dimension", int), count=_entry(d, "count", int),
            corpus_fingerprint=_entry(d, "corpus_fingerprint", str),
            index=_typed(VectorsEntry, vectors, "index"),
            lexical=_entry(d, "lexical", str), sentences=_entry(d, "sentences", int),
            explore=_optional(ExploreEntry, d, "explore"),
            query_encoder=_optional(EncoderEntry, d, "query_encoder"),
            multilingual=_optional(MultilingualEntry, d, "multilingual"),
            reviews=_optional(ReviewsEntry, d, "reviews"),
            summaries=_entry(d, "summaries", int) if "summaries" in d else 0,
            unembedded=_entry(d, "unembedded", int) if "unembedded" in d else 0,
            history=_optional(HistoryEntry, d, "history"),
            parts=_entry(d, "parts", dict) if "parts" in d else {},
            embedding=d.get("embedding") or {}, inputs=d.get("inputs") or [],
            inputs_digest=d.get("inputs_digest") or "", skipped_lines=d.get("skipped_lines") or 0,
            built_at=d.get("built_at") or "", library_versions=d.get("library_versions") or {},
            build_seconds=d.get("build_seconds") or 0.0, stage_seconds=d.get("stage_seconds") or {},
            pending=[str(x) for x in d.get("pending") or [] if isinstance(x, str)],
            published=d.get("published") if isinstance(d.get("published"), dict) else {},
            part_keys=d.get("part_keys") if isinstance(d.get("part_keys"), dict) else {},
            files=_entry(d, "files", dict), metric=d.get("metric") or METRIC)


NAMED = frozenset(f.name for f in fields(Manifest))


def vectors_entry(meta: dict) -> VectorsEntry:
    """The entry of index.write_vectors' description of what it wrote."""
    return VectorsEntry(meta["factory"], meta["search_params"], meta["exact"], meta["trained_on"], meta["class"])


def _vectors_json(v: VectorsEntry) -> dict:
    return {"factory": v.factory, "search_params": v.search_params, "exact": v.exact, "trained_on": v.trained_on,
            "class": v.cls}


def _entry(d: dict, name: str, kind: type):
    value = d.get(name)
    # a bool is an int to Python, never to a manifest
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        what = {int: "an integer", str: "a string", dict: "an object"}[kind]
        raise ManifestError(f"its {name!r} is {'missing' if value is None else 'not ' + what}")
    return value


def _typed(kind: type, values: dict, name: str):
    known = {f.name for f in fields(kind)}
    try:
        return kind(**{k: v for k, v in values.items() if k in known})
    except TypeError:
        missing = sorted(f.name for f in fields(kind) if f.name not in values)
        raise ManifestError(f"its {name!r} lacks {', '.join(missing) or 'an entry'}") from None


def _optional(kind: type, d: dict, name: str):
    value = d.get(name)
    if not value:
        return None
    if not isinstance(value, dict):
        raise ManifestError(f"its {name!r} is not an object")
    return _typed(kind, value, name)
