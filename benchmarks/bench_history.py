"""Re-fetches with moves on the whole venue: the rebuild's time with the history kept, and what it says changed.

    python benchmarks/bench_history.py --crawl ../shared/data/iclr2026_openreview.jsonl.gz --out DIR

Three fetches of the shared crawl, each through the official client from the local API server
(tests/openreview_server.py), each built with `python index_build.py seeds FILE --out DIR/index
--no-multilingual --no-summaries` (the command a user runs, the model's load included):
0. the venue before the discussion: each review as first posted (its earliest version), 20 submissions left out;
1. after the discussion: each review's latest version (the crawl lists the 932 edited reviews once per
   version): only ratings moved. Target: the rebuild within 30 s;
2. the 20 submissions arrive and one is withdrawn.
Each rebuild's `changes --json` is checked against what is computed here from the notes themselves.
The first build embeds everything (minutes the first time; DIR/.embedding_cache keeps the vectors for the next run).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from report import machine, write_report  # noqa: E402
from openreview_server import OpenReviewServer, as_of, withdrawn  # noqa: E402

NEW = 20
BUILD = ["--no-multilingual", "--no-summaries"]
DATES = ("2025-11-14", "2025-12-05", "2026-01-26")


def mean_rating(note: dict) -> float | None:
    """The mean of the notes' latest review versions, as a reader of the raw notes computes it."""
    latest: dict[str, dict] = {}
    for r in (note.get("details") or {}).get("replies") or []:
        if any(i.endswith("/-/Official_Review") for i in r.get("invitations", [])):
            if r["id"] not in latest or r["tmdate"] >= latest[r["id"]]["tmdate"]:
                latest[r["id"]] = r
    ratings = [r["content"]["rating"]["value"] for r in latest.values() if "rating" in r.get("content", {})]
    return sum(ratings) / len(ratings) if ratings else None


def expected(before: list[dict], after: list[dict]) -> dict:
    """Moved, new and withdrawn papers between two lists of notes, from the notes alone."""
    a = {n["id"]: n for n in before if n["content"].get("abstract", {}).get("value", "").strip()}
    b = {n["id"]: n for n in after if n["content"].get("abstract", {}).get("value", "").strip()}
    moved = {}
    for pid in a.keys() & b.keys():
        x, y = mean_rating(a[pid]), mean_rating(b[pid])
        if x is not None and y is not None and abs(x - y) > 1e-3:
            moved[pid] = round(y - x, 3)
    gone = {pid for pid in a.keys() & b.keys()
            if "Withdrawn" in b[pid]["content"]["venueid"]["value"] and
            "Withdrawn" not in a[pid]["content"]["venueid"]["value"]}
    return {"moved": moved, "new": set(b) - set(a), "withdrawn": gone}


def fetch(notes: list[dict], group: dict, out: Path, when: str) -> float:
    from search.openreview.fetch import DEFAULT_VENUE, fetch_venue
    from search.openreview.api import Api

    t = time.perf_counter()
    with OpenReviewServer(notes, group) as server:
        fetch_venue(Api(server.url), DEFAULT_VENUE, out)
    stamp = time.mktime(time.strptime(when, "%Y-%m-%d"))
    os.utime(out, (stamp, stamp))  # the fetch's date: what the history records
    return time.perf_counter() - t


def build(records: Path, out: Path) -> tuple[float, dict]:
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "index_build.py", "seeds", str(records), "--out", str(out / "index"),
                        "--cache", str(out / ".embedding_cache"), *BUILD], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(f"the build failed:\n{r.stderr[-3000:]}")
    return seconds, json.loads((out / "index" / "manifest.json").read_text())


