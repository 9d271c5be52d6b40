"""A new user's first run: `streamlit run` with no index and a conference file, to the first answer
(the seeds, built in the background) and to the whole conference swapped in.

    python benchmarks/bench_first_run.py [--data FILE] [--out DIR]

What `make app DATA=FILE` does on a fresh clone: a new folder for the index and a cold embedding cache,
the server started with SEARCH_DATA=FILE, and a Chromium page on `?q=` reloaded until it shows a
result, then until its sidebar counts the whole conference. The build's own stage seconds come from
the manifest of each published index.
"""
from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from benchmarks.report import SHARED, machine, write_report

QUERY = "how do I make a language model read longer documents?"


def papers_shown(page) -> int:
    """The paper count of the sidebar's caption, 0 while the page shows no index."""
    text = " ".join(page.locator("[data-testid='stSidebar']").all_inner_texts())
    m = re.search(r"([\d,]+) papers · model", text)
    return int(m.group(1).replace(",", "")) if m else 0


def run(data: Path, out: Path) -> dict:
    from benchmarks.browser import launch, streamlit_server
    from playwright.sync_api import sync_playwright

    index = out / "index"
    t0 = time.perf_counter()
    marks: dict[str, float] = {}
    with streamlit_server(ROOT, index, env={"SEARCH_DATA": str(data)}) as url, sync_playwright() as pw:
        marks["server up"] = time.perf_counter() - t0
        browser = launch(pw)
        page = browser.new_page()
        page.goto(f"{url}/?q={QUERY}")
        while True:  # the page reruns itself when the build publishes; we only look
            n = papers_shown(page) if page.locator("h5").count() else 0
            if n and "first answer" not in marks:
                marks["first answer"], marks["first answer papers"] = time.perf_counter() - t0, n
            if n > marks.get("first answer papers", 10**9):
                marks["whole conference"], marks["whole conference papers"] = time.perf_counter() - t0, n
                break
            if time.perf_counter() - t0 > 3600:
                raise RuntimeError("no whole conference after an hour")
            time.sleep(1)
        page.screenshot(path=str(out / "first_run.png"), full_page=True)
        browser.close()
    builds = sorted((out / ".index.versions").glob("build-*"))
    marks["builds"] = [json.loads((b / "manifest.json").read_text()) for b in builds]
    return marks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="conference JSONL (default: the shared data file)")
    ap.add_argument("--out", type=Path, default=None, help="scratch folder (default: a new temporary one)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="first-run-"))
    marks = run((args.data or SHARED).resolve(), out)
    command = "python benchmarks/bench_first_run.py" + (f" --data {args.data}" if args.data else "")
    lines = ["# First run: no index, a conference file given", "",
             f"`{command}` · {machine()} · "
             f"{time.strftime('%Y-%m-%d')}", "",
             "| from `streamlit run` to | seconds | papers |", "|---|---|---|",
             f"| the server answering health checks | {marks['server up']:.1f} | |",
             f"| the first answer drawn (seeds) | **{marks['first answer']:.1f}** | {marks['first answer papers']:,} |",
             f"| the whole conference drawn | **{marks['whole conference']:.1f}** | "
             f"{marks['whole conference papers']:,} |", "",
             "| build | papers | build seconds | stages (s) |", "|---|---|---|---|"]
    for m in marks["builds"]:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in m["stage_seconds"].items())
        lines.append(f"| {' + '.join(Path(i).name for i in m['inputs'])} | {m['count']:,} | "
                     f"{m['build_seconds']:.1f} | {stages} |")
    lines += ["", "Each build is the page's background job (`python -m search.background`), multilingual "
              "space included, from a cold embedding cache; the second reuses the seeds' vectors."]
    write_report(lines, ROOT / "benchmarks" / "results" / "first_run.md")


if __name__ == "__main__":
    main()
