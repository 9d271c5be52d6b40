"""Building, publishing, checking and refusing index directories."""
import json

import numpy as np
import pytest

from conftest import SEEDS, FakeModel, cache_copy
from search.build import build_index
from search.engine import Engine
from search.index import IndexLoadError, load_index, versions_dir
from search.filters import Filters


def test_layout_is_inspectable_and_manifest_complete(seed_index):
    files = {p.name for p in seed_index.resolve().iterdir()}
    assert {"manifest.json", "papers.jsonl", "vectors.faiss"} <= files
    assert not any(f.endswith(".pkl") or f.endswith(".pickle") for f in files)
    m = json.loads((seed_index / "manifest.json").read_text())
    assert m["count"] == 66 and m["dimension"] == 384 and m["index_type"] == "IndexFlat"
    assert m["index"]["factory"] == "Flat" and m["index"]["exact"] and m["query_encoder"]["file"]
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


def test_cache_makes_unchanged_rebuild_embed_nothing_and_new_file_only_its_papers(tmp_path):
    model = FakeModel()  # what is embedded when, not what the vectors mean
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
    assert load_index(out).manifest.count == 68
    # old builds are pruned but the newest few are kept for readers mid-load
    assert len(list(versions_dir(out).glob("build-*"))) <= 3


def test_rebuild_from_cache_gives_identical_vectors(tmp_path, model, seed_index, embedding_cache):
    out = tmp_path / "index"
    # the seed index embedded these papers into the session's cache; both builds here read them back
    assert build_index([SEEDS], out, model=model, cache_dir=embedding_cache).embedded == 0
    build_index([SEEDS], out, model=model, cache_dir=embedding_cache)
    a, b = load_index(out), load_index(seed_index)
    assert a.manifest.corpus_fingerprint == b.manifest.corpus_fingerprint
    assert np.allclose(a.vectors.reconstruct_n(0, 66), b.vectors.reconstruct_n(0, 66), atol=1e-5)


def test_truncated_faiss_file_is_refused(index_copy):
    f = index_copy.resolve() / "vectors.faiss"
    f.write_bytes(f.read_bytes()[:-100])
    with pytest.raises(IndexLoadError, match="vectors.faiss.*python index_build.py"):
        load_index(index_copy)


def test_index_of_another_dimension_is_refused(index_copy, model, fingerprint):
    """A whole, self-consistent index of 768-d vectors (another model) cannot serve 384-d queries."""

    from search.index import read_manifest, write_manifest, write_vectors

    path = index_copy.resolve()
    write_vectors(path / "vectors.faiss", np.random.default_rng(0).normal(size=(66, 768)).astype("float32"))
    m = read_manifest(path)
    m.dimension = 768
    write_manifest(path, m)
    data = load_index(index_copy)  # checksums and counts agree ...
    with pytest.raises(IndexLoadError, match="768-d vectors but the query model makes 384-d"):
        Engine(data, model, fingerprint)  # ... but the query model does not


def test_auto_index_is_exact_while_small_then_ivf():
    from search.index import choose_index

    assert choose_index(66) == ("Flat", "") and choose_index(50_000) == ("Flat", "")
    assert choose_index(100_000) == ("IVF1024,SQfp16", "nprobe=32")
    assert choose_index(1_000_000) == ("IVF4096,SQfp16", "nprobe=32")
    assert choose_index(10, "HNSW32,SQ8:efSearch=128") == ("HNSW32,SQ8", "efSearch=128")


@pytest.mark.parametrize("spec", ["IVF4,SQfp16:nprobe=4", "HNSW16,Flat:efSearch=256"])
def test_approximate_index_answers_like_exact(tmp_path, model, fingerprint, spec, embedding_cache):
    from search.engine import EXAMPLE_QUERIES

    out = tmp_path / "index"
    build_index([SEEDS], out, model=model, cache_dir=embedding_cache, explore=False, index_spec=spec)
    approx = Engine(load_index(out), model, fingerprint)
    m = approx.manifest
    assert m.index.factory == spec.split(":")[0] and m.index.search_params == spec.split(":")[1]
    # beside an approximate index the engine's copy is float32 up to FLOAT32_UP_TO papers, float16 above
    from search.rankers import FLOAT32_UP_TO
    assert not approx.rankers.exact and approx.vectors.dtype.name == (
        "float32" if approx.manifest.count <= FLOAT32_UP_TO else "float16")
    # every list probed / a wide beam: the same top 10 as exact search of the same papers
    flat = tmp_path / "flat"
    build_index([SEEDS], flat, model=model, cache_dir=embedding_cache, explore=False)
    reference = Engine(load_index(flat), model, fingerprint)
    assert reference.rankers.exact
    for q in EXAMPLE_QUERIES:
        for mode in ("semantic", "hybrid"):
            assert [h.paper.id for h in approx.search(q, 10, mode).hits] == \
                   [h.paper.id for h in reference.search(q, 10, mode).hits]


