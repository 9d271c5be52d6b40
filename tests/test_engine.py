"""The real model on the seeds: queries written for this test find their paper first."""
import pytest

from search.engine import EXAMPLE_QUERIES, UnknownPaper

# (query in our own words, words that must be in the abstract of the paper expected at rank 1)
TOPIC_QUERIES = [
    ("which tasks benefit from being trained together", "ETAP"),
    ("removing positional encodings to make language models work on longer inputs", "DroPE"),
    ("optical flow robustness to corrupted images", "RobustSpring"),
    ("music notation transcription from sheet images", "optical music recognition"),
    ("memory-efficient fine-tuning of low-bit quantized LLMs using only forward passes", "Zeroth-order"),
    ("comic strips to test cultural understanding of multimodal models", "Comics"),
]


@pytest.mark.parametrize("query,marker", TOPIC_QUERIES)
def test_topic_query_finds_its_paper_first(engine, query, marker):
    hits = engine.search(query, 5).hits
    assert marker in hits[0].paper.text, [h.paper.title for h in hits]
    assert hits[0].score > hits[1].score


@pytest.mark.parametrize("query", EXAMPLE_QUERIES)
def test_example_queries_on_the_empty_page_find_a_clear_match(engine, query):
    hits = engine.search(query, 2).hits
    assert hits[0].score - hits[1].score > 0.05


def test_semantic_scores_are_cosines_in_descending_order(engine):
    hits = engine.search("graph neural networks", 10, mode="semantic").hits
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and all(-1.0 <= s <= 1.0001 for s in scores)
    assert [h.rank for h in hits] == list(range(1, 11))
    # the hybrid order is the blend's, but the score shown stays the cosine to the query
    hybrid = engine.search("graph neural networks", 10).hits
    by_id = {h.paper.id: h.score for h in hits}
    assert all(abs(h.score - by_id[h.paper.id]) < 1e-5 for h in hybrid if h.paper.id in by_id)


def test_similar_never_returns_the_paper_itself(engine):
    for p in engine.papers[:10]:
        hits = engine.similar([p.id], 5).hits
        assert len(hits) == 5 and p.id not in {h.paper.id for h in hits}


def test_similar_by_alias_and_unknown_id(engine):
    with pytest.raises(UnknownPaper, match="nope"):
        engine.similar(["nope"], 3)


def test_empty_query_gives_a_message_not_a_search(engine):
    for q in ["", "   ", "\n\t"]:
        r = engine.search(q, 5)
        assert r.hits == [] and "Type" in r.message


def test_long_query_is_truncated_and_says_so(engine):
    r = engine.search("attention " * 600, 3)
    assert r.truncated and "window" in r.message and len(r.hits) == 3
    assert not engine.search("attention", 3).truncated


@pytest.mark.parametrize("q", ["🙂🚀", "Ωmega ∑ résumé", "'; DROP TABLE papers; --", "$(rm -rf /)"])
def test_any_unicode_query_works(engine, q):
    assert len(engine.search(q, 3).hits) == 3


def test_chinese_on_an_english_only_index_gets_a_notice_not_noise(engine):
    r = engine.search("长上下文语言模型", 3)
    assert r.hits == [] and "multilingual" in r.message


def test_k_larger_than_corpus_is_capped(engine):
    assert len(engine.search("learning", 500).hits) == 66
    assert len(engine.similar([engine.papers[0].id], 500).hits) == 65
