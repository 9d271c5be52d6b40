"""OpenReview notes (API v2) as the records the build reads: a submission, its fate and its reviews.

The venue group names the invitations and venue ids a venue uses (ICLR's names where it gives none),
so a decision is read the way OpenReview itself shows it: withdrawn, desk-rejected and rejected papers
by their venue id, accepted ones by their venue ("ICLR 2026 Oral"), and a Decision reply where the
venue id alone does not tell.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

SITE = "https://openreview.net"
# review texts kept in the record; any other text field of a review form is left out
REVIEW_TEXTS = ("summary", "strengths", "weaknesses", "questions", "strengths_and_weaknesses", "review",
                "limitations")
DECISIONS = ("Oral", "Spotlight", "Poster", "Accepted", "Rejected", "Desk rejected", "Withdrawn", "Under review")
CODE_HOSTS = r"(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org|huggingface\.co|anonymous\.4open\.science)"
CODE_LINK = re.compile(r"https?://(?:www\.)?" + CODE_HOSTS + r"/[^\s)\]}>\"'`]+", re.IGNORECASE)


@dataclass(frozen=True)
class VenueNames:
    """The names a venue group gives its invitations and venue ids."""
    venue_id: str
    submission_id: str
    review_name: str = "Official_Review"
    rating: str = "rating"
    confidence: str = "confidence"
    meta_review_name: str = "Meta_Review"
    decision_name: str = "Decision"
    decision_field: str = "decision"
    withdrawn_id: str = ""
    desk_rejected_id: str = ""
    rejected_id: str = ""

    @classmethod
    def from_group(cls, venue_id: str, content: dict | None) -> "VenueNames":
        content = content if isinstance(content, dict) else {}

        def get(name: str, default: str) -> str:
            value = value_of(content, name)
            return value if isinstance(value, str) and value else default

        return cls(venue_id=venue_id,
                   submission_id=get("submission_id", f"{venue_id}/-/{get('submission_name', 'Submission')}"),
                   review_name=get("review_name", "Official_Review"), rating=get("review_rating", "rating"),
                   confidence=get("review_confidence", "confidence"),
                   meta_review_name=get("meta_review_name", "Meta_Review"),
                   decision_name=get("decision_name", "Decision"),
                   decision_field=get("decision_field_name", "decision"),
                   withdrawn_id=get("withdrawn_venue_id", f"{venue_id}/Withdrawn_Submission"),
                   desk_rejected_id=get("desk_rejected_venue_id", f"{venue_id}/Desk_Rejected_Submission"),
                   rejected_id=get("rejected_venue_id", f"{venue_id}/Rejected_Submission"))


def value_of(content: dict, name: str):
    """A field of a v2 note's content ({"name": {"value": ...}}), or None."""
    field = content.get(name) if isinstance(content, dict) else None
    return field.get("value") if isinstance(field, dict) else None


