"""Every venue in one box, at scale: ICLR 2026's submissions and every Paper Copilot list in one index, built on
this machine; then one more venue added to it.

    python benchmarks/bench_many.py --venue FILE [--lists DIR] [--cache DIR] [--add colm/colm2025.json.gz]
                                    [--out DIR] [--record many.md] [--rewrite]

1. The whole collection: `index_build.py seeds VENUE LISTS --out OUT/index` (LISTS: every list of --lists but
   --add), the command a user runs, polled as benchmarks/bench_meaning.py polls it: the first answer by words
   (target: within 2 minutes of the build's start), each publish (every 2,000 abstracts embedded), every paper
   ranked by meaning (the abstracts' stage published; target: within 1.2x the embedding floor), then stopped
   (the later stages are not what this measures). --cache: an embedding cache holding the venue's vectors, as a
   user who fetched and built ICLR 2026 first has it; the lists' abstracts are embedded here, cold.
2. The floor: a plain encode (the build's encoder, batch 32, longest first) of the texts the build embedded (the
   collection's texts that the venue and the seeds do not hold), timed on a sample and scaled by tokens.
3. One venue added: the same command with --add among the lists, on the same index and cache: its time to every
   paper ranked by meaning against a plain encode of that venue's own texts, timed whole (target: floor + 30 s).
--again: step 3 alone, on an earlier run's OUT (its whole collection's rows kept from OUT/marks.json): the
collection rebuilt into OUT/index-again from a copy of OUT/cache without the added venue's vectors and records
(every other vector cached, each other file's records kept, as a user who built the collection has them), then
the venue added to it, timed.
The page's timings at this size come from benchmarks/bench_page.py and bench_load.py on OUT/index.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_meaning import build, floor_of
from report import ROOT, machine, today, write_report

LISTS = ROOT.parent / "shared" / "data" / "paperlists"
WORDS_WITHIN, BOUND, ADD_SLACK = 120, 1.2, 30


def texts_of(inputs: list[Path], cache: Path | None = None) -> list[str]:
    from search.corpus import load_corpus

    papers, _ = load_corpus(inputs, skip_bad=True, cache_dir=cache)
    return list(dict.fromkeys(p.text for p in papers))


def to_embed(build_log: Path) -> int:
    """How many abstracts the build said it would embed (its first progress line)."""
    m = re.search(r"abstracts: 0/([\d,]+)", build_log.read_text())
    return int(m.group(1).replace(",", "")) if m else 0


def run(args) -> dict:
    out = args.out
    lists_a = out / "lists"
    if lists_a.exists():
        shutil.rmtree(lists_a)
    added = args.lists / args.add
    for f in sorted(args.lists.rglob("*.json*")):
        if f != added:
            (lists_a / f.relative_to(args.lists)).parent.mkdir(parents=True, exist_ok=True)
            (lists_a / f.relative_to(args.lists)).symlink_to(f)
    cache = out / "cache"
    if args.cache and not cache.exists():
        subprocess.run(["cp", "-al", str(args.cache), str(cache)], check=True)
    options = ("--cache", str(cache))
    marks: dict = {"started": time.strftime("%H:%M UTC", time.gmtime()), "load_before": os.getloadavg(),
                   "lists": len(list(lists_a.rglob("*.json*"))), "add": args.add}
    index = out / "index"
    marks["whole"] = build(["seeds", str(args.venue), str(lists_a)], index, time.perf_counter() + args.deadline, options)
    marks["whole"]["to embed"] = to_embed(out / "build.log")
    shutil.copy(out / "build.log", out / "build-whole.log")
    (out / "marks.json").write_text(json.dumps(marks, indent=1, default=str))
    own = set(texts_of([ROOT / "seeds", args.venue]))
    whole = texts_of([ROOT / "seeds", args.venue, lists_a])
    embedded = [t for t in whole if t not in own]
    marks["floor whole"] = floor_of(embedded)
    (out / "marks.json").write_text(json.dumps(marks, indent=1, default=str))
    lists_b = out / "lists-added"
    if lists_b.exists():
        shutil.rmtree(lists_b)
    shutil.copytree(lists_a, lists_b, symlinks=True)
    (lists_b / args.add).parent.mkdir(parents=True, exist_ok=True)
    (lists_b / args.add).symlink_to(added)
    marks["added"] = build(["seeds", str(args.venue), str(lists_b)], index, time.perf_counter() + 3600, options)
    marks["added"]["to embed"] = to_embed(out / "build.log")
    shutil.copy(out / "build.log", out / "build-added.log")
    before = set(whole)
    new = [t for t in texts_of([added]) if t not in before]
    marks["floor added"] = floor_of(new, sample_size=len(new))
    marks["load_after"] = os.getloadavg()
    (out / "marks.json").write_text(json.dumps(marks, indent=1, default=str))
    return marks


def again(args) -> dict:
    """Step 3 on an earlier run's folder: the collection without the venue rebuilt (nothing to embed) into
    OUT/index-again from a cache that lacks only the venue's vectors and records, then the venue added."""
    from search.record_cache import FOLDER
    from search.text import text_hash

    out = args.out
    marks = json.loads((out / "marks.json").read_text())
    added, lists_a, lists_b = args.lists / args.add, out / "lists", out / "lists-added"
    before = set(texts_of([ROOT / "seeds", args.venue, lists_a], out / "texts-cache"))
    new = [t for t in texts_of([added], out / "texts-cache") if t not in before]
    cache = out / "cache-again"
    if cache.exists():
        shutil.rmtree(cache)
    subprocess.run(["cp", "-al", str(out / "cache"), str(cache)], check=True)
    drop = {text_hash(t) for t in new}
    for keys_file in cache.glob("*/shard-*.json"):  # a shard holding the venue's vectors written again without them
        keys = json.loads(keys_file.read_text())
        if drop.isdisjoint(keys):
            continue
        import numpy as np
        vectors = np.load(keys_file.with_suffix(".npy"))
        kept = [i for i, k in enumerate(keys) if k not in drop]
        keys_file.unlink()
        keys_file.with_suffix(".npy").unlink()
        if kept:
            np.save(keys_file.with_suffix(".npy"), vectors[kept])
            keys_file.write_text(json.dumps([keys[i] for i in kept]))
    shutil.rmtree(cache / FOLDER, ignore_errors=True)  # every file's records read again by the rebuild below
    index = out / "index-again"
    for old in (index, out / ".index-again.versions"):
        if old.is_symlink() or old.is_file():
            old.unlink()
        elif old.exists():
            shutil.rmtree(old)
    options = ("--cache", str(cache))
    marks["again"] = build(["seeds", str(args.venue), str(lists_a)], index, time.perf_counter() + 3600, options)
    marks["again load before"] = os.getloadavg()
    marks["again started"] = time.strftime("%H:%M UTC", time.gmtime())
    marks["added"] = build(["seeds", str(args.venue), str(lists_b)], index, time.perf_counter() + 3600, options)
    marks["added"]["to embed"] = to_embed(out / "build.log")
    shutil.copy(out / "build.log", out / "build-added.log")
    marks["floor added"] = floor_of(new, sample_size=len(new))
    marks["again load after"] = os.getloadavg()
    marks["added again"] = True
    (out / "marks.json").write_text(json.dumps(marks, indent=1, default=str))
    return marks


