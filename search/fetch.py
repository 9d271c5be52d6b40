"""Fetching a venue's accepted papers from OpenReview (API v2) into the JSONL the build reads.

The client is the official `openreview-py`. It already retries a rate-limited or failing request a
few times inside one call; a call that still fails is retried here with a longer back-off, so a
download of thousands of papers survives a rate limit that lasts minutes.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from .progress import Progress

DEFAULT_VENUE = "ICLR.cc/2026/Conference"
API_URL = "https://api2.openreview.net"
SITE = "https://openreview.net"
PAGE = 1000                      # the API's largest page
RETRIES, BACKOFF = 5, 2.0        # our retries of a whole call, on top of the client's own


class FetchError(Exception):
    """The download cannot go on; the message is one line naming the cause."""


def default_out(venue_id: str) -> Path:
    """data/<venue id as a file name>.jsonl, e.g. data/ICLR.cc_2026_Conference.jsonl."""
    return Path("data") / (re.sub(r"[^A-Za-z0-9.-]+", "_", venue_id).strip("_") + ".jsonl")


def make_client(baseurl: str = API_URL):
    """The official client, anonymous (public notes need no account)."""
    import openreview

    return openreview.api.OpenReviewClient(baseurl=baseurl)


def _is_rate_limit(e: Exception) -> bool:
    text = str(e)
    return "429" in text or "RateLimit" in text or "Too Many Requests" in text


def _describe(e: Exception) -> str:
    """One line for an error raised through the client."""
    import requests

    if isinstance(e, requests.exceptions.ConnectionError):
        return "cannot reach OpenReview (no network connection?)"
    if isinstance(e, requests.exceptions.Timeout):
        return "OpenReview did not answer in time"
    arg = e.args[0] if e.args else e
    if isinstance(arg, dict):
        return f"OpenReview answered: {arg.get('name', 'Error')}: {arg.get('message', '')}".strip()
    return f"OpenReview answered: {str(arg).splitlines()[0] if str(arg) else type(e).__name__}"


def call(fn: Callable, *args, sleep: Callable[[float], None] = time.sleep, **kwargs):
    """fn(*args, **kwargs), retried with exponential back-off while OpenReview rate-limits us."""
    for attempt in range(RETRIES + 1):
        try:
            # the client prints a line to stdout for each of its own retries; our progress says enough
            with contextlib.redirect_stdout(io.StringIO()):
                return fn(*args, **kwargs)
        except Exception as e:  # the client raises OpenReviewException, requests' errors, ...
            if attempt < RETRIES and _is_rate_limit(e):
                sleep(BACKOFF * 2 ** attempt)
                continue
            raise FetchError(_describe(e)) from None


def _value(content: dict, name: str):
    """A field of a v2 note's content ({"name": {"value": ...}}), or None."""
    field = content.get(name)
    return field.get("value") if isinstance(field, dict) else None


def _number(value) -> float | None:
    """6, 6.0, "6" or "6: marginally above the acceptance threshold" -> 6.0; anything else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        m = re.match(r"\s*(-?\d+(?:\.\d+)?)", value)
        return float(m.group(1)) if m else None
    return None


def _authors(value) -> list[str]:
    # the legacy schema is a list of names; the unified one a list of {"fullname", "username"}
    if not isinstance(value, list):
        return []
    names = [a.get("fullname", "") if isinstance(a, dict) else a for a in value]
    return [n.strip() for n in names if isinstance(n, str) and n.strip()]


def reviews_of(note, review_name: str) -> list[dict]:
    """The contents of a submission's official reviews, from its `details["replies"]`."""
    replies = (note.details or {}).get("replies") or []
    return [r.get("content") or {} for r in replies
            if any(str(inv).endswith(f"/-/{review_name}") for inv in r.get("invitations") or [])]


