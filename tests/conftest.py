"""Shared fixtures: the real model and a seed index, made once per test session."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
SHARED_DATA = ROOT.parent / "shared" / "data" / "iclr2026_papers.jsonl"
sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def model():
    from search.embed import load_model

    return load_model()


@pytest.fixture(scope="session")
def fingerprint(model):
    from search.embed import model_fingerprint

    return model_fingerprint(model)


@pytest.fixture(scope="session")
def seed_index(tmp_path_factory, model) -> Path:
    """An index of the 66 seed papers, built once with the real model."""
    from search.build import build_index

    out = tmp_path_factory.mktemp("seedindex") / "index"
    build_index([SEEDS], out, model=model)
    return out


@pytest.fixture(scope="session")
def engine(seed_index, model, fingerprint):
    from search.engine import Engine
    from search.index import load_index

    return Engine(load_index(seed_index), model, fingerprint)


@pytest.fixture
def index_copy(seed_index, tmp_path) -> Path:
    """A private copy of the seed index that a test may damage."""
    out = tmp_path / "index"
    shutil.copytree(seed_index.resolve(), out)
    return out


def run_py(*args: str, env: dict | None = None, timeout: float = 300, stdin: str | None = None):
    """Run a project script as a user would; returns the CompletedProcess."""
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, input=stdin, env={**os.environ, **(env or {})})
