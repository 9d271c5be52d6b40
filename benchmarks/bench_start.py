"""Commands that start fast: each `python -m search` command, a fresh process on a built index, from its start
to its exit; and the page's statistics view, warm.

    python benchmarks/bench_start.py --index DIR [--runs 5] [--before OLD_CHECKOUT] [--no-browser] [--record start.md]

Each command runs --runs times as a new process (the interpreter started, the library imported, the index
opened, the answer printed; the index's files in the OS page cache, as on a second command), as this
checkout's code and, with --before, as another checkout's (the code before a change), alternating, so both see
the same load. Wall seconds (the target: `query` within 1.5 s on an idle machine) and CPU seconds (user + system
of the process, what the machine's load does not stretch). Then the import of the library alone, and each
command's own share by stage (cProfile of one run: where a cold `query` spends its CPU).

The statistics view: the page's script for `?view=stats` through Streamlit's AppTest (server side, the first
run and warm reruns), and in Chromium on a running server, warm (its engine loaded and the view drawn once):
from loading `?view=stats` to the charts drawn (target: 2 s).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from report import ROOT, machine, today, write_report

QUERY = "how do I make a language model read longer documents"
QUERY_WITHIN, STATS_WITHIN = 1.5, 2.0


def first_id(index: Path) -> str:
    with open(index / "papers.jsonl", encoding="utf-8") as f:
        return json.loads(f.readline())["id"]


def commands(index: Path) -> dict[str, list[str]]:
    pid = first_id(index)
    return {"query": ["query", QUERY], "similar": ["similar", pid], "stats": ["stats"], "reviews": ["reviews", pid],
            "topics": ["topics"]}


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one `python ARGV` run from `cwd` (whose `search` it imports)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    ran = subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if ran.returncode:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd}:\n{ran.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_line() -> str:
    from search.encoding.embed import cpu_description

    cpu = cpu_description()
    return f"{cpu.get('name', '?')} ({', '.join(cpu.get('flags') or []) or 'no AVX'})"


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def stages(index: Path) -> list[tuple[str, float]]:
    """A cold `query`'s CPU by stage (cProfile's cumulative seconds of the functions that make them)."""
    import pstats
    import tempfile

    out = Path(tempfile.mkdtemp()) / "query.prof"
    subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "search", "query", QUERY, "--index",
                    str(index)], cwd=ROOT, capture_output=True, check=True)
    by_name = {f"{Path(f).name}:{fn}": v[3] for (f, _, fn), v in pstats.Stats(str(out)).stats.items()}
    want = [("the whole command", "__main__.py:<module>"), ("importing the library", "cli.py:<module>"),
            ("opening the index (load_index)", "index.py:load_index"),
            ("the query (Engine.search)", "engine.py:search"), ("its language (detect_language)",
                                                                 "multilingual.py:detect_language"),
            ("BM25 read (Lexical)", "lexical.py:__init__"), ("the query encoder loaded (load_encoder)",
                                                             "query_encoder.py:load_encoder")]
    return [(label, by_name.get(key, 0.0)) for label, key in want]


def stats_view(index: Path, browser: bool, reruns: int = 5) -> dict:
    """The statistics view's script time (AppTest: first run, then warm reruns) and, with a browser, its warm
    time in Chromium from loading `?view=stats` to its charts drawn."""
    from streamlit.testing.v1 import AppTest

    os.environ["SEARCH_INDEX"] = str(index)
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=600)
    at.query_params["view"] = "stats"
    runs = []
    for _ in range(reruns + 1):
        t = time.perf_counter()
        at.run()
        runs.append(time.perf_counter() - t)
        if at.exception:
            raise SystemExit(f"the statistics view failed: {at.exception[0].message}")
    out = {"script first": runs[0], "script warm": statistics.median(runs[1:])}
    if browser:
        from browser import launch, streamlit_server  # tests/browser.py, on the path since report
        from playwright.sync_api import sync_playwright

        drawn = ("() => [...document.querySelectorAll('h4')].some(h => h.innerText.includes('By primary area')) && "
                 "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2 && "
                 "!document.querySelector('[data-stale=\"true\"]')")
        with streamlit_server(ROOT, index) as url, sync_playwright() as pw:
            page = launch(pw).new_page()
            page.goto(f"{url}/?view=stats")  # the engine loaded, the view computed once
            page.wait_for_function(drawn, timeout=600_000)
            warm = []
            for _ in range(reruns):
                page.goto(f"{url}/?q=warm")
                page.wait_for_selector("h5", timeout=600_000)
                t = time.perf_counter()
                page.goto(f"{url}/?view=stats")
                page.wait_for_function(drawn, timeout=600_000)
                warm.append(time.perf_counter() - t)
        out["browser warm"] = statistics.median(warm)
        out["browser runs"] = warm
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--before", type=Path, default=None, help="another checkout, run the same way (the code before)")
    ap.add_argument("--no-browser", action="store_true", help="the statistics view's script time only")
    ap.add_argument("--record", default="start.md", help="file name in benchmarks/results/")
    args = ap.parse_args()
    index = args.index.resolve()
    manifest = json.loads((index / "manifest.json").read_text())
    loads = [load()]
    trees = {"this checkout": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    cmds = commands(index)
    results: dict[str, dict[str, list[tuple[float, float]]]] = {t: {c: [] for c in cmds} for t in trees}
    imports: dict[str, list[tuple[float, float]]] = {t: [] for t in trees}
    for _ in range(args.runs):
        for tree, cwd in trees.items():
            imports[tree].append(timed(["-c", "import search.cli"], cwd))
            for name, argv in cmds.items():
                results[tree][name].append(timed(["-m", "search", *argv, "--index", str(index)], cwd))
        loads.append(load())
    parts = stages(index)
    view = stats_view(index, not args.no_browser)
    loads.append(load())

    def cell(runs: list[tuple[float, float]]) -> str:
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        return f"{wall:.2f} s ({cpu:.2f} s CPU)"

    pending = manifest.get("pending") or []
    lines = [f"# Commands that start fast: a fresh `python -m search` process on {manifest['count']:,} papers", "",
             f"`python benchmarks/bench_start.py --index DIR" + (f" --runs {args.runs}" if args.runs != 5 else "")
             + (" --before OLD_CHECKOUT" if args.before else "") + (" --no-browser" if args.no_browser else "")
             + f"` · {machine()} · {cpu_line()} · load average (1/5/15 min) {loads[0]} at the start, "
             f"{loads[-1]} at the end · {today()}", "",
             f"The index: {manifest['count']:,} papers"
             + (f", {manifest.get('unembedded', 0):,} of them not embedded yet" if manifest.get("unembedded") else "")
             + (f"; still to come: {', '.join(pending)}" if pending else "")
             + f"; its parts: {', '.join(sorted(k for k in ('explore', 'reviews', 'multilingual', 'query_encoder') if manifest.get(k)))}"
             + (f", {manifest['sentences']:,} sentences" if manifest.get("sentences") else "")
             + (f", {manifest['summaries']:,} summaries" if manifest.get("summaries") else "") + ".", "",
             "Median of each command's runs: wall seconds, and its CPU seconds (user + system) in brackets. "
             "Wall seconds stretch with the machine's load (two cores shared with other work); CPU seconds much less. "
             "Python's bytecode is cached, as an installed package has it (with PYTHONDONTWRITEBYTECODE set, every "
             "import compiles its source again: seconds more).",
             "", "| command | " + " | ".join(trees) + " |", "|---|" + "---|" * len(trees)]
    lines.append("| `import search.cli` | " + " | ".join(cell(imports[t]) for t in trees) + " |")
    for name, argv in cmds.items():
        shown = " ".join(a if " " not in a else f"'{a}'" for a in argv)
        lines.append(f"| `{shown}` | " + " | ".join(cell(results[t][name]) for t in trees) + " |")
    query_wall = statistics.median(w for w, _ in results["this checkout"]["query"])
    idle = max(float(x.split("/")[0]) for x in (loads[0], loads[-1])) < 2.5
    lines += ["", f"Target: `query` within {QUERY_WITHIN} s on an idle machine: {query_wall:.2f} s here, "
              + ("met" if query_wall <= QUERY_WITHIN else "not met")
              + (" (the machine idle: a load average under 2.5 on its 2 cores, from this run's own processes)." if idle
                 else " (the machine was not idle: its load stretched the wall seconds).")
              + " Its CPU seconds exceed its wall seconds: the query encoder loads, and the index's checksums are "
              "hashed, in threads beside the papers' reading.",
              "", "A cold `query`'s CPU by stage (cProfile, one run of this checkout; profiling adds its own cost; it "
              "sees the main thread only, so the query encoder's load, in its own thread, shows as 0):", "",
              "| stage | seconds |", "|---|---|"]
    lines += [f"| {label} | {seconds:.2f} |" for label, seconds in parts]
    lines += ["", "The statistics view (`?view=stats`):", "", "| | seconds |", "|---|---|",
              f"| the page's script, first run (the engine loaded, the view computed) | {view['script first']:.2f} |",
              f"| the page's script, warm rerun (median) | {view['script warm']:.2f} |"]
    if "browser warm" in view:
        lines.append(f"| Chromium, warm: `?view=stats` loaded to its charts drawn (median; target ≤ {STATS_WITHIN} s) "
                     f"| **{view['browser warm']:.2f}** ({', '.join(f'{s:.2f}' for s in view['browser runs'])}) |")
    write_report(lines, ROOT / "benchmarks" / "results" / args.record)


if __name__ == "__main__":
    main()
