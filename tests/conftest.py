"""Shared fixtures: the real model and a seed index, made once per test session.

Under pytest-xdist (`make test` runs two workers) the embedding cache and the session's indexes are made
once for all workers: the first worker to need one builds it under a file lock, the others wait and
read it."""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
# the conference file for realistic tests: the shared data beside this checkout, or PAPERS_JSONL
SHARED_DATA = Path(os.environ.get("PAPERS_JSONL") or ROOT.parent / "shared" / "data" / "iclr2026_papers.jsonl")


@pytest.fixture(scope="session")
def model():
    from search.encoding.embed import load_model

    return load_model()


class FakeModel:
    """A deterministic stand-in for the sentence-transformers model, for tests of the build's mechanics
    (caching, reuse, publishing): a text's vector comes from its hash. Never behind a claim about ranking."""

    max_seq_length = 256

    def __iter__(self):
        return iter(())  # no modules: not exportable, so the build embeds with this object itself

    def state_dict(self) -> dict:
        return {}

    def get_embedding_dimension(self) -> int:
        return 384

    @staticmethod
    def tokenizer(text: str, **_options) -> dict:
        return {"input_ids": text.split()}

    def encode(self, texts: list[str], batch_size: int = 32, **_options):
        import hashlib

        import numpy as np

        seeds = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little") for t in texts]
        vecs = np.array([np.random.default_rng(s).standard_normal(384) for s in seeds], dtype=np.float32)
        return vecs.reshape(len(texts), 384) / np.linalg.norm(vecs, axis=1, keepdims=True).reshape(-1, 1)


@pytest.fixture(scope="session")
def fingerprint(model):
    from search.encoding.embed import model_fingerprint

    return model_fingerprint(model)


