"""A new user's path to meaning on this CPU: the venue fetched from a local OpenReview API, then
`index_build.py seeds FILE`, to the first answer by words, the first papers ranked by meaning, every paper
ranked by meaning; beside the embedding floor and the time left the build announced at 3% of the abstracts.

    python benchmarks/bench_meaning.py [--out DIR] [--record meaning_avx2.md] [--deadline SECONDS]

The whole crawl (19,630 submissions with their replies) is served by tests/openreview_server.py and fetched by
the real `python -m search fetch --api URL`; the build is the command a user runs (a cold embedding cache of its
own, the seeds beside the file), stopped once every abstract is embedded (its later stages: sentences, topics,
review search, multilingual, summaries are not what this measures). Times are from the fetch's end. The index
folder is polled every half second: the first answer by words is the words stage published; the first papers
ranked by meaning, the first index holding some vectors (the hybrid ranking ranks by meaning from
engine.HYBRID_SHARE of the papers on; one `python -m search query --json` on it says how it ranked); all by
meaning, the abstracts' stage published. The time left is what the page says (progress.meaning_eta over the
build's status file) when 3% of the abstracts are embedded, against the time it actually took from then.
The floor: a plain encode (the build's encoder, batch 32, longest first) of a sample of the same texts, after
the build in the same run, scaled to every text by their tokens (cut at the model's 256). The machine is shared:
its load average is sampled throughout. Targets on two idle cores: meaning within 600 s of the fetch, all
within 1.2x the floor, the time left within 25%.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import ROOT, machine, today, write_report

DATA = ROOT.parent / "shared" / "data"
QUERY = "how do I make a language model read longer documents?"
FIRST_WITHIN, BOUND, ETA_WITHIN, SHARE = 600, 1.2, 0.25, 0.03
PUBLISH_EVERY = 2000  # build.BuildOptions.publish_every


def manifest(index: Path) -> dict:
    try:
        return json.loads((index / "manifest.json").read_text())
    except (OSError, ValueError):  # no index yet, or the link swapped under the read
        return {}


def fetch(out: Path) -> float:
    """Seconds `python -m search fetch` takes to write the whole venue from the local API."""
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openreview_server.py"),
                               "--notes", str(DATA / "iclr2026_openreview.jsonl.gz"),
                               "--group", str(DATA / "iclr2026_openreview_group.json"), "--lifetime", "1800"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "search", "fetch", "--api", url, "--out", str(out)], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t
    finally:
        server.stdin.close()
        server.wait(60)


def build(data: Path | list[str], index: Path, deadline: float, options: tuple[str, ...] = ()) -> dict:
    """Run the build of `data` (a fetch's file, beside the seeds; or the build's inputs as given) to its abstracts'
    stage published (or the deadline); what was seen when."""
    from search.background import status_file
    from search.progress import meaning_eta

    marks: dict = {"loads": [], "publishes": []}
    log = open(index.parent / "build.log", "w")
    t0 = time.perf_counter()
    inputs = ["seeds", str(data)] if isinstance(data, Path) else list(data)
    job = subprocess.Popen([sys.executable, "index_build.py", *inputs, "--out", str(index), *options], cwd=ROOT,
                           stdout=log, stderr=log)
    before = manifest(index).get("built_at")  # an index already there (a venue added to it) is not this build's
    last_built, last_load = None, 0.0
    try:
        while True:
            now = time.perf_counter() - t0
            m = manifest(index)
            if before and m.get("built_at") == before:
                m = {}
            if now - last_load >= 30:
                marks["loads"].append(os.getloadavg()[0])
                last_load = now
            if m and m.get("built_at", "") + str(m.get("unembedded")) != last_built:
                last_built = m.get("built_at", "") + str(m.get("unembedded"))
                marks["publishes"].append((round(now, 1), m.get("count"), m.get("unembedded") or 0,
                                           list(m.get("published") or {})))
            if "words" in (m.get("published") or {}) and "words" not in marks:
                marks["words"], marks["count"] = now, m["count"]
            left = m.get("unembedded") or 0
            if m and 0 < left < m.get("count", 0) and "first meaning" not in marks:
                marks["first meaning"], marks["first embedded"] = now, m["count"] - left
                ran = subprocess.run([sys.executable, "-m", "search", "query", QUERY, "-k", "10", "--json",
                                      "--index", str(index)], cwd=ROOT, capture_output=True, text=True)
                try:
                    said = json.loads(ran.stdout)
                    marks["first meaning ranked by"] = said.get("ranked_by", "meaning")
                    marks["first meaning message"] = said.get("message", "")
                except ValueError:
                    marks["first meaning ranked by"] = f"no answer ({ran.stderr.strip()[-200:]})"
            status = json.loads(status_file(index).read_text()) if status_file(index).is_file() else {}
            if status.get("stage") == "abstracts" and (status.get("total") or 0) > 1:
                if "eta" not in marks and status["done"] >= SHARE * status["total"]:
                    marks["eta"], marks["eta at"], marks["eta done"] = meaning_eta(status), now, status["done"]
                    marks["eta total"] = status["total"]
                marks["last done"], marks["last at"] = status["done"], now
            if "abstracts" in (m.get("published") or {}):
                marks["all meaning"] = now
                marks["manifest"] = m
                break
            if job.poll() is not None:  # ended from outside (a signal): what it reached is still recorded
                marks["cut"], marks["left"], marks["manifest"] = now, left, m
                marks["ended"] = f"index_build.py ended by itself ({job.returncode}) before its abstracts' stage"
                break
            if time.perf_counter() > deadline:
                marks["cut"], marks["left"] = now, left
                marks["manifest"] = m
                break
            time.sleep(0.5)
    finally:
        job.terminate()
        job.wait()
        log.close()
        (index.parent / "marks.json").write_text(json.dumps(marks, indent=1, default=str))
    return marks


def floor(data: Path) -> dict:
    """The plain encode's seconds for every text the build embedded, from a timed sample scaled by tokens."""
    from search.corpus import load_corpus

    papers, _ = load_corpus([ROOT / "seeds", data])
    return floor_of(list(dict.fromkeys(p.text for p in papers)))


