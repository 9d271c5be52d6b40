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
import signal
import subprocess
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .build import inputs_digest
from .corpus import CorpusError, input_files
from .openreview.api import Api, FetchError, default_api
from .index import BuildBusy, IndexLoadError, Superseded, building, read_manifest, resolve
from .progress import ProgressLog, read_status, write_status


def status_file(out: Path) -> Path:
    return out.parent / f".{out.name}.build.json"


def log_file(out: Path) -> Path:
    return out.parent / f".{out.name}.build.log"


def _lock_file(out: Path) -> Path:
    return out.parent / f".{out.name}.job.lock"


# Seconds a build has to stop once a newer one asks (SIGTERM): it stops at the end of the chunk it is embedding
# (128 texts: some 30 s at 4 abstracts a second on a loaded 2-core CPU; 6 s in a trial at 17 a second), elsewhere
# at its next Python step; past this it is killed, which loses at most its unsaved vectors (embed.SAVE_EVERY, 20 s,
# and the chunk under way) and leaves no lock (the kernel lets go of it).
STOP_GRACE = 60.0


def _claim_file(out: Path) -> Path:
    return out.parent / f".{out.name}.job.next"


@dataclass
class Held:
    """What job_lock got: the lock (truthy) or not, and what it stopped for it, or why it did not get it, in words."""
    held: bool
    replaced: str = ""
    why: str = ""
    superseded: bool = False  # not held because a newer build asked for it after this one

    def __bool__(self) -> bool:
        return self.held


@contextmanager
def job_lock(out: Path, replace: bool = False):
    """Yields a truthy Held while this process holds the job lock of `out` (the page's job or `index_build.py`),
    a falsy one when another holds it.

    With `replace` (a re-fetch's build) the holder is stopped first: SIGTERM, which `stoppable` turns into
    Superseded there (what it embedded is saved to the cache, it lets go of its locks, the index it published stays
    served), and the lock is taken as it lets go. Of two builds replacing one, the later asks last and wins: the
    other, waiting, sees the newer claim and gives up."""
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = _lock_file(out)
    with open(lock, "a+") as f:
        held = _take(f, out, replace)
        if not held:
            yield held
            return
        try:
            f.truncate(0)  # the holder's pid, for a newer build to stop it
            f.write(str(os.getpid()))
            f.flush()
            yield held
        finally:
            f.truncate(0)
            fcntl.flock(f, fcntl.LOCK_UN)


def _try(f) -> bool:
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _take(f, out: Path, replace: bool) -> Held:
    if _try(f):
        return Held(True)
    if not replace:
        return Held(False)
    claim = _claim_file(out)
    claim.write_text(str(os.getpid()))
    stopped, deadline = 0, time.monotonic() + STOP_GRACE
    try:
        while not _try(f):
            if _read_pid(claim) != os.getpid():
                return Held(False, why=f"a newer build of {out} replaced this one before it started",
                            superseded=True)
            pid = _holder(_lock_file(out))
            if pid and pid != stopped:  # a probe (running()) holds it for an instant and has no pid there
                os.kill(pid, signal.SIGTERM)
                stopped, deadline = pid, time.monotonic() + STOP_GRACE
            elif time.monotonic() > deadline:
                if not pid:  # a holder that names itself nowhere (another user's): it is waited for, not stopped
                    return Held(False, why=f"another build of {out} is running and cannot be stopped from here; "
                                           "wait for it to finish, then run again")
                os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + STOP_GRACE
            time.sleep(0.1)
    except PermissionError:
        return Held(False, why=f"another build of {out} is running (pid {pid}) and this user cannot stop it")
    except ProcessLookupError:  # it ended meanwhile: the lock is free on the next try
        return _take(f, out, replace)
    finally:
        if _read_pid(claim) == os.getpid():
            claim.unlink(missing_ok=True)
    return Held(True, replaced=_replaced_words(out, stopped) if stopped else "")


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _holder(lock: Path) -> int | None:
    """The pid written in a lock file, where that process has the file open (a pid the file kept from a holder
    that has ended may belong to another program by now: it is never signalled)."""
    pid = _read_pid(lock)
    if not pid or pid == os.getpid():
        return None
    fds = Path(f"/proc/{pid}/fd")
    if not Path("/proc/self/fd").is_dir():
        return pid  # no /proc to check with (macOS): the pid is written only while the lock is held
    try:
        return pid if any(os.path.realpath(fd) == str(lock.resolve()) for fd in fds.iterdir()) else None
    except OSError:
        return None