def shared_dir(tmp_path_factory, name: str, make) -> Path:
    """A folder made once per test run by `make(path)`, shared by every xdist worker (built under a lock)."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    path, made = base / f"shared-{name}", base / f"shared-{name}.made"
    with FileLock(f"{path}.lock"):
        if not made.is_file():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir()
            make(path)
            made.touch()
    return path


@pytest.fixture(scope="session")
def embedding_cache(tmp_path_factory) -> Path:
    """One embedding cache for the whole session: a build that is not about the cache embeds each text
    and exports the model once. Tests of the cache itself start from `cache_copy(..., vectors=False)`.
    Workers share it: shards are written aside under unique names, so concurrent builds only add."""
    return shared_dir(tmp_path_factory, "embedding-cache", lambda _: None)


def cache_copy(cache: Path, dest: Path, vectors: bool = True) -> Path:
    """A private copy of the session's cache (hard links: the cache never rewrites a file).

    vectors=False keeps only the model's ONNX export, so a build embeds everything again without
    exporting again."""
    dest.mkdir(parents=True, exist_ok=True)
    for sub in cache.iterdir() if cache.is_dir() else []:
        if sub.is_file():  # models.json: what the build knows of the model without loading it
            if not sub.name.startswith(".") and not sub.name.endswith(".tmp"):
                os.link(sub, dest / sub.name)
        elif vectors or (sub / "query_encoder.onnx").is_file():
            # not the files another worker is still writing aside (".shard-…", "….tmp")
            skip = (".*", "*.tmp") if vectors else (".*", "*.tmp", "shard-*")
            shutil.copytree(sub, dest / sub.name, copy_function=os.link, ignore=shutil.ignore_patterns(*skip))
    return dest


@pytest.fixture(scope="session")
def seed_index(tmp_path_factory, model, embedding_cache) -> Path:
    """An index of the 66 seed papers, built once with the real model."""
    from search.build import build_index

    def make(d: Path) -> None:
        build_index([SEEDS], d / "index", model=model, cache_dir=embedding_cache)

    return shared_dir(tmp_path_factory, "seedindex", make) / "index"


@pytest.fixture(scope="session")
def multilingual_seed_index(tmp_path_factory, model, embedding_cache) -> Path:
    """The seeds with the multilingual space, as `python index_build.py` builds them by default."""
    from search.build import build_index

    def make(d: Path) -> None:
        build_index([SEEDS], d / "index", model=model, cache_dir=embedding_cache, multilingual=True)

    return shared_dir(tmp_path_factory, "mlindex", make) / "index"


@pytest.fixture(scope="session")
def engine(seed_index, model, fingerprint):
    from search.engine import Engine
    from search.index import load_index

    return Engine(load_index(seed_index), model, fingerprint)


@pytest.fixture(scope="session")
def iclr_subset(tmp_path_factory) -> Path:
    """A realistic slice of ../shared: the records of the 53 seed papers plus 150 others."""
    import json

    from search.corpus import load_corpus
    from search.text import match_key

    if not SHARED_DATA.is_file():
        pytest.skip("needs ../shared/data/iclr2026_papers.jsonl")
    seed_keys = {match_key(p.abstract) for p in load_corpus([SEEDS])[0]}
    rows = [json.loads(line) for line in SHARED_DATA.open(encoding="utf-8")]
    picked = [r for r in rows if match_key(r["abstract"]) in seed_keys]
    picked += [r for r in rows if match_key(r["abstract"]) not in seed_keys][:150]
    path = tmp_path_factory.mktemp("subset") / "iclr_subset.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def iclr_index(tmp_path_factory, model, iclr_subset, embedding_cache) -> Path:
    """Seeds merged with their full records and 150 more ICLR papers, built with the real model."""
    from search.build import build_index

    def make(d: Path) -> None:
        build_index([SEEDS, iclr_subset], d / "index", model=model, cache_dir=embedding_cache)

    return shared_dir(tmp_path_factory, "iclrindex", make) / "index"


@pytest.fixture(scope="session")
def iclr_engine(iclr_index, model, fingerprint):
    from search.engine import Engine
    from search.index import load_index

    return Engine(load_index(iclr_index), model, fingerprint)


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


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run_in_process(entry, argv: list[str], env: dict | None = None, stdin: str = "") -> Ran:
    """A script's entry point called in this process as a shell would call the script: its exit code and
    what it wrote. For tests where only the output matters: no interpreter start, no second model load."""
    out, err = io.StringIO(), io.StringIO()
    saved_env = {k: os.environ.get(k) for k in env or {}}
    saved_stdin, sys.stdin = sys.stdin, io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    os.environ.update(env or {})
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = entry(argv)
            except SystemExit as e:  # argparse's own refusals
                code = e.code if isinstance(e.code, int) else 1
    finally:
        sys.stdin = saved_stdin
        for k, v in saved_env.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return Ran(code, out.getvalue(), err.getvalue())


def run_cli(*args: str, **kw) -> Ran:
    """`python -m search ARGS`, in process (search/__main__.py does no more)."""
    from search.cli import main, run_guarded

    return run_in_process(lambda argv: run_guarded(lambda: main(argv)), list(args), **kw)


def run_build(*args: str, **kw) -> Ran:
    """`python index_build.py ARGS`, in process."""
    import index_build

    return run_in_process(index_build.run, list(args), **kw)


# ---------------------------------------------------------------- a whole venue: decisions and reviews

CRAWL = ROOT.parent / "shared" / "data" / "iclr2026_openreview.jsonl.gz"
VENUE_NOTES = 240   # the crawl's first notes by id: every kind of decision, about 900 reviews


@pytest.fixture(scope="session")
def venue_records(tmp_path_factory) -> Path:
    """The first VENUE_NOTES submissions of the shared crawl, fetched from a local OpenReview API v2 through
    the official client as `python -m search fetch` fetches them: decisions, reviews, TL;DRs."""
    import gzip
    import json
    from itertools import islice

    if not CRAWL.is_file():
        pytest.skip("needs ../shared/data/iclr2026_openreview.jsonl.gz (the ICLR 2026 crawl)")
    from openreview_server import OpenReviewServer
    from search.openreview.fetch import DEFAULT_VENUE, fetch_venue
    from search.openreview.api import Api

    def make(d: Path) -> None:
        with gzip.open(CRAWL, "rb") as f:
            raw = list(islice(f, VENUE_NOTES))
        group = json.loads((CRAWL.parent / "iclr2026_openreview_group.json").read_text())
        with OpenReviewServer(raw, group) as server:
            fetch_venue(Api(server.url), DEFAULT_VENUE, d / "venue.jsonl")

    return shared_dir(tmp_path_factory, "venue-records", make) / "venue.jsonl"


@pytest.fixture(scope="session")
def venue_index(tmp_path_factory, model, venue_records, embedding_cache) -> Path:
    """The fetched submissions built with the real model, their reviews included."""
    from search.build import build_index

    def make(d: Path) -> None:
        build_index([venue_records], d / "index", model=model, cache_dir=embedding_cache)

    return shared_dir(tmp_path_factory, "venueindex", make) / "index"


@pytest.fixture(scope="session")
def venue_engine(venue_index, model, fingerprint):
    from search.engine import Engine
    from search.index import load_index

    return Engine(load_index(venue_index), model, fingerprint)


@pytest.fixture(scope="session")
def venue_words(tmp_path_factory, model, embedding_cache, venue_records) -> Path:
    """The seeds and the fetched submissions (with their history) stopped at the words stage, no abstract
    embedded: what a new user has seconds after a fetch (ranked by words, every decision and review there, the
    seed papers that are not in the venue beside it). Cheap: no vectors."""
    from search.build import build_index

    class Stopped(Exception):
        pass

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "abstracts":
            raise Stopped

    def make(d: Path) -> None:
        cache = cache_copy(embedding_cache, d / "cache", vectors=False)
        try:
            build_index([SEEDS, venue_records], d / "index", model=model, cache_dir=cache, words_first=1, explore=False,
                        sentences=False, summaries=False, review_search=False, progress=stop)
        except Stopped:
            pass

    return shared_dir(tmp_path_factory, "venue-words", make) / "index"


@pytest.fixture(scope="session")
def shared_words(tmp_path_factory, model, embedding_cache) -> Path:
    """The 4,302 ICLR papers of ../shared at the build's words stage: every paper ranked by BM25 alone, as a new
    user's venue is while its abstracts are embedded. Real data, no vector."""
    from search.build import build_index

    if not SHARED_DATA.is_file():
        pytest.skip("needs ../shared/data/iclr2026_papers.jsonl")

    class Stopped(Exception):
        pass

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "abstracts":
            raise Stopped

    def make(d: Path) -> None:
        try:
            build_index([SHARED_DATA], d / "index", model=model, words_first=1, explore=False, sentences=False,
                        summaries=False, review_search=False, progress=stop,
                        cache_dir=cache_copy(embedding_cache, d / "cache", vectors=False))
        except Stopped:
            pass

    return shared_dir(tmp_path_factory, "shared-words", make) / "index"
