"""Paper Copilot's venue lists (`<venue><year>.json`, or `.json.gz`): one JSON array per conference and year.

Each entry becomes a record in the shape corpus.py reads (its declared fields, corpus.Fields): the venue's
name and year from the file's name (or its entries' BibTeX), the decision from `status` ("Reject" ->
Rejected, "Withdraw" -> Withdrawn, a published list's "Long", "Findings", "Main" ... -> Accepted, with the words
kept as the track), authors and affiliations split on ";" (one affiliation an author, "+" between two of one
author), keywords on ";", each review's rating from "5;6;6", `gs_citation` as the citations (-1: unknown).
An entry without an abstract is not a paper to search by: it is counted, and the file's count said once.
What is wrong with the file is a ListError naming it (and the entry)."""
from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

from .text import content_id, from_html

SUFFIXES = (".json", ".json.gz")
SITE = "https://openreview.net"
# Paper Copilot's file names in lower case; the venue's own spelling (others are upper-cased: "colm" -> "COLM")
NAMES = {"nips": "NeurIPS", "neurips": "NeurIPS", "corl": "CoRL", "automl": "AutoML", "acml": "ACML"}
FILE_NAME = re.compile(r"([a-z][a-z_-]*?)[_-]?((?:19|20)\d\d)$", re.IGNORECASE)
BIBTEX_YEAR = re.compile(r"\byear\s*=\s*[{\"]?\s*((?:19|20)\d\d)")
# status words -> the decision (corpus.Fields.decision); any other word of a published list is "Accepted". ICLR
# 2013-2018's "Workshop" is "invite to the workshop track": not the conference's programme, a rejection for its
# acceptance rate (ICLR 2017: 198 of 490 accepted, 40%; 245, 50%, were it counted accepted)
DECISIONS = {"reject": "Rejected", "withdraw": "Withdrawn", "withdrawn": "Withdrawn", "desk reject": "Desk rejected",
             "active": "Under review", "workshop": "Workshop track", "poster": "Poster", "oral": "Oral", "spotlight": "Spotlight"}


class ListError(ValueError):
    """A venue list that cannot be read; the message is one line naming the file (and entry)."""


def is_list(path: Path) -> bool:
    return path.name.lower().endswith(SUFFIXES)


def venue_of(path: Path) -> tuple[str, int | None]:
    """The venue's short name and year from the file's name: colm2024.json.gz -> ("COLM", 2024); ("", None) where
    the name is no venue and year."""
    stem = path.name[:-len(".json.gz")] if path.name.lower().endswith(".json.gz") else path.stem
    m = FILE_NAME.fullmatch(stem)
    if not m:  # "papers.json": a list of papers of no venue the name tells (its entries' BibTeX may give a year)
        return "", None
    return NAMES.get(m.group(1).lower(), m.group(1).upper()), int(m.group(2))


def entries(path: Path, data: bytes) -> list:
    """The file's entries: gunzipped where it ends in .gz, a JSON array; ListError otherwise."""
    if path.name.lower().endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as e:
            why = "truncated" if isinstance(e, EOFError) else "not a readable gzip file"
            raise ListError(f"{path}: {why} ({e})") from None
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise ListError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise ListError(f"{path}: malformed JSON ({e.msg}, line {e.lineno}, column {e.colno})") from None
    if not isinstance(value, list):
        raise ListError(f"{path}: not a venue list: expected a JSON array of papers (Paper Copilot's shape), "
                        f"got a JSON {type(value).__name__}")
    return value


def _text(entry: dict, name: str) -> str:
    value = entry.get(name)
    return from_html(str(value)).strip() if isinstance(value, (str, int, float)) and not isinstance(value, bool) \
        else ""


def _cells(value: str) -> list[str]:
    return [c.strip() for c in value.split(";")] if value.strip() else []


def people(entry: dict) -> tuple[list[str], list[str]]:
    """The authors and, parallel to them, their affiliations ("" unknown; [] where the list names none).
    Two affiliations of one author ("A+B") stay one cell, as "A + B"."""
    names = _cells(_text(entry, "author"))
    affs = _cells(_text(entry, "aff"))
    affs = [" + ".join(a.strip() for a in cell.split("+") if a.strip()) for cell in affs]
    kept = [n for n, name in enumerate(names) if name]
    authors = [names[n] for n in kept]
    affiliations = [affs[n] if n < len(affs) else "" for n in kept]
    return authors, affiliations if any(affiliations) else []