@pytest.mark.parametrize("float32_up_to", [200_000, 0])
def test_approximate_index_filters_exactly(tmp_path, model, fingerprint, iclr_subset, embedding_cache, monkeypatch,
                                           float32_up_to):
    """Filtered rows are scored exactly: every row in one float32 product, or (float16 copy) the allowed ones."""
    from search import rankers

    monkeypatch.setattr(rankers, "FLOAT32_UP_TO", float32_up_to)
    out = tmp_path / "index"
    build_index([SEEDS, iclr_subset], out, model=model, cache_dir=embedding_cache, explore=False,
                index_spec="IVF16,SQ8:nprobe=1")
    engine = Engine(load_index(out), model, fingerprint)
    area = engine.catalog.areas[0]
    allowed = [p.id for p in engine.papers if p.primary_area == area]
    hits = engine.search("learning", 50, "semantic", Filters(areas=(area,))).hits
    assert len(hits) == min(50, len(allowed)) and all(h.paper.primary_area == area for h in hits)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_bad_index_type_is_refused_before_embedding(tmp_path, model, capsys):
    import index_build

    assert index_build.run(["--index-type", "IVF4,PQ7", str(SEEDS), "--out", str(tmp_path / "index")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "--index-type" in err and "multiple of the number of subquantizers" in err
    assert not (tmp_path / ".embedding_cache").exists() or not any((tmp_path / ".embedding_cache").rglob("*.npy"))
    assert not (tmp_path / "index").exists()


@pytest.mark.slow
def test_process_pool_embeds_the_same_vectors(tmp_path, model, embedding_cache):
    one_list = sorted(SEEDS.glob("*.txt"))[0]
    # the pool itself must embed: a cache with the export but no vectors (torch's key differs anyway)
    cache = cache_copy(embedding_cache, tmp_path / "c", vectors=False)
    build_index([one_list], tmp_path / "pooled", model=model, cache_dir=cache, processes=2, explore=False)
    build_index([one_list], tmp_path / "single", model=model, cache_dir=cache, explore=False)
    pooled, single = load_index(tmp_path / "pooled"), load_index(tmp_path / "single")
    assert [p.id for p in pooled.papers] == [p.id for p in single.papers]
    assert pooled.manifest.embedding["backend"] == "torch"  # the pool is sentence-transformers'
    torch_vecs = model.encode([p.text for p in pooled.papers], normalize_embeddings=True)
    assert np.allclose(pooled.vectors.reconstruct_n(0, len(torch_vecs)), torch_vecs, atol=1e-5)
    assert pooled.manifest.sentences == single.manifest.sentences > 0


def test_build_embeds_through_openvino_and_says_so(seed_index, model):
    """The default backend: the model's ONNX export in OpenVINO, vectors as torch's to a cosine of 0.9995."""
    data = load_index(seed_index)
    emb = data.manifest.embedding
    assert emb["backend"].startswith("openvino ") and emb["cpu"]["name"] and emb["cpu"]["cores"] >= 1
    # the session's cache is shared: a venue's index built before this one may hold a few of the seeds' sentences
    # (a fetched abstract that a seed line repeats), so fewer than all of them may be embedded here
    assert emb["embedded"]["abstracts"] == 66 and 0.9 * data.manifest.sentences <= emb["embedded"]["sentences"] \
        <= data.manifest.sentences
    torch_vecs = model.encode([p.text for p in data.papers], normalize_embeddings=True)
    cosines = np.sum(data.vectors.reconstruct_n(0, 66) * torch_vecs, axis=1)
    assert cosines.min() > 0.9995


def test_vectors_of_two_backends_are_never_mixed(tmp_path, model, embedding_cache):
    """A build with another backend embeds again into its own part of the cache."""
    cache = cache_copy(embedding_cache, tmp_path / "c")  # OpenVINO's vectors of these papers are in it
    one_list = sorted(SEEDS.glob("*.txt"))[0]
    first = build_index([one_list], tmp_path / "a", model=model, cache_dir=cache, explore=False, sentences=False,
                        backend="onnxruntime")
    second = build_index([one_list], tmp_path / "b", model=model, cache_dir=cache, explore=False, sentences=False,
                         backend="torch")
    again = build_index([one_list], tmp_path / "c2", model=model, cache_dir=cache, explore=False, sentences=False,
                        backend="onnxruntime")
    assert first.count > 10 and (first.embedded, second.embedded, again.embedded) == (first.count, first.count, 0)
    backends = {load_index(tmp_path / name).manifest.embedding["backend"] for name in ("a", "b")}
    assert backends == {"onnxruntime f32", "torch"}


def test_build_names_its_backend_and_cpu_in_its_progress(tmp_path, model, embedding_cache):
    seen = []
    build_index([SEEDS], tmp_path / "index", model=model, cache_dir=embedding_cache, explore=False,
                sentences=False, progress=lambda stage, done, total: seen.append(stage))
    line = next(s for s in seen if s.startswith("embedding with"))
    assert "openvino" in line and " on " in line


@pytest.mark.parametrize("change,named", [(lambda m: m.pop("count"), "'count' is missing"),
                                          (lambda m: m.update(dimension="384"), "'dimension' is not an integer"),
                                          (lambda m: m["model"].pop("fingerprint"), "'model' lacks fingerprint"),
                                          (lambda m: m.update(explore=[1]), "'explore' is not an object")])
def test_manifest_with_a_wrong_entry_is_refused_by_name(index_copy, change, named):
    path = index_copy.resolve() / "manifest.json"
    m = json.loads(path.read_text())
    change(m)
    path.write_text(json.dumps(m))
    with pytest.raises(IndexLoadError, match=f"not a format-1 manifest \\(its {named}\\).*python index_build.py"):
        load_index(index_copy)


def test_manifest_round_trips_and_keeps_its_json_names(seed_index):
    from search.manifest import Manifest

    raw = json.loads((seed_index / "manifest.json").read_text())
    m = Manifest.from_dict(raw)
    assert m.to_dict() == raw  # what the build wrote is what a reader gets back, every entry typed
    assert m.index.exact and m.query_encoder.file == "query_encoder.onnx" and m.explore.topics > 0
