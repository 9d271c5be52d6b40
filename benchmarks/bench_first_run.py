"""A new user's first run: `streamlit run` with no index and a conference file, to the first answer (the
seeds), to the first answer on the whole conference by words (its words stage published), by meaning (its
abstracts' stage) and to the complete index (every stage), beside the floors of those stages measured in the
same run; then `index_build.py` alone, from its start to the words stage published.

    python benchmarks/bench_first_run.py [--data FILE] [--out DIR] [--record first_run.md] [--until meaning]

What `make app DATA=FILE` does on a fresh clone: a new folder for the index and a cold embedding cache,
the server started with SEARCH_DATA=FILE, and a Chromium page on `?q=` that we only look at (it reruns
itself as each stage is published) until its sidebar counts the whole conference, then the published
manifest polled until the abstracts are embedded and no stage is pending (`--until meaning`: until the
abstracts are embedded, for a record of the first stages that takes minutes instead of the whole build).

The floors, measured afterwards on the idle machine the way benchmarks/experiments/bench_floor.py counts:
every distinct abstract's and sentence's tokens (cut at the model's 256) at the build's measured tokens/s
(OpenVINO bf16; sentences packed several to a row, as search/encoding/packed.py embeds them), the multilingual
encoder's texts/s (two worker processes, as the build runs it; titles at the sentences' rate), and the
parts that embed nothing timed alone: BM25 over the abstracts, topics and map, BM25 over the reviews.
Targets: first answer on the whole conference <= 1.15 x (abstracts + BM25), complete <= 1.15 x the sum.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from report import SHARED, longest_first, machine, write_report

QUERY = "how do I make a language model read longer documents?"
SAMPLE_ABSTRACTS, SAMPLE_SENTENCES = 256, 2048
BOUND = 1.15
WORDS_WITHIN = 60   # seconds to the whole venue answering by words, on two idle cores


def papers_shown(page) -> int:
    """The paper count of the sidebar's caption, 0 while the page shows no index."""
    text = " ".join(page.locator("[data-testid='stSidebar']").all_inner_texts())
    m = re.search(r"([\d,]+) papers · model", text)
    return int(m.group(1).replace(",", "")) if m else 0


def served_manifest(index: Path) -> dict:
    try:
        return json.loads((index / "manifest.json").read_text())
    except (OSError, ValueError):  # no index yet, or the link swapped under the read
        return {}


def run(data: Path, out: Path, venue: int, until: str = "complete") -> dict:
    from browser import launch, streamlit_server  # tests/browser.py, on the path since report
    from playwright.sync_api import sync_playwright

    index = out / "index"
    t0 = time.perf_counter()
    marks: dict = {}
    seen: dict[str, dict] = {}  # every index the page was served, by build and stage
    with streamlit_server(ROOT, index, env={"SEARCH_DATA": str(data)}) as url, sync_playwright() as pw:
        marks["server up"] = time.perf_counter() - t0
        browser = launch(pw)
        page = browser.new_page()
        page.goto(f"{url}/?q={QUERY}")
        while True:
            n = papers_shown(page) if page.locator("h5").count() else 0
            now = time.perf_counter() - t0
            if n and "first answer" not in marks:
                marks["first answer"], marks["first answer papers"] = now, n
            m = served_manifest(index)
            if n >= venue and "words answer" not in marks:
                marks["words answer"], marks["words pending"] = now, m.get("pending")
                # the page's own words for the list on `?q=`: ranked by words, or by meaning already (the
                # list is drawn after the sidebar: its words are waited for a few seconds)
                deadline = time.perf_counter() + 10
                while "Ranked by words for now" not in page.content() and time.perf_counter() < deadline:
                    time.sleep(0.2)
                marks["words said"] = "Ranked by words for now" in page.content()
                page.screenshot(path=str(out / "first_answer_words.png"), full_page=True)
            if n >= venue and m.get("count") == venue and "abstracts" not in (m.get("pending") or []) \
                    and "meaning answer" not in marks:
                marks["meaning answer"], marks["meaning pending"] = now, m.get("pending")
                page.screenshot(path=str(out / "first_answer_venue.png"), full_page=True)
            if m:
                seen[m.get("built_at", "") + str(m.get("count")) + str(m.get("pending"))] = m
            if m.get("count") == venue and m.get("pending") == [] and "complete" not in marks:
                marks["complete"] = now
            if "meaning answer" in marks and ("complete" in marks or until == "meaning"):
                break
            if now > 3 * 3600:
                raise RuntimeError("the index was not complete after three hours")
            time.sleep(1)
        if "complete" in marks:
            deadline = time.perf_counter() + 15  # the page reruns on the complete index by itself
            while "Still coming" in page.content() and time.perf_counter() < deadline:
                time.sleep(0.5)
            page.screenshot(path=str(out / "first_run.png"), full_page=True)
        browser.close()
    marks["builds"] = list(seen.values())
    return marks


