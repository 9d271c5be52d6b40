"""The page in headless Chromium: cold start, and a warm query from its submission to results drawn.

    python benchmarks/bench_page.py --index DIR [--queries 20] [--cold 3] [--before OLD_CHECKOUT ...]

Cold start: `streamlit run` launched to the first results of `?q=` drawn in a new browser page
(median of --cold fresh servers). Warm query: on a loaded page, type a new query (distinct ones, so
none is in the query cache) and click Search; the time until the URL holds it, ten result cards are
drawn, none is stale and the first is the query's own first hit. Also the same for a repeated query (LRU hit) and for "+ Reading list".
The server-side share: the script's own time for the same query, from Streamlit's AppTest. The
floor: the same measurement on a bare Streamlit page (a form and ten headings), what Streamlit,
the websocket and Chromium cost on this machine before any of our work.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from report import (cold_start, first_titles, keyword_queries as queries, machine, pct, submit, today, warm,
                               warm_page, write_report)


FLOOR_APP = """import streamlit as st
def submit():
    st.query_params["q"] = st.session_state["box"]
with st.form("f", border=False):
    st.text_area("Search papers by meaning", key="box")
    st.form_submit_button("Search", on_click=submit)
q = st.query_params.get("q", "")
for i in range(10 if q else 0):
    st.markdown(f"##### {q} {i}")
"""


def floor(qs: list[str]) -> tuple[list[float], float]:
    """The same measurement on a page that does nothing but echo the query as ten headings, and the
    resident memory of its server after it."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="floor-app-"))
    (root / "streamlit_app.py").write_text(FLOOR_APP)
    from browser import server_rss_mib  # tests/browser.py, on the path since report

    with warm_page(root, root, qs) as page:
        return [submit(page, q, f"{q} 0") for q in qs], server_rss_mib(page.url)


def gc_pause(index: Path) -> tuple[float, float]:
    """Streamlit's full collection after each run, with the engine loaded: as it was, and once frozen."""
    import gc

    from search.engine import open_engine

    engine = open_engine(index)
    engine.search("warm up")

    def full() -> float:
        times = []
        for _ in range(5):
            t = time.perf_counter()
            gc.collect(2)
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    before = full()
    gc.freeze()
    after = full()
    gc.unfreeze()
    return before, after


def script_time(index: Path, qs: list[str]) -> list[float]:
    import os

    from streamlit.testing.v1 import AppTest

    os.environ["SEARCH_INDEX"] = str(index)
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["q"] = "warm up"
    at.run()
    times = []
    for q in qs:
        at.query_params["q"] = q
        t = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--cold", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "page.md")
    ap.add_argument("--before", type=Path, nargs="*", default=[],
                    help="checkouts of older versions: their cold start and warm query are measured too, for comparison")
    args = ap.parse_args()
    args.index = args.index.resolve()  # the servers run in their own checkouts: a relative path would miss

    qs = queries(200)[-args.queries:]   # not the ones other benchmarks warm with
    colds = [cold_start(args.index, f"cold start {i}") for i in range(args.cold)]
    before = {old: [cold_start(args.index, f"cold before {i}", old) for i in range(args.cold)] for old in args.before}
    firsts = first_titles(args.index, qs)
    w = warm(args.index, qs, firsts=firsts)
    w_before = {old: warm(args.index, qs, old, firsts) for old in args.before}
    gc_before, gc_after = gc_pause(args.index)  # first: the page's AppTest run below freezes this process
    server = script_time(args.index, [q + " script" for q in qs])
    bare, bare_rss = floor(qs)

    def ms(values):
        return f"{statistics.median(values) * 1e3:.0f} ms (p90 {pct(values, 90) * 1e3:.0f})"

    lines = [f"Machine: {machine()} · {today()}",
             f"Command: python benchmarks/bench_page.py {' '.join(sys.argv[1:])}", "",
             "| measure | value |", "|---|---|",
             f"| cold start: `streamlit run` to first results drawn (median of {len(colds)}) | "
             f"{statistics.median(colds):.2f} s (each: {', '.join(f'{c:.2f}' for c in colds)}) |",
             *[f"| cold start of the version at `{old}` (median of {len(c)}) | "
               f"{statistics.median(c):.2f} s (each: {', '.join(f'{x:.2f}' for x in c)}) |" for old, c in before.items()],
             f"| warm query, Search clicked to 10 results drawn, {len(w['fresh'])} distinct queries | {ms(w['fresh'])} |",
             *[f"| the same for the version at `{old}` | {ms(wb['fresh'])} |" for old, wb in w_before.items()],
             f"| the same queries again (query vector cached) | {ms(w['repeated'])} |",
             f"| '+ Reading list' on a hit, click to page redrawn | {ms(w['listed'])} |",
             f"| of a query, the script's own run (AppTest, {len(server)} queries) | {ms(server)} |",
             f"| Streamlit's full garbage collection after each run, engine loaded: not frozen / frozen "
             f"(median of 5) | {gc_before * 1e3:.0f} ms / {gc_after * 1e3:.2f} ms |",
             f"| floor: the same click on a bare Streamlit page that only echoes the query as 10 headings | "
             f"{ms(bare)} |",
             f"| warm query against the floor (p50) | {statistics.median(w['fresh']) / statistics.median(bare):.2f}× |",
             f"| the server's resident memory after the warm queries / the bare page's | "
             f"{w['rss_mib']:.0f} MiB / {bare_rss:.0f} MiB |"]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
