"""The index directory: FAISS vectors beside JSONL records and a checked manifest, published atomically.

`index/` is a symbolic link to one finished build in `.index.versions/`. A build writes a new
directory there and then swaps the link with one rename, so a reader sees the old build or the
new one, never a mix; a killed build leaves only a temporary directory that the next build removes.
"""
from __future__ import annotations

import fcntl
import gc
import hashlib
import json
import math
import re
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .corpus import WRITTEN, Paper
from .record_cache import file_digest  # noqa: F401  (the index's checksums and the inputs' digests)
from .manifest import FORMAT, MANIFEST, Manifest, ManifestError

PAPERS = "papers.jsonl"
VECTORS = "vectors.faiss"
UNEMBEDDED = "unembedded.json"   # rows whose abstract is not embedded yet (a zero vector in VECTORS)
REBUILD = "run `python index_build.py` to rebuild it"

AUTO = "auto"
EXACT = "Flat"
# Measured on 2 cores (docs/performance.md, "Speed and scale"): exact search of one query costs about 0.1 ms per
# 1,000 vectors, so past some 50,000 it outgrows the query's encode; the IVF index with fp16 codes
# then answers in 1-2 ms with recall@10 against exact of 0.97 (100,000) to 0.99 (1,000,000).
EXACT_UP_TO = 50_000
APPROXIMATE = "IVF{nlist},SQfp16"
APPROXIMATE_PARAMS = "nprobe=32"
TRAIN_SAMPLE = 200_000


class IndexLoadError(Exception):
    """The index is missing, corrupt or does not match; the message says what to run."""


class IndexSpecError(ValueError):
    """A FAISS factory string or search parameters FAISS cannot use."""


class BuildBusy(Exception):
    """Another build of the same index holds its lock."""


class Superseded(Exception):
    """This build was stopped for a newer one of the same index (a re-fetch's: background.job_lock), or by a
    signal from elsewhere (`replaced` False); what it embedded is in the embedding cache, and the index it
    published stays served."""

    def __init__(self, message: str, replaced: bool = True):
        super().__init__(message)
        self.replaced = replaced


@dataclass
class IndexData:
    path: Path                # the resolved build directory
    manifest: Manifest
    papers: list[Paper]
    vectors: object           # faiss.Index
    unembedded: np.ndarray | None = None  # rows without a vector yet (UNEMBEDDED); None when every row has one
    checked: set = field(default_factory=set, repr=False)  # files (and folders) whose checksums were verified

    def verified(self, *names: str) -> None:
        """Verify these files' checksums (a name ending in "/": every file under that folder) before a part
        reads them, once each: load_index checks every file's size but hashes only the papers and vectors,
        so a command pays for the parts it reads (the reviews alone are 250 MB at 19,630 papers)."""
        todo = [n for n in names if n not in self.checked]
        if todo:
            verify_files(self.path, {f: meta for f, meta in self.manifest.files.items()
                                     if any(f == n or n.endswith("/") and f.startswith(n) for n in todo)})
            self.checked.update(todo)


def versions_dir(out: Path) -> Path:
    return out.parent / f".{out.name}.versions"


def corpus_fingerprint(papers: list[Paper]) -> str:
    """Changes when any paper's id or model text changes, not when files are reordered."""
    h = hashlib.sha256()
    for key in sorted(f"{p.id}\t{hashlib.sha256(p.text.encode()).hexdigest()}" for p in papers):
        h.update(key.encode() + b"\n")
    return h.hexdigest()


