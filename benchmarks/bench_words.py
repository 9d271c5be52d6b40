"""The words stage on an idle and on a loaded machine: seconds from starting `index_build.py seeds FILE` to
its words stage published with every paper (searchable by words), with 0 and then N busy processes beside it.

    python benchmarks/bench_words.py --data FILE [--load 2] [--runs 3] [--record words.md]

Each run starts from a cold cache of its own and a fresh index folder, as a new user's first build does
(the model's facts and export made first); the build is stopped once the words stage is published. The load
is N Python processes spinning on a core each, started before the build and stopped after it: a machine
shared with other work. Targets: ≤ 60 s idle, ≤ 90 s loaded (two cores).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import ROOT, machine, write_report

IDLE, LOADED = 60, 90


def spin() -> None:
    while True:
        pass


def words_seconds(data: Path, work: Path) -> tuple[float, int]:
    """Seconds to the words stage published, and the papers it holds; the build is then stopped."""
    index = work / "index"
    t0 = time.perf_counter()
    job = subprocess.Popen([sys.executable, "index_build.py", "seeds", str(data), "--out", str(index)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                manifest = json.loads((index / "manifest.json").read_text())
            except (OSError, ValueError):
                manifest = {}
            if "words" in (manifest.get("published") or {}):
                return time.perf_counter() - t0, manifest["count"]
            if job.poll() is not None:
                raise RuntimeError(f"index_build.py ended ({job.returncode}) before its words stage")
            time.sleep(0.1)
    finally:
        job.kill()
        job.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="a fetched venue's JSONL")
    ap.add_argument("--load", type=int, default=2, help="busy processes beside the loaded runs (default 2)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--record", default="words.md", help="file name in benchmarks/results/")
    args = ap.parse_args()
    seconds: dict[int, list[float]] = {}
    papers = 0
    for load in (0, args.load):
        busy = [multiprocessing.Process(target=spin, daemon=True) for _ in range(load)]
        for p in busy:
            p.start()
        try:
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory() as work:
                    took, papers = words_seconds(args.data, Path(work))
                    seconds.setdefault(load, []).append(took)
        finally:
            for p in busy:
                p.terminate()
    lines = [f"# Searchable by words: `index_build.py` to its words stage, {papers:,} papers", "",
             f"`python benchmarks/bench_words.py --data {args.data.name}"
             + (f" --load {args.load}" if args.load != 2 else "") + (f" --runs {args.runs}" if args.runs != 3 else "")
             + f"` · {machine()} · {time.strftime('%Y-%m-%d')}", "",
             "| machine | median seconds (each run) | target |", "|---|---|---|"]
    for load, runs in seconds.items():
        what = "idle" if load == 0 else f"{load} busy processes beside it"
        target = IDLE if load == 0 else LOADED
        lines.append(f"| {what} | **{statistics.median(runs):.1f}** ({', '.join(f'{s:.1f}' for s in runs)}) "
                     f"| ≤ {target} s |")
    lines += ["", "Each run: a cold embedding cache and a new index folder (the model loaded, its facts and ONNX "
              "export made, the records read, BM25 and the reviews written, the papers published with zero "
              "vectors), the build stopped once the words stage is published."]
    write_report(lines, ROOT / "benchmarks" / "results" / args.record)


if __name__ == "__main__":
    main()
