"""The real model on the seeds: queries written for this test find their paper first."""
import pytest

from search.engine import EXAMPLE_QUERIES, UnknownPaper, score_text
from search.parts.lexical import stem_of
from search.filters import Filters

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
    assert all(h.cosine == h.score for h in hits)


def test_hybrid_shows_the_score_it_ranks_by_and_the_cosine_beside_it(engine):
    semantic = {h.paper.id: h.score for h in engine.search("graph neural networks", 10, mode="semantic").hits}
    result = engine.search("graph neural networks", 10)
    scores = [h.score for h in result.hits]
    assert result.score_name == "match" and scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 + 1e-6 for s in scores) and scores[0] > 0.9
    assert all(abs(h.cosine - semantic[h.paper.id]) < 1e-5 for h in result.hits if h.paper.id in semantic)
    assert score_text(result.hits[0], result.score_name).startswith("match ")
    assert " · cosine " in score_text(result.hits[0], result.score_name)


def test_why_marks_words_that_carry_meaning_not_question_words_or_common_ones(engine):
    result = engine.search("how much does a model need to see to read longer documents?", 5)
    assert {"longer", "document"} <= {w for w in ("longer", "document") if stem_of(w) in result.terms}
    assert not result.terms & {stem_of(w) for w in ("how", "much", "does", "model", "need")}


def test_question_words_drive_bm25_only_in_a_papers_own_text(engine):
    assert engine.rankers.lexical.scores("show make").max() == 0            # a query's frame
    assert engine.rankers.lexical.scores("show make", question=False).max() > 0  # a paper's text for similar()


def test_a_query_far_from_every_paper_says_so_above_the_list(engine):
    far = engine.search("[server]\nport = 8501\nheadless = true", 5)
    assert far.hits and "Nothing in this index is close" in far.message
    assert "Nothing in this index is close" in engine.search("asdf qwer zxcv uiop hjkl", 5).message
    assert "Nothing" not in engine.search("JanusVLN", 5).message
    near = engine.search("removing positional encodings to make language models work on longer inputs", 5)
    assert "Nothing" not in near.message


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


QUESTION = "how do language models handle long documents?"


def test_sort_by_rating_reorders_the_relevant_candidates_only(iclr_engine):
    from search.engine import MATCH_FLOOR, SORT_POOL

    def rating(p) -> float:
        return p.avg_rating if p.avg_rating is not None else -1  # unrated papers go last

    pool = iclr_engine.search(QUESTION, SORT_POOL).hits  # the relevance pool the sort re-orders
    best = max(h.score for h in pool)
    kept = [h.paper for h in pool if h.score >= MATCH_FLOOR * best]
    result = iclr_engine.search(QUESTION, 10, filters=Filters(sort="rating"))
    by_rating = result.hits
    ratings = [rating(h.paper) for h in by_rating]
    assert ratings == sorted(ratings, reverse=True) and len(by_rating) == min(10, result.matched) > 3
    assert {h.paper.id for h in by_rating} <= {p.id for p in kept}  # not the best-rated papers of the conference
    # exactly the best rated of the kept papers, in order: a sort of the wrong papers (past the floor) fails
    assert ratings == sorted(map(rating, kept), reverse=True)[:len(by_rating)]
    assert by_rating[0].paper.avg_rating == max(p.avg_rating for p in kept if p.avg_rating is not None)
    assert [h.rank for h in by_rating] == list(range(1, len(by_rating) + 1))
    # fewer than it keeps: still the best rated of them all, not the few most relevant sorted
    top = [rating(h.paper) for h in iclr_engine.search(QUESTION, 4, filters=Filters(sort="rating")).hits]
    assert top == ratings[:4]


def test_oral_first_then_rating(iclr_engine):
    from search.catalog import ordered

    for papers in ([h.paper for h in iclr_engine.search("neural networks", 30, filters=Filters(sort="oral")).hits],
                   [iclr_engine.papers[r] for r in ordered(range(len(iclr_engine.papers)), iclr_engine.papers, "oral")]):
        orals = ["Oral" in p.venue for p in papers]
        assert papers and orals == sorted(orals, reverse=True)
        ratings = [p.avg_rating for p in papers if "Oral" in p.venue]
        assert ratings == sorted(ratings, reverse=True)
    assert any(orals) and not all(orals)  # the whole catalogue has both


