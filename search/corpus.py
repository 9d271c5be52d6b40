"""Reading the corpus: seed text lists, JSONL and CSV exports, merged into unique papers."""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import decoding
from .text import clean_for_model, id_from_digest, match_digest, strip_control
from .titles import derive_title

TEXT_SUFFIXES = {".txt", ".md", ""}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
CSV_SUFFIXES = {".csv"}
MAX_ABSTRACT_CHARS = 20_000  # ten times the longest ICLR 2026 abstract; longer is not an abstract


class CorpusError(Exception):
    """Bad input; the message is one line that names the file (and line)."""


# the parts of a paper papers.jsonl leaves out (search/reviews.py writes them)
RECORD_ONLY = ("reviews", "meta_review", "decision_text")
# review fields that are not sub-scores
NOT_SUB_SCORES = {"rating", "confidence"}


@dataclass
class Paper:
    id: str
    abstract: str            # as given, markup included; rendered by the page
    text: str                # cleaned of markup; what the model and BM25 see
    title: str
    title_derived: bool
    sources: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)  # other ids that open this paper
    authors: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    url: str = ""
    primary_area: str = ""
    venue: str = ""
    pdf: str = ""
    # from the public reviews (python -m search fetch); None where a venue shows none
    avg_rating: float | None = None
    avg_confidence: float | None = None
    n_ratings: int | None = None
    # from a whole-venue fetch: Oral, Poster, Rejected, Withdrawn, Under review, ...; "" where unknown
    decision: str = ""
    tldr: str = ""
    code: str = ""           # a code link the abstract or TL;DR gives
    topic: int | None = None  # set at build time (search/topics.py)
    # each review's rating, in the order OpenReview lists them; the sub-scores' means ("soundness": 2.75)
    ratings: list[float] = field(default_factory=list)
    sub_scores: dict[str, float] = field(default_factory=dict)
    # the record itself, which papers.jsonl leaves out: the index keeps it in its `reviews` part
    # (search/reviews.py) and reads one paper's on demand, so a cold start never loads 10x the abstracts' text
    reviews: list[dict] = field(default_factory=list, repr=False)
    meta_review: dict = field(default_factory=dict, repr=False)
    decision_text: str = field(default="", repr=False)

    def to_dict(self) -> dict:
        """The paper as papers.jsonl holds it: everything but the reviews' texts."""
        d = asdict(self)
        for name in RECORD_ONLY:
            d.pop(name)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Paper":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


@dataclass
class Record:
    """One abstract as read from one place, before merging."""
    abstract: str
    source: str
    where: str               # "file:line" for messages
    id: str = ""
    title: str = ""
    authors: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    url: str = ""
    primary_area: str = ""
    venue: str = ""
    pdf: str = ""
    avg_rating: float | None = None
    avg_confidence: float | None = None
    n_ratings: int | None = None
    decision: str = ""
    tldr: str = ""
    code: str = ""
    reviews: list[dict] = field(default_factory=list)
    meta_review: dict = field(default_factory=dict)
    decision_text: str = ""
    key: str = ""            # match_digest(abstract): made once, it groups copies of one abstract

    def __post_init__(self):
        self.key = self.key or match_digest(self.abstract)


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


def input_files(paths: list[Path]) -> list[Path]:
    """Expand directories into their abstract files; refuse what is missing or empty."""
    files: list[Path] = []
    for p in paths:
        if not p.exists():
            raise CorpusError(f"{p}: no such file or directory")
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".")
                           and f.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES | CSV_SUFFIXES)
            if not found:
                raise CorpusError(f"{p}: directory holds no abstract files (.txt, .jsonl, .csv)")
            files.extend(found)
        elif p.suffix.lower() not in TEXT_SUFFIXES | JSONL_SUFFIXES | CSV_SUFFIXES:
            raise CorpusError(f"{p}: unsupported file type '{p.suffix}' (use .txt, .jsonl or .csv)")
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
            elif v is not None:
                raise CorpusError(f"{where}: review {n}'s field '{k}' must be a number or a text")
        out.append(review)
    return out


def _as_texts(value, where: str, name: str) -> dict:
    if value is None or value == "":
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float)) for v in value.values()):
        raise CorpusError(f"{where}: field '{name}' must be an object of texts")
    return {str(k): strip_control(str(v)).strip() for k, v in value.items()}


