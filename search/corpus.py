"""Reading the corpus: seed text lists, JSONL and CSV exports, merged into unique papers."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from . import decoding, record_cache, venuelists
from .parts.lexical import tokenize
from .record_cache import file_digest
from .text import clean_for_model, id_from_digest, match_digest, match_key, strip_control
from .titles import derive_title

TEXT_SUFFIXES = {".txt", ".md", ""}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
CSV_SUFFIXES = {".csv"}
MAX_ABSTRACT_CHARS = 20_000  # ten times the longest ICLR 2026 abstract; longer is not an abstract


class CorpusError(Exception):
    """Bad input; the message is one line that names the file (and line)."""


# review fields that are not sub-scores
NOT_SUB_SCORES = {"rating", "confidence"}


# How a source's field is merged (Fields' metadata "merge"): "first", the first record that has it (the default);
# "reviews", together with the other review fields, from the first record that has reviews (all from one source);
# "with:NAME", from the record NAME was taken from (affiliations with their authors, one per author).
REVIEWS = "reviews"


@dataclass(kw_only=True)
class Fields:
    """What a source may say of a paper, each field declared once, here: a JSONL or CSV record's key of the same
    name is read by the field's type (`_record`), a venue list's entry by `venuelists.py`, the merge carries it
    (`_merge_group`), papers.jsonl, the catalogue's `fields` and a hit's `--json` hold it, and an index written
    before the field existed loads with its default. Adding a field is one line below."""
    authors: list[str] = field(default_factory=list)
    # one per author, parallel to `authors` ("" unknown); "A+B" is two institutions of one author
    affiliations: list[str] = field(default_factory=list, metadata={"merge": "with:authors", "cells": True})
    keywords: list[str] = field(default_factory=list)
    url: str = ""
    primary_area: str = ""
    venue: str = ""          # the venue's own words for the paper: "ICLR 2026 Oral", "COLM 2024 Poster"
    conference: str = ""     # the venue's short name: "ICLR", "COLM", "NeurIPS"
    year: int | None = None
    track: str = ""          # a venue list's track or status words: "Main", "Findings", "Oral"
    pdf: str = ""
    # from a whole-venue fetch or a venue list: Oral, Poster, Rejected, Withdrawn, Under review, ...; "" unknown
    decision: str = ""
    tldr: str = ""
    code: str = ""           # a code link the abstract or TL;DR gives
    citations: int | None = None  # Google Scholar's count, where a venue list gives one; None unknown
    # from the public reviews (python -m search fetch, or a venue list's per-review ratings); None where none shown
    avg_rating: float | None = field(default=None, metadata={"merge": REVIEWS})
    avg_confidence: float | None = field(default=None, metadata={"merge": REVIEWS})
    n_ratings: int | None = field(default=None, metadata={"merge": REVIEWS})
    # each review's rating, in the order the venue lists them
    ratings: list[float] = field(default_factory=list, metadata={"merge": REVIEWS})
    # the record itself, which papers.jsonl leaves out: the index keeps it in its `reviews` part
    # (search/parts/reviews.py) and reads one paper's on demand, so a cold start never loads 10x the abstracts' text
    reviews: list[dict] = field(default_factory=list, repr=False, metadata={"merge": REVIEWS, "record_only": True})
    meta_review: dict = field(default_factory=dict, repr=False, metadata={"merge": REVIEWS, "record_only": True})
    decision_text: str = field(default="", repr=False, metadata={"merge": REVIEWS, "record_only": True})


FIELDS = fields(Fields)
# the parts of a paper papers.jsonl leaves out (search/parts/reviews.py writes them)
RECORD_ONLY = tuple(f.name for f in FIELDS if f.metadata.get("record_only"))


def merge_rule(f) -> str:
    return f.metadata.get("merge", "first")


@dataclass
class Paper(Fields):
    id: str
    abstract: str            # as given, markup included; rendered by the page
    text: str                # cleaned of markup; what the model and BM25 see
    title: str
    title_derived: bool
    sources: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)  # other ids that open this paper
    topic: int | None = None  # set at build time (search/topics.py)
    # where the paper stood at the previous fetch, set at build time (search/parts/history.py): its mean rating (with
    # one fetch, as its reviews were first posted) and decision; the reviews added since; new: first in this fetch
    rating_from: float | None = None
    decision_from: str = ""
    reviews_added: int = 0
    new: bool = False
    # the sub-scores' means ("soundness": 2.75), from the reviews
    sub_scores: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The paper as papers.jsonl holds it: everything but the reviews' texts."""
        d = asdict(self)
        for name in RECORD_ONLY:
            d.pop(name)
        return d

    def fields_dict(self) -> dict:
        """Its declared fields as papers.jsonl holds them (what a hit's --json carries of it)."""
        return {f.name: getattr(self, f.name) for f in FIELDS if f.name not in RECORD_ONLY}

    @classmethod
    def from_dict(cls, d: dict) -> "Paper":
        if d.keys() == _WRITTEN:  # as to_dict wrote it (papers.jsonl): its fields set as they are, the
            p = cls.__new__(cls)  # record's own empty, without __init__'s 35 arguments (0.2 s at 19,632 papers)
            p.__dict__.update(d)
            p.__dict__.update(reviews=[], meta_review={}, decision_text="")  # RECORD_ONLY's defaults
            return p
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


