"""The abstracts' vectors published as they come: after the words stage the build publishes the papers again
every `publish_every` abstracts, the embedded ones ranked by meaning and the rest by words; a build killed
between two publishes goes on from the vectors it saved. Plumbing only: a fake embedder (conftest.FakeModel)."""
from __future__ import annotations

import json
import time
import shutil

import numpy as np
import pytest

from conftest import FakeModel
from search import build
from search.build import build_index
from search.engine import Engine
from search.index import UNEMBEDDED, load_index, resolve
from search import rankers

N, EVERY = 120, 30
OPTIONS = dict(explore=False, sentences=False, summaries=False, review_search=False, words_first=1,
               publish_every=EVERY)
TOPICS = ["optical flow", "graph neural networks", "protein folding", "speech recognition", "robot grasping",
          "language model alignment", "image compression", "causal discovery"]


class Stopped(Exception):
    pass


def venue(path):
    """N papers of 8 topics, each with words of its own (a title a query can name)."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(N):
            topic = TOPICS[i % len(TOPICS)]
            f.write(json.dumps({"id": f"p{i:03d}", "title": f"Study {i} of {topic} with method{i}",
                                "abstract": f"We study {topic} and propose method{i}, which improves {topic} "
                                            f"on benchmark{i} by a margin {i}."}) + "\n")
    return path


def first_partial(out, seen: dict, every: int = EVERY):
    """A progress callback that keeps a copy of the index published after the first group of abstracts (the
    build removes its older folders as it goes) and loads it."""
    def look(stage: str, done: int, total: int) -> None:
        seen.setdefault("calls", []).append((stage, done, total))
        if stage == "abstracts" and done >= every and "partial" not in seen:
            m = load_index(resolve(out)).manifest
            if m.unembedded and m.unembedded < m.count:
                kept = shutil.copytree(resolve(out), out.parent / "first-partial")
                seen["partial"] = load_index(kept)
                seen["unembedded.json"] = json.loads((kept / UNEMBEDDED).read_text())
    return look


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("as-they-come")
    inputs, out, seen = venue(d / "venue.jsonl"), d / "index", {}
    model = FakeModel()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(build, "PUBLISH_SHARE", 0.0)  # groups of EVERY: the fake embedder is faster than a publish
        report = build_index([inputs], out, model=model, cache_dir=d / "cache", progress=first_partial(out, seen),
                             **OPTIONS)
    return report, seen, model, out


def test_a_partial_publish_says_how_many_are_left_and_which(built):
    report, seen, _, _ = built
    partial = seen["partial"]
    m = partial.manifest
    assert m.count == N and m.unembedded == N - EVERY and m.pending[0] == "abstracts"
    assert list(m.published) == ["words"]  # the abstracts' stage is still to come
    assert seen["unembedded.json"] == partial.unembedded.tolist() == list(range(EVERY, N))  # the groups follow the index's order
    vectors = partial.vectors.reconstruct_n(0, N)
    assert np.allclose(np.linalg.norm(vectors[:EVERY], axis=1), 1, atol=1e-4) and not vectors[EVERY:].any()
    assert report.embedded == N and list(report.published)[:2] == ["words", "abstracts"]
    assert sum(1 for c in seen["calls"] if c[0] == "abstracts" and c[1] % EVERY == 0 and 0 < c[1] < N) >= 3
    final = load_index(resolve(built[3]))
    assert final.manifest.unembedded == 0 and final.unembedded is None


def test_the_stage_reports_one_count_across_its_publishes(built):
    calls = built[1]["calls"]
    stage = [c for c in calls if c[0] == "abstracts"]
    first, last = calls.index(stage[0]), len(calls) - 1 - calls[::-1].index(stage[-1])
    # no other stage between: the stage's pace and time left run on across the publishes
    assert all(c[0] == "abstracts" for c in calls[first:last + 1])
    assert {c[2] for c in stage} == {N} and [c[1] for c in stage] == sorted(c[1] for c in stage)
    assert stage[-1][1] == N


def test_embedded_papers_rank_by_meaning_the_rest_by_words(built):
    _, seen, model, _ = built
    engine = Engine(seen["partial"], model)
    embedded, waiting = engine.papers[3], engine.papers[EVERY + 5]
    hybrid = engine.search(embedded.text, 10, "hybrid")
    assert not hybrid.by_words and hybrid.unembedded == N - EVERY
    assert hybrid.hits[0].paper.id == embedded.id and hybrid.hits[0].cosine > 0.99  # by meaning: its own vector
    # a paper still to embed, named by its own words, tops the list: ranked by its words on the embedded
    # papers' scale, not sunk below them
    named = engine.search(f"{TOPICS[(EVERY + 5) % len(TOPICS)]} method{EVERY + 5}", 10, "hybrid")
    assert not named.by_words and named.hits[0].paper.id == waiting.id and named.hits[0].cosine is None
    assert f"{N - EVERY:,} of the papers searched" in named.message
    # its closeness comes from its words: the best BM25 of the candidates stands with the best cosine
    query = f"{TOPICS[(EVERY + 5) % len(TOPICS)]} method{EVERY + 5}"
    rk, vec = engine.rankers, engine.encode_query(query)[0]
    lex = rk.lexical.scores(query)
    c = rk.candidates(vec, rk.dense(vec, 20, None), rk.lexical_rows(lex, 20, None), lex)
    has = rk.embedded[c.rows]
    mine = c.doc[list(c.rows).index(EVERY + 5)]
    assert not has.all() and c.lexical.argmax() == list(c.rows).index(EVERY + 5)
    assert mine == pytest.approx(c.doc[has].max()) and mine > np.median(c.doc[has])
    # meaning alone over a quarter of the papers would leave most out: by words until half are embedded
    assert engine.search(embedded.text, 10, "semantic").by_words


def test_closeness_by_words_stands_where_the_words_stand():
    cosines, their_words = np.array([0.1, 0.2, 0.3, 0.4, 0.5]), np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    got = rankers.by_words_closeness(cosines, their_words, np.array([10.0, 0.5, -1.0]))
    assert got[0] == pytest.approx(0.5) and got[2] == pytest.approx(0.1) and 0.1 < got[1] < 0.3
    assert rankers.by_words_closeness(np.zeros(0), np.zeros(0), np.array([1.0])).tolist() == [0.0]


def test_a_build_killed_between_publishes_goes_on_from_its_vectors(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "PUBLISH_SHARE", 0.0)
    inputs, out, cache = venue(tmp_path / "venue.jsonl"), tmp_path / "index", tmp_path / "cache"
    model = FakeModel()

    def stop_in_third_group(stage: str, done: int, total: int) -> None:
        if stage == "abstracts" and done > 2 * EVERY:
            raise Stopped

    with pytest.raises(Stopped):
        build_index([inputs], out, model=model, cache_dir=cache, progress=stop_in_third_group, **OPTIONS)
    left = load_index(resolve(out)).manifest.unembedded
    assert left == N - 2 * EVERY  # the last publish before the kill is served, and says what is left
    again = build_index([inputs], out, model=model, cache_dir=cache, **OPTIONS)
    assert again.embedded <= left and load_index(resolve(out)).manifest.unembedded == 0


def test_groups_grow_where_a_publish_costs_more_than_a_twentieth_of_the_embedding(tmp_path):
    # the fake embedder takes no time beside a publish: after the first group, the rest in one
    inputs, out, seen = venue(tmp_path / "venue.jsonl"), tmp_path / "index", {}
    build_index([inputs], out, model=FakeModel(), cache_dir=tmp_path / "cache", progress=first_partial(out, seen),
                **OPTIONS)
    assert seen["partial"].manifest.unembedded == N - EVERY
    assert {c[1] for c in seen["calls"] if c[0] == "abstracts"} == {0, EVERY, N}


def test_the_page_says_which_papers_rank_by_meaning_while_the_rest_come(tmp_path, monkeypatch, model,
                                                                         embedding_cache):
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT, SEEDS, cache_copy
    from search.background import status_file
    from search.progress import write_status

    # the seeds built by the real model (the page refuses an index of another), published every 20 abstracts
    seen, out = {}, tmp_path / "build" / "index"
    cache = cache_copy(embedding_cache, tmp_path / "cache", vectors=False)
    build_index([SEEDS], out, model=model, cache_dir=cache, progress=first_partial(out, seen, 20),
                **{**OPTIONS, "publish_every": 20})
    m = seen["partial"].manifest
    index = tmp_path / "index"
    index.symlink_to(seen["partial"].path, target_is_directory=True)
    # a build that has just started: the page shows its panel (background.busy)
    write_status(status_file(index), {"state": "starting", "stage": "abstracts", "done": 20, "total": m.count,
                                      "updated": time.time()})
    monkeypatch.setenv("SEARCH_INDEX", str(index))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = [i.value for i in at.info if i.value.startswith("Searchable now")]
    assert said == [f"Searchable now by meaning the {m.count - m.unembedded} papers embedded so far, by words the "
                    f"other {m.unembedded} of {m.count}, with every filter, sort, statistic and review. Still "
                    f"coming: search by meaning ({100 * 20 / m.count:.0f}% built). The page adds each as it lands."]