def _record(obj: dict, source: str, where: str) -> Record:
    if not isinstance(obj.get("abstract"), str):
        raise CorpusError(f"{where}: no 'abstract' text field")
    return Record(abstract=_check_abstract(obj["abstract"], where), source=source, where=where,
                  id=_as_str(obj.get("id"), where, "id"), title=_as_str(obj.get("title"), where, "title"),
                  authors=_as_list(obj.get("authors"), where, "authors"),
                  keywords=_as_list(obj.get("keywords"), where, "keywords"),
                  url=_as_str(obj.get("url"), where, "url"),
                  primary_area=_as_str(obj.get("primary_area"), where, "primary_area"),
                  venue=_as_str(obj.get("venue"), where, "venue"), pdf=_as_str(obj.get("pdf"), where, "pdf"),
                  avg_rating=_as_number(obj.get("avg_rating"), where, "avg_rating"),
                  avg_confidence=_as_number(obj.get("avg_confidence"), where, "avg_confidence"),
                  n_ratings=_as_number(obj.get("n_ratings"), where, "n_ratings", integer=True),
                  decision=_as_str(obj.get("decision"), where, "decision"),
                  tldr=_as_str(obj.get("tldr"), where, "tldr"), code=_as_str(obj.get("code"), where, "code"),
                  reviews=_as_reviews(obj.get("reviews"), where),
                  meta_review=_as_texts(obj.get("meta_review"), where, "meta_review"),
                  decision_text=_as_str(obj.get("decision_text"), where, "decision_text"))


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


def read_file(path: Path, skip_bad: bool = False, skipped: list[str] | None = None) -> list[Record]:
    """Read one file by its suffix; CorpusError names the file and line of what is wrong."""
    skipped = [] if skipped is None else skipped
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CorpusError(f"{path}: cannot read ({e.strerror})") from None
    text = decode(path, data)
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return read_jsonl(path, text, skip_bad, skipped)
    if suffix in CSV_SUFFIXES:
        return read_csv(path, text, skip_bad, skipped)
    return read_text_list(path, text, skip_bad, skipped)


# ---------------------------------------------------------------- merging

def merge(records: list[Record]) -> list[Paper]:
    """One paper per abstract (after normalisation) and per given id; order of first appearance."""
    groups: dict[str, list[Record]] = {}
    by_id: dict[str, str] = {}
    for rec in records:
        key = rec.key
        if rec.id and rec.id in by_id and by_id[rec.id] != key:
            first = groups[by_id[rec.id]][0].where
            raise CorpusError(f"{rec.where}: duplicate id '{rec.id}' with a different abstract "
                              f"(first at {first})")
        groups.setdefault(key, []).append(rec)
        if rec.id:
            by_id[rec.id] = key
    return [_merge_group(key, group) for key, group in groups.items()]


def _first(group: list[Record], name: str):
    return next((getattr(r, name) for r in group if getattr(r, name)), type(getattr(group[0], name))())


def sub_score_means(reviews: list[dict]) -> dict[str, float]:
    """The mean of each number the reviews' form has besides rating and confidence (soundness, ...)."""
    values: dict[str, list[float]] = {}
    for r in reviews:
        for k, v in r.items():
            if k not in NOT_SUB_SCORES and isinstance(v, (int, float)) and not isinstance(v, bool):
                values.setdefault(k, []).append(float(v))
    return {k: round(sum(v) / len(v), 4) for k, v in values.items()}


def _reviews(group: list[Record]) -> dict:
    """The review scores of the first record that has them (all come from one source), with its reviews."""
    rec = next((r for r in group if r.reviews), None) or \
        next((r for r in group if r.avg_rating is not None or r.n_ratings is not None), None)
    if rec is None:
        return {}
    ratings = [float(r["rating"]) for r in rec.reviews if isinstance(r.get("rating"), (int, float))]
    return {"avg_rating": rec.avg_rating, "avg_confidence": rec.avg_confidence, "n_ratings": rec.n_ratings,
            "ratings": ratings, "sub_scores": sub_score_means(rec.reviews), "reviews": rec.reviews,
            "meta_review": rec.meta_review, "decision_text": rec.decision_text}


def _merge_group(key: str, group: list[Record]) -> Paper:
    given = [r for r in group if r.id]
    # a structured export's text wins over a seed line: it is the publisher's version
    best = given[0] if given else group[0]
    derived_id = id_from_digest(key)
    pid = given[0].id if given else derived_id
    # the content id stays an alias so links made before the record gained an id keep working
    aliases = [a for a in dict.fromkeys([r.id for r in given[1:]] + [derived_id]) if a != pid]
    title = _first(group, "title")
    # a real title is part of what the paper is about; a derived one only repeats the abstract
    text = clean_for_model(f"{title}. {best.abstract}" if title else best.abstract)
    return Paper(id=pid, abstract=best.abstract, text=text,
                 title=title or derive_title(best.abstract), title_derived=not title,
                 sources=list(dict.fromkeys(r.source for r in group)), aliases=aliases,
                 authors=_first(group, "authors"), keywords=_first(group, "keywords"),
                 url=_first(group, "url"), primary_area=_first(group, "primary_area"),
                 venue=_first(group, "venue"), pdf=_first(group, "pdf"), decision=_first(group, "decision"),
                 tldr=_first(group, "tldr"), code=_first(group, "code"), **_reviews(group))


def load_corpus(paths: list[Path], skip_bad: bool = False) -> tuple[list[Paper], list[str]]:
    """Read every input and merge; returns the papers and the messages of skipped lines."""
    skipped: list[str] = []
    records: list[Record] = []
    for f in input_files(paths):
        records.extend(read_file(f, skip_bad, skipped))
    if not records:
        raise CorpusError(f"{', '.join(map(str, paths))}: no abstracts found")
    return merge(records), skipped
