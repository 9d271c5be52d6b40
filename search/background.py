"""Builds the page starts in the background: the seeds first when there is no index, then the conference.

A page asks `plan()` what is still to build and `start()`s a job for it. The job is a process of its
own (`python -m search.background`), so the page keeps answering while it embeds; it holds a lock file
for its whole life, so a second page, or a second server, never starts a second one. It reports
through a JSON status file that the page reads, and it publishes each index with the build's atomic
swap, which the page picks up on its next run.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from .build import inputs_digest
from .corpus import CorpusError, input_files
from .openreview.api import Api, FetchError, default_api
from .index import BuildBusy, IndexLoadError, building, read_manifest, resolve
from .progress import ProgressLog, read_status, write_status


def status_file(out: Path) -> Path:
    return out.parent / f".{out.name}.build.json"


def log_file(out: Path) -> Path:
    return out.parent / f".{out.name}.build.log"


def _lock_file(out: Path) -> Path:
    return out.parent / f".{out.name}.job.lock"


@contextmanager
def job_lock(out: Path):
    """Yields True while this process holds the job lock of `out`, False when another job holds it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(_lock_file(out), "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def running(out: Path) -> bool:
    """Whether a job for `out` runs now (its lock is held)."""
    with job_lock(out) as free:
        return not free


def busy(out: Path, boot_seconds: float = 60.0) -> bool:
    """A job runs, or was started so recently that its process may not hold the lock yet."""
    if running(out):
        return True
    said = status(out)
    return said.get("state") == "starting" and time.time() - said.get("updated", 0) < boot_seconds


@lru_cache(maxsize=32)
def _digest(files: tuple[tuple[str, int, int], ...]) -> str:
    return inputs_digest([Path(name) for name, _, _ in files])


def digest(inputs: list[Path]) -> str:
    """inputs_digest, remembered while no input file changes size or time (the page asks on every run)."""
    stats = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in input_files(inputs))
    return _digest(stats)


def published_digest(out: Path) -> str | None:
    """The inputs digest of the published index, None when there is none, "" when it cannot tell (an
    index from before digests, or one that does not load: the page reports that, and builds nothing
    over it)."""
    if not out.exists() and not out.is_symlink():
        return None
    try:
        return read_manifest(resolve(out)).inputs_digest
    except (IndexLoadError, OSError):
        return ""


def pending(out: Path) -> list[str]:
    """The stages the published index still lacks: a build published its first stages and stopped."""
    try:
        return read_manifest(resolve(out)).pending
    except (IndexLoadError, OSError):
        return []


def plan(out: Path, seeds: Path, data: list[Path]) -> list[list[Path]]:
    """The builds still to run, in order: the seeds alone when there is no index (they answer within
    a minute), then seeds + data when data is given and the published index was built from other inputs,
    or from these but not to the end (the build was stopped: it goes on from the cache).

    An index built from inputs of your own stays as it is when no data is given."""
    published = published_digest(out)
    unfinished = bool(published) and bool(pending(out))
    steps = [[seeds]] if published is None or (unfinished and not data and published == digest([seeds])) else []
    if data and (published != digest([seeds, *data]) or unfinished):
        steps.append([seeds, *data])
    return steps


def planned(out: Path, seeds: Path, data: list[Path]) -> tuple[list[list[Path]], str]:
    """`plan`, with what stops it in words instead of an error: ([], "…") when an input cannot be read."""
    try:
        return plan(out, seeds, data), ""
    except CorpusError as e:
        return [], str(e)


def serving(out: Path) -> Path | None:
    """The build folder the index's name points to now (None before the first is published): a new path
    each time a build publishes."""
    return resolve(out) if out.exists() else None


def status(out: Path) -> dict:
    """The status file of the index's build ({} before any)."""
    return read_status(status_file(out)) or {}


def build_running(out: Path) -> bool:
    """Whether a build of the index runs now: the page's job, or `index_build.py` in another process."""
    return busy(out) or building(out)


def fetch_conference(out: Path, seeds: Path, data_dir: Path, venue: str = "", api: Api | None = None) -> bool:
    """Start, in the background, the fetch of a venue (the default one) into data_dir and the build of the seeds
    with it; the OpenReview API is $OPENREVIEW_API_BASEURL_V2's unless given."""
    from .openreview.fetch import DEFAULT_VENUE, default_out

    venue = venue or DEFAULT_VENUE
    return start(out, [[seeds, data_dir / default_out(venue).name]], fetch=venue, api=api or default_api())


def failed(out: Path, steps: list[list[Path]]) -> str:
    """The message of the last job, if it failed on these very inputs (so it is not started again)."""
    said = status(out)
    if said.get("state") != "failed" or not steps:
        return ""
    return said.get("message", "") if said.get("target") == digest(steps[-1]) else ""


def start(out: Path, steps: list[list[Path]], multilingual: bool = True, fetch: str = "",
          api: str = "") -> bool:
    """Start a job for the steps unless one runs already; returns whether one was started.

    With `fetch` (an OpenReview venue id) the job first downloads that venue into the last input of
    the last step (`python -m search fetch`), then builds."""
    if not steps or busy(out):
        return False
    out = out.absolute()
    target = f"fetch:{fetch}" if fetch else digest(steps[-1])
    write_status(status_file(out), {"state": "starting", "step": 1, "steps": len(steps), "target": target,
                                    "updated": time.time()})
    cmd = [sys.executable, "-m", "search.background", "--out", str(out),
           "--steps", json.dumps([[str(p.absolute()) for p in step] for step in steps])]
    if not multilingual:
        cmd.append("--no-multilingual")
    if fetch:
        cmd += ["--fetch", fetch] + (["--api", api] if api else [])
    spawn(cmd, log_file(out))
    return True


