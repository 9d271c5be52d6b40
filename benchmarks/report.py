"""The one module the benchmark scripts share (no script imports another): the conference file, the
machine's description, percentiles, recording a report under results/, and the harnesses more than one
script runs: the development sets' engines and candidates (ranking), the page timed in Chromium."""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# The Chromium + Streamlit-server harness lives with the tests that share it (tests/browser.py): the scripts
# that drive the page import it as `browser`, after this module (appended: nothing of tests/ shadows theirs).
if str(ROOT / "tests") not in sys.path:
    sys.path.append(str(ROOT / "tests"))

# The conference file the figures were measured on: a checkout of the shared data beside this one.
# Elsewhere, point PAPERS_JSONL at what `python -m search fetch` wrote (more papers, other figures).
SHARED = Path(os.environ.get("PAPERS_JSONL")
              or Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "iclr2026_papers.jsonl")


def keyword_queries(n: int) -> list[str]:
    """The first n distinct queries of the keywords development set (made by make_devsets.py if missing)."""
    root = Path(__file__).resolve().parent.parent
    path = root / ".devsets" / "keywords" / "queries.jsonl"
    if not path.is_file():
        subprocess.run([sys.executable, str(root / "benchmarks" / "make_devsets.py"), "--seed", "0",
                        "--out", str(root / ".devsets")], check=True)
    return list(dict.fromkeys(json.loads(line)["text"] for line in path.open(encoding="utf-8")))[:n]


def write_report(lines: list[str], out: Path) -> None:
    report = "\n".join(lines)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report + "\n")
    print(report)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def today() -> str:
    """The date a record is written, ending its header line (benchmarks/figures.py reads it as " · DATE")."""
    return time.strftime("%Y-%m-%d")


def machine() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {mem:.0f} GiB RAM, {platform.processor() or platform.machine()}, Python {platform.python_version()}"


# ---------------------------------------------------------------- shared harnesses

# The URL holds the query, ten cards are drawn, none is stale, and the first card is this query's first hit
# (the previous query's ten cards must not count as drawn).
DRAWN = ("([q, first]) => new URLSearchParams(location.search).get('q') === q && "
         "document.querySelectorAll('h5').length >= 10 && !document.querySelector('[data-stale=\"true\"]') && "
         "(first === null || document.querySelector('h5').innerText.includes(first))")


def first_titles(index: Path, qs: list[str]) -> dict[str, str]:
    """Each query's first hit as the page shows it (default ranking, ten results), to know its results are drawn."""
    from search.engine import open_engine
    from search.filters import Filters

    engine = open_engine(index)
    shown = engine.catalog.known(Filters())  # the page's default: the accepted papers where there are decisions
    return {q: engine.search(q, 10, filters=shown).hits[0].paper.title[:40] for q in qs}


def submit(page, q: str, first: str | None) -> float:
    box = page.get_by_role("textbox", name="Search papers by meaning")
    box.fill(q)
    t = time.perf_counter()
    # the query form's own button ("Find papers", "Search" in older versions), not the "Search" view button
    page.locator("[data-testid^='stBaseButton-'][data-testid$='FormSubmit']").click()
    page.wait_for_function(DRAWN, arg=[q, first], timeout=60_000)
    return time.perf_counter() - t


def cold_start(index: Path, q: str, root: Path = ROOT) -> float:
    from browser import launch, streamlit_server
    from playwright.sync_api import sync_playwright

    t0 = time.perf_counter()
    with streamlit_server(root, index) as url, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(f"{url}/?q={q}")
        page.wait_for_function(DRAWN, arg=[q, None], timeout=120_000)  # no earlier cards to mistake
        took = time.perf_counter() - t0
        browser.close()
    return took


@contextmanager
def warm_page(root: Path, index: Path, qs: list[str]):
    """A browser page on a running app, past its first results and a few warm-up queries."""
    from browser import launch, streamlit_server
    from playwright.sync_api import sync_playwright

    with streamlit_server(root, index) as url, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(f"{url}/?q=warm+up")
        page.wait_for_function(DRAWN, arg=["warm up", None], timeout=120_000)
        for q in qs[:3]:
            submit(page, q + " warm", None)
        yield page
        browser.close()


def warm(index: Path, qs: list[str], root: Path = ROOT, firsts: dict[str, str] | None = None) -> dict:
    firsts = firsts or first_titles(index, qs)
    with warm_page(root, index, qs) as page:
        fresh = [submit(page, q, firsts[q]) for q in qs]
        repeated = [submit(page, q, firsts[q]) for q in qs[:10]]
        from browser import server_rss_mib

        rss = server_rss_mib(page.url)
        listed = []
        for i in range(5):
            before = page.url
            n = page.get_by_role("button", name="✓ In reading list (remove)").count()
            t = time.perf_counter()
            page.get_by_role("button", name="+ Reading list").first.click()
            # redrawn: the URL holds the list and one more card says it is listed
            page.wait_for_function("([u, n]) => location.href !== u && !document.querySelector('[data-stale=\"true\"]')"
                                   " && [...document.querySelectorAll('button')].filter(b => b.innerText.startsWith("
                                   "'✓ In reading list')).length > n", arg=[before, n], timeout=60_000)
            listed.append(time.perf_counter() - t)
    return {"fresh": fresh, "repeated": repeated, "listed": listed, "rss_mib": rss}