def _scores(entry: dict, name: str, where: str) -> list[float]:
    raw = entry.get(name)
    if raw is None or raw == "":
        return []
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):  # one review's, as a number
        return [float(raw)]
    if not isinstance(raw, str):
        raise ListError(f"{where}: '{name}' must be per-review values separated by ';' (\"5;6;6\"), not {raw!r}")
    try:
        return [float(v) for v in raw.split(";") if v.strip()]
    except ValueError:
        raise ListError(f"{where}: '{name}' must be numbers separated by ';' (\"5;6;6\"), not {raw[:40]!r}") \
            from None


def decision(status: str, has_rejections: bool) -> str:
    """The decision a list's status gives: its word for a rejection, withdrawal or an oral, poster or spotlight;
    another word ("Long", "Findings", "Main", "Technical") of a list of published papers is "Accepted"; no word
    is "Accepted" in such a list and unknown ("") in one that holds rejections too."""
    word = status.strip().lower()
    if word in DECISIONS:
        return DECISIONS[word]
    if not word:
        return "" if has_rejections else "Accepted"
    return "Accepted"


def record(entry: dict, conference: str, year: int | None, has_rejections: bool, where: str) -> dict:
    """One entry in the shape corpus.py reads (corpus.Fields); ListError names the entry."""
    status = _text(entry, "status")
    track = _text(entry, "track")
    said = decision(status, has_rejections)
    pid, site = _text(entry, "id"), _text(entry, "site")
    on_openreview = site.startswith(f"{SITE}/forum?id=")
    authors, affiliations = people(entry)
    ratings = _scores(entry, "rating", where)
    confidences = _scores(entry, "confidence", where)
    citations = entry.get("gs_citation")
    if not (isinstance(citations, int) and not isinstance(citations, bool) and citations >= 0):
        citations = None  # -1, absent or not a count: unknown
    label = " ".join(str(x) for x in (conference, year) if x)
    return {
        # an OpenReview forum id is the paper's across sources (a fetch of the venue merges with it); a
        # proceedings' own id ("3758", "paper802") is only unique within its venue and year
        # an entry without one gets its venue's and its abstract's, so that it is a record, not a seed line (the
        # near-duplicate pass compared 4,393 such entries with every record: 34 s of reading the shared lists)
        "id": pid if on_openreview and pid else
        f"{conference.lower()}{year or ''}-{pid or content_id(_text(entry, 'abstract'))}",
        "title": _text(entry, "title"), "abstract": _text(entry, "abstract"), "tldr": _text(entry, "tldr"),
        "authors": authors, "affiliations": affiliations,
        "keywords": [k.strip() for k in _text(entry, "keywords").split(";") if k.strip()],
        "primary_area": _text(entry, "primary_area"), "url": site,
        "pdf": _text(entry, "pdf") or (f"{SITE}/pdf?id={pid}" if on_openreview else ""),
        "conference": conference, "year": year,
        "track": track if track and track.lower() != "main" else status,
        "decision": said,
        "venue": (f"Submitted to {label}" if said in ("Rejected", "Withdrawn", "Desk rejected", "Workshop track", "Under review")
                  else f"{label} {status}").strip() if label else "",
        "citations": citations, "ratings": ratings, "n_ratings": len(ratings) or None,
        "avg_rating": round(sum(ratings) / len(ratings), 4) if ratings else None,
        "avg_confidence": round(sum(confidences) / len(confidences), 4) if confidences else None,
    }


def read(path: Path, data: bytes) -> tuple[list[tuple[str, dict | str]], int]:
    """Each entry with an abstract as (where, record), or (where, what is wrong with it) for a bad one; and how
    many entries had no abstract. ListError where the file itself cannot be read."""
    items = entries(path, data)
    conference, year = venue_of(path)
    has_rejections = any(isinstance(e, dict) and decision(_text(e, "status"), False) in ("Rejected", "Withdrawn")
                         for e in items)
    out: list[tuple[str, dict | str]] = []
    without = 0
    for n, entry in enumerate(items, start=1):
        where = f"{path}:entry {n}"  # a record's place, as "file:line" is a JSONL line's
        if not isinstance(entry, dict):
            out.append((where, f"{where}: expected a JSON object (a paper), got {type(entry).__name__}"))
            continue
        where = f"{where} ({_text(entry, 'id') or 'no id'})"
        if not _text(entry, "abstract"):
            without += 1
            continue
        entry_year = year
        if entry_year is None:
            m = BIBTEX_YEAR.search(_text(entry, "bibtex"))
            entry_year = int(m.group(1)) if m else None
        try:
            out.append((where, record(entry, conference, entry_year, has_rejections, where)))
        except ListError as e:
            out.append((where, str(e)))
    return out, without
