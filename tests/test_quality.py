"""Issue 3 behaviour with the real model: merged records, filters, hybrid ranking, evidence."""
import json

import pytest

from conftest import run_cli
from search.engine import MODES
from search.evaluate import metrics
from search.parts.lexical import tokenize
from search.filters import Filters


def test_seeds_merge_with_their_full_records(iclr_engine, engine):
    assert len(iclr_engine.papers) == 53 + 150 + 13
    seed = next(p for p in engine.papers if p.title.startswith("ETAP"))
    merged = iclr_engine.catalog.paper(seed.id)  # the old content id still opens the paper
    assert merged is not None and merged.id != seed.id and not merged.title_derived
    assert merged.title == "Ensemble Prediction of Task Affinity for Efficient Multi-Task Learning"
    assert merged.keywords and merged.primary_area and merged.venue.startswith("ICLR 2026")
    assert merged.url.startswith("https://openreview.net/")
    assert "ICLR 2026 Papers" in merged.sources and any("iclr_subset.jsonl" in s for s in merged.sources)


def test_filters_combine_with_the_query(iclr_engine):
    area = "reinforcement learning"
    hits = iclr_engine.search("language model reasoning", 10, filters=Filters(areas=(area,))).hits
    assert hits and all(h.paper.primary_area == area for h in hits)
    for mode in MODES:
        orals = iclr_engine.search("learning", 5, mode=mode, filters=Filters(venues=("ICLR 2026 Oral",))).hits
        assert all(h.paper.venue == "ICLR 2026 Oral" for h in orals)
    none = iclr_engine.search("x", 5, filters=Filters(areas=("no such area",)))
    assert not none.hits and "filters" in none.message


@pytest.mark.parametrize("name", ["JanusVLN", "Muon", "GRPO", "KV"])
def test_hybrid_puts_papers_that_name_the_method_first(engine, name):
    naming = {p.id for p in engine.papers if name.lower() in p.text.lower()}
    hits = engine.search(name, len(naming), mode="hybrid").hits
    assert {h.paper.id for h in hits} == naming


def test_keyword_mode_only_returns_papers_with_the_words(engine):
    hits = engine.search("zeroth", 10, mode="keyword").hits
    assert hits and all("zeroth" in h.paper.text.lower() for h in hits)
    both = engine.search("zeroth-order", 10, mode="keyword").hits
    assert "zeroth" in both[0].paper.text.lower()
    assert all("zeroth" in h.paper.text.lower() or "order" in h.paper.text.lower() for h in both)
    assert "No paper contains" in engine.search("qwertyuiop", 5, mode="keyword").message


def test_semantic_finds_meaning_without_shared_words(engine):
    hits = engine.search("sheet music transcription", 3, mode="semantic").hits
    assert "optical music recognition" in hits[0].paper.text


def test_evidence_is_the_sentence_closest_to_the_query(engine):
    hit = engine.search("caching keys and values during decoding", 1).hits[0]
    assert 1 <= len(hit.evidence) <= 2
    assert any("KV" in s or "key-value" in s.lower() or "key–value" in s.lower() for s, _ in hit.evidence)
    sentences = engine.evidence.sentences[engine.catalog.row(hit.paper.id)]
    assert all(s in sentences for s, _ in hit.evidence)


def test_shared_keywords_and_closest_sentence_pair(iclr_engine):
    a = next(p for p in iclr_engine.papers if p.keywords)
    b = iclr_engine.similar([a.id], 1).hits[0].paper
    keywords, (mine, theirs, score) = iclr_engine.shared(a.id, b.id)
    assert set(k.casefold() for k in keywords) <= {k.casefold() for k in b.keywords}
    assert mine in iclr_engine.evidence.sentences[iclr_engine.catalog.row(a.id)]
    assert theirs in iclr_engine.evidence.sentences[iclr_engine.catalog.row(b.id)]
    assert 0 < score <= 1.0001


def test_tokenizer_stems_and_drops_stop_words():
    assert tokenize("The KV caches of Transformers") == ["kv", "cach", "transform"]


def test_metrics_on_a_known_ranking():
    """The metrics are ranx's: these known answers hold them to the definitions the records were made with."""
    m = metrics([["a"], ["b", "b-alias"], ["c"]], {"b-alias": 1})  # the hit is known by its alias
    assert m["MRR@10"] == 0.5 and m["Recall@10"] == 1.0 and m["P@10"] == 0.1  # over 10, though 3 came back
    assert abs(m["nDCG@10"] - 1 / 1.5849625) < 1e-6
    assert metrics([["x"]], {"b": 1})["MRR@10"] == 0.0 and metrics([], {"b": 1})["nDCG@10"] == 0.0
    # graded (the grade is the gain, grade 0 is not relevant); a paper that comes back twice counts once
    g = metrics([["b"], ["a"], ["b-alias", "b"], ["c"]], {"a": 2, "b": 1, "c": 0})
    assert abs(g["nDCG@10"] - (1 + 2 / 1.5849625) / (2 + 1 / 1.5849625)) < 1e-6
    assert g["MRR@10"] == 1.0 and g["P@10"] == 0.2 and g["Recall@10"] == 1.0


def test_evaluate_without_ranx_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    from search.cli import main, run_guarded

    monkeypatch.setitem(__import__("sys").modules, "ranx", None)  # `import ranx` fails as where it is missing
    assert run_guarded(lambda: main(["evaluate", str(tmp_path)])) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install ranx==0.3.21" in err


def test_evaluate_cli_scores_every_mode_on_a_beir_folder(tmp_path, iclr_subset, embedding_cache, capsys):
    from search.cli import main

    rows = [json.loads(line) for line in iclr_subset.read_text(encoding="utf-8").splitlines()][:60]
    d = tmp_path / "beir"
    (d / "qrels").mkdir(parents=True)
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": r["id"], "text": r["abstract"]}) + "\n" for r in rows))
    (d / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": r["title"]}) + "\n"
                                             for i, r in enumerate(rows[:20])))
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q{i}\t{r['id']}\t1\n" for i, r in enumerate(rows[:20])))
    assert main(["evaluate", str(d), "--json", "--cache", str(embedding_cache)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["results"]) == set(MODES)
    for mode, res in out["results"].items():
        assert res["queries"] == 20
        assert 0.6 <= res["MRR@10"] <= 1.0, (mode, res)  # titles find their abstracts among 60
        assert res["Recall@100"] == 1.0


def test_cli_area_filter_and_unknown_area(iclr_index):
    r = run_cli("query", "policy optimization", "--json", "--index", str(iclr_index),
               "--area", "reinforcement learning", "--mode", "semantic")
    hits = json.loads(r.stdout)["hits"]
    assert hits and all(h["primary_area"] == "reinforcement learning" for h in hits)
    r = run_cli("query", "x", "--index", str(iclr_index), "--area", "astrology")
    assert r.returncode == 2 and "this index cannot apply area 'astrology'" in r.stderr