def spawn(cmd: list[str], log: Path) -> subprocess.Popen:
    """Run cmd from the project's folder, its output appended to log, and reap it when it ends.

    In the server's process group: Ctrl-C on `make app` stops the build too (the index it had published
    stays; the next start builds again, with the finished stages' vectors in the cache)."""
    with open(log, "a") as out:
        job = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               cwd=Path(__file__).resolve().parent.parent)
    # waited for when it ends, else it stays a <defunct> entry in the process table until the server stops
    threading.Thread(target=job.wait, name="background-build-reaper", daemon=True).start()
    return job


def run(out: Path, steps: list[list[Path]], multilingual: bool = True, fetch: str = "", api: Api | None = None) -> int:
    """The job: the download if asked, then each step's build in turn, its progress in the status file.

    0 when all is published; on failure the status file says why and the published index stays."""
    from .build import BuildOptions, build_index, stage_costs
    from .corpus import carries_reviews
    from .encoding.embed import load_model
    from .openreview.fetch import fetch_venue

    with job_lock(out) as held:
        if not held:
            return 0  # another page's job got there first; it reports for both
        # a venue to fetch comes with its reviews; a file given, where its first record has them
        reviews = bool(fetch) or any(carries_reviews(inputs) for inputs in steps if all(p.exists() for p in inputs))
        log = ProgressLog(stream=sys.stdout, status_file=status_file(out), job="build", lines=True,
                          costs=stage_costs(BuildOptions(multilingual=multilingual), reviews))
        log.update(state="running", step=1, steps=len(steps), message="",
                   target=f"fetch:{fetch}" if fetch else digest(steps[-1]))
        try:
            if fetch:
                # every submission with its reviews and decision: the page opens on the accepted ones
                fetch_venue(api, fetch, steps[-1][-1], progress=log,
                            say=lambda line: print(line, flush=True))
            log("loading the model", 0, 1)  # ~20 s of imports on 2 cores: the page says what it waits for
            model = load_model()
            for n, inputs in enumerate(steps, 1):
                log.update(step=n, inputs=[str(p) for p in inputs])
                report = build_index(inputs, out, model=model, progress=log, multilingual=multilingual,
                                     first_stage_only=n < len(steps))
                log.update(count=report.count, published=str(report.path))
                for line in report.notes:  # into the build's log: what was merged or kept apart, and why
                    print(f"note: {line}", flush=True)
        except Exception as e:  # recorded for the page, which would otherwise wait on a dead job
            expected = isinstance(e, (CorpusError, FetchError, IndexLoadError, BuildBusy, OSError))
            log.update(state="failed", message=str(e).splitlines()[0] if expected and str(e) else
                       f"{type(e).__name__}: {e} (details in {log_file(out)})")
            if not expected:
                traceback.print_exc(file=sys.stdout)
            return 1
        log.update(state="done")
        return 0


def start_planned(out: Path, seeds: Path, data: list[Path]) -> str:
    """Start the builds the page would start for these inputs (plan, unless the last job failed on them),
    without waiting for a first visit to the page; what was done, in words."""
    steps, problem = planned(out, seeds, data)
    if problem:
        return f"not building: {problem}"
    problem = failed(out, steps)
    if problem:
        return f"not building: the last build stopped ({problem})"
    if not steps:
        return "nothing to build"
    return "building in the background" if start(out, steps) else "a build is already running"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m search.background",
                                 description="Run the page's background builds (started by the page, or by "
                                             "`make app` with --planned before the server starts).")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", help="JSON list of builds, each a list of input paths")
    ap.add_argument("--planned", action="store_true",
                    help="start the builds the page would start for seeds/ and $SEARCH_DATA, and return at once")
    ap.add_argument("--multilingual", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--fetch", default="", help="first download this OpenReview venue into the last input")
    ap.add_argument("--api", default=None)
    args = ap.parse_args(argv)
    if args.planned:
        data = [Path(p) for p in os.environ.get("SEARCH_DATA", "").split(os.pathsep) if p.strip()]
        # an input that cannot be read is said, as the page says it, and what is published is served
        said = start_planned(args.out, Path(__file__).resolve().parent.parent / "seeds", data)
        print(f"index: {said}", flush=True)
        return 0
    if not args.steps:
        ap.error("--steps is required (or --planned)")
    steps = [[Path(p) for p in step] for step in json.loads(args.steps)]
    api = None
    if args.fetch:
        try:
            api = Api(args.api or default_api(), say=lambda line: print(line, flush=True))
        except FetchError as e:
            write_status(status_file(args.out), {"state": "failed", "target": f"fetch:{args.fetch}",
                                                 "message": str(e), "updated": time.time()})
            return 1
    return run(args.out, steps, args.multilingual, args.fetch, api)


if __name__ == "__main__":
    sys.exit(main())