def number(value) -> float | int | None:
    """6, 6.0, "6" or "6: marginally above the acceptance threshold" -> 6; text that merely begins with
    a digit ("1. How is ...") -> None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        x = float(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(?::.*)?", value, re.DOTALL)
        if not m:
            return None
        x = float(m.group(1))
    else:
        return None
    return int(x) if x.is_integer() else x


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def authors(value) -> list[str]:
    # the legacy schema is a list of names; the unified one a list of {"fullname", "username"}
    if not isinstance(value, list):
        return []
    names = [a.get("fullname", "") if isinstance(a, dict) else a for a in value]
    return [n.strip() for n in names if isinstance(n, str) and n.strip()]


def _replies(note, name: str) -> list[dict]:
    """The replies of one invitation, once each: OpenReview can list a reply edited after it was posted
    (a rating raised after the rebuttal) once per version under the same id (968 of ICLR 2026's 76,816
    reviews); the latest version (by modification date) stands, where the first one stood. The earlier
    versions, oldest first, are under "_earlier" of the one that stands."""
    replies = (getattr(note, "details", None) or {}).get("replies") or []
    versions: dict[str, list[dict]] = {}
    for r in replies:
        if not (isinstance(r, dict) and any(str(inv).endswith(f"/-/{name}") for inv in r.get("invitations") or [])):
            continue
        versions.setdefault(str(r.get("id") or id(r)), []).append(r)
    latest = []
    for group in versions.values():
        group = sorted(group, key=_modified)  # stable: equal dates keep the listed order, the last one stands
        latest.append({**group[-1], "_earlier": group[:-1]} if len(group) > 1 else group[-1])
    return latest


def _modified(reply: dict) -> float:
    for name in ("tmdate", "mdate", "tcdate", "cdate"):
        if isinstance(reply.get(name), (int, float)):
            return float(reply[name])
    return 0.0


def _signer(reply: dict) -> str:
    """"ICLR.cc/2026/Conference/Submission1/Reviewer_hsV6" -> "Reviewer_hsV6"."""
    signatures = reply.get("signatures") or [""]
    return str(signatures[0]).rsplit("/", 1)[-1]


def _date(reply: dict) -> str:
    ms = reply.get("tcdate") or reply.get("cdate")
    if not isinstance(ms, (int, float)):
        return ""
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d")


def review(reply: dict, names: VenueNames | None = None) -> dict:
    """One official review: its reviewer's anonymous name, every number its form has, its texts; where it was
    edited, "versions": each earlier version's numbers with the date it was made ("modified"), oldest first.
    The numbers under the index's names (`named`), so every later reader finds the venue's rating as "rating"."""
    out: dict = {"reviewer": _signer(reply), "date": _date(reply), **_numbers(reply, names)}
    texts = {}
    content = reply.get("content") if isinstance(reply.get("content"), dict) else {}
    for name in content:
        value = value_of(content, name)
        if name in REVIEW_TEXTS and _text(value):
            texts[name] = _text(value)
    earlier = [{"modified": _modified_date(r), **_numbers(r, names)} for r in reply.get("_earlier") or ()]
    if earlier:
        out["modified"] = _modified_date(reply)
        out["versions"] = earlier
    return {**out, **texts}


def _numbers(reply: dict, names: VenueNames | None = None) -> dict:
    content = reply.get("content") if isinstance(reply.get("content"), dict) else {}
    return named({name: number(value_of(content, name)) for name in content
                  if name not in REVIEW_TEXTS and number(value_of(content, name)) is not None}, names)


def named(numbers: dict, names: VenueNames | None) -> dict:
    """A review's numbers under the index's names: the venue's rating field (a 1-5 "recommendation") as
    "rating" and its confidence field as "confidence"; a field of the form that bears one of those names but is
    not it kept as "form_rating" or "form_confidence". Read under its own names, a venue whose form also had a
    "rating" sub-score showed that as each review's rating and as the ratings' moves (a new user's run)."""
    if names is None or (names.rating, names.confidence) == ("rating", "confidence"):
        return numbers
    ours = {names.rating: "rating", names.confidence: "confidence"}
    return {ours.get(k) or (f"form_{k}" if k in ("rating", "confidence") else k): v for k, v in numbers.items()}


def _modified_date(reply: dict) -> str:
    ms = _modified(reply)
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if ms else ""


def decision_of(content: dict, decision_reply: dict | None, names: VenueNames) -> str:
    """Oral, Spotlight, Poster, Accepted, Rejected, Desk rejected, Withdrawn or Under review."""
    venueid, venue = str(value_of(content, "venueid") or ""), str(value_of(content, "venue") or "")
    if venueid == names.withdrawn_id or "withdrawn" in venueid.lower():
        return "Withdrawn"
    if venueid == names.desk_rejected_id or "desk_rejected" in venueid.lower():
        return "Desk rejected"
    if venueid == names.rejected_id:
        return "Rejected"
    said = _text(value_of((decision_reply or {}).get("content") or {}, names.decision_field))
    if venueid == names.venue_id:
        for kind in ("Oral", "Spotlight", "Poster"):
            if kind.lower() in venue.lower() or kind.lower() in said.lower():
                return kind
        return "Accepted"
    if said.lower().startswith("reject"):
        return "Rejected"
    if said.lower().startswith("accept"):
        kind = re.search(r"\((\w+)\)", said)
        return kind.group(1).capitalize() if kind and kind.group(1).capitalize() in DECISIONS else "Accepted"
    return "Under review"


def conference_year(venue_id: str) -> tuple[str, int | None]:
    """A venue id's short name and year: "ICLR.cc/2026/Conference" -> ("ICLR", 2026),
    "colmweb.org/COLM/2024/Conference" -> ("COLM", 2024); the name is the part before the year, its web
    domain dropped ("NeurIPS.cc" -> "NeurIPS"). ("", None) where no part is a year."""
    parts = [p for p in venue_id.split("/") if p]
    for n, part in enumerate(parts):
        if re.fullmatch(r"(19|20)\d\d", part) and n:
            return re.sub(r"\.(cc|org|com|net|io|ai)$", "", parts[n - 1], flags=re.IGNORECASE), int(part)
    return "", None


def code_link(*texts: str) -> str:
    for text in texts:
        m = CODE_LINK.search(text or "")
        if m:
            return m.group(0).rstrip(".,;:")
    return ""


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def record(note, names: VenueNames, full: bool = True) -> dict | None:
    """One submission as the build reads it; None where it has no abstract to search by.

    full=False gives the accepted papers' short record: no decision, reviews or texts of reviews."""
    content = note.content if isinstance(getattr(note, "content", None), dict) else None
    if content is None or not getattr(note, "id", None):
        raise ValueError(f"note {getattr(note, 'id', None)!r} has no content")
    abstract = _text(value_of(content, "abstract"))
    if not abstract:
        return None
    reviews = [review(r, names) for r in _replies(note, names.review_name)]
    ratings = [number(r.get("rating")) for r in reviews]
    ratings = [float(x) for x in ratings if x is not None]
    confidences = [number(r.get("confidence")) for r in reviews]
    confidences = [float(x) for x in confidences if x is not None]
    rec: dict = {"id": note.id}
    if full and isinstance(getattr(note, "number", None), int):
        rec["number"] = note.number
    tldr = _text(value_of(content, "TLDR") or value_of(content, "tldr"))
    rec.update({"title": _text(value_of(content, "title")), "abstract": abstract})
    if full:
        rec["tldr"] = tldr
    rec.update({"authors": authors(value_of(content, "authors")),
                "keywords": [k.strip() for k in value_of(content, "keywords") or [] if isinstance(k, str) and k.strip()],
                "primary_area": _text(value_of(content, "primary_area")),
                "venue": _text(value_of(content, "venue"))})
    rec["conference"], rec["year"] = conference_year(names.venue_id)
    if full:
        decisions = _replies(note, names.decision_name)
        rec["decision"] = decision_of(content, decisions[-1] if decisions else None, names)
    rec.update({"url": f"{SITE}/forum?id={note.id}", "pdf": f"{SITE}/pdf?id={note.id}"})
    if full:
        rec["code"] = code_link(_text(value_of(content, "code")), abstract, tldr)
    if ratings:  # absent, not zero, where the venue shows no reviews
        rec["avg_rating"] = _mean(ratings)
        rec["n_ratings"] = len(ratings)
    if confidences:
        rec["avg_confidence"] = _mean(confidences)
    if not full:
        return rec
    metas = _replies(note, names.meta_review_name)
    if metas:
        content_m = metas[-1].get("content") or {}
        rec["meta_review"] = {"author": _signer(metas[-1]), **{
            k: _text(value_of(content_m, k)) for k in content_m if _text(value_of(content_m, k))}}
    said = _text(value_of(decisions[-1].get("content") or {}, "comment")) if decisions else ""
    if said:
        rec["decision_text"] = said
    rec["reviews"] = reviews
    return rec
