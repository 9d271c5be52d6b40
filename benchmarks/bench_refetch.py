"""A re-fetch on an index already built: what is redone when little changed.

    python benchmarks/bench_refetch.py --records FILE --out DIR

DIR is the scratch folder of `bench_first_run.py --data FILE` (its `index` and `.embedding_cache`, every
stage built). Three re-fetches are written beside it and each is built with `python index_build.py seeds
FILE' --out DIR/index` (the command a user runs; the model's load included), in turn:
1. the rebuttal moved ratings and decisions came out: one review's rating of a fifth of the reviewed
   submissions moved by two, 300 rejected submissions accepted as posters; no text changed. Target: <= 30 s,
   nothing embedded, topics, map and review search reused.
2. reviewers edited their reviews: one review's weaknesses of 5% of the reviewed submissions rewritten;
   nothing embedded, the search within reviews rebuilt (a stage of its own, published after the rest).
3. new submissions: 50 papers added; only they are embedded.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from report import machine, write_report


def moved_scores(rows: list[dict], rng: random.Random) -> None:
    reviewed = [r for r in rows if r.get("reviews")]
    for r in rng.sample(reviewed, len(reviewed) // 5):
        review = r["reviews"][0]
        if isinstance(review.get("rating"), (int, float)):
            review["rating"] = review["rating"] + 2 if review["rating"] <= 6 else review["rating"] - 2
            ratings = [x["rating"] for x in r["reviews"] if isinstance(x.get("rating"), (int, float))]
            r["avg_rating"] = sum(ratings) / len(ratings)
    for r in rng.sample([r for r in rows if r.get("decision") == "Rejected"], 300):
        r["decision"], r["venue"] = "Poster", "ICLR 2026 Poster"


def edited_reviews(rows: list[dict], rng: random.Random) -> None:
    reviewed = [r for r in rows if r.get("reviews")]
    for r in rng.sample(reviewed, len(reviewed) // 20):
        r["reviews"][0]["weaknesses"] = "After the rebuttal: the ablation on the tokenizer is still missing."


def new_papers(rows: list[dict], rng: random.Random) -> None:
    for i, r in enumerate(rng.sample(rows, 50)):
        rows.append({**r, "id": f"new{i:04d}", "title": f"{r['title']} (extended)",
                     "abstract": r["abstract"] + " We extend this study to three new benchmarks.", "reviews": []})


def rebuild(records: Path, out: Path) -> dict:
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "index_build.py", "seeds", str(records), "--out", str(out / "index"),
                        "--cache", str(out / ".embedding_cache")], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(f"the build failed:\n{r.stderr[-3000:]}")
    manifest = json.loads((out / "index" / "manifest.json").read_text())
    return {"seconds": seconds, "manifest": manifest}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True, help="the file the first run was built from")
    ap.add_argument("--out", type=Path, required=True, help="bench_first_run.py's scratch folder for it")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.records.open(encoding="utf-8")]
    rng = random.Random(0)
    lines = [f"# A re-fetch on a built index of {len(rows):,} submissions: what is redone", "",
             f"`python benchmarks/bench_refetch.py --records FILE --out DIR` · {machine()} · "
             f"{time.strftime('%Y-%m-%d')}", "",
             "| re-fetch | rebuild (`index_build.py`, model load included) | embedded | published (s from start) | "
             "topics and map | review search | stages (s) |", "|---|---|---|---|---|---|---|"]
    for label, change in (("ratings and decisions moved, no text changed (target ≤ 30 s)", moved_scores),
                          ("5% of the reviewed submissions had a review edited", edited_reviews),
                          ("50 new submissions", new_papers)):
        change(rows, rng)
        path = args.out / f"refetch-{change.__name__}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        before = json.loads((args.out / "index" / "manifest.json").read_text())
        result = rebuild(path, args.out)
        m = result["manifest"]
        embedded = m["embedding"]["embedded"]
        published = ", ".join(f"{k} {v:.1f}" for k, v in m["published"].items())
        stages = ", ".join(f"{k} {v:.1f}" for k, v in m["stage_seconds"].items())
        explore = ("reused" if m["explore"].get("reused") else
                   f"{m['explore']['placed']} placed onto them" if m["explore"].get("placed") else "computed again")
        review = "reused" if (m["reviews"] or {}).get("key") == (before["reviews"] or {}).get("key") else "rebuilt"
        lines.append(f"| {label} | **{result['seconds']:.1f} s** | "
                     f"{', '.join(f'{k} {v:,}' for k, v in embedded.items())} | {published} | {explore} | "
                     f"{review} | "
                     f"{stages} |")
    lines += ["", "Each row builds on the one before (its changes kept). \"Published\" lists when each stage "
              "landed; a stage with nothing to compute is published with the first."]
    write_report(lines, ROOT / "benchmarks" / "results" / "refetch.md")


if __name__ == "__main__":
    main()
