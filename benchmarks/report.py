"""Shared by the benchmark scripts: print a report and record it under benchmarks/results/."""
from __future__ import annotations

import os
from pathlib import Path

# The conference file the figures were measured on: a checkout of the shared data beside this one.
# Elsewhere, point PAPERS_JSONL at what `python -m search fetch` wrote (more papers, other figures).
SHARED = Path(os.environ.get("PAPERS_JSONL")
              or Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "iclr2026_papers.jsonl")


def write_report(lines: list[str], out: Path) -> None:
    report = "\n".join(lines)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report + "\n")
    print(report)
