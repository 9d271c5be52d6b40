"""Shared by the benchmark scripts: the conference file, the machine's description, percentiles, and
printing a report and recording it under benchmarks/results/."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

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


def machine() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {mem:.0f} GiB RAM, {platform.processor() or platform.machine()}, Python {platform.python_version()}"
