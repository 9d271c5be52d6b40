"""Fetching a venue from OpenReview into the JSONL the build reads: every submission, its reviews and
its fate (or, with accepted_only, the accepted papers' short records).

Pages come in a fixed order (by id, each page asked for the notes `after` the last one: the client's
own iterator does the same), so a paper that leaves or joins the list mid-download cannot shift the
pages and make another one fall between them. Each complete page is appended to a partial file beside
the output, with a small state file saying where the next page starts: an interrupted download
resumes there on the next run, and the output appears whole, by one rename, only once the number of
papers received matches what OpenReview announced.

Several venues in one call (`fetch_venues`) read every venue's group first, so a mistyped id ends the call
before any download, then download each venue into its own file with its own group's names (its rating
and confidence fields, its review, meta-review and decision invitations, its venue ids for rejected,
withdrawn and desk-rejected papers): one venue's names never read another's notes.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .api import Api, FetchError
from ..progress import Progress
from .records import VenueNames, record

DEFAULT_VENUE = "ICLR.cc/2026/Conference"
PAGE = 1000                      # the API's largest page
STATE_VERSION = 2


def default_out(venue_id: str) -> Path:
    """data/<venue id as a file name>.jsonl, e.g. data/ICLR.cc_2026_Conference.jsonl."""
    return Path("data") / (re.sub(r"[^A-Za-z0-9.-]+", "_", venue_id).strip("_") + ".jsonl")


def partial_paths(out: Path) -> tuple[Path, Path]:
    """The partial download and its state, beside the output."""
    return out.with_name(out.name + ".partial"), out.with_name(out.name + ".partial.json")


@dataclass
class Fetched:
    venue: str
    out: Path
    records: int        # lines written
    listed: int         # submissions OpenReview listed
    no_abstract: int    # listed but left out: nothing to search by
    reviewed: int       # records with at least one review score
    resumed_from: int   # submissions already in the partial file when this run began


def venue_names(api: Api, venue_id: str) -> VenueNames:
    """The venue group's names for its submissions, reviews and decisions."""
    try:
        group = api.call("the venue group", api.client.get_group, venue_id)
    except FetchError as e:
        if e.not_found:
            raise FetchError(f"no venue '{venue_id}' on OpenReview (ids look like ICLR.cc/2026/Conference, "
                             "NeurIPS.cc/2025/Conference)") from None
        raise
    return VenueNames.from_group(venue_id, getattr(group, "content", None))


class _Partial:
    """The partial file and its state: pages appended whole, the state replaced after each page."""

    def __init__(self, out: Path, key: dict):
        self.data, self.state_file = partial_paths(out)
        self.key = key
        self.state = {"version": STATE_VERSION, **key, "after": None, "listed": None, "notes": 0,
                      "records": 0, "no_abstract": 0, "reviewed": 0, "bytes": 0, "pages": 0}
        self.ids: set[str] = set()

    def resume(self) -> bool:
        """Take up a partial download of the same venue and scope; False (and start afresh) otherwise."""
        try:
            state = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if not isinstance(state, dict) or not state.get("pages") or any(
                state.get(k) != v for k, v in {"version": STATE_VERSION, **self.key}.items()):
            return False
        try:
            with open(self.data, "r+b") as f:
                # a page appended after the state was last written is dropped: it is fetched again
                f.truncate(int(state["bytes"]))
                f.seek(0)
                for line in f:
                    self.ids.add(json.loads(line)["id"])
        except (OSError, ValueError, KeyError, TypeError):
            return False
        self.state = state
        return True

    def start(self) -> None:
        self.data.parent.mkdir(parents=True, exist_ok=True)
        self.data.write_bytes(b"")
        self._save()

    def append(self, lines: list[str], after: str, notes: int, no_abstract: int) -> None:
        blob = "".join(lines).encode("utf-8")
        with open(self.data, "ab") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        s = self.state
        s.update(after=after, notes=s["notes"] + notes, records=s["records"] + len(lines),
                 no_abstract=s["no_abstract"] + no_abstract,
                 reviewed=s["reviewed"] + sum('"n_ratings"' in line for line in lines), bytes=s["bytes"] + len(blob), pages=s["pages"] + 1)
        self._save()

    def _save(self) -> None:
        tmp = self.state_file.with_name(self.state_file.name + ".tmp")
        tmp.write_text(json.dumps(self.state), encoding="utf-8")
        os.replace(tmp, self.state_file)

    def publish(self, out: Path) -> None:
        os.replace(self.data, out)
        self.state_file.unlink(missing_ok=True)

    def discard(self) -> None:
        self.data.unlink(missing_ok=True)
        self.state_file.unlink(missing_ok=True)


