"""Many users at once: concurrent browser sessions against one app on 127.0.0.1.

    python benchmarks/bench_load.py [--sessions 20] [--seconds 120] [--index index]

Each session (its own Playwright browser context) runs a stream of different searches, typed into the
box, and opens a paper's similar-papers view now and then. Reported: queries answered, errors (an
exception on the page, a timeout, a missing result), p50/p95 time to results as the user sees them
(Enter or click until the new results are drawn), and the server's resident memory at start and end.
The load stops by itself after --seconds and sends traffic only to 127.0.0.1.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from report import SHARED, write_report  # first: it puts tests/ on the path, where browser.py lives
from browser import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402  (tests/browser.py)


def cpu_words() -> str:
    from search.encoding.embed import cpu_description

    cpu = cpu_description()
    return f"{cpu.get('name', '?')} ({', '.join(cpu.get('flags') or []) or 'no AVX2'})"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def queries() -> list[str]:
    """Distinct, realistic queries: the keyword lists of ICLR papers."""
    rows = [json.loads(line) for line in SHARED.open(encoding="utf-8")]
    return [", ".join(r["keywords"][:3]) for r in rows if r.get("keywords")]


async def session(browser, url: str, stream: list[str], until: float, stats: dict) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    page.on("dialog", lambda d: stats["errors"].append(f"dialog {d.message}"))
    try:
        await page.goto(url, timeout=120_000)
        box = page.get_by_role("textbox", name="Search papers by meaning")
        await box.wait_for(timeout=120_000)
        i = 0
        while time.time() < until:
            q = stream[i % len(stream)]
            i += 1
            try:
                if i % 4 == 0 and await page.get_by_role("button", name="Similar papers →").count():
                    t = time.perf_counter()
                    await page.get_by_role("button", name="Similar papers →").first.click()
                    await page.get_by_text("Most similar papers").wait_for(timeout=60_000)
                    kind = "paper"
                else:
                    if await box.count() == 0:
                        await page.goto(url, timeout=60_000)
                        await box.wait_for(timeout=60_000)
                    await box.fill(q)
                    t = time.perf_counter()
                    # the query form's own button, not the "Search" view button of the same name
                    await page.locator("[data-testid^='stBaseButton-'][data-testid$='FormSubmit']").click()
                    await page.wait_for_function(
                        "q => new URLSearchParams(location.search).get('q') === q && document.querySelector('h5')"
                        " && !document.querySelector('[data-stale=\"true\"]')", arg=q, timeout=60_000)
                    kind = "search"
                await page.locator("h5").first.wait_for(timeout=60_000)
                stats["latency"].append(time.perf_counter() - t)
                stats[kind] += 1
                if await page.locator("[data-testid='stException']").count():
                    stats["errors"].append(f"exception on page after {q!r}")
            except Exception as e:  # a timeout or a lost element is an error the user would see
                stats["errors"].append(f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")
    finally:
        await context.close()


async def run(url: str, n: int, seconds: float) -> dict:
    from playwright.async_api import async_playwright

    stats = {"latency": [], "errors": [], "search": 0, "paper": 0}
    pool = queries()
    random.Random(0).shuffle(pool)
    until = time.time() + seconds
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        await asyncio.gather(*(session(browser, url, pool[i::n], until, stats) for i in range(n)))
        await browser.close()
    return stats


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--index", type=Path, default=ROOT / "index")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "load.md")
    args = ap.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port",
                               str(port), "--server.address", "127.0.0.1"], cwd=ROOT,
                              env={**os.environ, "SEARCH_INDEX": str(args.index)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        # one warm-up visit loads the model and the index, as the first user after a deploy would
        asyncio.run(run(url, 1, 1))
        start_mb = rss_mb(server.pid)
        t = time.time()
        stats = asyncio.run(run(url, args.sessions, args.seconds))
        wall = time.time() - t
        end_mb = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(10)
    lat = sorted(stats["latency"])
    p95 = lat[int(0.95 * (len(lat) - 1))] if lat else float("nan")
    count = json.loads((args.index / "manifest.json").read_text())["count"]
    lines = [f"Command: python benchmarks/bench_load.py --sessions {args.sessions} --seconds {args.seconds:.0f}",
             f"Machine: {os.cpu_count()} cores, {cpu_words()}; index of {count:,} papers; server and Chromium on the "
             f"same machine; load average (1 min) at the end {os.getloadavg()[0]:.1f} · "
             f"{time.strftime('%Y-%m-%d', time.gmtime())}", "",
             "| measure | value |", "|---|---|",
             f"| concurrent sessions | {args.sessions} |",
             f"| duration | {wall:.0f} s |",
             f"| answered | {stats['search'] + stats['paper']} ({stats['search']} searches, {stats['paper']} paper views) |",
             f"| errors | {len(stats['errors'])} |",
             f"| time to results p50 | {statistics.median(lat) * 1000:.0f} ms |" if lat else "| time to results p50 | – |",
             f"| time to results p95 | {p95 * 1000:.0f} ms |",
             f"| server RSS start → end | {start_mb:.0f} MB → {end_mb:.0f} MB ({end_mb - start_mb:+.0f} MB) |"]
    if stats["errors"]:
        lines += ["", "Errors:"] + [f"- {e}" for e in stats["errors"][:20]]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