def library_versions() -> dict:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("faiss-cpu", "sentence-transformers", "torch", "numpy", "bm25s"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


# ---------------------------------------------------------------- writing

def write_papers(path: Path, papers: list[Paper]) -> None:
    """papers.jsonl, a paper a line (Paper.to_dict's keys). msgspec encodes the papers as they are, where
    `to_dict` and json.dumps took 16.7 s at 70,130 papers (py-spy, most of it dataclasses.asdict's deep copy)."""
    try:
        import msgspec
    except ImportError:
        msgspec = None
    if msgspec is None:
        with open(path, "w", encoding="utf-8") as f:
            for p in papers:
                f.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
        return
    rows = [{k: getattr(p, k) for k in WRITTEN} for p in papers]
    with open(path, "wb") as f:
        f.write(msgspec.json.Encoder().encode_lines(rows))


def write_unembedded(path: Path, rows: np.ndarray) -> None:
    path.write_text(json.dumps([int(r) for r in rows]) + "\n", encoding="utf-8")


def choose_index(n: int, spec: str = AUTO) -> tuple[str, str]:
    """The FAISS factory string and search parameters for n vectors ("auto": exact while that is fast)."""
    if spec != AUTO:
        factory, _, params = spec.partition(":")
        return factory, params
    if n <= EXACT_UP_TO:
        return EXACT, ""
    # about 4·sqrt(n) lists, a power of two: 1,024 at 100,000, 4,096 at 1,000,000
    nlist = 2 ** round(math.log2(4 * math.sqrt(n)))
    return APPROXIMATE.format(nlist=nlist), APPROXIMATE_PARAMS


# A trained index of the previous build is taken again (its vectors dropped, these added) where its factory is
# this one and it was trained on at least this share of the vectors this one would be: training IVF1024 took
# 11.5 s of a 70,130 papers' publish (py-spy), and a venue added to them moves the centroids little.
RETRAIN_BELOW = 0.9


def write_vectors(path: Path, vectors: np.ndarray, spec: str = EXACT, seed: int = 0,
                  trained: tuple[Path, dict] | None = None) -> dict:
    """Write vectors as a FAISS index of the given factory string ("Flat", "IVF4096,SQfp16:nprobe=32",
    "HNSW32,SQ8:efSearch=128", or "auto"); returns the manifest entry.

    trained: a previous build's vectors file and its manifest entry, whose training is taken again where it
    fits (RETRAIN_BELOW)."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    factory, params = choose_index(len(vectors), spec)
    index = new_index(factory, vectors.shape[1])
    trained_on = 0
    again = _trained_again(trained, factory, vectors.shape[1], min(len(vectors), TRAIN_SAMPLE)) \
        if not index.is_trained else None
    if again is not None:
        index, trained_on = again
    elif not index.is_trained:
        rng = np.random.default_rng(seed)
        sample = vectors[np.sort(rng.choice(len(vectors), min(len(vectors), TRAIN_SAMPLE), replace=False))]
        index.train(sample)
        trained_on = len(sample)
    index.add(vectors)
    if params:
        apply_params(index, params)  # fails here, at build time, on a parameter the index lacks
    faiss.write_index(index, str(path))
    return {"factory": factory, "search_params": params, "exact": factory == EXACT, "trained_on": trained_on,
            "class": type(index).__name__}


def _trained_again(trained: tuple[Path, dict] | None, factory: str, dim: int, sample: int):
    """The previous build's trained index, emptied, and what it was trained on; None where it does not fit."""
    if trained is None:
        return None
    import faiss

    path, entry = trained
    if entry.get("factory") != factory or entry.get("trained_on", 0) < RETRAIN_BELOW * sample:
        return None
    try:
        index = faiss.read_index(str(path))
    except RuntimeError:  # gone or unreadable: trained here instead
        return None
    if index.d != dim or not index.is_trained:
        return None
    index.reset()
    return index, entry["trained_on"]


def new_index(factory: str, dim: int):
    import faiss

    try:
        return faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    except RuntimeError as e:
        raise IndexSpecError(f"--index-type: FAISS cannot make {factory!r} for {dim}-d vectors "
                             f"({_faiss_reason(e)})") from None


def check_spec(spec: str, dim: int) -> None:
    """Refuse a factory string or parameters FAISS cannot use, before any embedding is spent."""
    if spec == AUTO:
        return
    factory, params = choose_index(0, spec)
    index = new_index(factory, dim)
    if params:
        apply_params(index, params)


def apply_params(index, params: str) -> None:
    import faiss

    try:
        faiss.ParameterSpace().set_index_parameters(index, params)
    except (RuntimeError, ValueError) as e:
        raise IndexSpecError(f"--index-type: bad FAISS search parameters {params!r} "
                             f"({_faiss_reason(e)})") from None


def _faiss_reason(e: Exception) -> str:
    """FAISS's own words, without the C++ signature and source line it puts before them."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    last = lines[-1] if lines else e.__class__.__name__
    return re.split(r" at \S+:\d+: ", last)[-1]


def write_manifest(build_dir: Path, manifest: Manifest, known: dict | None = None) -> None:
    """Write the manifest last, with the size and checksum of every other file of the build.

    known: name -> entry of files hard-linked from a build whose manifest checked them (not hashed again)."""
    manifest.files = {}
    known = known or {}
    for f in sorted(build_dir.rglob("*")):
        if f.is_file() and f.name != MANIFEST:
            name = str(f.relative_to(build_dir))
            same = name in known and known[name]["bytes"] == f.stat().st_size
            manifest.files[name] = known[name] if same else {"bytes": f.stat().st_size, "sha256": file_digest(f)}
    (build_dir / MANIFEST).write_text(manifest.to_json())


@contextmanager
def build_lock(out: Path):
    """Hold the index's build lock, or raise BuildBusy at once."""
    out.parent.mkdir(parents=True, exist_ok=True)
    lock_path = out.parent / f".{out.name}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise BuildBusy(f"another build of {out} is running (pid {other}); "
                            "wait for it to finish, then run again") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock, also when the process is killed