# the keys of a paper as papers.jsonl holds it (Paper.to_dict), in the order written
WRITTEN = tuple(name for name in Paper.__dataclass_fields__ if name not in RECORD_ONLY)
_WRITTEN = frozenset(WRITTEN)


@dataclass
class Record(Fields):
    """One abstract as read from one place, before merging."""
    abstract: str
    source: str
    where: str               # "file:line" for messages
    id: str = ""
    title: str = ""
    key: str = ""            # match_digest(abstract): made once, it groups copies of one abstract
    # the model's text of this record alone (title and abstract cleaned): its paper's where it is the only
    # source, made when read so the record cache keeps it (cleaning was 13 s of 70,130 papers' merge, cProfile)
    text: str = ""
    # its text's BM25 tokens (parts.lexical.tokenize) joined by spaces, kept by the record cache too: tokenizing
    # 70,130 papers' texts took 15 s of a build's BM25 (py-spy); one string, not 8 million, held while it runs
    tokens: str | None = None
    phrases: int = -1        # len(record_shingles(self)): what the near-duplicates' test compares, kept with it

    def __post_init__(self):
        self.key = self.key or match_digest(self.abstract)
        self.text = self.text or model_text(self.title, self.abstract)
        if self.tokens is None:
            self.tokens = " ".join(tokenize(self.text))
        if self.phrases < 0:
            self.phrases = len(record_shingles(self))


def model_text(title: str, abstract: str) -> str:
    """What the model and BM25 read of a paper: a real title is part of what it is about."""
    return clean_for_model(f"{title}. {abstract}" if title else abstract)


# ---------------------------------------------------------------- files

def carries_reviews(paths: list[Path]) -> bool:
    """Whether some JSONL input holds reviews, as a fetched venue's file does in every record: its first
    line is read, not the file (a build's time left counts the stages that index reviews only then)."""
    for f in input_files(paths):
        if f.suffix.lower() in JSONL_SUFFIXES:
            try:
                with open(f, encoding="utf-8") as lines:
                    first = json.loads(next((line for line in lines if line.strip()), "{}"))
            except (OSError, ValueError):
                continue  # the build itself says what is wrong with the file
            if isinstance(first, dict) and "reviews" in first:
                return True
    return False


def readable(path: Path) -> bool:
    """Whether a file's name is of a kind the build reads."""
    return path.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES | CSV_SUFFIXES or venuelists.is_list(path)


def input_files(paths: list[Path]) -> list[Path]:
    """Expand directories into their abstract files; refuse what is missing or empty."""
    files: list[Path] = []
    for p in paths:
        if not p.exists():
            raise CorpusError(f"{p}: no such file or directory")
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".") and readable(f))
            if not found:
                raise CorpusError(f"{p}: directory holds no abstract files (.txt, .jsonl, .csv, "
                                  "or venue lists .json, .json.gz)")
            files.extend(found)
        elif not readable(p):
            raise CorpusError(f"{p}: unsupported file type '{p.suffix}' (use .txt, .jsonl, .csv, or a venue "
                              "list .json or .json.gz)")
        else:
            files.append(p)
    return files


