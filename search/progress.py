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


# What each later stage of a build (build.STAGES) brings, in a user's words, and the progress stages it reports
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
    until = status.get("eta_stages") or {}
    parts = []
    for stage in pending:
        words = STAGE_WORDS.get(stage, stage)
        total = status.get("total") or 0
        said = []
        if status.get("stage") in _REPORTED.get(stage, ()) and total > 1:
            share = 100 * (status.get("done") or 0) / total
            said.append(f"{share:.0f}% built" if stage != "multilingual" else
                        f"{status['stage'].split()[-1]} {share:.0f}% built")
        elif status.get("stage") in _REPORTED.get(stage, ()):
            said.append("being built")
        last = next((until[s] for s in reversed(_REPORTED.get(stage, (stage,))) if s in until), None)
        if last is not None:
            said.append(f"in about {duration(last)}")
        parts.append(words + (f" ({', '.join(said)})" if said else ""))
    return ", ".join(parts)


def searchable_now(count: int, pending: list[str], left: int, status: dict | None = None) -> str:
    """What an index still waiting for some of its abstracts' vectors answers, and what is still coming: `left`
    of its `count` papers have no vector yet (all of them in the words stage)."""
    how = (f"by meaning the {count - left:,} papers embedded so far, by words the other {left:,} of {count:,}"
           if 0 < left < count else f"by words: {count:,} papers")
    return (f"Searchable now {how}, with every filter, sort, statistic and review. Still coming: "
            f"{still_coming(pending, status)}. The page adds each as it lands.")


def meaning_eta(status: dict | None) -> float | None:
    """Seconds until the abstracts are embedded, by the build's status file (None when it cannot tell)."""
    status = status or {}
    until = (status.get("eta_stages") or {}).get("abstracts")
    if until is None and status.get("stage") == "abstracts":
        # its own pace, before the whole job's can be judged: the abstracts are embedded in groups of the index's
        # order (each longest first), so the first group's pace is near the stage's
        until = status.get("eta")
    return until


def meaning_note(status: dict | None) -> str:
    """When ranking by meaning comes, for a list ranked by words meanwhile."""
    eta = meaning_eta(status)
    status = status or {}
    if eta is not None:
        return f"By meaning in about {duration(eta)}."
    if status.get("stage") == "abstracts" and (status.get("total") or 0) > 1:
        return f"The abstracts are {100 * (status.get('done') or 0) / status['total']:.0f}% embedded."
    return ""


def with_meaning_note(result, status: Callable[[], dict | None]) -> str:
    """An engine.Result's message, with when ranking by meaning comes where the list waits for it; `status()`
    (the running build's status, which takes reading lock and status files) is asked only then."""
    if not (result.by_words or result.waiting or result.unembedded):
        return result.message
    return " ".join(m for m in (result.message, meaning_note(status())) if m)


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
        if self.status_file is not None and (new or finished or now - self.last_status >= 0.5):
            self.last_status = now
            self.update(state="running", stage=stage, done=done, total=total, rate=round(rate, 2),
                        eta=None if eta is None else round(eta, 1),
                        eta_all=None if eta_all is None else round(eta_all, 1),
                        eta_stages={k: round(v, 1) for k, v in until.items()})

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