def test_min_rating_filters_every_list(iclr_engine):
    for hits in (iclr_engine.search(QUESTION, 10, filters=Filters(min_rating=6)).hits,
                 iclr_engine.similar([iclr_engine.papers[0].id], 10, Filters(min_rating=6)).hits):
        assert hits and all(h.paper.avg_rating is not None and h.paper.avg_rating >= 6 for h in hits)
    topic = next(iter(iclr_engine.catalog.topics))
    papers = iclr_engine.catalog.topic_papers(topic, Filters(min_rating=6, sort="rating"))
    assert all(p.avg_rating >= 6 for p in papers)
    assert [p.avg_rating for p in papers] == sorted((p.avg_rating for p in papers), reverse=True)
    assert iclr_engine.search(QUESTION, 10, filters=Filters(min_rating=10)).message == "No paper matches these filters."
    with pytest.raises(ValueError):
        iclr_engine.search(QUESTION, 10, filters=Filters(sort="citations"))


def test_stats_per_area_and_topic(iclr_engine):
    from search.stats import groups as stats_groups

    groups = dict(stats_groups(iclr_engine.papers, iclr_engine.catalog.topics))
    whole = groups["all"][0]
    assert whole.papers == len(iclr_engine.papers) and whole.rated == sum(
        p.avg_rating is not None for p in iclr_engine.papers)
    assert sum(g.papers for g in groups["area"]) == sum(bool(p.primary_area) for p in iclr_engine.papers)
    assert sum(g.papers for g in groups["topic"]) == len(iclr_engine.papers)
    for g in groups["area"] + groups["topic"]:
        if g.rated:
            assert g.q1 <= g.median <= g.q3 and min(g.ratings) <= g.mean <= max(g.ratings)
            top = iclr_engine.catalog.paper(g.best[0])
            assert top.avg_rating == max(g.ratings)
    assert {g.id for g in groups["topic"]} == set(iclr_engine.catalog.topics)


def test_a_sorted_list_keeps_only_papers_above_the_relevance_floor(iclr_engine):
    from search.engine import COSINE_FLOOR, MATCH_FLOOR, SORT_POOL

    pool = iclr_engine.search(QUESTION, SORT_POOL).hits  # hybrid: the floor is on the match score
    best = max(h.score for h in pool)
    above = {h.paper.id for h in pool if h.score >= MATCH_FLOOR * best}
    result = iclr_engine.search(QUESTION, SORT_POOL, filters=Filters(sort="rating"))
    assert {h.paper.id for h in result.hits} == above and result.matched == len(above) < SORT_POOL
    assert result.order == f"{len(above)} {'paper that matches' if len(above) == 1 else 'papers that match'}, best rated first"
    short = iclr_engine.search(QUESTION, 3, filters=Filters(sort="rating"))
    assert short.order == f"the first 3 of {len(above)} papers that match, best rated first"
    assert iclr_engine.search(QUESTION, 10).order == ""  # by relevance nothing is cut or said
    semantic = iclr_engine.search(QUESTION, SORT_POOL, "semantic").hits  # ranked by cosine: the cosine floor
    near = {h.paper.id for h in semantic if h.cosine >= COSINE_FLOOR * semantic[0].cosine}
    assert {h.paper.id for h in iclr_engine.search(QUESTION, SORT_POOL, "semantic", Filters(sort="rating")).hits} == near


def test_a_sort_on_an_index_without_ratings_says_so_and_ranks_by_relevance(engine):
    by_relevance = [h.paper.id for h in engine.search("equivariant networks", 10).hits]
    for result in (engine.search("equivariant networks", 10, filters=Filters(sort="rating")),
                   engine.similar([engine.papers[0].id], 10, filters=Filters(sort="oral")),
                   engine.like_texts([engine.papers[1].abstract], 10, filters=Filters(sort="rating"))):
        assert "no review ratings" in result.message and result.sort == "relevance" and result.order == ""
    assert [h.paper.id for h in engine.search("equivariant networks", 10, filters=Filters(sort="rating")).hits] == by_relevance