def fetch_venue(api: Api, venue_id: str, out: Path, accepted_only: bool = False,
                progress: Progress | None = None, say: Callable[[str], None] | None = None,
                page_size: int = PAGE, names: VenueNames | None = None) -> Fetched:
    """Download a venue into `out`, resuming a partial download of the same venue and scope; `names`, the
    venue group's names where already read."""
    say = say or api.say
    names = names or venue_names(api, venue_id)
    if accepted_only:
        query: dict = {"content": {"venueid": venue_id}}
        what = "accepted papers"
    else:
        query = {"invitation": names.submission_id}
        what = "submissions"
    query.update(details="replies", sort="id", limit=page_size)
    part = _Partial(out, {"venue": venue_id, "scope": "accepted" if accepted_only else "all"})
    if part.resume():
        resumed = part.state["notes"]
        say(f"resuming the download in {part.data}: {resumed:,} of {part.state['listed']:,} {what} "
            "already there")
    else:
        resumed = 0
        part.start()
    try:
        _download(api, query, part, names, accepted_only, what, progress)
        _check_complete(api, query, part.state, what)
    except BaseException:
        if not part.state["pages"]:
            part.discard()  # nothing arrived: nothing to resume from
        raise
    state = part.state
    if state["records"] == 0:
        part.discard()
        raise FetchError(f"OpenReview lists no {what} with an abstract at '{venue_id}'"
                         + (" (are the decisions out?)" if accepted_only else ""))
    part.publish(out)
    return Fetched(venue_id, out, state["records"], state["listed"], state["no_abstract"], state["reviewed"], resumed)


class Partway(FetchError):
    """A fetch of several venues stopped at `venue`: `done` lists the venues published before it (their files
    are whole); `interrupted` where the user stopped it."""

    def __init__(self, message: str, venue: str, done: list[Fetched], interrupted: bool = False):
        super().__init__(message)
        self.venue, self.done, self.interrupted = venue, done, interrupted


def fetch_venues(api: Api, venues: list[tuple[str, Path]], accepted_only: bool = False,
                 progress: Progress | None = None, say: Callable[[str], None] | None = None) -> list[Fetched]:
    """Download several venues, each (venue id, output file) into its own file, in the order given. Every
    venue's group is read before the first download; a failure partway raises `Partway`."""
    names = [venue_names(api, venue) for venue, _ in venues]
    done: list[Fetched] = []
    for (venue, out), own in zip(venues, names):
        try:
            done.append(fetch_venue(api, venue, out, accepted_only, progress, say, names=own))
        except FetchError as e:
            raise Partway(str(e), venue, done) from None
        except KeyboardInterrupt:
            raise Partway("interrupted", venue, done, interrupted=True) from None
    return done


def _download(api: Api, query: dict, part: _Partial, names: VenueNames, accepted_only: bool, what: str,
              progress: Progress | None) -> None:
    """Page after page into the partial file, until a page brings nothing new or all have come."""
    state, counted = part.state, False
    while True:
        page_no = state["pages"] + 1
        kwargs = dict(query, **({"after": state["after"]} if state["after"] else {}))
        # the count comes with the first page each run asks for: the list may have changed since
        answer = api.call(f"page {page_no}", api.client.get_notes, **kwargs, with_count=not counted)
        if not counted:
            notes, state["listed"] = answer
            if not isinstance(state["listed"], int):
                raise FetchError(f"the answer for page {page_no} is not what OpenReview's API sends "
                                 "(its count is not a number)")
            counted = True
        else:
            notes = answer
        fresh = [n for n in notes if n.id not in part.ids]
        if notes and not fresh:
            raise FetchError(f"OpenReview sent page {page_no} again (does the server at {api.url} ignore "
                             "'after'?)")
        if not fresh:
            return
        lines, no_abstract = [], 0
        for note in fresh:
            part.ids.add(note.id)
            if accepted_only and _venueid(note) != names.venue_id:
                continue  # a paper the server let through that is not accepted
            try:
                rec = record(note, names, full=not accepted_only)
            except ValueError as e:
                raise FetchError(f"the answer for page {page_no} is not what OpenReview's API sends "
                                 f"({e})") from None
            if rec is None:
                no_abstract += 1
            else:
                lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
        part.append(lines, after=fresh[-1].id, notes=len(fresh), no_abstract=no_abstract)
        if progress:
            progress(f"downloading {what}", min(state["notes"], state["listed"]), state["listed"])
        if state["notes"] >= state["listed"]:
            return


def _venueid(note) -> str:
    field = (note.content or {}).get("venueid")
    return field.get("value", "") if isinstance(field, dict) else ""


def _check_complete(api: Api, query: dict, state: dict, what: str) -> None:
    """Fewer papers than OpenReview announced is an error, unless the list itself shrank meanwhile."""
    got, listed = state["notes"], state["listed"]
    if got >= listed:
        return
    _, now = api.call("the count", api.client.get_notes, **dict(query, limit=1), with_count=True)
    if isinstance(now, int) and got >= now:
        return
    raise FetchError(f"OpenReview announced {listed:,} {what} but its pages ended after {got:,} (a server or "
                     "proxy that cuts lists short?)")
