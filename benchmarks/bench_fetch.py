"""The whole of ICLR 2026 fetched from a local server that speaks OpenReview's API v2.

    python benchmarks/bench_fetch.py [--notes FILE.jsonl.gz] [--group FILE.json]

Serves the shared crawl (19,630 submissions with their replies, exactly as the API returns them) from
tests/openreview_server.py on 127.0.0.1 and runs the real `python -m search fetch --api URL` against it
in its own process: wall time, requests, bytes served and the fetch's peak memory. Then checks every
record against the crawl itself: decision, number of reviews and mean rating. Three runs: pages of
1,000 (the API's largest), pages capped at 500 by the server, and a download killed after its tenth page
and resumed. What it measures is the fetch's own cost; the real service adds its network and its
rate limits (the fetch waits those out, 2 s growing to 32 s, and stops where a wait is longer than 120 s).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from report import machine, write_report

DATA = ROOT.parent / "shared" / "data"
FATES = {"ICLR 2026 Oral": "Oral", "ICLR 2026 Poster": "Poster", "Submitted to ICLR 2026": "Rejected",
         "ICLR 2026 Conference Withdrawn Submission": "Withdrawn", "ICLR 2026 Conference Submission": "Under review"}


def expected(notes: Path) -> dict[str, tuple[str, int, float | None]]:
    """Each submission's decision, review count and mean rating, read from the crawl itself."""
    out = {}
    for line in gzip.open(notes, "rb"):
        n = json.loads(line)
        latest = {}  # a review edited after posting is listed once per version: its last one stands
        for r in n["details"]["replies"]:
            if r["invitations"][0].endswith("/-/Official_Review") and r["mdate"] >= latest.get(r["id"], {"mdate": 0})["mdate"]:
                latest[r["id"]] = r
        ratings = [r["content"]["rating"]["value"] for r in latest.values()]
        out[n["id"]] = (FATES[n["content"]["venue"]["value"]], len(ratings),
                        sum(ratings) / len(ratings) if ratings else None)
    return out


@contextmanager
def server(notes: Path, group: Path, cap: int) -> Iterator[tuple[str, list[int]]]:
    """The local API in a process of its own (so the fetch, forked from this small process, starts
    small); yields its address and, once it has stopped, [requests answered]."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openreview_server.py"), "--notes", str(notes),
                             "--group", str(group), "--cap", str(cap), "--lifetime", "900"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    requests: list[int] = []
    try:
        yield proc.stdout.readline().strip(), requests
    finally:
        proc.stdin.close()
        tail = proc.stdout.read()
        proc.wait(60)
        requests.extend(int(x) for x in re.findall(r"requests (\d+)", tail))


def fetch(url: str, out: Path, kill_after_pages: int = 0) -> dict:
    """One `python -m search fetch` in its own process: seconds, exit status, its own peak RSS."""
    logs = out.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    state = out.with_name(out.name + ".partial.json")
    t = time.perf_counter()
    with open(logs / "stdout", "w+") as so, open(logs / "stderr", "w+") as se:
        proc = subprocess.Popen([sys.executable, "-m", "search", "fetch", "--api", url, "--out", str(out)],
                                cwd=ROOT, stdout=so, stderr=se, text=True)
        while kill_after_pages and proc.poll() is None:
            try:
                if json.loads(state.read_text())["pages"] >= kill_after_pages:
                    proc.send_signal(signal.SIGKILL)
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.01)
        _, status, usage = os.wait4(proc.pid, 0)   # this child's own rusage, not all children's
        seconds = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        return {"seconds": seconds, "code": proc.returncode, "stdout": so.read(), "stderr": se.read(),
                "peak_mib": usage.ru_maxrss / 1024}


def check(out: Path, truth: dict) -> tuple[int, int]:
    """(records, mismatches) of the fetched file against the crawl."""
    bad = n = 0
    with open(out, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            n += 1
            fate, count, mean = truth[rec["id"]]
            got_mean = rec.get("avg_rating")
            if rec["decision"] != fate or len(rec["reviews"]) != count or rec.get("n_ratings", 0) != count \
                    or (mean is None) != (got_mean is None) or (mean is not None and abs(got_mean - mean) > 1e-4):
                bad += 1
    return n, bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=Path, default=DATA / "iclr2026_openreview.jsonl.gz")
    ap.add_argument("--group", type=Path, default=DATA / "iclr2026_openreview_group.json")
    ap.add_argument("--report", type=Path, default=ROOT / "benchmarks" / "results" / "fetch.md")
    args = ap.parse_args()
    if not args.notes.exists():
        print(f"needs {args.notes} (the shared ICLR 2026 crawl)", file=sys.stderr)
        return 2
    truth = expected(args.notes)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, cap, kill in (("pages of 1,000", 1000, 0), ("pages capped at 500 by the server", 500, 0),
                                 ("killed after page 10, then resumed", 1000, 10)):
            out = Path(tmp) / f"{cap}-{kill}" / "iclr.jsonl"
            with server(args.notes, args.group, cap) as (url, requests):
                runs = [fetch(url, out, kill)] if kill else []
                if kill:
                    kept = json.loads(out.with_name(out.name + ".partial.json").read_text())["notes"]
                runs.append(fetch(url, out))
            last = runs[-1]
            assert last["code"] == 0, last["stderr"]
            n, bad = check(out, truth)
            rows.append((label, sum(r["seconds"] for r in runs), requests[0], max(r["peak_mib"] for r in runs),
                         out.stat().st_size / 2**20, n, bad,
                f"{kept:,} kept by the killed run" if kill else ""))
            print(rows[-1], flush=True)
    lines = ["# Fetch: the whole of ICLR 2026 from a local OpenReview API v2", "",
             f"`python benchmarks/bench_fetch.py` · {machine()} · {time.strftime('%Y-%m-%d')}", "",
             f"Served: {len(truth):,} submissions with {sum(c for _, c, _ in truth.values()):,} reviews "
             f"({args.notes.stat().st_size / 2**20:.0f} MiB gzipped), from tests/openreview_server.py on 127.0.0.1.",
             "", "| run | seconds | requests | fetch's peak RSS (MiB) | file (MiB) | records | "
             "records not matching the crawl | |", "|---|---|---|---|---|---|---|---|"]
    for label, seconds, requests, peak, size, n, bad, note in rows:
        lines.append(f"| {label} | {seconds:.1f} | {requests} | {peak:.0f} | {size:.0f} | {n:,} | {bad} | {note} |")
    lines += ["", "A record matches when its decision, its number of reviews and its mean rating are those of "
              "the crawl (decisions by venue: Oral, Poster, Rejected, Withdrawn, Under review). Seconds are "
              "the `python -m search fetch` process from start to exit (both runs for the resumed one); "
              "the server is a process of its own. Peak RSS is the fetch process's maximum "
              "resident set (wait4's rusage of that process)."]
    write_report(lines, args.report)
    return 0 if all(r[6] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
