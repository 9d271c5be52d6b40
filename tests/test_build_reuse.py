"""What a build takes again instead of making again: each input file's records (record_cache.py), a previous
build's trained approximate index, the papers' file between two publishes of one build; and BM25 written with
numpy as bm25s writes it. Plumbing: a fake embedder (conftest.FakeModel) where vectors are needed."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from conftest import FakeModel
from search import corpus, index as ix, record_cache
from search.build import build_index
from search.corpus import CorpusError, load_corpus
from search.parts import lexical


def venue_file(path, n: int, start: int = 0, bad: bool = False):
    rows = [json.dumps({"id": f"v{i:04d}", "title": f"Method {i} for topic {i % 7}",
                        "abstract": f"We study topic {i % 7} with method {i}, up to {i}\\% better than \\citep{{x}} "
                                    f"prior work on benchmark {i}."}) for i in range(start, start + n)]
    if bad:
        rows.insert(1, "{not json")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_file_read_once_is_taken_from_the_record_cache_until_it_changes(tmp_path, monkeypatch):
    data, cache = venue_file(tmp_path / "venue.jsonl", 30), tmp_path / "cache"
    tokens: dict = {}
    first, _ = load_corpus([data], cache_dir=cache, tokens=tokens)
    plain, _ = load_corpus([data])
    assert [p.__dict__ for p in first] == [p.__dict__ for p in plain]
    assert tokens[first[0].text] == " ".join(lexical.tokenize(first[0].text))

    def refuse(*args, **kwargs):
        raise AssertionError("read again")
    monkeypatch.setattr(corpus, "read_file", refuse)
    again, _ = load_corpus([data], cache_dir=cache)
    assert [p.__dict__ for p in again] == [p.__dict__ for p in first]
    monkeypatch.setattr(record_cache, "reader_version", lambda: "the reading code changed")
    with pytest.raises(AssertionError, match="read again"):
        load_corpus([data], cache_dir=cache)
    monkeypatch.undo()

    venue_file(data, 31)  # the file changed: read again, and its older entry gone
    changed, _ = load_corpus([data], cache_dir=cache)
    assert len(changed) == 31
    assert len(list((cache / record_cache.FOLDER).glob("*.jsonl"))) == 1


def test_a_file_of_the_same_bytes_at_another_path_is_taken_from_the_cache_and_named_where_it_is(tmp_path,
                                                                                               monkeypatch):
    # a venue list linked into a second folder (a folder of lists with one more added) is the same list
    cache = tmp_path / "cache"
    (tmp_path / "a").mkdir()
    first = venue_file(tmp_path / "a" / "venue.jsonl", 5, bad=True)
    load_corpus([first], skip_bad=True, cache_dir=cache)
    (tmp_path / "b").mkdir()
    second = tmp_path / "b" / "renamed.jsonl"
    second.write_bytes(first.read_bytes())

    def refuse(*args, **kwargs):
        raise AssertionError("read again")
    monkeypatch.setattr(corpus, "read_file", refuse)
    papers, skipped = load_corpus([second], skip_bad=True, cache_dir=cache)
    assert len(papers) == 5 and skipped and all(str(second) in m and str(first) not in m for m in skipped)
    assert all(p.sources == ["renamed.jsonl"] for p in papers)


def test_a_cached_file_with_bad_lines_still_stops_a_build_that_does_not_skip_them(tmp_path):
    data, cache = venue_file(tmp_path / "venue.jsonl", 5, bad=True), tmp_path / "cache"
    skipped: list = []
    papers, skipped = load_corpus([data], skip_bad=True, cache_dir=cache)
    assert len(papers) == 5 and len(skipped) == 1 and "venue.jsonl:2" in skipped[0]
    again, skipped_again = load_corpus([data], skip_bad=True, cache_dir=cache)
    assert len(again) == 5 and skipped_again == skipped
    with pytest.raises(CorpusError, match="venue.jsonl:2"):
        load_corpus([data], cache_dir=cache)


def test_an_unreadable_record_cache_is_read_past(tmp_path):
    data, cache = venue_file(tmp_path / "venue.jsonl", 4), tmp_path / "cache"
    load_corpus([data], cache_dir=cache)
    entry = next((cache / record_cache.FOLDER).glob("*.jsonl"))
    entry.write_bytes(b"\x00garbage")
    papers, _ = load_corpus([data], cache_dir=cache)
    assert len(papers) == 4


def test_bm25_written_with_numpy_scores_as_bm25s_does(tmp_path):
    import bm25s

    texts = [f"graph networks for molecules {i} " * (1 + i % 3) + f"with attention {i % 5}" for i in range(60)]
    texts += ["", "the of and"]  # documents with no token keep their rows
    lexical.build(texts, tmp_path / "ours")
    theirs = bm25s.BM25()
    theirs.index([lexical.tokenize(t) or [lexical.PLACEHOLDER] for t in texts], show_progress=False)
    theirs.save(str(tmp_path / "bm25s"), show_progress=False)
    ours, reference = lexical.Matrix(tmp_path / "ours"), lexical.Matrix(tmp_path / "bm25s")
    assert ours.num_docs == reference.num_docs == len(texts)
    for terms in (["graph"], ["molecul", "attent"], ["10", "42", "network"]):
        got = ours.scores([ours.vocab[t] for t in terms])
        assert got.any() and np.array_equal(got, reference.scores([reference.vocab[t] for t in terms]))
    # bm25s itself loads what we wrote
    assert np.array_equal(bm25s.BM25.load(str(tmp_path / "ours")).get_scores(["graph"]),
                          theirs.get_scores(["graph"]))


def test_a_trained_index_is_taken_again_only_where_it_fits(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((2000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    spec = "IVF16,Flat:nprobe=4"
    entry = ix.write_vectors(tmp_path / "before.faiss", vectors, spec)
    assert entry["trained_on"] == 2000
    more = np.vstack([vectors, vectors[:100] * -1])
    again = ix.write_vectors(tmp_path / "after.faiss", more, spec, trained=(tmp_path / "before.faiss", entry))
    import faiss

    before, after = faiss.read_index(str(tmp_path / "before.faiss")), faiss.read_index(str(tmp_path / "after.faiss"))
    assert again["trained_on"] == 2000 and after.ntotal == 2100
    centroids = lambda index: index.quantizer.reconstruct_n(0, index.nlist)
    assert np.array_equal(centroids(before), centroids(after))   # not trained again
    # trained on too few of these, or another kind of index: trained here
    few = {**entry, "trained_on": 1000}
    assert ix.write_vectors(tmp_path / "c.faiss", more, spec, trained=(tmp_path / "before.faiss", few))["trained_on"] == 2100
    other = {**entry, "factory": "IVF32,Flat"}
    assert ix.write_vectors(tmp_path / "d.faiss", more, spec, trained=(tmp_path / "before.faiss", other))["trained_on"] == 2100
    assert ix.write_vectors(tmp_path / "e.faiss", more, spec, trained=(tmp_path / "gone.faiss", entry))["trained_on"] == 2100


def test_a_rebuild_with_a_few_more_papers_keeps_the_training_and_links_the_papers_between_publishes(tmp_path):
    options = dict(explore=False, sentences=False, summaries=False, review_search=False, index_spec="IVF8,Flat:nprobe=8",
                   words_first=1, publish_every=0, cache_dir=tmp_path / "cache")
    data, out = venue_file(tmp_path / "venue.jsonl", 200), tmp_path / "index"
    build_index([data], out, model=FakeModel(), **options)
    first = ix.read_manifest(ix.resolve(out))
    seen: dict = {}

    def look(stage: str, done: int, total: int) -> None:  # the words stage's papers, while the abstracts embed
        if stage == "abstracts" and "words" not in seen:
            seen["words"] = os.stat(ix.resolve(out) / ix.PAPERS).st_ino
    more = tmp_path / "more.jsonl"
    venue_file(more, 10, start=200)
    report = build_index([data, more], out, model=FakeModel(), progress=look, **options)
    assert report.embedded == 10 and list(report.published)[:2] == ["words", "abstracts"]
    after = ix.read_manifest(ix.resolve(out))
    assert after.count == 210 and after.index.trained_on == first.index.trained_on == 200
    assert os.stat(ix.resolve(out) / ix.PAPERS).st_ino == seen["words"]   # linked, not written again
    assert len(ix.read_papers(ix.resolve(out) / ix.PAPERS)) == 210