def record(note, venue_id: str, review_name: str = "Official_Review", rating: str = "rating",
           confidence: str = "confidence") -> dict | None:
    """One accepted paper as the build reads it; None for a note that is not an accepted paper."""
    content = note.content if isinstance(note.content, dict) else None
    if content is None or not note.id:
        raise FetchError(f"unexpected answer from OpenReview: note {note.id!r} has no content")
    if _value(content, "venueid") != venue_id:  # withdrawn, desk-rejected or rejected
        return None
    abstract = _value(content, "abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        return None  # nothing to search by
    rec = {"id": note.id, "title": str(_value(content, "title") or "").strip(), "abstract": abstract.strip(),
           "authors": _authors(_value(content, "authors")),
           "keywords": [k.strip() for k in _value(content, "keywords") or [] if isinstance(k, str) and k.strip()],
           "primary_area": str(_value(content, "primary_area") or "").strip(),
           "venue": str(_value(content, "venue") or "").strip(),
           "url": f"{SITE}/forum?id={note.id}", "pdf": f"{SITE}/pdf?id={note.id}"}
    reviews = reviews_of(note, review_name)
    ratings = [x for x in (_number(_value(r, rating)) for r in reviews) if x is not None]
    confidences = [x for x in (_number(_value(r, confidence)) for r in reviews) if x is not None]
    if ratings:  # absent, not zero, where the venue shows no reviews
        rec["avg_rating"] = round(sum(ratings) / len(ratings), 4)
        rec["n_ratings"] = len(ratings)
    if confidences:
        rec["avg_confidence"] = round(sum(confidences) / len(confidences), 4)
    return rec


def venue_settings(client, venue_id: str, sleep: Callable[[float], None] = time.sleep) -> dict:
    """The venue group's names for its reviews and their scores (ICLR's defaults where it names none)."""
    try:
        group = call(client.get_group, venue_id, sleep=sleep)
    except FetchError as e:
        if "NotFound" in str(e) or "not found" in str(e).lower():
            raise FetchError(f"no venue '{venue_id}' on OpenReview (ids look like ICLR.cc/2026/Conference, "
                             "NeurIPS.cc/2025/Conference)") from None
        raise
    content = group.content if isinstance(getattr(group, "content", None), dict) else {}
    return {"review_name": _value(content, "review_name") or "Official_Review",
            "rating": _value(content, "review_rating") or "rating",
            "confidence": _value(content, "review_confidence") or "confidence"}


def fetch_venue(client, venue_id: str, progress: Progress | None = None,
                sleep: Callable[[float], None] = time.sleep) -> list[dict]:
    """Every accepted paper of a venue, page by page, with its review scores."""
    settings = venue_settings(client, venue_id, sleep)
    query = {"content": {"venueid": venue_id}, "details": "replies", "limit": PAGE}
    first = call(client.get_notes, **query, with_count=True, sleep=sleep)
    if not (isinstance(first, tuple) and len(first) == 2 and isinstance(first[0], list)):
        raise FetchError("unexpected answer from OpenReview: no list of notes with a count")
    notes, total = first
    if not isinstance(total, int):
        raise FetchError("unexpected answer from OpenReview: the count of notes is not a number")
    out: list[dict] = []
    seen: set[str] = set()
    offset = 0
    while True:
        for note in notes:
            if not hasattr(note, "content") or not hasattr(note, "id"):
                raise FetchError(f"unexpected answer from OpenReview: {type(note).__name__} is not a note")
            rec = record(note, venue_id, **settings)
            if rec is not None and rec["id"] not in seen:
                seen.add(rec["id"])
                out.append(rec)
        offset += len(notes)
        if progress:
            progress("downloading papers", min(offset, total), total)
        if len(notes) < PAGE or offset >= total:
            break
        notes = call(client.get_notes, **query, offset=offset, sleep=sleep)
        if not isinstance(notes, list):
            raise FetchError("unexpected answer from OpenReview: a page is not a list of notes")
    if not out:
        raise FetchError(f"OpenReview lists no accepted paper with an abstract at '{venue_id}' "
                         "(are the decisions out?)")
    return out


def write_jsonl(records: list[dict], out: Path) -> None:
    """Write the records whole or not at all: a temporary file beside `out`, then one rename."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
