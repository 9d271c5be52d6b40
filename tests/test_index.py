"""Building, publishing, checking and refusing index directories."""
import json

import pytest

from conftest import SEEDS
from search.build import build_index
from search.engine import Engine
from search.index import IndexLoadError, load_index, versions_dir


def test_layout_is_inspectable_and_manifest_complete(seed_index):
    files = {p.name for p in seed_index.resolve().iterdir()}
    assert {"manifest.json", "papers.jsonl", "vectors.faiss"} <= files
    assert not any(f.endswith(".pkl") or f.endswith(".pickle") for f in files)
    m = json.loads((seed_index / "manifest.json").read_text())
    assert m["count"] == 66 and m["dimension"] == 384 and m["index_type"] == "IndexFlatIP"
    assert len(m["model"]["fingerprint"]) == 64 and len(m["corpus_fingerprint"]) == 64
    on_disk = {str(f.relative_to(seed_index.resolve())) for f in seed_index.resolve().rglob("*") if f.is_file()}
    assert set(m["files"]) == on_disk - {"manifest.json"}  # every file is covered by a checksum
    assert {"papers.jsonl", "vectors.faiss", "sentences.jsonl", "sentences.npy", "sentence_offsets.npy",
            "bm25/vocab.index.json", "bm25/params.index.json"} <= set(m["files"])
    assert "sentence-transformers" in m["library_versions"]


def test_corrupt_files_are_refused(index_copy):
    path = index_copy.resolve()
    data = bytearray((path / "vectors.faiss").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (path / "vectors.faiss").write_bytes(bytes(data))
    with pytest.raises(IndexLoadError, match="checksum.*python index_build.py"):
        load_index(index_copy)


def test_truncated_records_and_broken_manifest_are_refused(index_copy):
    path = index_copy.resolve()
    rec = path / "papers.jsonl"
    rec.write_bytes(rec.read_bytes()[:1000])
    with pytest.raises(IndexLoadError, match="papers.jsonl"):
        load_index(index_copy)
    (path / "manifest.json").write_text("{not json")
    with pytest.raises(IndexLoadError, match="manifest.json is unreadable"):
        load_index(index_copy)


def test_other_model_is_refused(index_copy, model, fingerprint):
    path = index_copy.resolve()
    m = json.loads((path / "manifest.json").read_text())
    m["model"]["fingerprint"] = "0" * 64
    (path / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(IndexLoadError, match="another model"):
        Engine(load_index(index_copy), model, fingerprint)


def test_missing_index_says_what_to_run(tmp_path):
    with pytest.raises(IndexLoadError, match="python index_build.py"):
        load_index(tmp_path / "nothing")


def test_cache_makes_unchanged_rebuild_embed_nothing_and_new_file_only_its_papers(tmp_path, model):
    out, cache = tmp_path / "index", tmp_path / "cache"
    first = build_index([SEEDS], out, model=model, cache_dir=cache)
    assert first.embedded == 66
    again = build_index([SEEDS], out, model=model, cache_dir=cache)
    assert again.embedded == 0 and again.count == 66
    assert not first.explore_reused and again.explore_reused  # topics and map not recomputed
    assert (load_index(out).path / "topics.json").read_bytes() == (first.path / "topics.json").read_bytes()
    extra = tmp_path / "extra.jsonl"
    extra.write_text('{"abstract": "A new paper about retrieval-augmented generation for code."}\n'
                     '{"abstract": "Another new paper about diffusion models for proteins."}\n')
    grown = build_index([SEEDS, extra], out, model=model, cache_dir=cache)
    assert grown.embedded == 2 and grown.count == 68 and not grown.explore_reused
    assert load_index(out).manifest["count"] == 68
    # old builds are pruned but the newest few are kept for readers mid-load
    assert len(list(versions_dir(out).glob("build-*"))) <= 3


def test_rebuild_from_cache_gives_identical_vectors(tmp_path, model, seed_index):
    out = tmp_path / "index"
    build_index([SEEDS], out, model=model, cache_dir=tmp_path / "c")
    build_index([SEEDS], out, model=model, cache_dir=tmp_path / "c")
    a, b = load_index(out), load_index(seed_index)
    assert a.manifest["corpus_fingerprint"] == b.manifest["corpus_fingerprint"]
    import numpy as np
    assert np.allclose(a.vectors.reconstruct_n(0, 66), b.vectors.reconstruct_n(0, 66), atol=1e-5)


def test_truncated_faiss_file_is_refused(index_copy):
    f = index_copy.resolve() / "vectors.faiss"
    f.write_bytes(f.read_bytes()[:-100])
    with pytest.raises(IndexLoadError, match="vectors.faiss.*python index_build.py"):
        load_index(index_copy)


def test_index_of_another_dimension_is_refused(index_copy, model, fingerprint):
    """A whole, self-consistent index of 768-d vectors (another model) cannot serve 384-d queries."""
    import numpy as np

    from search.index import write_manifest, write_vectors

    path = index_copy.resolve()
    write_vectors(path / "vectors.faiss", np.random.default_rng(0).normal(size=(66, 768)).astype("float32"))
    m = json.loads((path / "manifest.json").read_text())
    m["dimension"] = 768
    del m["files"]
    write_manifest(path, m)
    data = load_index(index_copy)  # checksums and counts agree ...
    with pytest.raises(IndexLoadError, match="768-d vectors but the query model makes 384-d"):
        Engine(data, model, fingerprint)  # ... but the query model does not