def decode(path: Path, data: bytes) -> str:
    """Bytes to text (decoding.decode); CorpusError names the file and line of what is wrong."""
    try:
        return decoding.decode(str(path), data)
    except decoding.DecodeError as e:
        raise CorpusError(str(e)) from None


def _lines(text: str) -> list[str]:
    # only real line ends: str.splitlines would also split on form feeds and U+2028 inside an abstract
    return re.split(r"\r\n|\r|\n", text)


def _check_abstract(abstract: str, where: str) -> str:
    abstract = strip_control(abstract).strip()
    if len(abstract) > MAX_ABSTRACT_CHARS:  # before cleaning: markup cleaning of a 50 MB line takes seconds
        raise CorpusError(f"{where}: abstract is {len(abstract):,} characters; "
                          f"the limit is {MAX_ABSTRACT_CHARS:,}")
    if not clean_for_model(abstract):
        raise CorpusError(f"{where}: abstract is empty")
    return abstract


def _as_list(value, where: str, name: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        sep = ";" if ";" in value else ","
        return [v.strip() for v in value.split(sep) if v.strip()]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v).strip() for v in value if str(v).strip()]
    raise CorpusError(f"{where}: field '{name}' must be a string or a list of strings")


def _as_str(value, where: str, name: str) -> str:
    if value is None:
        return ""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return strip_control(str(value)).strip()
    raise CorpusError(f"{where}: field '{name}' must be a string")


def _as_number(value, where: str, name: str, integer: bool = False) -> float | int | None:
    if value is None or value == "":
        return None
    try:
        number = float(value) if not isinstance(value, bool) else float("nan")
    except (TypeError, ValueError):
        number = float("nan")
    if number != number or number < 0 or (integer and not number.is_integer()):
        kind = "a whole number" if integer else "a number"
        raise CorpusError(f"{where}: field '{name}' must be {kind} of 0 or more, not {value!r}")
    return int(number) if integer else number


def _as_reviews(value, where: str) -> list[dict]:
    """A record's reviews: objects of numbers and texts (as `python -m search fetch` writes them)."""
    if value is None or value == "":
        return []
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise CorpusError(f"{where}: field 'reviews' must be a list of objects")
    out = []
    for n, r in enumerate(value, start=1):
        review = {}
        for k, v in r.items():
            if isinstance(v, bool) or not isinstance(k, str):
                continue
            if isinstance(v, (int, float)) and v == v:
                review[k] = v
            elif isinstance(v, str):
                review[k] = strip_control(v).strip()
            elif k == "versions" and isinstance(v, list) and all(isinstance(e, dict) for e in v):
                # the review's earlier versions, oldest first (openreview.records.review): numbers and a date each
                review[k] = [{a: b for a, b in e.items() if isinstance(a, str) and not isinstance(b, bool)
                              and (isinstance(b, str) or (isinstance(b, (int, float)) and b == b))} for e in v]
            elif v is not None:
                raise CorpusError(f"{where}: review {n}'s field '{k}' must be a number or a text "
                                  "(or, for 'versions', a list of objects)")
        out.append(review)
    return out


def _as_texts(value, where: str, name: str) -> dict:
    if value is None or value == "":
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float)) for v in value.values()):
        raise CorpusError(f"{where}: field '{name}' must be an object of texts")
    return {str(k): strip_control(str(v)).strip() for k, v in value.items()}


