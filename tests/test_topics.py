"""Topics and the map: made at build time, deterministic, covering every paper, with clean labels."""
from __future__ import annotations

import json
import re

import numpy as np
from conftest import run_cli

from search.parts.lexical import _stopwords
from search.topics import BOILERPLATE, compute_topics, distinct_terms


def test_distinct_terms_drops_near_repeats():
    ranked = ["privacy", "private", "differential privacy", "federated", "federation", "clients", "noise"]
    assert distinct_terms(ranked, 3) == ["privacy", "federated", "clients"]


def test_topics_cover_every_paper_once_and_are_deterministic(engine):
    topics = list(engine.catalog.topics.values())
    ids = [pid for t in topics for pid in t.papers]
    assert sorted(ids) == sorted(p.id for p in engine.papers)  # each paper exactly once
    assert 2 <= len(topics) <= 12  # a handful for 66 papers
    assert all(t.size == len(t.papers) for t in topics)
    assert [t.size for t in topics] == sorted((t.size for t in topics), reverse=True)
    again = compute_topics(engine.papers, engine.vectors)
    assert [(t.label, t.papers) for t in again] == [(t.label, t.papers) for t in topics]
    assert all(p.topic is not None and p.id in engine.catalog.topics[p.topic].papers for p in engine.papers)


def test_topic_papers_start_closest_to_the_centre(engine):
    t = engine.catalog.topics[0]
    rows = [engine.catalog.row(pid) for pid in t.papers]
    centre = engine.vectors[rows].mean(axis=0)
    sims = engine.vectors[rows] @ centre
    assert np.all(np.diff(sims) <= 1e-6)


def test_labels_are_clean(engine, iclr_engine):
    for eng in (engine, iclr_engine):
        for t in eng.catalog.topics.values():
            terms = t.label.split(", ")
            assert 2 <= len(terms) <= 5, t.label
            words = [w for term in terms for w in term.split()]
            assert not any(w in _stopwords() or w in BOILERPLATE for w in words), t.label
            assert not re.search(r"[\\$_^{}]|textbf|mathrm|citep", t.label), t.label
            assert distinct_terms(terms, 5) == terms, t.label  # no near-repeats inside a label


def test_map_is_finite_and_has_every_paper(engine, seed_index):
    assert engine.catalog.map_xy.shape == (len(engine.papers), 2)
    assert np.isfinite(engine.catalog.map_xy).all() and np.abs(engine.catalog.map_xy).max() <= 1.0 + 1e-6
    out = run_cli("map", "--index", str(seed_index), "--json")
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.returncode == 0 and len(rows) == len(engine.papers)
    assert set(rows[0]) == {"id", "x", "y", "topic"}
    assert {r["id"] for r in rows} == {p.id for p in engine.papers}


def test_cli_topics_json(seed_index, engine):
    out = run_cli("topics", "--index", str(seed_index), "--json")
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.returncode == 0 and len(rows) == len(engine.catalog.topics)
    assert set(rows[0]) == {"topic", "label", "size", "papers"}
    assert sum(r["size"] for r in rows) == len(engine.papers)
    plain = run_cli("topics", "--index", str(seed_index))
    assert engine.catalog.topics[0].label in plain.stdout


def test_split_ids_keeps_valid_and_names_bad(engine):
    a, b = engine.papers[0].id, engine.papers[1].id
    known, unknown = engine.catalog.split_ids([a, " nope ", b, a, "", "<x>"])
    assert known == [a, b] and unknown == ["nope", "<x>"]


def test_like_texts_finds_the_paper_a_text_comes_from(engine):
    target = engine.papers[5]
    result = engine.like_texts([target.abstract], k=3)
    assert result.hits[0].paper.id == target.id
    several = engine.like_texts([target.abstract, engine.papers[6].abstract], k=3)
    assert several.mode == "svm" and {h.paper.id for h in several.hits[:2]} == {target.id, engine.papers[6].id}
    assert engine.like_texts(["  ", ""]).hits == []
    assert "Nothing" not in result.message


def test_like_texts_of_a_config_file_says_nothing_is_close(engine):
    lines = ["[server]", "port = 8501", "headless = true", "[theme]", "base = 'dark'"]
    result = engine.like_texts(lines, k=5)
    assert result.hits and "Nothing in this index is close" in result.message
    one = engine.like_texts(["headless = true"], k=5)  # one line: ranked as a query, still said to be far
    assert "Nothing in this index is close" in one.message