def building(out: Path) -> bool:
    """Whether some process (the page's job or `index_build.py`) holds the index's build lock now. The lock
    is tried shared and let go at once: a build starting in that instant would be told to wait."""
    lock_path = out.parent / f".{out.name}.lock"
    if not lock_path.exists():
        return False
    fd = os.open(lock_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def new_build_dir(out: Path) -> Path:
    """A fresh temporary directory beside the published builds (call with the lock held)."""
    vdir = versions_dir(out)
    vdir.mkdir(parents=True, exist_ok=True)
    for stale in vdir.glob("tmp-*"):  # left by a killed build; we hold the lock, so none is live
        shutil.rmtree(stale, ignore_errors=True)
    # sortable by time to the microsecond (a staged build publishes several in one second, and `publish`
    # keeps the newest by name); the random part keeps two builds at once apart
    now = time.time()
    path = vdir / f"tmp-{time.strftime('%Y%m%dT%H%M%S', time.localtime(now))}.{int(now % 1 * 1e6):06d}-{os.urandom(3).hex()}"
    path.mkdir()
    return path


def publish(build_dir: Path, out: Path, keep: int = 3, spare: Path | None = None) -> Path:
    """Move a finished build into place with one atomic rename of the `out` link.

    spare: an older build a build in progress still reads parts from, kept whatever its age."""
    with _uninterrupted():
        return _publish(build_dir, out, keep, spare)


@contextmanager
def _uninterrupted():
    """SIGTERM (a newer build stopping this one: background.job_lock) held back until the link is swapped, so a
    stopped build leaves neither a renamed folder the link misses nor a stray link."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _publish(build_dir: Path, out: Path, keep: int, spare: Path | None) -> Path:
    vdir = versions_dir(out)
    final = vdir / build_dir.name.replace("tmp-", "build-", 1)
    os.rename(build_dir, final)
    _fsync_dir(vdir)
    if out.exists() and not out.is_symlink():
        # an index directory from before links were used: keep it as an old version
        os.rename(out, vdir / f"build-00000000-legacy-{int(time.time())}")
    link_tmp = out.parent / f".{out.name}.link-{os.getpid()}"
    if link_tmp.is_symlink():
        link_tmp.unlink()
    os.symlink(os.path.relpath(final, out.parent), link_tmp)
    os.replace(link_tmp, out)
    _fsync_dir(out.parent)
    # a reader that resolved an older build a moment ago may still be reading it: keep a few
    builds = sorted(p for p in vdir.glob("build-*") if p != final and p != spare)
    for old in builds[:-max(keep - 1, 0)] if keep > 1 else builds:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------- reading

def resolve(out: Path) -> Path:
    """The build directory `out` points to now."""
    return Path(os.path.realpath(out))


def read_manifest(path: Path) -> Manifest:
    try:
        raw = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexLoadError(f"no index at {path}: {REBUILD}") from None
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise IndexLoadError(f"{path / MANIFEST} is unreadable ({e.__class__.__name__}); {REBUILD}") from None
    try:
        return Manifest.from_dict(raw)
    except ManifestError as e:
        raise IndexLoadError(f"{path / MANIFEST} is not a format-{FORMAT} manifest ({e}); {REBUILD}") from None


def verify_files(path: Path, files: dict, hashed: bool = True) -> None:
    """Every file listed (name -> bytes and sha256) is there, whole and unchanged (hashed=False: there, of its
    size: a stat each)."""
    for name, meta in files.items():
        f = path / name
        if not f.is_file():
            raise IndexLoadError(f"{f} is missing; {REBUILD}")
        if f.stat().st_size != meta["bytes"] or hashed and file_digest(f) != meta["sha256"]:
            raise IndexLoadError(f"{f} does not match its checksum in the manifest (corrupt or "
                                 f"changed); {REBUILD}")


def read_exact_vectors(path: Path) -> np.ndarray:
    """The rows of an exact index folder's vectors.faiss (float32, as they were written)."""
    import faiss

    index = faiss.read_index(str(path / VECTORS))
    return index.reconstruct_n(0, index.ntotal)


def json_parser():
    """orjson's loads where it is installed, else json's: the same objects, and a command's start reads 19,630
    papers' lines in 0.6 s of CPU instead of 1.6 (their abstracts and cleaned texts are three quarters of the
    bytes: benchmarks/results/start.md)."""
    try:
        import orjson
    except ImportError:
        return json.loads
    return orjson.loads


def _in_thread(work: Callable[[], None]) -> Callable[[], None]:
    """Start `work` in a thread; the function returned waits for it and raises what it raised."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as e:  # handed to the caller's thread
            failed.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def wait() -> None:
        thread.join()
        if failed:
            raise failed[0]
    return wait


def read_ids(path: Path) -> set[str]:
    """The ids of a papers.jsonl's papers (0.3 s at 70,130 papers with msgspec: the rest of each line is
    skipped, not decoded)."""
    data = path.read_bytes()
    try:
        import msgspec
    except ImportError:
        return {json.loads(line)["id"] for line in data.splitlines() if line.strip()}

    class Row(msgspec.Struct):
        id: str
    try:
        return {r.id for r in msgspec.json.Decoder(type=Row).decode_lines(data)}
    except msgspec.DecodeError as e:
        raise ValueError(f"{path}: {e}") from None


def read_papers(path: Path) -> list[Paper]:
    """The papers of a papers.jsonl: decoded by msgspec straight into Papers where it is installed (0.36 s
    at 19,632 papers, against 0.56 s for orjson's dicts made into Papers), else line by line."""
    data = path.read_bytes()
    try:
        import msgspec
    except ImportError:
        msgspec = None
    # the collector would walk the growing heap again and again while a million objects are made, and find no
    # garbage: 0.13 s of 0.4 s at 19,632 papers
    collecting = gc.isenabled()
    gc.disable()
    try:
        if msgspec is not None:
            try:
                return msgspec.json.Decoder(type=Paper).decode_lines(data)
            except msgspec.ValidationError:
                pass  # a field of another type than Paper's (an index written by an older version): read as dicts
        loads = json_parser()
        return [Paper.from_dict(loads(line)) for line in data.splitlines() if line]
    finally:
        if collecting:
            gc.enable()


def load_index(out: Path) -> IndexData:
    """Load and check an index directory; IndexLoadError says what is wrong and how to rebuild."""
    import faiss

    path = resolve(out)
    if not path.exists():
        raise IndexLoadError(f"no index at {out}: {REBUILD}")
    manifest = read_manifest(path)
    verify_files(path, manifest.files, hashed=False)  # every part there and whole; each hashed as it is read
    core = {PAPERS, VECTORS, UNEMBEDDED} & set(manifest.files)
    # hashing leaves the interpreter's lock free: on a second core it costs the papers' reading nothing (0.1 s of
    # a cold `query` at 19,632 papers); nothing read is used before the checksums pass
    checked = _in_thread(lambda: verify_files(path, {name: manifest.files[name] for name in core}))
    try:
        papers = read_papers(path / PAPERS)
        vectors = faiss.read_index(str(path / VECTORS))
        unembedded = (np.array(json.loads((path / UNEMBEDDED).read_text(encoding="utf-8")), dtype=np.int64)
                      if manifest.unembedded else None)
    except Exception as e:
        checked()  # a file changed since its build says so
        raise IndexLoadError(f"{path} cannot be read ({e.__class__.__name__}); {REBUILD}") from None
    checked()
    if not (len(papers) == vectors.ntotal == manifest.count):
        raise IndexLoadError(f"{path}: {len(papers)} records, {vectors.ntotal} vectors, manifest says "
                             f"{manifest.count}; {REBUILD}")
    if unembedded is not None and (len(unembedded) != manifest.unembedded or len(unembedded) and (
            unembedded.min() < 0 or unembedded.max() >= len(papers))):
        raise IndexLoadError(f"{path / UNEMBEDDED} does not list the manifest's {manifest.unembedded} rows "
                             f"without a vector; {REBUILD}")
    if manifest.index.search_params:
        try:
            apply_params(vectors, manifest.index.search_params)
        except IndexSpecError as e:
            raise IndexLoadError(f"{path}: {e}; {REBUILD}") from None
    if vectors.d != manifest.dimension:
        raise IndexLoadError(f"{path}: vectors have dimension {vectors.d}, manifest says "
                             f"{manifest.dimension}; {REBUILD}")
    return IndexData(path=path, manifest=manifest, papers=papers, vectors=vectors, unembedded=unembedded,
                     checked=core)