def _as_cells(value, where: str, name: str) -> list[str]:
    """A list kept parallel to another (affiliations to authors): "" stays, for an unknown cell."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(";")]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) or v is None for v in value):
        return [strip_control("" if v is None else str(v)).strip() for v in value]
    raise CorpusError(f"{where}: field '{name}' must be a string or a list of strings")


def _as_numbers(value, where: str, name: str) -> list[float]:
    if value is None or value == "":
        return []
    items = value.split(";") if isinstance(value, str) else value
    if not isinstance(items, list):
        raise CorpusError(f"{where}: field '{name}' must be a list of numbers")
    return [float(_as_number(v, where, name)) for v in items if v is not None and str(v).strip() != ""]


# a declared field's reader, by its type (Fields): (value, where, name) -> the value
READERS = {"str": _as_str, "list[str]": _as_list, "float | None": _as_number,
           "int | None": lambda v, where, name: _as_number(v, where, name, integer=True),
           "list[float]": _as_numbers, "list[dict]": lambda v, where, name: _as_reviews(v, where),
           "dict": _as_texts}


def read_field(f, value, where: str):
    """One declared field of a record, read by its type; CorpusError names the record and the field."""
    reader = _as_cells if f.metadata.get("cells") else READERS[f.type]
    return reader(value, where, f.name)


def _record(obj: dict, source: str, where: str) -> Record:
    if not isinstance(obj.get("abstract"), str):
        raise CorpusError(f"{where}: no 'abstract' text field")
    return Record(abstract=_check_abstract(obj["abstract"], where), source=source, where=where,
                  id=_as_str(obj.get("id"), where, "id"), title=_as_str(obj.get("title"), where, "title"),
                  # a field absent or empty keeps its default: reading all 21 of every entry was 27 s of the
                  # 169 s that the 50,541 abstracts of the shared venue lists took to read (cProfile)
                  **{f.name: read_field(f, obj[f.name], where) for f in FIELDS if obj.get(f.name) not in (None, "")})


def _guarded(parse, skip_bad: bool, skipped: list[str]):
    """Run parse(); on a bad line either stop (default) or note it and go on."""
    try:
        return parse()
    except CorpusError as e:
        if not skip_bad:
            raise
        skipped.append(str(e))
        return None


def read_text_list(path: Path, text: str, skip_bad: bool, skipped: list[str]) -> list[Record]:
    """A seed list: one header line naming the list, then one abstract per non-empty line."""
    lines = _lines(text)
    header = strip_control(lines[0]).strip()
    source = header or path.name  # the list's own name is what a reader knows it by; `where` keeps the file
    records = []
    for n, line in enumerate(lines[1:], start=2):
        if line.strip():
            rec = _guarded(lambda: Record(_check_abstract(line, f"{path}:{n}"), source, f"{path}:{n}"),
                           skip_bad, skipped)
            if rec:
                records.append(rec)
    if not records and not skipped:
        raise CorpusError(f"{path}: no abstracts after the header line")
    return records


def read_jsonl(path: Path, text: str, skip_bad: bool, skipped: list[str]) -> list[Record]:
    records = []
    for n, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        where = f"{path}:{n}"

        def parse() -> Record:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise CorpusError(f"{where}: malformed JSON ({e.msg}, column {e.colno})") from None
            if not isinstance(obj, dict):
                raise CorpusError(f"{where}: expected a JSON object, got {type(obj).__name__}")
            return _record(obj, path.name, where)

        rec = _guarded(parse, skip_bad, skipped)
        if rec:
            records.append(rec)
    if not records and not skipped:
        raise CorpusError(f"{path}: no records")
    return records


def read_csv(path: Path, text: str, skip_bad: bool, skipped: list[str]) -> list[Record]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        columns = [c.strip().lower() for c in (reader.fieldnames or [])]
    except csv.Error as e:
        raise CorpusError(f"{path}: not a readable CSV ({e})") from None
    if "abstract" not in columns:
        raise CorpusError(f"{path}: CSV has no 'abstract' column (columns: {', '.join(columns) or 'none'})")
    reader.fieldnames = columns
    records = []
    try:
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if not any((v or "").strip() for k, v in row.items() if k is not None):
                continue
            rec = _guarded(lambda: _record({k: v for k, v in row.items() if k}, path.name, where),
                           skip_bad, skipped)
            if rec:
                records.append(rec)
    except csv.Error as e:
        raise CorpusError(f"{path}:{reader.line_num}: malformed CSV ({e})") from None
    if not records and not skipped:
        raise CorpusError(f"{path}: no records")
    return records


def read_venue_list(path: Path, data: bytes, skip_bad: bool, skipped: list[str],
                    notes: list[str]) -> list[Record]:
    """A venue list (venuelists.py): each entry with an abstract a record; those without one counted, in a
    line of `notes` for the file (KDD's lists have none)."""
    try:
        items, without = venuelists.read(path, data)
    except venuelists.ListError as e:
        raise CorpusError(str(e)) from None
    records = []
    for where, item in items:
        def parse() -> Record:
            if isinstance(item, str):
                raise CorpusError(item)
            return _record(item, path.name, where)

        rec = _guarded(parse, skip_bad, skipped)
        if rec:
            records.append(rec)
    if without:
        notes.append(f"{path}: {without:,} of {len(items) + without:,} entries have no abstract: left out "
                     "(nothing to search them by)")
    if not items and not without:
        raise CorpusError(f"{path}: the list holds no papers")
    return records


def read_file(path: Path, skip_bad: bool = False, skipped: list[str] | None = None,
              notes: list[str] | None = None) -> list[Record]:
    """Read one file by its suffix; CorpusError names the file and line (or entry) of what is wrong; `notes`
    gets what a reader should know that is no error (a venue list's entries without an abstract)."""
    skipped = [] if skipped is None else skipped
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CorpusError(f"{path}: cannot read ({e.strerror})") from None
    if venuelists.is_list(path):
        return read_venue_list(path, data, skip_bad, skipped, [] if notes is None else notes)
    text = decode(path, data)
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return read_jsonl(path, text, skip_bad, skipped)
    if suffix in CSV_SUFFIXES:
        return read_csv(path, text, skip_bad, skipped)
    return read_text_list(path, text, skip_bad, skipped)


# ---------------------------------------------------------------- merging

# An abstract with this few letters and digits ("." , "n/a", "1": placeholders some withdrawn ICLR 2026
# submissions carry) says nothing to search by: the paper is kept, found by its title, and the load says so.
PLACEHOLDER_CHARS = 3

# Near-duplicates: a seed line (an abstract without an id) whose text nearly matches a record's (with an id)
# is that record's paper, written slightly differently (a word changed, a sentence added, other markup).
# Measured on ../shared (the 66 seed abstracts and the 19,630 records of iclr2026_openreview.jsonl.gz as
# `python -m search fetch` writes them; all pairs, by a sparse product), by the Jaccard similarity of the
# sets of 3-word phrases (shingles() below):
#   - two distinct submissions are at most 0.251 alike: the closest pair of all 19,630 records, "Order
#     Matters" and "Variance Matters" (tktzkmqIfm, xK2EcRC3xJ), which share their whole first paragraph;
#     the next pair 0.164, and 99.9% of the records have no other record above 0.086;
#   - the 13 seeds whose text differs from their record's: 0.687, 0.706, 0.829, 0.856, 0.902, 0.922, 0.957,
#     0.958, 0.959, 0.968, 0.974, and two rewritten abstracts at 0.319 and 0.098 (RYwQ0xQcAh, jrKj2G2bQ4;
#     by sets of words 0.625 and 0.468, where the distinct pair above is at 0.519: no overlap of words
#     tells these two from distinct papers, so they stay apart); no seed's second-best record is above 0.039.
# 0.5 lies in the middle of the gap between 0.251 and 0.687.
NEAR_DUPLICATE = 0.5
SHINGLE_WORDS = 3
MIN_SHINGLES = 8          # a text of under 10 words is too short to call a near-duplicate of anything
COMMON_SHINGLE = 64       # a phrase in more seed lines than this ("in this paper we") identifies no paper


def shingles(text: str) -> set[tuple[str, ...]]:
    """The 3-word phrases of the cleaned, casefolded text, words split at white space (punctuation stays
    with its word: a regular expression's words took four times as long at 19,630 abstracts)."""
    return _phrases(clean_for_model(text))


def _phrases(cleaned: str) -> set[tuple[str, ...]]:
    words = cleaned.casefold().split()
    return set(zip(*(words[i:] for i in range(SHINGLE_WORDS))))


def record_shingles(rec: Record) -> set[tuple[str, ...]]:
    """shingles(rec.abstract), from the record's cleaned text (`_cleaned_abstract`)."""
    return _phrases(_cleaned_abstract(rec))


def _cleaned_abstract(rec: Record) -> str:
    """clean_for_model(rec.abstract), from the record's cleaned text where it begins with its cleaned title (every
    one of 8,000 records sampled from the shared lists and ICLR 2026 did): its abstract's cleaning is the rest."""
    head = clean_for_model(rec.title) + ". " if rec.title else ""
    return rec.text[len(head):] if rec.text.startswith(head) else clean_for_model(rec.abstract)


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _file(rec: Record) -> str:
    return rec.where.rsplit(":", 1)[0]


def _quoted(text: str, n: int = 40) -> str:
    return repr(text if len(text) <= n else text[:n] + "…")


def merge(records: list[Record], notes: list[str] | None = None) -> list[Paper]:
    """One paper per abstract (after normalisation) and per given id; order of first appearance.

    A seed line whose text nearly matches a record's joins that record's paper (near_duplicates); two
    records of one file with their own ids stay two papers even where their abstracts are equal. What was
    merged or kept apart, and abstracts with nothing to search by, are told in `notes` (one line each)."""
    notes = [] if notes is None else notes
    groups: dict[str, list[Record]] = {}
    by_id: dict[str, str] = {}       # id -> its group
    content: dict[str, str] = {}     # group -> the match key of its abstract (a split group's key differs)
    owner: dict[str, Record] = {}    # group -> its first record with an id
    per_file: dict[tuple[str, str], Record] = {}  # (group, file) -> the group's first record with an id there
    apart: list[tuple[Record, Record]] = []
    differ: list[tuple[Record, Record]] = []
    for rec in records:
        if rec.id and rec.id in by_id:
            key = by_id[rec.id]
            if content[key] != rec.key:
                first = groups[key][0]
                if _file(first) == _file(rec):
                    raise CorpusError(f"{rec.where}: duplicate id '{rec.id}' with a different abstract "
                                      f"(first at {first.where})")
                # two sources of one paper (a venue list and a fetch of the venue): its first text stands
                differ.append((rec, first))
        else:
            key = rec.key
            twin = per_file.get((key, _file(rec))) if rec.id else None
            if twin is not None and twin.id != rec.id:
                # one file (a venue's fetch) lists two submissions with the same abstract: two papers
                # (ICLR 2026's withdrawn "na" and "n/a" were one paper, one of 2,351 withdrawn lost)
                key = hashlib.sha1(f"{rec.key}\x1f{rec.id}".encode("utf-8")).hexdigest()
                apart.append((rec, twin))
        groups.setdefault(key, []).append(rec)
        content.setdefault(key, rec.key)
        if rec.id:
            by_id[rec.id] = key
            owner.setdefault(key, rec)
            per_file.setdefault((key, _file(rec)), rec)
    absorbed = near_duplicates(groups, owner, notes)
    into: dict[str, list[str]] = {}
    for seed_key, target in absorbed.items():
        into.setdefault(target, []).append(seed_key)
    position = {k: n for n, k in enumerate(groups)} if into else {}
    papers, done = [], set()
    for key in groups:  # a merged paper stands where the first of its texts did
        target = absorbed.get(key, key)
        if target in done:
            continue
        done.add(target)
        members = sorted([target, *into[target]], key=position.__getitem__) if target in into else [target]
        group = [r for k in members for r in groups[k]]
        # a split group's content id belongs to the paper first seen with that abstract
        alias_keys = [k for k in members if content[k] == k]
        papers.append(_merge_group(target, group, alias_keys))
    for rec, twin in apart:
        notes.append(f"kept {rec.id} ({rec.where}) apart from {twin.id} ({twin.where}): one file gives them "
                     f"the same abstract ({_quoted(rec.abstract)}) but their own ids")
    if differ:
        shown = "; ".join(f"{rec.id} ({rec.where}, first at {first.where})" for rec, first in differ[:5])
        more = f" and {len(differ) - 5} more" if len(differ) > 5 else ""
        notes.append(f"{len(differ)} record(s) describe a paper that another file gives with another abstract: "
                     f"one paper each, with the first file's text: {shown}{more}")
    empty = [p for p in papers if len(p.abstract) < 40 and len(match_key(p.abstract)) <= PLACEHOLDER_CHARS]
    if empty:
        shown = ", ".join(f"{p.id} ({_quoted(p.abstract, 12)})" for p in empty[:10])
        more = f" and {len(empty) - 10} more" if len(empty) > 10 else ""
        notes.append(f"{len(empty)} paper(s) have no abstract to search by (kept; a record's title still "
                     f"finds them): {shown}{more}")
    return papers


def near_duplicates(groups: dict[str, list[Record]], owner: dict[str, Record],
                    notes: list[str] | None = None) -> dict[str, str]:
    """Groups without an id (seed lines) whose text nearly matches a group with one: {seed group: its group}.

    No pairwise pass: a record is looked at further only where enough of its phrases are among all the seed
    lines' phrases (one set intersection; Jaccard >= t needs t * |record's phrases| shared with the one seed
    line), and then only the seed lines that share its phrases, through an index of them. At 19,630 ICLR 2026
    records and 66 seed lines this adds 1.5 to 2 s to the load's 25 s (on two busy cores), nearly all of it
    splitting the records' texts into phrases; the merge's own work before it was 1.5 s."""
    seeds = [k for k in groups if k not in owner]
    if not seeds or not owner:
        return {}
    phrases = {k: record_shingles(groups[k][0]) for k in seeds}
    seeds = [k for k in seeds if len(phrases[k]) >= MIN_SHINGLES]
    index: dict[tuple, list[int]] = {}
    for n, k in enumerate(seeds):
        for h in phrases[k]:
            index.setdefault(h, []).append(n)
    best: dict[int, tuple[float, str]] = {}
    # a shared phrase begins with two words that begin a seed line's phrase: a record with fewer such pairs than
    # half its phrases shares too few, found without making its phrases (at 70,130 papers, 3.6 s against 6.2 s
    # for every record's phrases; 225 of the 70,171 records with an id passed)
    openings = {phrase[:2] for phrase in index}
    for key, rec in owner.items() if seeds else ():
        if rec.phrases < MIN_SHINGLES:
            continue
        words = _cleaned_abstract(rec).casefold().split()
        if sum(map(openings.__contains__, zip(words, words[1:]))) < NEAR_DUPLICATE * rec.phrases:
            continue
        theirs = set(zip(*(words[i:] for i in range(SHINGLE_WORDS))))  # record_shingles(rec), of the words split
        shared_any = theirs & index.keys()
        if len(shared_any) < NEAR_DUPLICATE * len(theirs):
            continue
        hits: dict[int, int] = {}
        common = 0                   # phrases not counted: too common to identify a paper (each may be shared)
        for h in shared_any:
            found = index[h]
            if len(found) > COMMON_SHINGLE:
                common += 1
                continue
            for n in found:
                hits[n] = hits.get(n, 0) + 1
        for n, shared in hits.items():
            mine = phrases[seeds[n]]
            if shared + common < NEAR_DUPLICATE * max(len(mine), len(theirs)):
                continue
            score = jaccard(mine, theirs)
            if score >= NEAR_DUPLICATE and score > best.get(n, (0.0, ""))[0]:
                best[n] = (score, key)
    absorbed = {seeds[n]: key for n, (_, key) in sorted(best.items())}
    if absorbed and notes is not None:
        notes.append(f"merged {len(absorbed)} seed abstract(s) into their venue records: the same paper, "
                     "its text slightly different")
        for n, (score, key) in sorted(best.items()):
            notes.append(f"  {groups[seeds[n]][0].where} -> {owner[key].id} ({score:.0%} of their 3-word "
                         "phrases shared)")
    return absorbed


def _first(group: list[Record], name: str):
    return next((getattr(r, name) for r in group if getattr(r, name) not in (None, "", [], {})),
                getattr(group[0], name))


# the fields a paper of one record takes from it as they are (every rule gives the one record's), but the reviews'
_OWN = tuple(f.name for f in FIELDS if merge_rule(f) != REVIEWS)


def _carried(group: list[Record]) -> dict:
    """Each declared field of the merged paper by its rule (Fields' "merge"): the first record that has it,
    the reviews' fields together (`_reviews`), a parallel list from the record its list was taken from."""
    if len(group) == 1:  # nearly every paper: each rule gives the record's own (_carried was 13 s of 70,130's merge)
        rec = group[0]
        return {**{name: getattr(rec, name) for name in _OWN}, **_reviews(group)}
    out = {}
    for f in FIELDS:
        rule = merge_rule(f)
        if rule == "first":
            out[f.name] = _first(group, f.name)
        elif rule.startswith("with:"):
            lead = rule[len("with:"):]
            source = next((r for r in group if getattr(r, lead)), group[0])
            out[f.name] = getattr(source, f.name)
    return {**out, **_reviews(group)}


def sub_score_means(reviews: list[dict]) -> dict[str, float]:
    """The mean of each number the reviews' form has besides rating and confidence (soundness, ...)."""
    values: dict[str, list[float]] = {}
    for r in reviews:
        for k, v in r.items():
            if k not in NOT_SUB_SCORES and isinstance(v, (int, float)) and not isinstance(v, bool):
                values.setdefault(k, []).append(float(v))
    return {k: round(sum(v) / len(v), 4) for k, v in values.items()}


def _reviews(group: list[Record]) -> dict:
    """The review fields of the first record that has reviews or ratings (all come from one source), with the
    sub-scores' means; each review's rating from its reviews, or as the source listed them (a venue list's)."""
    rec = next((r for r in group if r.reviews), None) or \
        next((r for r in group if r.avg_rating is not None or r.n_ratings is not None or r.ratings), None)
    if rec is None:
        return {}
    out = {f.name: getattr(rec, f.name) for f in FIELDS if merge_rule(f) == REVIEWS}
    if rec.reviews:
        out["ratings"] = [float(r["rating"]) for r in rec.reviews if isinstance(r.get("rating"), (int, float))]
    return {**out, "sub_scores": sub_score_means(rec.reviews)}


def _merge_group(key: str, group: list[Record], alias_keys: list[str] | None = None) -> Paper:
    given = [r for r in group if r.id]
    # a structured export's text wins over a seed line: it is the publisher's version
    best = given[0] if given else group[0]
    derived_id = id_from_digest(key)
    pid = given[0].id if given else derived_id
    # the content ids stay aliases so links made before the record gained an id keep working (a seed line
    # merged as a near-duplicate brings its own)
    derived = [id_from_digest(k) for k in ([key] if alias_keys is None else alias_keys)]
    aliases = [a for a in dict.fromkeys([r.id for r in given[1:]] + derived) if a != pid]
    title = _first(group, "title")
    text = best.text if best.title == title and best.text else model_text(title, best.abstract)
    return Paper(id=pid, abstract=best.abstract, text=text,
                 title=title or derive_title(best.abstract), title_derived=not title,
                 sources=list(dict.fromkeys(r.source for r in group)), aliases=aliases, **_carried(group))


def load_corpus(paths: list[Path], skip_bad: bool = False, notes: list[str] | None = None,
                cache_dir: Path | None = None, digests: dict[Path, str] | None = None,
                tokens: dict[str, str] | None = None) -> tuple[list[Paper], list[str]]:
    """Read every input and merge; returns the papers and the messages of skipped lines.

    `notes`, where given, gets a line for each thing the merge did that a reader should know of (seed lines
    merged into the records they nearly match, records kept apart, abstracts with nothing to search by):
    nothing was left out for them, so they are not among the skipped lines. `cache_dir`: keep and take each
    file's records in its record cache (record_cache.py; `digests`, the files' sha256 where known); `tokens`
    gets each record's text's BM25 tokens, joined by spaces."""
    skipped: list[str] = []
    records: list[Record] = []
    notes = [] if notes is None else notes
    for f in input_files(paths):
        if cache_dir is None:
            records.extend(read_file(f, skip_bad, skipped, notes))
            continue
        digest = (digests or {}).get(f) or file_digest(f)
        records.extend(record_cache.cached_read(f, digest, cache_dir, skip_bad, skipped, notes,
                                                lambda s, n, f=f: read_file(f, skip_bad, s, n)))
    if not records:
        raise CorpusError(f"{', '.join(map(str, paths))}: no abstracts found")
    if tokens is not None:
        tokens.update((r.text, r.tokens) for r in records)
    return merge(records, notes), skipped
