"""The staged build: the abstracts' index published first and answering, each later stage as it lands, a
stopped build's last stage serving and the next build going on from the cache, and a re-fetch that changed
only reviews rebuilt without embedding."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pytest

from conftest import SEEDS, FakeModel, cache_copy, run_cli
from search import background
from search.encoding import embed
from search.build import build_index
from search.parts.registry import STAGES
from search.engine import Engine
from search.notices import notice
from search.index import load_index, read_manifest, resolve
from search.encoding.multilingual import NON_LATIN
from search.progress import still_coming


class Stopped(Exception):
    pass


def test_abstracts_answer_first_and_each_stage_lands_with_the_cli_and_engine_agreeing(tmp_path, model, fingerprint,
                                                                                     embedding_cache, seed_index):
    out = tmp_path / "index"
    cache = cache_copy(embedding_cache, tmp_path / "cache", vectors=False)  # everything is embedded again
    seen: dict[str, dict] = {}
    query = "extending the context window of a language model without finetuning"

    def look(stage: str, done: int, total: int) -> None:
        if stage not in ("sentences", "multilingual abstracts") or stage in seen or not out.exists():
            return
        data = load_index(out)
        engine = Engine(data, model, fingerprint)
        hits = engine.search(query, k=5).hits
        cli = run_cli("query", query, "-k", "5", "--json", "--index", str(out))
        seen[stage] = {"pending": data.manifest.pending, "ids": [h.paper.id for h in hits],
                       "evidence": [h.evidence for h in hits], "cli": [h["id"] for h in json.loads(cli.stdout)["hits"]],
                       "chinese": engine.search("长上下文语言模型", k=3).message, "map": engine.catalog.map_xy is not None}

    report = build_index([SEEDS], out, model=model, cache_dir=cache, multilingual=True, progress=look)
    # while the sentences were embedded, the index with abstracts, BM25, topics and map answered
    early = seen["sentences"]
    assert early["pending"] == ["sentences", "multilingual"] and early["map"]
    assert early["ids"] and early["ids"] == early["cli"]          # the CLI and the engine give the same answer
    assert all(e == [] for e in early["evidence"])               # no "why this result" yet
    assert early["chinese"] == notice("multilingual coming", language=NON_LATIN).words
    later = seen["multilingual abstracts"]
    assert later["pending"] == ["multilingual"] and later["ids"] == later["cli"]
    assert any(later["evidence"])                                # the sentences landed
    final = load_index(out).manifest
    assert final.pending == [] and final.multilingual is not None and final.sentences > 0
    # each stage published in turn, the abstracts first
    assert list(report.published) == ["words", "abstracts", *[s for s in STAGES if s not in ("review search", "summaries")]]
    times = list(report.published.values())
    assert times == sorted(times) and times[0] < times[-1]
    # the last stage's ranking is the one an unstaged build gives (the session's seed index)
    again = Engine(load_index(out), model, fingerprint).search(query, k=10)
    whole = Engine(load_index(seed_index), model, fingerprint).search(query, k=10)
    assert [h.paper.id for h in again.hits] == [h.paper.id for h in whole.hits]


def test_a_stopped_build_leaves_its_last_stage_serving_and_the_next_goes_on_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(embed, "SAVE_EVERY", 0.0)  # each chunk of vectors saved as it lands
    model = FakeModel()  # what is published and embedded when, not what the vectors mean
    out, cache = tmp_path / "index", tmp_path / "cache"

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "sentences" and done:
            raise Stopped

    with pytest.raises(Stopped):
        build_index([SEEDS], out, model=model, cache_dir=cache, progress=stop)
    serving = load_index(out)
    assert serving.manifest.pending == ["sentences"] and serving.manifest.count == 66
    assert serving.manifest.explore is not None and serving.manifest.sentences == 0
    assert background.plan(out, SEEDS, []) == [[SEEDS]]  # the page builds it again
    assert "why-this-result sentences" in still_coming(serving.manifest.pending)
    # similar papers say what is coming instead of "This paper: / That paper:" with nothing after them
    from search.render.cards import similar_card
    from search.engine import Engine

    early = Engine(serving, model)
    source = early.papers[0]
    body = similar_card(early, source, early.similar([source.id], 3).hits[0], [], "match").body
    assert "sentences stage lands" in body and "This paper:" not in body
    done = build_index([SEEDS], out, model=model, cache_dir=cache)
    final = load_index(out).manifest
    assert done.embedded == 0 and done.explore_reused  # the abstracts' vectors and the topics reused
    # the sentences embedded before the stop were kept: only the rest embedded now
    assert 0 < done.embedded_sentences < final.sentences
    assert list(done.published) == ["words", "abstracts", "topics and map", "sentences"]
    assert final.pending == [] and background.plan(out, SEEDS, []) == []


def refetched(records, tmp_path, change) -> object:
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    change(rows)
    path = tmp_path / "venue.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def test_a_refetch_with_new_ratings_and_decisions_embeds_nothing_and_reuses_the_rest(tmp_path, venue_records):
    model = FakeModel()
    out, cache = tmp_path / "index", tmp_path / "cache"
    first_records = refetched(venue_records, tmp_path, lambda rows: None)
    first = build_index([first_records], out, model=model, cache_dir=cache)
    first_dir = first.path
    assert read_manifest(first_dir).reviews.searchable

    def new_scores(rows):  # the rebuttal moved a rating, and a decision came out
        r = next(r for r in rows if len(r.get("reviews") or []) >= 2)
        r["reviews"][0]["rating"] = 10
        r["decision"] = "Accept (Oral)"
        new_scores.id = r["id"]

    second = build_index([refetched(venue_records, tmp_path, new_scores)], out, model=model, cache_dir=cache)
    assert second.embedded == 0 and second.embedded_sentences == 0 and second.explore_reused
    assert len(set(second.published.values())) == 1  # nothing to wait for: one publish
    data = load_index(out)
    paper = next(p for p in data.papers if p.id == new_scores.id)
    assert paper.decision == "Accept (Oral)" and 10 in paper.ratings
    # the search within reviews was built from the same texts, and the rows of the abstracts and their
    # sentences are the same: their files are the first build's, linked, not written again
    for name in ("review_fields.npy", "vectors.faiss", "sentences.npy", "bm25/params.index.json", "summaries.npy"):
        assert os.path.samefile(first_dir / name, data.path / name), name
    assert "reviews.jsonl" in data.manifest.files and not os.path.samefile(first_dir / "reviews.jsonl",
                                                                           data.path / "reviews.jsonl")

    def new_review_text(rows):
        r = next(r for r in rows if r.get("reviews"))
        r["reviews"][0]["weaknesses"] = "The tokenizer ablation is missing entirely."
        new_review_text.id = r["id"]

    stages: list[list[str]] = []

    def look(stage: str, done: int, total: int) -> None:
        if stage == "review search" and out.exists():
            stages.append(read_manifest(resolve(out)).pending)

    third = build_index([refetched(venue_records, tmp_path, new_review_text)], out, model=model, cache_dir=cache,
                        progress=look)
    assert third.embedded == 0 and stages == [["review search"]]  # the rest served while reviews were indexed
    engine = Engine(load_index(out), model)
    hits = engine.search_reviews("tokenizer ablation is missing entirely", k=3).hits
    assert hits and hits[0].paper.id == new_review_text.id


def test_still_coming_names_the_stages_and_the_share_built():
    status = {"stage": "sentences", "done": 35, "total": 100}
    assert still_coming(["sentences", "multilingual"], status) == \
        "why-this-result sentences (35% built), queries in other languages"
    assert still_coming(["multilingual"], {"stage": "multilingual titles", "done": 1, "total": 4}) == \
        "queries in other languages (titles 25% built)"
    assert still_coming(["topics and map"], {"stage": "map", "done": 0, "total": 1}) == \
        "topics and the map (being built)"


def test_a_few_new_papers_are_placed_onto_the_topics_and_map_and_more_compute_them_again(tmp_path, model,
                                                                                         embedding_cache):
    from search.papermap import MAP, read_map

    out, cache = tmp_path / "index", cache_copy(embedding_cache, tmp_path / "cache")
    build_index([SEEDS], out, model=model, cache_dir=cache)
    before = load_index(out)
    points_before = {r["id"]: (r["x"], r["y"]) for r in read_map(before.path / MAP)}
    original = before.papers[5]
    extra = tmp_path / "extra.jsonl"

    # a new paper on the same subject, not a copy: a copy of the seed's text would merge into it (corpus.py)
    start = " ".join(original.abstract.split()[:len(original.abstract.split()) // 3])

    def add(n: int) -> None:
        extra.write_text("".join(json.dumps({
            "id": f"new{i}", "title": f"{original.title} (part {i})",
            "abstract": f"{start} We extend this study to {i + 2} new benchmarks."}) + "\n"
            for i in range(n)))

    add(1)  # 1 in 67 papers: under explore.PLACE_UP_TO
    report = build_index([SEEDS, extra], out, model=model, cache_dir=cache)
    data = load_index(out)
    entry = data.manifest.explore
    assert report.embedded == 1 and entry.placed == 1 and not entry.reused
    assert list(report.published) == ["words", "abstracts", "topics and map", "sentences"]  # published before the sentences
    papers = {p.id: p for p in data.papers}
    topics = load_index(out).manifest.explore.topics
    assert papers["new0"].topic == papers[original.id].topic  # its near twin's topic
    points = {r["id"]: (r["x"], r["y"]) for r in read_map(data.path / MAP)}
    assert all(points[i] == xy for i, xy in points_before.items())  # the others stay where they were
    spread = sorted(abs(complex(*a) - complex(*b)) for a in points_before.values() for b in points_before.values())
    assert abs(complex(*points["new0"]) - complex(*points[original.id])) < spread[len(spread) // 4]
    counts = json.loads((data.path / "topics.json").read_text())
    members = [i for t in counts["topics"] for i in t["papers"]]
    assert len(members) == len(set(members)) == 67 and "new0" in members and topics == len(counts["topics"])

    add(3)  # 3 more than the map was computed for, in 69: over it, so topics and map are computed again
    build_index([SEEDS, extra], out, model=model, cache_dir=cache)
    entry = load_index(out).manifest.explore
    assert entry.placed == 0 and not entry.reused


def test_a_rebuild_with_its_vectors_cached_reads_the_model_facts_and_never_loads_the_model(tmp_path, embedding_cache,
                                                                                           monkeypatch):
    out, cache = tmp_path / "index", cache_copy(embedding_cache, tmp_path / "cache")
    first = build_index([SEEDS], out, cache_dir=cache)  # the default model, loaded by name: its facts recorded

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr("search.build.load_model", refuse)
    second = build_index([SEEDS], out, cache_dir=cache)
    assert second.embedded == 0
    a, b = read_manifest(first.path), read_manifest(second.path)
    assert (a.model, a.dimension, a.query_encoder) == (b.model, b.dimension, b.query_encoder)
    assert (second.path / "tokenizer.json").read_bytes() == (first.path / "tokenizer.json").read_bytes()


def test_model_facts_are_forgotten_when_the_model_files_change(tmp_path):
    folder, cache = tmp_path / "model", tmp_path / "cache"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(b"1")
    facts = embed.ModelFacts("abc", 384, 256, True)
    assert embed.known_model_facts(str(folder), cache) is None
    embed.remember_model_facts(str(folder), cache, facts)
    assert embed.known_model_facts(str(folder), cache) == facts
    (folder / "weights.bin").write_bytes(b"22")   # other weights: the model is loaded again
    assert embed.known_model_facts(str(folder), cache) is None
    (cache / "models.json").write_text("{half", encoding="utf-8")
    assert embed.known_model_facts(str(folder), cache) is None


def test_make_app_starts_the_build_before_any_visit_to_the_page(tmp_path, monkeypatch, capsys):
    """`make app` runs `python -m search.background --planned` before the server: the build the page would
    start at its first visit starts at once (a new user who opened the page a minute later waited a minute)."""
    started = []
    monkeypatch.setattr(background, "start", lambda out, steps: started.append((out, steps)) or True)
    data = tmp_path / "venue.jsonl"
    data.write_text('{"id": "a", "title": "A", "abstract": "An abstract."}\n')
    monkeypatch.setenv("SEARCH_DATA", str(data))
    out = tmp_path / "index"
    assert background.main(["--planned", "--out", str(out)]) == 0
    assert "building in the background" in capsys.readouterr().out
    seeds = started[0][1][0][0]
    assert started == [(out, [[seeds], [seeds, data]])] and seeds.name == "seeds"
    monkeypatch.setenv("SEARCH_DATA", str(tmp_path / "missing.jsonl"))  # said, and the server starts anyway
    assert background.main(["--planned", "--out", str(out)]) == 0
    assert "not building" in capsys.readouterr().out and len(started) == 1


@dataclass(frozen=True)
class LengthsEntry:
    papers: int


def test_a_part_declared_once_is_built_taken_whole_on_a_rebuild_and_loaded_by_the_engine(tmp_path, monkeypatch):
    """A new part of the index is one Part declared in its module (here, this test) and listed in the registry:
    its entry, of its own type, under the manifest's parts; its files linked and its entry carried over where its
    key is the previous build's; the engine holding what its load gives."""
    import shutil

    import numpy as np

    from search.index import IndexLoadError
    from search.parts import registry
    from search.parts.part import Part

    computed = []

    @dataclass
    class State:
        lengths: np.ndarray | None = None

    def compute(ctx, state):
        state.lengths = np.array([len(p.text) for p in ctx.papers])
        computed.append(state.lengths)

    def write(ctx, state, build_dir):
        np.save(build_dir / "lengths.npy", state.lengths)
        return LengthsEntry(len(state.lengths))

    part = Part("lengths", lambda o, r: True, lambda o: {"lengths": 1.0}, compute, write, state=State,
                files=("lengths.npy",), key=lambda ctx, state: ["characters"], kind=LengthsEntry,
                load=lambda data, entry: np.load(data.path / "lengths.npy"))
    monkeypatch.setattr(registry, "PARTS", (*registry.PARTS, part))
    model, out, cache = FakeModel(), tmp_path / "index", tmp_path / "cache"
    first = build_index([SEEDS], out, model=model, cache_dir=cache, sentences=False)
    manifest = read_manifest(first.path)
    assert manifest.entry("lengths", LengthsEntry) == LengthsEntry(66) and "lengths.npy" in manifest.files
    assert list(first.published)[-1] == "lengths" and manifest.part_keys["lengths"]
    again = build_index([SEEDS], out, model=model, cache_dir=cache, sentences=False)
    assert len(computed) == 1 and "lengths" in again.reused and again.explore_reused
    assert os.path.samefile(first.path / "lengths.npy", again.path / "lengths.npy")
    assert read_manifest(again.path).entry("lengths", LengthsEntry) == LengthsEntry(66)
    engine = Engine(load_index(out), model)
    assert list(engine.parts["lengths"]) == [len(p.text) for p in engine.papers]

    copy = tmp_path / "damaged"  # an entry of the wrong shape is refused with its name
    shutil.copytree(again.path, copy)
    raw = json.loads((copy / "manifest.json").read_text())
    raw["parts"]["lengths"] = {"rows": 66}
    (copy / "manifest.json").write_text(json.dumps(raw))
    with pytest.raises(IndexLoadError, match="'lengths' lacks papers"):
        Engine(load_index(copy), model)
