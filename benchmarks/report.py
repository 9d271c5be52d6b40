"""Shared by the benchmark scripts: print a report and record it under benchmarks/results/."""
from __future__ import annotations

from pathlib import Path


def write_report(lines: list[str], out: Path) -> None:
    report = "\n".join(lines)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report + "\n")
    print(report)
