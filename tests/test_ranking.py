"""Pure ranking functions: how a query is read, and how meaning and words are blended."""
import numpy as np
import pytest

from search.engine import nothing_close, nothing_close_upload
from search.parts.lexical import query_terms
from search.fusion import (DEFAULT_WEIGHTS, Candidates, Weights, best_sentence, blend, dense_multilingual,
                            query_kind, rank)


@pytest.mark.parametrize("query,kind", [
    ("JanusVLN", "name"), ("GRPO", "name"), ("KV cache", "name"), ("Muon", "name"), ("DA3 depth", "name"),
    ("how do I make a language model read longer documents?", "question"),
    ("which optimizer trains fastest", "question"),
    ("OrthAlign: Orthogonal Subspace Decomposition for Non-Interfering Multi-Objective Alignment", "title"),
    ("keeping helpfulness and harmlessness from fighting each other by updating the weights separately", "description"),
    ("diffusion models for video editing", "topic"),
    ("multimodal misinformation detection, vision-language models, creator intent, news images", "topic"),
])
def test_query_kind(query, kind):
    assert query_kind(query) == kind


def test_the_question_frame_never_drives_bm25():
    assert query_terms("how do I make a language model read longer documents?") == \
        ["languag", "model", "read", "longer", "document"]
    assert query_terms("How much can we get?") == []


def test_blend_scales_both_signals_to_unit_range():
    scores = blend(np.array([0.2, 0.4, 0.6]), np.array([0.0, 10.0, 5.0]), alpha=0.5)
    assert np.allclose(scores, [0.0, 0.75, 0.75])


def test_a_name_leans_on_words_and_a_question_on_meaning():
    # paper 0 shares the query's words, paper 1 its meaning
    cands = Candidates(np.array([0, 1]), lexical=np.array([9.0, 1.0]), doc=np.array([0.30, 0.50]))
    assert rank(cands, DEFAULT_WEIGHTS, "name")[0].tolist() == [0, 1]
    assert rank(cands, DEFAULT_WEIGHTS, "question")[0].tolist() == [1, 0]


def test_closest_sentence_adds_to_the_dense_score():
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    offsets = np.array([0, 2, 3])  # paper 0: sentences 0-1; paper 1: sentence 2
    best = best_sentence(vectors, offsets, np.array([1, 0]), np.array([0.0, 1.0], dtype=np.float32))
    assert np.allclose(best, [0.8, 1.0])
    cands = Candidates(np.array([0, 1]), np.zeros(2), doc=np.array([0.5, 0.5]), sentence=np.array([0.9, 0.1]))
    assert rank(cands, Weights(sentence=0.3), "topic")[0].tolist() == [0, 1]


def test_a_name_is_ranked_without_the_closest_sentence():
    cands = Candidates(np.array([0, 1]), np.zeros(2), doc=np.array([0.5, 0.6]), sentence=np.array([0.9, 0.1]))
    assert rank(cands, Weights(sentence=0.3), "name")[0].tolist() == [1, 0]
    assert np.allclose(cands.dense(Weights(sentence=0.3), "name"), [0.5, 0.6])


def test_a_derived_title_counts_as_the_abstract_across_languages():
    w = Weights(ml_abstract=1.0, ml_title=1.0, ml_sentence=0.0)
    real = dense_multilingual(np.array([0.2]), np.array([0.9]), np.array([False]), None, w)
    derived = dense_multilingual(np.array([0.2]), np.array([0.9]), np.array([True]), None, w)
    assert np.allclose(real, 0.55) and np.allclose(derived, 0.2)


def test_nothing_close_unless_a_cosine_or_a_name_says_otherwise():
    far = nothing_close(0.15)                                             # far in meaning
    assert far.kind == "nothing close" and far.words.startswith("Nothing in this index is close")
    assert nothing_close(0.25) is None                                    # close enough, and a word shared
    assert "0.25" in nothing_close(0.25, shared_word=False).words         # no shared word: a higher bar
    assert nothing_close(0.35, shared_word=False) is None
    assert nothing_close(0.15, name_found=True) is None                   # a name BM25 found: close by its letters


def test_an_upload_is_judged_by_its_texts_long_enough_to_be_an_abstract_or_a_title():
    config = ["[server]", "port = 8501", "headless = true", "base = 'dark'"]
    # "headless = true" sits at 0.30 from a conference paper: a short line can't make the upload close
    far = nothing_close_upload(config, np.array([0.25, 0.14, 0.305, 0.28])).words
    assert "Nothing in this index is close" in far and "0.30" in far
    title = "Sparse autoencoders find interpretable features in language models"
    assert nothing_close_upload([title, "port = 8501"], np.array([0.62, 0.14])) is None
    assert nothing_close_upload([title], np.array([0.15])).kind == "nothing close"


def test_a_question_for_cheaper_faster_smaller_is_read_as_efficiency():
    from search.fusion import as_asked

    assert as_asked("how can I make LLM inference cheaper?", "question") == \
        "how can I make LLM inference more efficient?"
    assert as_asked("How do I make diffusion sampling Faster and use less memory?", "question") == \
        "How do I make diffusion sampling more efficient and use more efficient memory?"
    assert as_asked("faster R-CNN", "name") == "faster R-CNN"  # a name or a topic keeps its words
    assert as_asked("lightweight models for fewshot tasks?", "question") == "lightweight models for fewshot tasks?"
