"""Progress of long jobs (builds, downloads): readable on a terminal, in a log file and on the page.

A job reports `(stage, done, total)`. On a terminal tqdm draws the bars of counted stages; when the
output is a file or a pipe (a build left running to a log), a `ProgressLog` writes a line at each
stage's start and end and every `interval` seconds between, with the count, the rate and the time left.
With a status file it also keeps that file (JSON, replaced whole) up to date for the page to read.
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

Progress = Callable[[str, int, int], None]   # (stage, done, total)
MIN_SHARE = 0.03   # of a job's cost done before its time left is estimated


def duration(seconds: float) -> str:
    """12s, 3m05s, 1h02m."""
    s = int(round(max(seconds, 0)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def write_status(path: Path, status: dict) -> None:
    """Replace the status file whole (write aside, rename): a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(status), encoding="utf-8")
    os.replace(tmp, path)


def read_status(path: Path) -> dict | None:
    try:
        status = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return status if isinstance(status, dict) else None


def status_text(status: dict) -> tuple[float, str]:
    """A progress bar's fill and words for a status file: the stage, its count, rate and time left."""
    stage, done, total = status.get("stage") or "starting", status.get("done") or 0, status.get("total") or 0
    words = f"{stage}: {done:,} of {total:,}" if total > 1 else f"{stage}…"
    if status.get("rate"):
        words += f" · {status['rate']:.0f}/s"
    if status.get("eta_all") is not None:  # what a user waits for: the whole build, not this stage
        words += f" · about {duration(status['eta_all'])} left until every stage is built"
    elif status.get("eta") is not None:
        words += f" · about {duration(status['eta'])} left in this stage"
    if (status.get("steps") or 1) > 1:
        words += f" · build {status.get('step', 1)} of {status['steps']}"
    return min(max(done / total, 0.0), 1.0) if total > 1 else 0.0, words


# What each later stage of a build (parts.registry.STAGES) brings, in a user's words, and the progress stages it reports
STAGE_WORDS = {"abstracts": "search by meaning", "topics and map": "topics and the map",
               "review search": "search within reviews", "sentences": "why-this-result sentences",
               "multilingual": "queries in other languages", "summaries": "ranking by the reviewers' summaries"}
_REPORTED = {"abstracts": ("abstracts",), "topics and map": ("topics", "map"), "review search": ("review search",),
             "sentences": ("sentences",),
             "multilingual": ("multilingual abstracts", "multilingual sentences", "multilingual titles"),
             "summaries": ("summaries",)}


def still_coming(pending: list[str], status: dict | None = None) -> str:
    """The stages an index still lacks, in words, the one being built with its share done:
    "why-this-result sentences (35% built), queries in other languages"."""
    status = status or {}
    parts = []
    for stage in pending:
        said = []
        share = _share(stage, status)
        if share is not None:
            said.append(f"{share:.0f}% built" if stage != "multilingual" else
                        f"{status['stage'].split()[-1]} {share:.0f}% built")
        elif status.get("stage") in _REPORTED.get(stage, ()):
            said.append("being built")
        last = part_eta(stage, status)
        if last is not None:
            said.append(f"in about {duration(last)}")
        parts.append(STAGE_WORDS.get(stage, stage) + (f" ({', '.join(said)})" if said else ""))
    return ", ".join(parts)


def _share(part: str, status: dict) -> float | None:
    """The percentage done of the progress stage of `part` the build reports now (None when it reports another)."""
    total = status.get("total") or 0
    if status.get("stage") in _REPORTED.get(part, ()) and total > 1:
        return 100 * (status.get("done") or 0) / total
    return None


def part_eta(part: str, status: dict | None) -> float | None:
    """Seconds until a part of the index (a build stage: "abstracts", "topics and map", …) is built, by the running
    build's status file; None when it cannot tell."""
    status = status or {}
    until = status.get("eta_stages") or {}
    reported = _REPORTED.get(part, (part,))
    last = next((until[s] for s in reversed(reported) if s in until), None)
    if last is None and status.get("stage") == reported[-1]:
        last = status.get("eta")  # its own pace, before the whole job's can be judged: texts go longest first,
    return last                   # so it starts slow and errs long


def searchable_now(count: int, pending: list[str], left: int, status: dict | None = None) -> str:
    """What an index still waiting for some of its abstracts' vectors answers, and what is still coming: `left`
    of its `count` papers have no vector yet (all of them in the words stage)."""
    how = (f"by meaning the {count - left:,} papers embedded so far, by words the other {left:,} of {count:,}"
           if 0 < left < count else f"by words: {count:,} papers")
    return (f"Searchable now {how}, with every filter, sort, statistic and review. Still coming: "
            f"{still_coming(pending, status)}. The page adds each as it lands.")


def meaning_eta(status: dict | None) -> float | None:
    """Seconds until the abstracts are embedded, by the build's status file (None when it cannot tell)."""
    return part_eta("abstracts", status)


def part_note(part: str, status: dict | None) -> str:
    """When a part of the index a build has still to publish comes, for the words saying it is not there yet: the
    time left by the running build's status file, else its share done, else that the running build brings it.
    `status` None means that no build of the index runs: then the build stopped before it, and that is said."""
    words = STAGE_WORDS.get(part, part)
    if status is None:
        return (f"The build stopped before {words}; `python index_build.py` on the same inputs finishes it from "
                "the cache.")
    eta = part_eta(part, status)
    said = "By meaning" if part == "abstracts" else words[:1].upper() + words[1:]
    if eta is not None:
        return f"{said} in about {duration(eta)}."
    share = _share(part, status)
    if share is not None:
        return f"The abstracts are {share:.0f}% embedded." if part == "abstracts" else f"{said}: {share:.0f}% built."
    return f"The build running now brings {words}."