def floor_of(texts: list[str], sample_size: int = 256) -> dict:
    """A plain encode of these texts (the build's encoder, batch 32, longest first): seconds for all of them, from
    a timed sample of `sample_size` scaled by their tokens (all of them, timed whole, where there are fewer)."""
    from search.encoding import query_encoder as qe
    from search.encoding.embed import DEFAULT_BACKEND, load_model, model_fingerprint

    model = load_model()
    fp, cut = model_fingerprint(model), int(model.max_seq_length)
    with tempfile.TemporaryDirectory() as work:
        encoder = qe.document_encoder(qe.exported(model, fp, Path(work), quantize=False), cut, fp, DEFAULT_BACKEND)
    tokens = [min(encoder.count_tokens(t), cut) for t in texts]
    sample = sorted(random.Random(0).sample(texts, min(sample_size, len(texts))), key=len, reverse=True)
    encoder.encode(sample[:32], 32)
    t = time.perf_counter()
    encoder.encode(sample, 32)
    seconds = time.perf_counter() - t
    sample_tokens = sum(min(encoder.count_tokens(x), cut) for x in sample)
    rate = sample_tokens / seconds
    return {"seconds": sum(tokens) / rate, "texts": len(texts), "tokens": sum(tokens), "rate": rate,
            "sample": len(sample), "backend": encoder.backend, "per_second": len(sample) / seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="scratch folder (default: a new temporary one)")
    ap.add_argument("--record", default="meaning.md")
    ap.add_argument("--deadline", type=float, default=3 * 3600,
                    help="seconds after which the build is stopped and what it reached recorded")
    ap.add_argument("--rewrite", action="store_true", help="write the record again from OUT/marks.json")
    args = ap.parse_args()
    from search.encoding.embed import cpu_description

    out = args.out or Path(tempfile.mkdtemp(prefix="meaning-"))
    out.mkdir(parents=True, exist_ok=True)
    if args.rewrite:  # the record again from a run's saved marks
        marks = json.loads((out / "marks.json").read_text())
    else:
        started, load_before = time.strftime("%H:%M UTC", time.gmtime()), os.getloadavg()
        data = out / "iclr.jsonl"
        fetch_s = fetch(data)
        marks = build(data, out / "index", time.perf_counter() + args.deadline)
        marks.update(fetch=fetch_s, started=started, load_before=load_before, load_after=os.getloadavg())
        (out / "marks.json").write_text(json.dumps(marks, indent=1, default=str))
        marks["floor"] = floor(data)
        (out / "marks.json").write_text(json.dumps(marks, indent=1, default=str))
    least, fetch_s, started = marks.get("floor"), marks["fetch"], marks["started"]
    load_before, load_after = marks["load_before"], marks["load_after"]
    cpu = cpu_description()
    m = marks["manifest"]
    embedding = m.get("embedding") or {}
    loads = marks["loads"] or [load_before[0]]
    lines = [f"# To meaning on {cpu['name']} ({', '.join(cpu['flags']) or 'no AVX2'}): the whole venue fetched and built",
             "", f"`python benchmarks/bench_meaning.py --record {args.record}` · {machine()} · {today()}", "",
             f"CPU: {cpu['name']}, {cpu['cores']} cores, vector instructions of those the build reads: "
             f"{', '.join(cpu['flags']) or 'none'}; the build embedded with {embedding.get('backend', '?')} "
             f"(batch {embedding.get('batch_size', '?')}). Started {started}; load average (1 min) before "
             f"{load_before[0]:.2f}, during the build median {statistics.median(loads):.2f} (min {min(loads):.2f}, "
             f"max {max(loads):.2f}), after {load_after[0]:.2f}: the machine was shared with other work, so the "
             f"times are longer than on an idle one, the floor measured under the same kind of load.", "",
             *([f"**{marks['ended']}**" + (f" {marks['note']}" if marks.get("note") else ""), ""]
               if marks.get("ended") else []),
             f"Fetch (`python -m search fetch` from the local API): {fetch_s:.1f} s. Then `index_build.py seeds "
             f"iclr.jsonl` (a cold cache), stopped once the abstracts' stage was published; times from the fetch's end.",
             "", "| from the fetch's end to | seconds | floor | ratio (target) |", "|---|---|---|---|",
             f"| the first answer by words (the words stage: {marks.get('count', 0):,} papers) | "
             f"**{marks.get('words', float('nan')):.1f}** | | |"]
    if "first meaning" in marks:
        lines.append(f"| the first papers ranked by meaning ({marks['first embedded']:,} embedded; the query was "
                     f"ranked by {marks['first meaning ranked by']}) | **{marks['first meaning']:.1f}** | | "
                     f"(≤ {FIRST_WITHIN} s) |")
    else:
        lines.append(f"| the first papers ranked by meaning | not reached: {'ended' if marks.get('ended') else 'stopped'} "
                     f"at {marks['cut']:.0f} s with "
                     f"{marks.get('last done', 0):,} abstracts embedded (a publish comes after each "
                     f"{PUBLISH_EVERY:,}) | | (≤ {FIRST_WITHIN} s) |")
    floor_cell = f"{least['seconds']:.1f} (a plain encode)" if least else "not measured (the run was stopped)"
    if "all meaning" in marks and least:
        lines.append(f"| every paper ranked by meaning (the abstracts' stage published) | **{marks['all meaning']:.1f}**"
                     f" | {floor_cell} | {marks['all meaning'] / least['seconds']:.2f}× (≤ {BOUND}) |")
    else:
        lines.append(f"| every paper ranked by meaning | not reached: {'ended' if marks.get('ended') else 'stopped'} "
                     f"at {marks['cut']:.0f} s with "
                     f"{marks['left']:,} papers still to embed | {floor_cell} | |")
        if marks.get("last done") and "words" in marks and least:
            part = least["seconds"] * marks["last done"] / least["texts"]
            took = marks["last at"] - marks["words"]
            lines.append(f"| the {marks['last done']:,} abstracts embedded by the stop, from the words stage "
                         f"(publishes included) | **{took:.1f}** | {part:.1f} (the floor's share) | "
                         f"{took / part:.2f}× (≤ {BOUND}) |")
    if "eta" in marks and "all meaning" in marks:
        actual = marks["all meaning"] - marks["eta at"]
        said = marks["eta"]
        lines.append(f"| the time left the page said at {100 * marks['eta done'] / marks['eta total']:.1f}% of the "
                     f"abstracts ({marks['eta at']:.0f} s): {said:.0f} s; it took {actual:.0f} s | "
                     f"error **{100 * (said - actual) / actual:+.0f}%** | | (within ±{100 * ETA_WITHIN:.0f}%) |")
    elif marks.get("eta") and marks.get("last done", 0) > marks["eta done"]:
        # stopped before the end: the pace the time left implied, over the abstracts embedded by the stop
        pace = marks["eta"] / (marks["eta total"] - marks["eta done"])
        said = pace * (marks["last done"] - marks["eta done"])
        actual = marks["last at"] - marks["eta at"]
        lines.append(f"| the time left the page said at {100 * marks['eta done'] / marks['eta total']:.1f}% of the "
                     f"abstracts ({marks['eta at']:.0f} s): {marks['eta']:.0f} s for {marks['eta total'] - marks['eta done']:,}"
                     f" abstracts, so {said:.0f} s for the {marks['last done'] - marks['eta done']:,} embedded until "
                     f"the stop; they took {actual:.0f} s | error **{100 * (said - actual) / actual:+.0f}%** (over "
                     f"the part embedded) | | (within ±{100 * ETA_WITHIN:.0f}%) |")
    if least:
        lines += ["", f"Floor: {least['texts']:,} distinct texts, {least['tokens']:,} tokens (cut at 256) at "
                  f"{least['rate']:,.0f} tokens/s ({least['per_second']:.1f} texts/s over a sample of "
                  f"{least['sample']} texts, {least['backend']}, measured after the build)."]
    lines += ["",
              "## Each index published (seconds from the fetch's end)", "",
              "| seconds | papers | still to embed | stages published |", "|---|---|---|---|"]
    for t, count, left, published in marks["publishes"]:
        lines.append(f"| {t:.1f} | {count:,} | {left:,} | {', '.join(published)} |")
    if marks.get("first meaning message"):
        lines += ["", f"The first partial index's answer said: “{marks['first meaning message']}”"]
    lines += ["", f"Build log: `{out / 'build.log'}` (scratch folder)."]
    write_report(lines, ROOT / "benchmarks" / "results" / args.record)


if __name__ == "__main__":
    main()