def changes(out: Path) -> dict:
    r = subprocess.run([sys.executable, "-m", "search", "changes", "--json", "--index", str(out / "index")],
                       cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"changes failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout)


def agrees(said: dict, want: dict) -> str:
    moved = {m["id"]: round(m["move"], 3) for m in said["moved"]}
    checks = {"moved": moved == want["moved"], "new": {n["id"] for n in said["new"]} == want["new"],
              "withdrawn": {w["id"] for w in said["withdrawn"]} == want["withdrawn"]}
    if not all(checks.values()):
        raise SystemExit(f"changes disagree with the notes: {checks}")
    return "yes, paper by paper"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--crawl", type=Path, required=True)
    ap.add_argument("--group", type=Path, default=None, help="default: iclr2026_openreview_group.json beside it")
    ap.add_argument("--out", type=Path, required=True, help="scratch folder (the index and its cache)")
    args = ap.parse_args()
    group = json.loads((args.group or args.crawl.parent / "iclr2026_openreview_group.json").read_text())
    with gzip.open(args.crawl, "rt", encoding="utf-8") as f:
        notes = [json.loads(line) for line in f if line.strip()]
    args.out.mkdir(parents=True, exist_ok=True)
    late = {n["id"] for n in notes[-NEW:]}
    target = next(n["id"] for n in notes if "Withdrawn" not in n["content"]["venueid"]["value"]
                  and n["id"] not in late)
    fetches = [[as_of(n, "earliest") for n in notes if n["id"] not in late],
               [n for n in notes if n["id"] not in late],
               [withdrawn(n) if n["id"] == target else n for n in notes]]
    files = [args.out / f"fetch{i}.jsonl" for i in range(3)]
    fetch_s = [fetch(n, group, f, d) for n, f, d in zip(fetches, files, DATES)]
    # a new index each run (the embedding cache kept): its history holds these three fetches only
    for old in (args.out / "index", args.out / ".index.versions"):
        if old.is_symlink():
            old.unlink()
        elif old.exists():
            shutil.rmtree(old)
    build(files[0], args.out)  # not measured: minutes the first time, the vectors from the cache after
    lines = [f"# Re-fetches with moves: the rebuild with the history kept ({len(notes):,} submissions)", "",
             f"`python benchmarks/bench_history.py --crawl ../shared/data/iclr2026_openreview.jsonl.gz --out DIR` · "
             f"{machine()} · {time.strftime('%Y-%m-%d')}", "",
             f"Built with `index_build.py seeds FILE {' '.join(BUILD)}` on an index of that fetch's before "
             f"(fetch 0: every review as first posted, {NEW} submissions not yet listed; fetched in "
             f"{fetch_s[0]:.1f} s).", "",
             "| re-fetch | fetch | the papers, their ratings and the history served (s from start; target ≤ 30 s) | "
             "complete | stages (s) | history | changes (`changes --json`) | as computed from the notes |",
             "|---|---|---|---|---|---|---|---|"]
    for i, label in ((1, "the discussion's edits: ratings moved"),
                     (2, f"{NEW} new submissions, one withdrawn")):
        seconds, m = build(files[i], args.out)
        said = changes(args.out)
        want = expected(fetches[i - 1], fetches[i])
        h = m["history"]
        served = m["published"]["abstracts"] + (seconds - m["build_seconds"])  # the process's start included
        stages = ", ".join(f"{k} {v:.1f}" for k, v in m["stage_seconds"].items() if v >= 0.05)
        lines.append(f"| {label} | {fetch_s[i]:.1f} s | **{served:.1f} s** | {seconds:.1f} s (last: "
                     f"{max(m['published'], key=m['published'].get)}) | {stages} | "
                     f"{h['fetches']} fetches, {h['papers']:,} papers | "
                     f"{len(said['moved']):,} moved ({sum(x['move'] > 0 for x in said['moved']):,} up), "
                     f"{len(said['new'])} new, {len(said['withdrawn'])} withdrawn, "
                     f"{len(said['new_reviews'])} with new reviews | {agrees(said, want)} |")
    size = sum((args.out / "index" / f).stat().st_size for f in ("history.jsonl", "fetches.json"))
    lines += ["", f"The history's files after three fetches: {size / 2**20:.1f} MiB. Times are from the start of "
              "`index_build.py` (the interpreter's start and the imports included). \"Served\": the build's first "
              "publish, with every paper's new ratings, decisions and history (what the page, `changes` and the "
              "sorts read); the later stages follow as they land. \"history\": reading the previous history and "
              "adding this fetch's (its files are written with the papers, under \"write\"). The "
              "discussion's edits change review texts too, so the search within reviews is built again (its own "
              "stage, last)."]
    write_report(lines, ROOT / "benchmarks" / "results" / "history.md")


if __name__ == "__main__":
    main()