def meaning_note(status: dict | None) -> str:
    """When ranking by meaning comes, for a list ranked by words meanwhile (part_note of the abstracts)."""
    return part_note("abstracts", status)


def with_build_notes(result, status: Callable[[], dict | None]) -> str:
    """An engine.Result's message, with when each part it waits for comes (part_note): the abstracts' vectors
    where the list is ranked by words or waits for them, search within reviews, the multilingual space. `status()`
    (the running build's status, None when none runs; it takes reading lock and status files) is asked only then."""
    from .notices import PART_OF

    parts = list(dict.fromkeys(PART_OF[n.kind] for n in result.notices if n and n.kind in PART_OF))
    if (result.by_words or result.waiting or result.unembedded) and "abstracts" not in parts:
        parts.insert(0, "abstracts")
    if not parts:
        return result.message
    said = status()
    return " ".join(m for m in (result.message, *(part_note(p, said) for p in parts)) if m)


class ProgressLog:
    """Callable as a `Progress`: lines to a non-terminal stream, and an optional status file."""

    def __init__(self, stream: TextIO | None = None, interval: float = 10.0, status_file: Path | None = None,
                 job: str = "", lines: bool | None = None, clock: Callable[[], float] = time.monotonic,
                 costs: dict[str, float] | None = None):
        """costs: the job's stages in order with their relative cost (build.stage_costs): with them the
        status also holds the whole job's time left, `eta_all`."""
        self.stream = stream if stream is not None else sys.stderr
        self.lines = not self.stream.isatty() if lines is None else lines
        self.interval, self.status_file, self.job, self.clock = interval, status_file, job, clock
        self.costs = costs or {}
        self.stage, self.started, self.last_line, self.last_status = "", 0.0, 0.0, 0.0
        self.costed_time = self.costed_work = 0.0   # the costed stages finished so far: seconds, cost
        self.last_costed = ""
        self.extra: dict = {}
        # a counted stage (texts embedded chunk by chunk, pages downloaded) is between two reports: a stop asked
        # meanwhile (background.stoppable) waits for the chunk's end, so the chunk is saved, not lost
        self.counting = False
        self.stop: BaseException | None = None

    def eta_all(self, stage: str, done: int, total: int, now: float) -> tuple[float | None, dict[str, float]]:
        """The whole job's time left, and the time until each stage still to come is done.

        The pace (seconds per unit of cost) is that of every costed stage so far together, the running one
        by its share done: one stage's own pace swung the whole estimate from 2h12m to 1h10m within
        minutes on a loaded machine (texts are embedded longest first, so a stage starts slow). Nothing is
        said before MIN_SHARE of the job's cost is done: an estimate from seconds of work is a guess."""
        if stage not in self.costs:
            return None, {}
        share = done / total if total > 1 else 0.0
        work = self.costed_work + self.costs[stage] * share
        if work < MIN_SHARE * sum(self.costs.values()) or work <= 0:
            return None, {}
        pace = (self.costed_time + now - self.started) / work
        left = pace * self.costs[stage] * (1 - share)
        until = {stage: left}
        for later in list(self.costs)[list(self.costs).index(stage) + 1:]:
            left += pace * self.costs[later]
            until[later] = left
        return left, until

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.counting = total > 1 and done < total
        now = self.clock()
        new = stage != self.stage
        if new:
            if self.stage in self.costs:
                self.costed_time += now - self.started
                self.costed_work += self.costs[self.stage]
                self.last_costed = self.stage
            order = list(self.costs)
            if stage in self.costs and self.last_costed and order.index(stage) <= order.index(self.last_costed):
                # the job's next build starts over (the seeds, then the venue): its pace is its own
                self.costed_time = self.costed_work = 0.0
                self.last_costed = ""
            self.stage, self.started, self.last_line = stage, now, now
        rate = done / (now - self.started) if done and now > self.started else 0.0
        eta = (total - done) / rate if rate and total > done else None
        eta_all, until = self.eta_all(stage, done, total, now)
        finished = total > 0 and done >= total
        if self.lines and (new or finished or now - self.last_line >= self.interval):
            self.last_line = now
            self.stream.write(self.line(stage, done, total, rate, eta) + "\n")
            self.stream.flush()
        elif new and total <= 1:  # a stage without a count has no tqdm bar either: name it
            self.stream.write(f"{stage}…\n")
            self.stream.flush()
        if self.status_file is not None and (new or finished or now - self.last_status >= 0.5 or self.stop):
            self.last_status = now
            self.update(state="running", stage=stage, done=done, total=total, rate=round(rate, 2),
                        eta=None if eta is None else round(eta, 1),
                        eta_all=None if eta_all is None else round(eta_all, 1),
                        eta_stages={k: round(v, 1) for k, v in until.items()})
        if self.stop is not None:  # asked while the chunk reported now was under way: it is saved on the way out
            stop, self.stop = self.stop, None
            raise stop

    def line(self, stage: str, done: int, total: int, rate: float, eta: float | None) -> str:
        head = f"[{self.job}] " if self.job else ""
        if total <= 1:
            return f"{head}{stage}…" if not done else f"{head}{stage}: done"
        text = f"{head}{stage}: {done:,}/{total:,} ({100 * done / total:.0f}%)"
        if rate:
            text += f", {rate:.1f}/s"
        if eta is not None:
            text += f", ~{duration(eta)} left"
        return text

    def update(self, **fields) -> None:
        """Merge fields into the status file (state, message, ...)."""
        if self.status_file is None:
            return
        self.extra.update(fields)
        write_status(self.status_file, {"job": self.job, "pid": os.getpid(), **self.extra,
                                        "updated": time.time()})