def test_one_uploaded_abstract_ranks_as_the_same_text_pasted_as_a_query(iclr_engine):
    """An upload of one abstract found 1 of 10 on its topic where the same text pasted as a query found 2 of 5:
    one text goes the query path (several, the per-list SVM). Real model, abstracts of ../shared not indexed."""
    import json

    from conftest import SHARED_DATA
    from search.filters import Filters

    indexed = {p.id for p in iclr_engine.papers}
    rows = [json.loads(line) for line in SHARED_DATA.open(encoding="utf-8")]
    uploads = [r for r in rows if r["id"] not in indexed][:5]
    for r in uploads:
        for filters in (Filters(), Filters(sort="rating")):
            upload = iclr_engine.like_texts([r["abstract"]], 10, filters)
            pasted = iclr_engine.search(r["abstract"], 10, filters=filters)
            assert [h.paper.id for h in upload.hits] == [h.paper.id for h in pasted.hits]
            assert upload.score_name == pasted.score_name == "match"


def test_labels_pass_over_words_that_name_no_field_and_never_repeat_a_word_set():
    from search.topics import distinct_labels

    labels = distinct_labels([["language", "llms", "steering", "activation"],
                              ["flow", "matching", "generative"], ["matching", "flow", "generative", "transport"],
                              ["language", "llms"]])
    assert labels[0] == "steering, activation, language"
    assert labels[1] == "flow, matching, generative" and labels[2] == "matching, flow, transport"
    assert labels[3] == "language, llms"  # nothing else to say: better than no label
    word_sets = [frozenset(" ".join(label.split(", ")).split()) for label in labels]
    assert len(set(word_sets)) == len(word_sets)


def test_map_labels_never_overlap_and_the_largest_topics_come_first():
    from search.papermap import label_positions

    centres = [("large topic", 0.0, 0.0), ("near it", 0.05, 0.01), ("far away", 0.9, 0.9), ("below", 0.0, -0.2)]
    placed = label_positions(centres, width=0.02, height=0.07)
    assert [t for t, _, _ in placed] == ["large topic", "far away", "below"]
    for i, (a, ax, ay) in enumerate(placed):
        for b, bx, by in placed[i + 1:]:
            assert abs(ax - bx) >= (len(a) + len(b)) * 0.01 or abs(ay - by) >= 0.07


def test_map_colours_by_area_with_a_legend_or_by_topic(iclr_engine):
    from search.render.figures import map_figure

    e = iclr_engine
    hits = [h.paper.id for h in e.search("graph neural networks", 5).hits]
    by_area = map_figure(e.papers, e.catalog.map_xy, e.catalog.topics, hits, [], "area", focus=hits[2])
    areas = [t for t in by_area.data if t.mode == "markers" and t.showlegend is not False]
    assert len(areas) == len({p.primary_area or "no primary area" for p in e.papers}) and by_area.layout.showlegend
    assert sum(len(t.x) for t in areas) == len(e.papers)
    numbered = next(t for t in by_area.data if t.name == "your query's hits")
    assert list(numbered.text) == ["1", "2", "3", "4", "5"] and list(numbered.customdata) == hits
    assert list(next(t for t in by_area.data if t.name == "the paper you picked").customdata) == [hits[2]]
    by_topic = map_figure(e.papers, e.catalog.map_xy, e.catalog.topics, [], [], "topic")
    assert not by_topic.layout.showlegend
    assert len([t for t in by_topic.data if t.mode == "markers"]) == len({p.topic for p in e.papers})


def test_map_colours_by_decision_with_the_counts_in_the_legend(venue_engine):
    from search.render.figures import DECISION_COLOURS, map_figure

    e = venue_engine
    fig = map_figure(e.papers, e.catalog.map_xy, e.catalog.topics, [], [], "decision")
    groups = {t.name: t for t in fig.data if t.mode == "markers"}
    counts: dict = {}
    for p in e.papers:
        counts[p.decision or "no decision"] = counts.get(p.decision or "no decision", 0) + 1
    assert {f"{d} ({n})" for d, n in counts.items()} == set(groups) and fig.layout.showlegend
    rejected = next(t for name, t in groups.items() if name.startswith("Rejected"))
    assert rejected.marker.color == DECISION_COLOURS["Rejected"]
    assert sorted(i for t in groups.values() for i in t.customdata) == sorted(p.id for p in e.papers)