def longest_first(texts: list[str]) -> list[str]:
    return sorted(texts, key=len, reverse=True)


def dev_queries(devsets: Path) -> list[tuple[str, str]]:
    """(query, relevant paper id) of the development sets whose queries people type."""
    out = []
    for name in ("keywords", "unseen", "titles", "questions", "paraphrases"):
        folder = devsets / name
        texts = {r["_id"]: r["text"] for r in map(json.loads, (folder / "queries.jsonl").open(encoding="utf-8"))}
        for line in list((folder / "qrels" / "test.tsv").open(encoding="utf-8"))[1:]:
            qid, doc, _ = line.rstrip("\n").split("\t")
            out.append((texts[qid], doc))
    return out


def scaled(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / max(hi - lo, 1e-9)


ENGLISH = ["names", "keywords", "unseen", "questions", "paraphrases", "titles"]


OTHER = ["zh", "fr"]


MAIN = {"questions": "P@10"}  # every other set: MRR@10


def main_metric(name: str) -> str:
    return MAIN.get(name, "MRR@10")


def mean_metric(ranked: list[list[list[str]]], relevant: list[dict[str, int]], metric: str) -> float:
    """One of search.evaluate's METRICS, averaged over a set's queries (each query's hits, each hit as every
    id its paper answers to, and its graded papers): one call into ranx for the set, where a call a query
    would cost milliseconds each through a grid search."""
    import statistics

    from search.evaluate import scores

    per = scores({str(i): r for i, r in enumerate(ranked)}, {str(i): r for i, r in enumerate(relevant)})
    return statistics.mean(s[metric] for s in per.values())


def sets(root: Path) -> dict[str, Path]:
    return {n: root / n for n in ENGLISH + OTHER if (root / n).is_dir()}


def engine_maker(model, cache: Path, records: Path | None = None):
    """engine_for(dataset, weights): an engine over the dataset's corpus, each corpus indexed once.

    Every set but titles shares title + abstract of the same papers (with the multilingual space);
    titles has an index of abstracts alone. With `records` (a fetched venue) each paper carries its
    reviews, as in an index of a fetch: the reviewers' summaries then re-score the hybrid ranking."""
    from search.encoding.embed import DEFAULT_MODEL
    from search.engine import Engine
    from search.evaluate import prepare
    from search.index import load_index

    indexes: dict[tuple, object] = {}

    def engine_for(dataset: Path, weights) -> object:
        corpus = "titles" if dataset.name == "titles" else "papers"
        key = (dataset.parent, corpus)
        if key not in indexes:
            source = dataset if corpus == "titles" else dataset.parent / "keywords"
            indexes[key] = load_index(prepare(source, DEFAULT_MODEL, model, cache, sentences=True,
                                              multilingual=corpus == "papers", records=records))
        return Engine(indexes[key], model, weights=weights)

    return engine_for


def collect(engine, queries: dict[str, str], qrels: dict) -> list[tuple]:
    """(candidates, kind, relevant ids) per judged query, under the shipped weights' dense pool."""
    from search.engine import POOL, top_rows
    from search.encoding.multilingual import detect_language
    from search.fusion import query_kind

    out = []
    ids = [[p.id, *p.aliases] for p in engine.papers]
    for qid, text in queries.items():
        if qid not in qrels:
            continue
        ml = None
        if detect_language(text) != "en" and engine.multilingual:
            vec = engine.queries.across_languages(text)
            ml = engine.rankers.multilingual_candidates(vec)
            dense_rows = top_rows(ml.dense(engine.weights), POOL)
        else:
            vec, _ = engine.encode_query(text)
            dense_rows = engine.rankers.dense(vec, POOL, None)
        lex = engine.rankers.lexical.scores(text)
        cands = engine.rankers.candidates(vec, dense_rows, engine.rankers.lexical_rows(lex, POOL, None), lex, ml)
        out.append((cands, query_kind(text), qrels[qid], ids))
    return out


def arguments(record: str, folder: Path = ROOT / "benchmarks" / "results") -> argparse.ArgumentParser:
    """The options every ranking benchmark takes: the two splits, the embedding cache, the record."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--devsets", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--testsets", type=Path, default=ROOT / ".testsets")
    ap.add_argument("--cache", type=Path, default=ROOT / ".embedding_cache")
    ap.add_argument("--out", type=Path, default=folder / record)
    return ap
