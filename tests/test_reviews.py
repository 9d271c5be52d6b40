"""Decisions, reviews and how papers like this fared, on an index built from what `python -m search fetch`
writes when served the first submissions of the real ICLR 2026 crawl (conftest: venue_records)."""
import json
from collections import Counter

import numpy as np
import pytest

from conftest import ROOT, run_cli
from search.filters import spread
from search.render.display import block_html
from search.filters import MIN_DECIDED, decision_group
from search.text import strip_control


def records(path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


cli = run_cli


def hits_of(*args: str) -> list[dict]:
    r = cli("query", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["hits"]


# ---------------------------------------------------------------- decisions, ratings and TL;DR on every hit

def test_each_hit_carries_its_decision_individual_ratings_and_tldr(venue_index, venue_records):
    truth = records(venue_records)
    hits = hits_of("video understanding benchmark", "--decision", "all", "-k", "20", "--index", str(venue_index))
    assert len(hits) == 20
    for h in hits:
        rec = truth[h["id"]]
        assert h["decision"] == rec["decision"] and h["tldr"] == rec["tldr"]
        assert h["reviews"]["count"] == len(rec["reviews"])
        assert h["reviews"]["ratings"] == [float(r["rating"]) for r in rec["reviews"]]
        if len(rec["reviews"]) > 1:
            assert h["reviews"]["spread"] == pytest.approx(np.std([r["rating"] for r in rec["reviews"]]), abs=1e-3)
        assert h["reviews"]["sub_scores"]["soundness"] == pytest.approx(
            np.mean([r["soundness"] for r in rec["reviews"]]), abs=1e-3)
    assert {h["decision"] for h in hits} - {"Oral", "Poster"}, "every decision is searched with --decision all"


def test_decision_filter_defaults_to_accepted_and_opens_to_every_submission(venue_index, venue_engine):
    default = hits_of("language models", "-k", "50", "--index", str(venue_index))
    assert default and {h["decision"] for h in default} <= {"Oral", "Spotlight", "Poster"}
    accepted = sum(decision_group(p.decision) == "accepted" for p in venue_engine.papers)
    assert len(default) == min(50, accepted)
    rejected = hits_of("language models", "--decision", "rejected", "-k", "50", "--index", str(venue_index))
    assert rejected and {h["decision"] for h in rejected} == {"Rejected"}
    both = hits_of("language models", "--decision", "withdrawn,rejected", "-k", "50", "--index", str(venue_index))
    assert {h["decision"] for h in both} == {"Rejected", "Withdrawn"}
    bad = cli("query", "x", "--decision", "maybe", "--index", str(venue_index))
    assert bad.returncode == 2 and "--decision maybe (use accepted" in bad.stderr and "Traceback" not in bad.stderr


def test_an_index_without_decisions_refuses_the_filter_and_searches_as_before(seed_index):
    r = cli("query", "music scores", "--decision", "rejected", "--index", str(seed_index))
    assert r.returncode == 2 and "holds no decisions" in r.stderr
    hits = hits_of("music scores", "--index", str(seed_index))
    assert len(hits) == 10 and all(h["decision"] == "" and h["reviews"]["count"] == 0 for h in hits)


def test_sorts_by_controversy_sub_score_and_reviews_and_minimum_sub_scores(venue_index, venue_engine):
    by_id = {p.id: p for p in venue_engine.papers}
    args = ("learning", "--decision", "all", "-k", "30", "--index", str(venue_index))
    spreads = [spread(by_id[h["id"]]) for h in hits_of(*args, "--sort", "controversy")]
    assert len(spreads) > 3 and spreads == sorted(spreads, reverse=True)
    soundness = [h["reviews"]["sub_scores"]["soundness"] for h in hits_of(*args, "--sort", "soundness")]
    assert len(soundness) > 3 and soundness == sorted(soundness, reverse=True)
    counts = [h["reviews"]["count"] for h in hits_of(*args, "--sort", "reviews")]
    assert counts == sorted(counts, reverse=True)
    floor = hits_of(*args, "--min-score", "soundness=3", "--min-score", "presentation=2.5")
    assert floor and all(h["reviews"]["sub_scores"]["soundness"] >= 3 and
                         h["reviews"]["sub_scores"]["presentation"] >= 2.5 for h in floor)
    bad = cli("query", "x", "--sort", "stars", "--index", str(venue_index))
    assert bad.returncode == 2 and "soundness" in bad.stderr  # names the sorts this index has


# ---------------------------------------------------------------- a paper's reviews

def test_reviews_json_returns_every_review_with_its_scores_and_texts(venue_index, venue_records):
    truth = records(venue_records)
    pid = max(truth, key=lambda i: len(truth[i]["reviews"]))
    r = cli("reviews", pid, "--json", "--index", str(venue_index))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    # as the build reads them: texts with control and zero-width characters taken out (corpus.strip_control)
    expected = [{k: strip_control(v).strip() if isinstance(v, str) else v for k, v in r.items()}
                for r in truth[pid]["reviews"]]
    assert got["decision"] == truth[pid]["decision"] and got["reviews"] == expected
    assert all({"rating", "confidence", "soundness", "summary", "weaknesses"} <= set(x) for x in got["reviews"])
    text = cli("reviews", pid, "--index", str(venue_index)).stdout
    assert all(x["reviewer"] in text for x in truth[pid]["reviews"])
    assert truth[pid]["reviews"][0]["summary"][:60] in text
    unknown = cli("reviews", "nope", "--index", str(venue_index))
    assert unknown.returncode == 2 and "no paper with id 'nope'" in unknown.stderr


def test_papers_jsonl_leaves_the_review_texts_to_their_own_part(venue_index, venue_records):
    """A cold start reads papers.jsonl whole: the reviews' texts (10x the abstracts) must not be in it."""
    truth = records(venue_records)
    summary = next(r["reviews"][0]["summary"] for r in truth.values() if r["reviews"])
    papers = (venue_index / "papers.jsonl").read_text(encoding="utf-8")
    assert json.dumps(summary, ensure_ascii=False)[1:80] not in papers
    assert json.dumps(summary, ensure_ascii=False)[1:80] in (venue_index / "reviews.jsonl").read_text(encoding="utf-8")
    manifest = json.loads((venue_index / "manifest.json").read_text())
    assert manifest["reviews"]["reviews"] == sum(len(r["reviews"]) for r in truth.values())


def test_search_within_reviews_shows_the_passage_and_its_reviewer(venue_index, venue_records):
    truth = records(venue_records)
    hits = hits_of("reviewers asked for an ablation of the tokenizer", "--mode", "reviews", "--decision", "all",
                   "--index", str(venue_index))
    assert hits
    for h in hits:
        passage = h["review_passage"]
        review = next(r for r in truth[h["id"]]["reviews"] if r["reviewer"] == passage["reviewer"])
        assert passage["text"].rstrip("…")[:200] in review[passage["field"]]
    assert any(w in hits[0]["review_passage"]["text"].lower() for w in ("ablation", "tokenizer"))


def test_search_within_reviews_on_an_index_without_them_says_why(engine):
    result = engine.search_reviews("ablation", 10)
    assert not result.hits and "holds no reviews" in result.message


def test_review_texts_render_markdown_and_math_and_never_html():
    out = block_html("Strong **results** with $x^2$.\n\n- first <script>alert(1)</script>\n- second <b>bold</b>")
    assert "<strong>results</strong>" in out and "<math" in out
    assert "<script>" not in out and "&lt;script&gt;" in out and "&lt;b&gt;" in out
    assert out.count("<li>") == 2


# ---------------------------------------------------------------- how papers like this fared

def test_fared_counts_match_the_decisions_of_the_neighbours_it_names(venue_index, venue_engine):
    by_id = {p.id: p for p in venue_engine.papers}
    pid = venue_engine.papers[5].id
    r = cli("fared", "--paper", pid, "-k", "40", "--json", "--index", str(venue_index))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    ids = got["neighbours"]["ids"]
    assert len(ids) == 40 == len(set(ids)) and pid not in ids
    counted = Counter(decision_group(by_id[i].decision) for i in ids)
    assert got["neighbours"]["counts"] == {g: counted.get(g, 0) for g in ("accepted", "rejected", "withdrawn", "undecided")}
    venue = Counter(decision_group(p.decision) for p in venue_engine.papers)
    assert got["venue"]["counts"]["accepted"] == venue["accepted"] and got["venue"]["papers"] == len(by_id)
    assert got["area"] == by_id[pid].primary_area
    # nearest first: the first neighbour is the paper's most similar one
    assert ids[0] == venue_engine.similar([pid], 1, mode="semantic").hits[0].paper.id
    words = cli("fared", "graph neural networks", "--index", str(venue_index)).stdout
    assert "the 50 nearest submissions:" in words and "does not predict" in words
    none = cli("fared", "--index", str(venue_index))
    assert none.returncode == 2 and "give one of" in none.stderr


def test_fared_for_an_uploaded_abstract(venue_index, venue_engine, tmp_path):
    abstract = tmp_path / "mine.txt"
    abstract.write_text(venue_engine.papers[3].abstract, encoding="utf-8")
    got = json.loads(cli("fared", "--file", str(abstract), "--json", "--index", str(venue_index)).stdout)
    assert got["neighbours"]["ids"][0] == venue_engine.papers[3].id  # its own text is its nearest


# ---------------------------------------------------------------- the venue by decision

def test_stats_acceptance_rates_match_the_records(venue_index, venue_records):
    truth = records(venue_records).values()
    r = cli("stats", "--json", "--index", str(venue_index))
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    areas = {row["name"]: row for row in rows if row["group"] == "area"}
    for area in {t["primary_area"] for t in truth}:
        decided = [t for t in truth if t["primary_area"] == area and t["decision"] in ("Oral", "Poster", "Rejected")]
        accepted = sum(t["decision"] in ("Oral", "Poster") for t in decided)
        expected = round(accepted / len(decided), 4) if len(decided) >= MIN_DECIDED else None
        assert areas[area]["acceptance_rate"] == expected, area
        assert areas[area]["decided"] == len(decided), area
    whole = next(row for row in rows if row["group"] == "all")
    assert whole["decisions"]["withdrawn"] == sum(t["decision"] == "Withdrawn" for t in truth)
    controversial = next(row for row in rows if row["group"] == "most controversial rejected")
    assert controversial["papers"] and all(len(p["ratings"]) > 1 for p in controversial["papers"])


# ---------------------------------------------------------------- the page (AppTest)

APP = str(ROOT / "streamlit_app.py")


@pytest.fixture
def venue_app(venue_index, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCH_INDEX", str(venue_index))
    return AppTest.from_file(APP, default_timeout=120)


def test_page_opens_on_accepted_papers_and_one_click_searches_every_submission(venue_app, venue_engine):
    from cards_page import cards

    at = venue_app
    at.query_params["q"] = "language models"
    at.run()
    assert not at.exception
    shown = cards(at, "q")
    by_id = {p.id: p for p in venue_engine.papers}
    assert shown and all(decision_group(by_id[c["pid"]].decision) == "accepted" for c in shown)
    first = by_id[shown[0]["pid"]]
    # the card: decision, mean and individual ratings, the TL;DR under the title
    assert first.decision in shown[0]["small"]
    assert " ".join(f"{r:g}" for r in first.ratings) in shown[0]["small"]
    assert any(c["lead"] == by_id[c["pid"]].tldr for c in shown if by_id[c["pid"]].tldr)
    assert any("accepted papers" in c.value for c in at.caption)
    at.button(key="all-decisions").click().run()
    assert at.query_params["decision"] == "all"
    every = {decision_group(by_id[c["pid"]].decision) for c in cards(at, "q")}
    assert every - {"accepted"}
    assert any(e.label.startswith("How submissions like this fared") for e in at.expander)
    assert not any("nearest submissions" in m.value for m in at.markdown)  # computed only once opened
    at.session_state["fared-open-q"] = True
    at.run()
    panel = next(m.value for m in at.markdown if "nearest submissions" in m.value).replace("\\", "")
    fared = venue_engine.fared(query="language models", k=50)
    assert fared.neighbours.words().split(" (")[0] in panel  # "12 accepted, 30 rejected, 8 withdrawn"


def test_paper_view_shows_the_reviews_table_and_folded_texts(venue_app, venue_engine):
    at = venue_app
    paper = max(venue_engine.papers, key=lambda p: len(p.ratings))
    at.query_params["paper"] = paper.id
    at.run()
    assert not at.exception
    assert f"Reviews · {paper.decision}" in [s.value for s in at.subheader]
    table = at.dataframe[0].value
    assert len(table) == len(paper.ratings) and list(table["rating"]) == paper.ratings
    folded = [e for e in at.expander if e.label.startswith("Reviewer_")]
    assert len(folded) == len(paper.ratings) and not any(e.proto.expanded for e in folded)


def test_page_sorts_by_a_sub_score_and_filters_on_another(venue_app, venue_engine):
    from cards_page import cards

    at = venue_app
    for k, v in {"q": "learning", "decision": "all", "sort": "soundness", "min_presentation": "2.5"}.items():
        at.query_params[k] = v
    at.run()
    by_id = {p.id: p for p in venue_engine.papers}
    shown = [by_id[c["pid"]] for c in cards(at, "q")]
    assert shown and all(p.sub_scores["presentation"] >= 2.5 for p in shown)
    values = [p.sub_scores["soundness"] for p in shown]
    assert values == sorted(values, reverse=True)
    assert at.selectbox(key="sort_w").value == "soundness"


def test_search_within_reviews_on_the_page(venue_app):
    from cards_page import cards

    at = venue_app
    for k, v in {"q": "missing ablation on the tokenizer", "mode": "reviews", "decision": "all"}.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    shown = cards(at, "q")
    assert shown and shown[0]["body"].startswith("Reviewer_")


def test_stats_view_by_decision(venue_app):
    at = venue_app
    at.query_params["view"] = "stats"
    at.run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "#### By decision" in text and "Most controversial rejected papers" in text
    assert "accepted (of decided)" in text


def test_the_map_draws_the_papers_the_filters_allow(venue_app, venue_engine):
    """With "accepted papers" chosen (the default once decisions are out) the map draws the accepted papers,
    not every submission; "every submission" draws them all."""
    from search.filters import decision_group

    def drawn(at) -> list[str]:
        fig = json.loads(at.get("plotly_chart")[0].proto.spec)
        return sorted(i for t in fig["data"] if t.get("customdata") and t.get("showlegend") is not False
                      for i in t["customdata"])

    at = venue_app
    at.query_params["view"] = "map"
    at.run()
    assert not at.exception and not at.error
    accepted = sorted(p.id for p in venue_engine.papers if decision_group(p.decision) == "accepted")
    assert 0 < len(accepted) < len(venue_engine.papers) and drawn(at) == accepted
    assert any(c.value.startswith(f"{len(accepted):,} papers (of {len(venue_engine.papers):,}: those the filters "
                                  "allow)") for c in at.caption)
    at.query_params["decision"] = "all"
    at.run()
    assert drawn(at) == sorted(p.id for p in venue_engine.papers)