def index_build_words(data: Path, out: Path, venue: int) -> float:
    """Seconds from starting `index_build.py seeds DATA` (a cold cache of its own) to its words stage
    published with every paper; the build is then stopped."""
    import subprocess
    import sys

    index = out / "index_build" / "index"
    t0 = time.perf_counter()
    job = subprocess.Popen([sys.executable, "index_build.py", "seeds", str(data), "--out", str(index)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while served_manifest(index).get("count") != venue:
            if job.poll() is not None:
                raise RuntimeError(f"index_build.py ended ({job.returncode}) before publishing {venue:,} papers")
            time.sleep(0.2)
        return time.perf_counter() - t0
    finally:
        job.kill()
        job.wait()


def texts_per_second(encode, texts: list[str]) -> float:
    encode(texts[:32])  # warm-up: the first call of a shape pays one-off work
    t = time.perf_counter()
    encode(texts)
    return len(texts) / (time.perf_counter() - t)


def timed(work) -> float:
    t = time.perf_counter()
    work()
    return time.perf_counter() - t


def floors(papers: list, index: Path) -> tuple[dict[str, float], dict]:
    """Each stage's least time on this machine (seconds), and what it was counted from."""
    from search.parts import evidence, explore, lexical, reviews, summaries
    from search.encoding import packed
    from search.encoding import query_encoder as qe
    from search.encoding.embed import load_model, model_fingerprint
    from search.index import load_index
    from search.encoding.multilingual import MultilingualEncoder

    abstracts = list(dict.fromkeys(p.text for p in papers))  # the cache embeds each distinct text once
    sentences = list(dict.fromkeys(evidence.flat_texts(evidence.paper_sentences(papers))))
    said = list(dict.fromkeys(summaries.flat(summaries.paper_summaries(papers))))  # the reviewers' summaries
    model = load_model()
    fingerprint, cut = model_fingerprint(model), int(model.max_seq_length)
    with tempfile.TemporaryDirectory() as work:
        encoder = qe.document_encoder(qe.exported(model, fingerprint, Path(work), quantize=False),
                                      cut, fingerprint, "openvino")
        packed_encoder = packed.PackedEncoder(packed.exported_packed(model, fingerprint, Path(work)), cut,
                                              fingerprint, "openvino")
    tokens = {"abstracts": sum(min(encoder.count_tokens(t), cut) for t in abstracts),
              "sentences": sum(min(encoder.count_tokens(t), cut) for t in sentences),
              "summaries": sum(min(encoder.count_tokens(t), cut) for t in said)}
    rng = random.Random(0)
    samples = {"abstracts": longest_first(rng.sample(abstracts, min(SAMPLE_ABSTRACTS, len(abstracts)))),
               "sentences": longest_first(rng.sample(sentences, min(SAMPLE_SENTENCES, len(sentences))))}
    summary_sample = longest_first(rng.sample(said, min(SAMPLE_ABSTRACTS, len(said))))
    mean_tokens = {k: statistics.mean(min(encoder.count_tokens(t), cut) for t in v) for k, v in samples.items()}
    rate = {"abstracts": texts_per_second(lambda b: encoder.encode(b, 32), samples["abstracts"])
            * mean_tokens["abstracts"],
            "sentences": texts_per_second(packed_encoder.encode, samples["sentences"]) * mean_tokens["sentences"]}
    if summary_sample:  # embedded as the abstracts are, one to a row
        rate["summaries"] = (texts_per_second(lambda b: encoder.encode(b, 32), summary_sample)
                             * statistics.mean(min(encoder.count_tokens(t), cut) for t in summary_sample))
    ml = MultilingualEncoder(threads=1, processes=2)
    try:
        ml_rate = {k: texts_per_second(ml.encode, v) for k, v in samples.items()}
    finally:
        ml.close()
    vectors = load_index(index).vectors
    vectors = vectors.reconstruct_n(0, vectors.ntotal)
    with tempfile.TemporaryDirectory() as work:
        bm25 = timed(lambda: lexical.build([p.text for p in papers], Path(work) / "bm25"))
    least = {"abstracts": tokens["abstracts"] / rate["abstracts"], "BM25 over the abstracts": bm25,
             "topics and map": timed(lambda: explore.compute(papers, vectors, "floor")),
             "BM25 over the reviews": timed(lambda: reviews.build_search(papers)),
             "sentences": tokens["sentences"] / rate["sentences"],
             "multilingual abstracts": len(abstracts) / ml_rate["abstracts"],
             "multilingual sentences": len(sentences) / ml_rate["sentences"],
             "multilingual titles": len(papers) / ml_rate["sentences"]}
    if said:
        least["summaries"] = tokens["summaries"] / rate["summaries"]
    counted = {"abstracts": (len(abstracts), tokens["abstracts"], rate["abstracts"], ml_rate["abstracts"]),
               "sentences": (len(sentences), tokens["sentences"], rate["sentences"], ml_rate["sentences"])}
    if said:
        counted["summaries"] = (len(said), tokens["summaries"], rate["summaries"], 0.0)
    return least, counted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="conference JSONL (default: the shared data file)")
    ap.add_argument("--out", type=Path, default=None, help="scratch folder (default: a new temporary one)")
    ap.add_argument("--record", default="first_run.md", help="file name in benchmarks/results/")
    ap.add_argument("--until", choices=("meaning", "complete"), default="complete",
                    help="stop once the abstracts are embedded (meaning) or every stage is published (complete)")
    args = ap.parse_args()
    from search.corpus import load_corpus

    data = (args.data or SHARED).resolve()
    papers, _ = load_corpus([ROOT / "seeds", data])
    out = args.out or Path(tempfile.mkdtemp(prefix="first-run-"))
    marks = run(data, out, len(papers), args.until)
    alone = index_build_words(data, out, len(papers))
    least, counted = floors(papers, out / "index")
    first_floor = least["abstracts"] + least["BM25 over the abstracts"]
    all_floor = sum(least.values())

    command = "python benchmarks/bench_first_run.py" + (f" --data {args.data}" if args.data else "") + \
        (f" --record {args.record}" if args.record != "first_run.md" else "") + \
        (f" --until {args.until}" if args.until != "complete" else "")
    complete = (f"| the complete index (every stage published) | **{marks['complete']:.1f}** | "
                f"{all_floor:.1f} (every stage) | {marks['complete'] / all_floor:.2f}× (≤ {BOUND}) |"
                if "complete" in marks else
                f"| the complete index (every stage published) | not measured (`--until {args.until}`) | "
                f"{all_floor:.1f} (every stage) | |")
    venue_build = marks["builds"][-1]
    lines = [f"# First run: no index, a conference file of {len(papers):,} papers given (seeds included)", "",
             f"`{command}` · {machine()} · {time.strftime('%Y-%m-%d')}", "",
             "| from `streamlit run` to | seconds | floor | ratio (target) |", "|---|---|---|---|",
             f"| the server answering health checks | {marks['server up']:.1f} | | |",
             f"| the first answer drawn ({marks['first answer papers']:,} papers"
             f"{', the seeds' if marks['first answer papers'] < len(papers) else ', the whole conference by words'}) | "
             f"**{marks['first answer']:.1f}** | | |",
             f"| the first answer on the whole conference by words (the page "
             f"{'says' if marks['words said'] else 'does not say'} “Ranked by words for now”; still coming: "
             f"{', '.join(marks['words pending'] or []) or 'nothing'}) | **{marks['words answer']:.1f}** | | "
             f"(≤ {WORDS_WITHIN} s) |",
             f"| the whole conference's index by meaning published (the page takes it at its next rerun, "
             f"within 1.5 s; still coming: "
             f"{', '.join(marks['meaning pending'] or []) or 'nothing'}) | **{marks['meaning answer']:.1f}** | "
             f"{first_floor:.1f} (abstracts + BM25) | {marks['meaning answer'] / first_floor:.2f}× (≤ {BOUND}) |",
             complete,
             f"| `index_build.py seeds {data.name}` alone, from its start to the words stage published (a cold "
             f"cache) | **{alone:.1f}** | | (≤ {WORDS_WITHIN} s) |", "",
             "## Floors, measured after the run on the idle machine", "",
             "| stage | least seconds | counted from |", "|---|---|---|"]
    for stage, seconds in least.items():
        kind = next((k for k in counted if stage in (k, f"multilingual {k}")), None)
        n, tokens, tps, ml = counted[kind] if kind else (0, 0, 0, 0)
        how = ("timed alone" if kind is None else
               f"{n:,} distinct texts at {ml:.1f} texts/s (2 processes)" if stage.startswith("multilingual") else
               f"{tokens:,} tokens at {tps:,.0f} tokens/s (OpenVINO bf16{', packed' if kind == 'sentences' else ''})")
        if stage == "multilingual titles":
            how = f"{len(papers):,} titles at the sentences' {counted['sentences'][3]:.1f} texts/s"
        lines.append(f"| {stage} | {seconds:.1f} | {how} |")
    lines += [f"| **all** | **{all_floor:.1f}** | |", "",
              "## Each build the page ran, and when each stage was published (seconds from the build's start)", "",
              "| build | papers | published | build seconds | stages (s) |", "|---|---|---|---|---|"]
    for i, m in enumerate(marks["builds"]):
        following = marks["builds"][i + 1] if i + 1 < len(marks["builds"]) else None
        if following and following["inputs"] == m["inputs"]:
            continue  # an earlier stage of the build on the next row
        stages = ", ".join(f"{k} {v:.1f}" for k, v in m["stage_seconds"].items())
        published = ", ".join(f"{k} {v:.1f}" for k, v in (m.get("published") or {}).items())
        lines.append(f"| {' + '.join(Path(i).name for i in m['inputs'])} | {m['count']:,} | {published} | "
                     f"{m['build_seconds']:.1f} | {stages} |")
    lines += ["", "A build's row is its last published stage. Each build is the page's background job (`python -m search.background`), multilingual space, "
              "review search and the reviewers' summaries (where the file has reviews) included, from a cold embedding cache; the conference's build reuses the seeds' "
              "vectors and model export. The time to the first answer on the whole conference includes the "
              "server's start, the seeds' build, reading the file, loading the model and writing the index; "
              f"the venue build alone published its words stage {venue_build['published'].get('words', 0):.1f} s and "
              f"its abstracts {venue_build['published'].get('abstracts', 0):.1f} s after it started.",
              f"Screenshots: `{out / 'first_answer_words.png'}`, `{out / 'first_answer_venue.png'}`"
              + (f", `{out / 'first_run.png'}`" if "complete" in marks else "") + " (scratch folder)."]
    write_report(lines, ROOT / "benchmarks" / "results" / args.record)


if __name__ == "__main__":
    main()
