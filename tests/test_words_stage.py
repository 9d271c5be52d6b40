"""The words stage: papers, metadata, reviews and BM25 published before any abstract is embedded, so the whole
venue answers by words at once and by meaning when the vectors land; a re-fetch's new papers found by words
beside the old papers' vectors."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import SEEDS, FakeModel, cache_copy, run_cli
from search.build import build_index
from search.parts.registry import STAGES
from search.engine import Engine
from search.notices import WORDS

BY_WORDS = WORDS["by words"]
from search.filters import Filters
from search.index import UNEMBEDDED, load_index, resolve, versions_dir
from search.progress import meaning_eta, meaning_note, still_coming, with_build_notes

QUERY = "optical flow robustness to corrupted images"


class Stopped(Exception):
    pass


def stop_at_abstracts(stage: str, done: int, total: int) -> None:
    if stage == "abstracts":
        raise Stopped


@pytest.fixture(scope="module")
def words_index(tmp_path_factory, model, embedding_cache):
    """One seed list built to its words stage and stopped there (its abstracts never embedded): inputs of
    their own, so the page plans no build over it."""
    d = tmp_path_factory.mktemp("words")
    inputs = d / "seeds"
    inputs.mkdir()
    for f in sorted(SEEDS.iterdir())[:2]:
        shutil.copy(f, inputs / f.name)
    cache = cache_copy(embedding_cache, d / "cache", vectors=False)
    with pytest.raises(Stopped):
        build_index([inputs], d / "index", model=model, cache_dir=cache, words_first=1,
                    progress=stop_at_abstracts)
    return d / "index"


def test_the_words_stage_publishes_every_paper_before_any_vector(words_index):
    data = load_index(words_index)
    m = data.manifest
    assert m.pending[0] == "abstracts" and set(m.pending[1:]) <= set(STAGES)
    assert m.unembedded == m.count == len(data.papers) > 20
    assert list(m.published) == ["words"] and m.lexical and m.query_encoder
    assert json.loads((data.path / UNEMBEDDED).read_text()) == list(range(m.count))
    assert "search by meaning" in still_coming(m.pending)


def test_a_query_by_meaning_is_ranked_by_words_and_says_so(words_index, model, fingerprint):
    engine = Engine(load_index(words_index), model, fingerprint)
    keyword = engine.search(QUERY, 5, "keyword")
    for mode in ("hybrid", "semantic"):
        r = engine.search(QUERY, 5, mode)
        assert r.by_words and r.mode == mode and r.score_name == "BM25"
        assert [h.paper.id for h in r.hits] == [h.paper.id for h in keyword.hits]
        assert r.hits[0].paper.title.startswith("RobustSpring") and r.hits[0].cosine is None
        assert r.notices[0].kind == "by words" and r.message.startswith(BY_WORDS)
    assert not keyword.by_words and keyword.hits[0].cosine is None  # no vector, no cosine shown
    # nothing that needs the vectors answers half: it says when it comes
    pid = keyword.hits[0].paper.id
    similar = engine.similar([pid], 5)
    assert similar.waiting and not similar.hits and "once this paper's abstract is embedded" in similar.message
    # one text ranks as the same text pasted as a query (by words for now); several need their vectors
    like = engine.like_texts(["robust optical flow under image corruptions"], 5)
    assert like.by_words and [h.paper.id for h in like.hits] == \
        [h.paper.id for h in engine.search("robust optical flow under image corruptions", 5).hits]
    several = engine.like_texts(["robust optical flow under image corruptions", "optical flow benchmarks"], 5)
    assert several.waiting and not several.hits
    assert not engine.has_vector() and not engine.has_vector(pid)
    with pytest.raises(ValueError):
        engine.fared(pid=pid)


def test_the_cli_says_ranked_by_words_with_the_time_left_of_a_running_build(words_index):
    ran = run_cli("query", QUERY, "-k", "3", "--json", "--index", str(words_index))
    out = json.loads(ran.stdout)
    assert ran.returncode == 0 and out["ranked_by"] == "words" and out["score"] == "BM25" and out["not_embedded"] > 20
    assert out["message"].startswith(BY_WORDS) and out["notices"][0] == {"kind": "by words"}
    assert out["meaning_in_seconds"] is None  # no build runs now
    assert out["hits"][0]["title"].startswith("RobustSpring")
    table = run_cli("query", QUERY, "-k", "3", "--index", str(words_index))
    assert "Ranked by words for now" in table.stdout
    fared = run_cli("fared", QUERY, "--index", str(words_index))
    assert fared.returncode == 0 and "still being embedded" not in fared.stderr and "needs the abstracts" in fared.stdout


def test_the_time_until_meaning_is_read_from_the_build_status():
    running = {"stage": "abstracts", "done": 300, "total": 19630, "eta": 900.0, "eta_stages": {"abstracts": 365.0}}
    assert meaning_eta(running) == 365.0 and meaning_note(running) == "By meaning in about 6m05s."
    early = {"stage": "abstracts", "done": 30, "total": 19630, "eta": 1200.0, "eta_stages": {}}
    assert meaning_eta(early) == 1200.0  # before the whole job's pace is known: the stage's own
    assert meaning_note({"stage": "abstracts", "done": 0, "total": 200}) == "The abstracts are 0% embedded."
    assert meaning_eta(None) is None  # no build runs: it stopped before the abstracts, and says how to finish
    assert meaning_note(None).startswith("The build stopped before search by meaning; `python index_build.py`")
    assert meaning_note({"stage": "loading the model", "done": 0, "total": 1}) == \
        "The build running now brings search by meaning."
    from search.engine import Result
    from search.notices import notice

    assert with_build_notes(Result([], [notice("by words")], by_words=True), lambda: running) == \
        "Ranked by words for now: the abstracts are not all embedded yet, and ranking by meaning follows. " \
        "By meaning in about 6m05s."
    assert with_build_notes(Result([], [notice("empty query")]), lambda: 1 / 0) == \
        "Type a question or a topic to search."  # the status never read


def test_the_page_says_what_is_ranked_how_and_what_is_still_coming(words_index, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from cards_page import cards
    from conftest import ROOT

    monkeypatch.setenv("SEARCH_INDEX", str(words_index))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["q"] = QUERY
    at.run()
    assert not at.exception and not at.error
    assert any(i.value.startswith("Ranked by words for now") for i in at.info)
    assert at.text_area[0].label.startswith("Search papers by words")
    shown = cards(at, "q")
    assert shown[0]["title"].startswith("1. RobustSpring") and "BM25" in shown[0]["small"]
    assert any("keyword (by words, until the abstracts are embedded) ranking" in c.value for c in at.caption)
    at.query_params.clear()
    at.query_params["paper"] = shown[0]["pid"]
    at.run()
    assert not at.exception and any("Similar papers come once this paper's abstract is embedded" in i.value
                                    for i in at.info)
    at.query_params.clear()
    at.query_params["view"] = "map"
    at.run()
    assert not at.exception and any("comes once the abstracts are embedded" in i.value for i in at.info)
    at.query_params.clear()
    at.query_params["topic"] = "0"
    at.run()
    # no build runs over this index: it stopped before them, and that is what the page says
    assert not at.exception and not at.error and any(
        "Topics come with the map" in i.value and "The build stopped before topics and the map" in i.value
        for i in at.info)
    at.query_params.clear()
    at.query_params["view"] = "stats"
    at.run()
    assert not at.exception and not at.error


def test_the_build_goes_on_to_meaning_and_never_writes_through_a_link(tmp_path, model, embedding_cache):
    out = tmp_path / "index"
    cache = cache_copy(embedding_cache, tmp_path / "cache", vectors=False)
    seen = {}

    def look(stage: str, done: int, total: int) -> None:
        if stage == "abstracts" and not seen:
            seen["words"] = resolve(out)

    report = build_index([SEEDS], out, model=model, cache_dir=cache, words_first=1, explore=False,
                         sentences=False, progress=look)
    final = load_index(out)
    assert list(report.published)[:2] == ["words", "abstracts"] and report.embedded == 66
    assert final.manifest.unembedded == 0 and final.unembedded is None and UNEMBEDDED not in final.manifest.files
    r = Engine(final, model).search(QUERY, 5)
    assert not r.by_words and r.score_name == "match" and r.hits[0].cosine > 0.3
    # every build still on disk, the words stage's among them, is whole: the abstracts' vectors were
    # written to a file of their own, not through a link into the words stage's folder
    for build in versions_dir(out).glob("build-*"):
        load_index(build)
    assert seen["words"].exists() or len(list(versions_dir(out).glob("build-*"))) == 3


def stopped_refetch(d, records, old: int):
    """A venue built whole from its first `old` submissions, then re-fetched whole and stopped at the words
    stage: the old papers keep their vectors, the new ones have none yet. The engine and the new ids."""
    lines = records.read_text(encoding="utf-8").splitlines()
    before, after = d / "before" / "venue.jsonl", d / "after" / "venue.jsonl"
    for path, part in ((before, lines[:old]), (after, lines)):
        path.parent.mkdir()
        path.write_text("\n".join(part) + "\n", encoding="utf-8")
    model = FakeModel()  # which rows have vectors and how each is ranked, not what the vectors mean
    options = dict(model=model, cache_dir=d / "cache", explore=False, sentences=False, summaries=False,
                   review_search=False, words_first=1)
    build_index([before], d / "index", **options)
    with pytest.raises(Stopped):
        build_index([after], d / "index", progress=stop_at_abstracts, **options)
    new = {json.loads(line)["id"] for line in lines[old:]}
    return Engine(load_index(d / "index"), model), new


@pytest.fixture(scope="module")
def refetch(tmp_path_factory, venue_records):
    """All but the last 40 submissions embedded, the 40 re-fetched ones not yet."""
    return stopped_refetch(tmp_path_factory.mktemp("refetch"), venue_records, -40)


def test_a_few_vectors_beside_many_papers_to_embed_rank_by_words(tmp_path, venue_records):
    # the page's first run: the seeds' vectors are cached when the venue's words stage is published (66 of
    # 19,696); so few (here 10 of 240, under engine.HYBRID_SHARE) are no ranking by meaning
    engine, new = stopped_refetch(tmp_path, venue_records, 10)
    assert engine.manifest.unembedded == len(new) > 200
    r = engine.search("language model reasoning", 10, "hybrid")
    assert r.by_words and r.score_name == "BM25" and r.message.startswith(BY_WORDS)
    assert not engine.has_vector() and engine.like_texts(["a text about language models", "and another"], 5).waiting


def test_a_refetch_finds_new_papers_by_words_beside_the_old_vectors(refetch):
    engine, new = refetch
    rows = {engine.papers[r].id for r in engine.data.unembedded}
    assert rows == new and engine.manifest.unembedded == 40
    paper = next(p for p in engine.papers if p.id in sorted(new))
    hybrid = engine.search(paper.title, 10, "hybrid")
    assert not hybrid.by_words and hybrid.unembedded == 40 and "40 of the papers searched" in hybrid.message
    assert paper.id in [h.paper.id for h in hybrid.hits]  # found by its title's words
    semantic = engine.search(paper.title, 50, "semantic")
    assert semantic.hits and not {h.paper.id for h in semantic.hits} & new  # no vector, no nearest neighbour
    assert "leaves them out" in semantic.message
    old = next(p for p in engine.papers if p.id not in new)
    assert engine.has_vector(old.id) and not engine.has_vector(paper.id)
    assert engine.similar([old.id], 5).hits and engine.similar([paper.id], 5).waiting
    assert engine.fared(pid=old.id).ids
    # every filter and sort that needs no vector works on the new papers too
    rated = engine.search(paper.title, 10, "hybrid", Filters(sort="rating"))
    ratings = [h.paper.avg_rating for h in rated.hits if h.paper.avg_rating is not None]
    assert ratings == sorted(ratings, reverse=True) and rated.hits
    assert engine.review_record(paper.id)["id"] == paper.id


def test_a_search_saved_while_ranked_by_words_keeps_its_mode_and_bad_entries_are_skipped(venue_words, tmp_path,
                                                                                          monkeypatch):
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT
    from search import saved

    venue_words = Path(shutil.copytree(venue_words.resolve(), tmp_path / "index"))  # its saved searches its own

    monkeypatch.setenv("SEARCH_INDEX", str(venue_words))
    path = saved.saved_file(venue_words)
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["q"] = "language model reasoning"
    at.run()
    assert any("keyword (by words, until the abstracts are embedded) ranking" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Save this search").click().run()
    assert not at.exception and not at.error
    # the mode asked for, not the words that describe today's ranking: by meaning once the abstracts are embedded
    assert [s.mode for s in saved.load(path)] == ["hybrid"] and not saved.load(path)[0].problem
    assert [b.label for b in at.sidebar.button] == ["Remove"]
    good = json.loads(path.read_text(encoding="utf-8"))["searches"][0]
    # entries no engine can run: the label the page once wrote as the mode, a filter no index has, a value that
    # does not parse, no entry at all; each is named and skipped, the good one still listed, the file kept as it is
    bad = [{**good, "query": "by label", "mode": "keyword (by words, until the abstracts are embedded)"},
           {**good, "query": "by colour", "address": {"colour": ["red"]}},
           {**good, "query": "too high", "address": {"min_rating": ["eleven"]}}, "not a search"]
    text = json.dumps({"searches": [bad[0], good, *bad[1:]]}, indent=1)
    path.write_text(text, encoding="utf-8")
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120).run()
    assert not at.exception and not at.error
    said = [c.value.replace("\\", "") for c in at.sidebar.caption]  # as shown: Markdown's escapes dropped
    assert any("“by label” (decision accepted) cannot be run (unknown mode 'keyword (by words" in c for c in said)
    assert any("“by colour” (colour red) cannot be run (unknown filter 'colour'): skipped" in c for c in said)
    assert any("“too high” (min_rating eleven) cannot be run (min_rating=eleven" in c for c in said)
    assert any("saved search (no query) cannot be run (not a search" in c for c in said)
    assert any("“language model reasoning” (decision accepted): " in m.value.replace("\\", "")
               for m in at.sidebar.markdown)
    assert path.read_text(encoding="utf-8") == text  # reading never rewrites
    # every entry removable, the bad ones too; removing one keeps the others exactly as they were
    assert [b.label for b in at.sidebar.button] == ["Remove"] * 5
    at.sidebar.button[0].click().run()
    assert not at.exception and json.loads(path.read_text(encoding="utf-8"))["searches"] == [good, *bad[1:]]
    # the command line lists the same: a line for each skipped entry, the good one's news, no traceback
    ran = run_cli("saved", "--index", str(venue_words))
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("“language model reasoning”") and len(lines) >= 4
    assert "“by colour” (colour red) cannot be run (unknown filter 'colour'): skipped; remove it: python -m search " \
           "saved --remove 'by colour'" in ran.stdout
    assert run_cli("saved", "--remove", "by colour", "--index", str(venue_words)).returncode == 0
    assert json.loads(path.read_text(encoding="utf-8"))["searches"] == [good, *bad[2:]]
    listed = [json.loads(line) for line in run_cli("saved", "--json", "--index", str(venue_words)).stdout.splitlines()]
    assert [x.get("skipped", "")[:14] for x in listed] == ["", "min_rating=ele", "not a search: "]


def test_a_sorted_list_ranked_by_words_keeps_off_topic_papers_out(shared_words, model, fingerprint):
    """Sorted by controversy in one area while ranked by words, a query about machine unlearning listed papers
    that only share "large language models" with it (8 of 10 without the floor, on these papers): the floor on
    the best BM25 score keeps the list on its subject. The 4,302 ICLR papers of ../shared, BM25 alone."""
    engine = Engine(load_index(shared_words), model, fingerprint)
    query, area = "machine unlearning for large language models", ("foundation or frontier models, including LLMs",)
    relevance = engine.search(query, 10, filters=Filters(areas=area))
    assert relevance.by_words and "unlearn" in relevance.hits[0].paper.title.lower()
    controversy = engine.search(query, 10, filters=Filters(areas=area, sort="controversy"))
    assert controversy.by_words and controversy.sort == "controversy" and controversy.hits
    assert all("unlearn" in (h.paper.title + h.paper.abstract).lower() for h in controversy.hits), \
        [h.paper.title for h in controversy.hits]
    assert controversy.matched < 10  # of the 30 most relevant, only those close to the best match are kept