def _replaced_words(out: Path, pid: int) -> str:
    """What the stopped build had done, from the status file it left."""
    said = status(out)
    stage, done, total = (said.get("stage") or "").rstrip("…"), said.get("done") or 0, said.get("total") or 0
    at = f" at {stage}, {done:,} of {total:,} done" if total > 1 and stage else f" at {stage}" if stage else ""
    if total > 1 and done >= total:  # not cut short: it was writing what that stage made
        at = f" as it finished {stage}, {done:,} of {total:,} done"
    return (f"the running build (pid {pid}) was replaced by this one; it stopped{at}, and every vector it embedded "
            "is carried over from the embedding cache")


@contextmanager
def stoppable(progress: ProgressLog | None = None, out: Path | None = None):
    """While held, SIGTERM raises Superseded in this process's main thread: how a newer build (job_lock with
    `replace`) stops this one. The exception unwinds through the build, which saves what it embedded on the way
    (embed.encode_cached) and lets go of its locks; the index it published stays served. While `progress` counts a
    stage (a chunk of texts being embedded), it is raised by the report of the chunk's end: the chunk is kept.
    It says a newer build replaced this one only where one has claimed `out` (job_lock's claim file): a SIGTERM
    from elsewhere (`kill`) is told as such."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        claimant = _read_pid(_claim_file(out)) if out is not None else None
        if claimant and claimant != os.getpid():
            e = Superseded("a newer build of the index replaced this one; every vector it embedded is in the "
                           "embedding cache, which the newer build takes them from")
        else:
            e = Superseded("by a signal (SIGTERM) from outside, not by a newer build; every vector it embedded is "
                           "in the embedding cache, and the next build takes them from there", replaced=False)
        if progress is not None and progress.counting:
            progress.stop = e
        else:
            raise e

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def running(out: Path) -> bool:
    """Whether a job for `out` runs now (its lock is held). The lock is tried shared and let go at once."""
    lock = _lock_file(out)
    if not lock.exists():
        return False
    with open(lock) as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


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


def fetch_conference(out: Path, seeds: Path, data_dir: Path, venue: str = "", api: Api | None = None,
                     inputs: list[Path] | None = None) -> bool:
    """Start, in the background, the fetch of a venue (the default one) into data_dir and the build of the seeds
    with it (`inputs`, a re-fetch: the index's own inputs, the fetched file among them); the OpenReview API is
    $OPENREVIEW_API_BASEURL_V2's unless given. A build of the index running now is replaced (job_lock): the fresher
    data comes soonest that way, as a build of an hour would otherwise hold it back, and no work is lost, as the
    new build takes every vector the stopped one embedded from the cache."""
    from .openreview.fetch import DEFAULT_VENUE, default_out

    venue = venue or DEFAULT_VENUE
    return start(out, [inputs or [seeds, data_dir / default_out(venue).name]], fetch=venue,
                 api=api or default_api(), replace=True)


def refetchable(inputs: list[str], venue: str = "") -> Path | None:
    """The file of an index's inputs that `fetch_conference` writes for the venue (the default one), if any: the
    index can then be fetched again into it."""
    from .openreview.fetch import DEFAULT_VENUE, default_out

    name = default_out(venue or DEFAULT_VENUE).name
    return next((Path(p) for p in inputs if Path(p).name == name and Path(p).is_file()), None)


def failed(out: Path, steps: list[list[Path]]) -> str:
    """The message of the last job, if it failed on these very inputs (so it is not started again)."""
    said = status(out)
    if said.get("state") != "failed" or not steps:
        return ""
    return said.get("message", "") if said.get("target") == digest(steps[-1]) else ""


def start(out: Path, steps: list[list[Path]], multilingual: bool = True, fetch: str = "",
          api: str = "", replace: bool = False) -> bool:
    """Start a job for the steps unless one runs already (with `replace`, it stops the one running: job_lock);
    returns whether one was started.

    With `fetch` (an OpenReview venue id) the job first downloads that venue into the last input of
    the last step (`python -m search fetch`), then builds."""
    if not steps or busy(out) and not replace:
        return False
    out = out.absolute()
    target = f"fetch:{fetch}" if fetch else digest(steps[-1])
    # a running build stops at the end of the chunk it embeds, some 30 s on two AVX2 cores, and the new job's own
    # start takes about as long: the page said only "starting…" for 65 s (a new user's run)
    said = {"stage": "stopping the running build once its chunk of abstracts is saved, then starting"} \
        if replace and running(out) else {}
    write_status(status_file(out), {"state": "starting", "step": 1, "steps": len(steps), "target": target,
                                    "updated": time.time(), **said})
    cmd = [sys.executable, "-m", "search.background", "--out", str(out),
           "--steps", json.dumps([[str(p.absolute()) for p in step] for step in steps])]
    if not multilingual:
        cmd.append("--no-multilingual")
    if fetch:
        cmd += ["--fetch", fetch] + (["--api", api] if api else [])
    if replace:
        cmd.append("--replace")
    spawn(cmd, log_file(out))
    return True


def fetching(out: Path) -> bool:
    """Whether a job is downloading a venue for this index now (or was just started to): a second fetch would
    only begin it again."""
    said = status(out)
    fetch = str(said.get("target", "")).startswith("fetch:")
    return fetch and busy(out) and (said.get("state") == "starting" or said.get("phase") == "fetching")


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


def run(out: Path, steps: list[list[Path]], multilingual: bool = True, fetch: str = "", api: Api | None = None,
        replace: bool = False) -> int:
    """The job: the download if asked, then each step's build in turn, its progress in the status file.

    0 when all is published, or when a newer job replaced this one; on failure the status file says why and the
    published index stays."""
    from .build import BuildOptions, build_index, stage_costs
    from .corpus import carries_reviews
    from .encoding.embed import load_model
    from .openreview.fetch import fetch_venue

    # a venue to fetch comes with its reviews; a file given, where its first record has them
    reviews = bool(fetch) or any(carries_reviews(inputs) for inputs in steps if all(p.exists() for p in inputs))
    log = ProgressLog(stream=sys.stdout, status_file=status_file(out), job="build", lines=True,
                      costs=stage_costs(BuildOptions(multilingual=multilingual), reviews))
    with stoppable(log, out), job_lock(out, replace) as held:
        if not held:
            return 0  # another page's job got there first, or a newer one replaced this: it reports for both
        try:
            log.update(state="running", step=1, steps=len(steps), message="", replaced=held.replaced,
                       target=f"fetch:{fetch}" if fetch else digest(steps[-1]))
            if held.replaced:
                print(held.replaced, flush=True)
            if fetch:
                # every submission with its reviews and decision: the page opens on the accepted ones
                log.update(phase="fetching")
                try:
                    fetch_venue(api, fetch, steps[-1][-1], progress=log, say=lambda line: print(line, flush=True))
                except FetchError as e:
                    if not (held.replaced and steps[-1][-1].exists()):
                        raise
                    # the build this one replaced goes on, on the data fetched before: nothing it did is lost
                    log.update(fetch_failed=str(e).splitlines()[0])
                    print(f"the download stopped ({e}); building the data fetched before", flush=True)
            log.update(phase="building")
            log("loading the model", 0, 1)  # ~20 s of imports on 2 cores: the page says what it waits for
            model = load_model()
            for n, inputs in enumerate(steps, 1):
                log.update(step=n, inputs=[str(p) for p in inputs])
                report = build_index(inputs, out, model=model, progress=log, multilingual=multilingual,
                                     first_stage_only=n < len(steps))
                log.update(count=report.count, published=str(report.path))
                for line in report.notes:  # into the build's log: what was merged or kept apart, and why
                    print(f"note: {line}", flush=True)
        except Superseded as e:
            log.update(state="superseded" if e.replaced else "stopped", message=str(e))
            print(f"stopped: {e}", flush=True)
            return 0
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
    ap.add_argument("--replace", action="store_true", help="stop a build of the index running now and take its place")
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
    return run(args.out, steps, args.multilingual, args.fetch, api, args.replace)


if __name__ == "__main__":
    sys.exit(main())