def record(marks: dict, args) -> None:
    from search.encoding.embed import cpu_description

    cpu = cpu_description()
    whole, added = marks["whole"], marks["added"]
    fw, fa = marks["floor whole"], marks["floor added"]
    m = whole.get("manifest") or {}
    loads = whole["loads"] or [marks["load_before"][0]]
    lines = [f"# Every venue in one box: {whole.get('count', 0):,} papers built on {cpu['name']} "
             f"({', '.join(cpu['flags']) or 'no AVX2'})", "",
             f"`python benchmarks/bench_many.py --venue FILE --cache DIR` · {machine()} · {today()}", "",
             f"Inputs: the seeds, ICLR 2026 as `python -m search fetch` wrote it ({args.venue.name}), and "
             f"{marks['lists']} of Paper Copilot's lists ({args.lists}; `{marks['add']}` kept back for step 3). "
             f"The embedding cache held the venue's and the seeds' vectors (a user who built ICLR 2026 first has "
             f"them): the build embedded the lists' abstracts, {whole.get('to embed', 0):,} of them, with "
             f"{(m.get('embedding') or {}).get('backend', '?')}. Started {marks['started']}; load average (1 min) "
             f"before {marks['load_before'][0]:.2f}, during the build median {statistics.median(loads):.2f} (max "
             f"{max(loads):.2f}), after {marks['load_after'][0]:.2f}.", "",
             "| from the build's start to | seconds | floor | ratio (target) |", "|---|---|---|---|",
             f"| the whole collection answering by words ({whole.get('count', 0):,} papers) | "
             f"**{whole.get('words', float('nan')):.1f}** | | (≤ {WORDS_WITHIN} s) |"]
    if "first meaning" in whole:
        lines.append(f"| the first index ranking by meaning ({whole['first embedded']:,} papers embedded: the venue's "
                     f"and the seeds', from the cache; the rest by their words) | {whole['first meaning']:.1f} | | |")
    if "all meaning" in whole:
        lines.append(f"| every paper ranked by meaning (the abstracts' stage published) | **{whole['all meaning']:.1f}** "
                     f"| {fw['seconds']:.1f} (a plain encode of the {fw['texts']:,} texts embedded) | "
                     f"**{whole['all meaning'] / fw['seconds']:.2f}×** (≤ {BOUND}) |")
    else:
        lines.append(f"| every paper ranked by meaning | not reached: stopped at {whole['cut']:.0f} s with "
                     f"{whole['left']:,} still to embed | {fw['seconds']:.1f} | |")
    lines += ["", f"Floor: {fw['tokens']:,} tokens (cut at 256) at {fw['rate']:,.0f} tokens/s ({fw['per_second']:.1f} "
              f"texts/s over a sample of {fw['sample']}, {fw['backend']}, measured after the build).", "",
              f"## One venue added (`{marks['add']}`)", ""]
    if marks.get("added again"):
        lines += [f"Measured again at {marks['again started']} (`--again`): the collection rebuilt without the venue from "
                  "a copy of the cache that lacked only its vectors and records, then the venue added. Load average "
                  f"(1 min) before {marks['again load before'][0]:.2f}, after {marks['again load after'][0]:.2f}.", ""]
    lines += ["| from the build's start to | seconds | floor | target |", "|---|---|---|---|",
              f"| the collection with the new venue answering by words | {added.get('words', float('nan')):.1f} | | |"]
    if "all meaning" in added:
        lines.append(f"| every paper ranked by meaning ({added.get('to embed', 0):,} abstracts embedded: the new "
                     f"venue's) | **{added['all meaning']:.1f}** | {fa['seconds']:.1f} (a plain encode of its "
                     f"{fa['texts']:,} texts, timed whole) | ≤ {fa['seconds'] + ADD_SLACK:.1f} s: "
                     f"{'met' if added['all meaning'] <= fa['seconds'] + ADD_SLACK else 'not met'} |")
    lines += ["", "## Each index published while the whole collection was built (seconds from its start)", "",
              "| seconds | papers | still to embed | stages published |", "|---|---|---|---|"]
    lines += [f"| {t:.1f} | {count:,} | {left:,} | {', '.join(published)} |" for t, count, left, published in
              whole["publishes"]]
    lines += ["", f"Build logs: `{args.out}/build-whole.log`, `build-added.log` (scratch folder)."]
    write_report(lines, ROOT / "benchmarks" / "results" / args.record)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venue", type=Path, required=True, help="ICLR 2026 as `python -m search fetch` wrote it")
    ap.add_argument("--lists", type=Path, default=LISTS)
    ap.add_argument("--cache", type=Path, default=None, help="an embedding cache holding the venue's vectors")
    ap.add_argument("--add", default="colm/colm2025.json.gz", help="the list kept back, then added (step 3)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--record", default="many.md")
    ap.add_argument("--deadline", type=float, default=4 * 3600)
    ap.add_argument("--rewrite", action="store_true", help="the record again from OUT/marks.json")
    ap.add_argument("--again", action="store_true", help="step 3 alone, on an earlier run's OUT")
    args = ap.parse_args()
    args.out = args.out or Path(tempfile.mkdtemp(prefix="many-"))
    args.out.mkdir(parents=True, exist_ok=True)
    marks = (json.loads((args.out / "marks.json").read_text()) if args.rewrite
             else again(args) if args.again else run(args))
    record(marks, args)


if __name__ == "__main__":
    main()
