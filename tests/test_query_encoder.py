"""The ONNX query encoder the build ships: same vectors, tokens and rankings as the torch model."""
from __future__ import annotations

import json

import numpy as np
import pytest

from search.encoding.embed import TorchEncoder
from search.engine import EXAMPLE_QUERIES, open_engine
from search.index import load_index
from search.encoding.query_encoder import LazyEncoder, ONNX, OnnxEncoder, exportable, load_encoder

LONG = "transformers for graphs " * 300   # far past the 256-token window


@pytest.fixture(scope="module")
def onnx_engine(seed_index):
    return open_engine(seed_index)       # no model given: the index's own encoder


def test_build_ships_the_encoder_with_checksums(seed_index, model):
    manifest = json.loads((seed_index / "manifest.json").read_text())
    assert exportable(model)
    assert manifest["query_encoder"]["file"] == ONNX
    assert ONNX in manifest["files"] and "tokenizer.json" in manifest["files"]


def test_vectors_match_torch(seed_index, model):
    data = load_index(seed_index)
    enc = load_encoder(data.path, data.manifest)
    # every fourth abstract: the shortest, the longest and a range between (sorted by length)
    abstracts = sorted((p.text for p in data.papers), key=len)[::4] + [max((p.text for p in data.papers), key=len)]
    texts = EXAMPLE_QUERIES + abstracts + [LONG, "a"]
    ours = enc.encode(texts, batch_size=16)
    torch_vecs = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    assert ours.shape == torch_vecs.shape and ours.dtype == np.float32
    assert float(np.min(np.sum(ours * torch_vecs, axis=1))) > 0.9999
    assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)


def test_token_counts_match_torch(seed_index, model):
    enc = load_encoder(seed_index, load_index(seed_index).manifest)
    for text in ["graph neural networks", LONG, "Ünïcödé $\\textbf{C}$ 量子"]:
        assert enc.count_tokens(text) == TorchEncoder(model).count_tokens(text)


def test_engine_without_model_uses_the_export_and_ranks_like_torch(onnx_engine, engine):
    # the export, loaded at the first query (query_encoder.LazyEncoder): a command without one never loads it
    assert isinstance(onnx_engine.model, LazyEncoder) and isinstance(onnx_engine.model.encoder, OnnxEncoder)
    for q in EXAMPLE_QUERIES + ["a", LONG]:
        ours, theirs = onnx_engine.search(q, 10), engine.search(q, 10)
        assert [h.paper.id for h in ours.hits] == [h.paper.id for h in theirs.hits]
        assert ours.truncated == theirs.truncated
    assert onnx_engine.search(LONG).truncated


def test_build_without_encoder_falls_back(tmp_path, model, embedding_cache):
    from search.build import build_index
    from conftest import SEEDS

    out = tmp_path / "index"
    build_index([SEEDS], out, model=model, cache_dir=embedding_cache, query_encoder=False, explore=False)
    data = load_index(out)
    assert data.manifest.query_encoder is None and load_encoder(data.path, data.manifest) is None


def test_export_is_cached_per_model(tmp_path, model, fingerprint):
    from search.encoding.query_encoder import exported

    first = exported(model, fingerprint, tmp_path, quantize=False)
    stamp = first.stat().st_mtime_ns
    assert exported(model, fingerprint, tmp_path, quantize=False) == first and first.stat().st_mtime_ns == stamp
    assert OnnxEncoder(first, load_tokenizer_path(model, tmp_path), 256, fingerprint).dimension == 384


def load_tokenizer_path(model, where):
    path = where / "tokenizer.json"
    model.tokenizer.backend_tokenizer.save(str(path))
    return path


def test_a_dropped_engine_leaves_no_reference_cycles(seed_index):
    """The page freezes the engine out of the garbage collector; that is safe only while dropping an
    engine (a rebuild replaces it) frees it by reference counting alone."""
    import gc

    found = []
    # once in a suite of 450 another test's leftovers dropped 532 cyclic objects within the window; a cycle
    # of the engine's own shows every time
    for _ in range(2):
        engine = open_engine(seed_index)
        engine.search("graph neural networks")
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            del engine
            found.append(gc.collect())
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
        if found[-1] == 0:
            break
    assert found[-1] == 0, found


def test_two_builds_sharing_a_cache_can_export_at_once(tmp_path, model, monkeypatch):
    """Each export writes aside under its own name: the second rename never finds its file taken."""
    import threading

    import torch

    from search.encoding import query_encoder

    both_written = threading.Barrier(2)

    def export_file(module, args, path, **_options):
        with open(path, "wb") as f:
            f.write(b"onnx")
        both_written.wait(timeout=30)  # neither renames until both have written

    monkeypatch.setattr(torch.onnx, "export", export_file)
    out, errors = tmp_path / "cache" / ONNX, []

    def run():
        try:
            query_encoder.export(model, out)
        except Exception as e:  # noqa: BLE001 - the assertion below names it
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and out.read_bytes() == b"onnx"
    assert sorted(p.name for p in out.parent.iterdir()) == [ONNX]  # nothing left aside
