"""What an index says of its decisions: the review season (nothing decided yet), partial decisions (whole
areas undecided), rates from too few decided papers, and what the data lacks (authors). On submissions
fetched from the local OpenReview server (conftest.venue_records) and built with the real model."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, VENUE_NOTES, run_cli
from search.filters import MIN_DECIDED, Filters, decision_group
from search.stats import GroupStats, active_note, undecided_note

APP = str(ROOT / "streamlit_app.py")


def cli(*args):
    return run_cli(*args)


def hits_of(*args) -> list[dict]:
    r = cli("query", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[0])["hits"]


@pytest.fixture(scope="module")
def season_index(tmp_path_factory, venue_records, model, embedding_cache):
    """The same submissions as in the review season: every one under review but the withdrawn."""
    from search.build import build_index

    d = tmp_path_factory.mktemp("season")
    records = [json.loads(line) for line in venue_records.read_text(encoding="utf-8").splitlines()]
    for r in records:
        if r["decision"] != "Withdrawn":
            r["decision"], r["venue"] = "Under review", "Submitted to ICLR 2026"
    (d / "season.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    build_index([d / "season.jsonl"], d / "index", model=model, cache_dir=embedding_cache, explore=False,
                sentences=False, summaries=False, review_search=False)
    return d / "index"


def test_in_the_review_season_the_default_query_searches_every_submission_not_withdrawn(season_index):
    hits = hits_of("policy gradient convergence", "--index", str(season_index))
    assert len(hits) == 10 and {h["decision"] for h in hits} == {"Under review"}
    withdrawn = hits_of("policy gradient convergence", "--decision", "withdrawn", "--index", str(season_index))
    assert withdrawn and {h["decision"] for h in withdrawn} == {"Withdrawn"}


def test_the_page_says_which_submissions_a_review_season_index_searches(season_index, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(season_index))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["q"] = "policy gradient convergence"
    at.run()
    assert not at.exception
    assert any("No decision is out yet" in c.value for c in at.caption)
    assert at.selectbox(key="decision_w").value == "active"
    assert not any("No paper matches" in str(e.value) for e in [*at.info, *at.warning, *at.markdown])


def test_the_accepted_list_counts_the_undecided_matches_it_leaves_out(venue_index, venue_engine):
    undecided = [p for p in venue_engine.papers if decision_group(p.decision) == "undecided"]
    assert undecided, "the crawl's first submissions include areas without decisions"
    query = undecided[0].title
    shown = venue_engine.search(query, 10, filters=venue_engine.catalog.known(Filters()))
    wider = venue_engine.search(query, 10, filters=Filters(decisions=("accepted", "undecided")))
    expected = sum(decision_group(h.paper.decision) == "undecided" for h in wider.hits)
    assert shown.undecided == expected >= 1
    assert {decision_group(h.paper.decision) for h in shown.hits} == {"accepted"}
    assert f"{expected} of the 10 best matches" in shown.left_out
    out = cli("query", query, "--index", str(venue_index))
    assert "have no decision yet" in out.stdout and "--decision accepted,undecided" in out.stdout
    got = json.loads(cli("query", query, "--json", "--index", str(venue_index)).stdout)
    assert got["undecided_left_out"] == expected
    # asked for every submission, nothing is left out, and nothing is said
    assert venue_engine.search(query, 10, filters=Filters(decisions=("all",))).undecided == 0


def test_no_rate_from_too_few_decided_papers_and_counts_beside_every_rate(venue_index, venue_engine):
    few = GroupStats("neuroscience", papers=378, orals=0, rated=378, decisions={"accepted": 1, "undecided": 377})
    assert few.acceptance is None and few.acceptance_words() == "- (1 of 1 decided)"
    many = GroupStats("x", papers=40, orals=0, rated=40, decisions={"accepted": 7, "rejected": 21})
    assert many.acceptance == 0.25 and many.acceptance_words() == "25.0% (7 of 28 decided)"
    r = cli("stats", "--index", str(venue_index))
    assert r.returncode == 0 and f"no rate from fewer than {MIN_DECIDED} decided papers" in r.stdout
    assert "100.0%" not in r.stdout  # the crawl's first areas have 1 to a few decided papers each
    assert undecided_note(venue_engine.catalog.undecided) in r.stdout
    rows = [json.loads(line) for line in cli("stats", "--json", "--index", str(venue_index)).stdout.splitlines()]
    areas = [row for row in rows if row.get("group") == "area"]
    assert all(row["acceptance_rate"] is None for row in areas if row["decided"] < MIN_DECIDED)
    assert any(row["acceptance_rate"] is not None for row in areas)
    undecided = next(row for row in rows if row["group"] == "undecided")
    assert undecided["papers"] == sum(decision_group(p.decision) == "undecided" for p in venue_engine.papers)


def test_an_index_without_authors_says_so_when_asked_for_one(venue_index):
    r = cli("query", "graph neural networks", "--author", "LeCun", "--index", str(venue_index))
    assert r.returncode == 2 and "has no authors" in r.stderr and "No paper matches" not in r.stdout


def test_the_sidebar_follows_the_address_after_search_every_submission(venue_index, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(venue_index))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["q"] = "language models"
    at.run()
    assert at.selectbox(key="decision_w").value == "accepted"
    at.button(key="all-decisions").click().run()
    assert at.query_params["decision"] in ("all", ["all"])
    assert at.selectbox(key="decision_w").value == "all"
    # and back to the default address: the box follows again
    at.query_params.pop("decision")
    at.run()
    assert at.selectbox(key="decision_w").value == "accepted"
    assert not at.exception


def test_make_app_takes_a_port_and_the_browser_step_checks_the_cjk_font_on_its_own():
    import shutil
    import subprocess

    if not shutil.which("make"):
        pytest.skip("needs make")
    dry = subprocess.run(["make", "-n", "app", "PORT=8600", "VENV=/nonexistent-venv"], cwd=ROOT,
                         capture_output=True, text=True)
    assert "--server.port 8600" in dry.stdout, dry.stdout + dry.stderr
    browser = subprocess.run(["make", "-n", "browser"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "dpkg -s fonts-noto-cjk" in browser


def test_the_page_says_an_index_has_no_authors_when_the_address_asks_for_one(venue_index, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(venue_index))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["q"] = "graph neural networks"
    at.query_params["author"] = "LeCun"
    at.run()
    assert any("this index has no authors' names" in w.value for w in at.warning)
    assert len([t for t in at.text_input if t.key == "author_w"]) == 0
    assert any("No author filter" in c.value for c in at.sidebar.caption)
    assert not any("No paper matches" in str(m.value) for m in [*at.info, *at.markdown])


def test_a_build_run_from_the_command_line_is_said_to_be_running_not_stopped(tmp_path):
    """The page said "this index's build stopped" while `index_build.py` was building it in another process."""
    import subprocess
    import sys

    from search.index import building

    out = tmp_path / "index"
    assert not building(out)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from search.index import build_lock\n"
        f"with build_lock(Path({str(out)!r})):\n    print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert building(out)
    finally:
        holder.kill()
        holder.wait()
    assert not building(out)


def test_no_share_of_orals_where_no_paper_is_known_to_be_in_the_programme(venue_engine):
    from search.stats import summarise, table

    undecided = [p for p in venue_engine.papers if decision_group(p.decision) == "undecided"]
    accepted = [p for p in venue_engine.papers if decision_group(p.decision) == "accepted"]
    assert summarise("undecided", undecided).oral_share is None  # was 0%: nothing is known of its orals
    assert summarise("accepted", accepted).oral_share is not None
    assert summarise("undecided", undecided).to_dict()["oral_share"] is None
    assert "    -" in table([summarise("undecided", undecided)], "area").splitlines()[1]


def test_the_search_page_counts_the_venues_submissions_and_says_what_it_searches(venue_words, monkeypatch):
    """Decisions out, seeds beside the venue: the notice over every submission not withdrawn is true for the
    index (no "No decision is out yet" above an accepted paper), and the seed papers that are not in the venue
    are not counted as its submissions."""
    from search.index import load_index

    papers = load_index(venue_words).papers
    seeds_only = [p for p in papers if not p.decision]
    assert len(papers) - len(seeds_only) == VENUE_NOTES and seeds_only  # the fetch's 240, and seed papers beside
    monkeypatch.setenv("SEARCH_INDEX", str(venue_words))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["decision"] = "active"
    at.run()
    assert not at.exception and not at.error
    said = " ".join(c.value for c in at.caption)
    assert "No decision is out yet" not in said
    assert "Searching every submission not withdrawn: the accepted and rejected submissions and those still " \
           "under review." in said
    active = sum(decision_group(p.decision) in ("accepted", "rejected", "undecided") for p in papers)
    offer = next(m.value for m in at.markdown if m.value.startswith("Search **"))
    assert offer.startswith(f"Search **{active:,} submissions not withdrawn** (of {VENUE_NOTES} submissions) by ")
    at.query_params["decision"] = "all"
    at.run()
    offer = next(m.value for m in at.markdown if m.value.startswith("Search **"))
    assert offer.startswith(f"Search **{VENUE_NOTES} submissions** and {len(seeds_only)} papers of the seed lists by")
    # in the review season (nothing decided), the same notice says so
    assert active_note({"Under review", "Withdrawn"}) == "No decision is out yet: searching every submission not " \
                                                         "withdrawn."


@pytest.fixture(scope="module")
def season_words(tmp_path_factory, venue_records, model, embedding_cache):
    """The review season's submissions (every one under review but the withdrawn) at the words stage: what a new
    user has seconds after a fetch in the review season. No vector: cheap."""
    from conftest import cache_copy
    from search.build import build_index

    class Stopped(Exception):
        pass

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "abstracts":
            raise Stopped

    d = tmp_path_factory.mktemp("season-words")
    records = [json.loads(line) for line in venue_records.read_text(encoding="utf-8").splitlines()]
    for r in records:
        if r["decision"] != "Withdrawn":
            r["decision"], r["venue"] = "Under review", "Submitted to ICLR 2026"
    (d / "season.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(Stopped):
        build_index([d / "season.jsonl"], d / "index", model=model, cache_dir=cache_copy(embedding_cache, d / "cache",
                    vectors=False), words_first=1, explore=False, sentences=False, summaries=False,
                    review_search=False, progress=stop)
    return d / "index"


def test_the_statistics_of_the_review_season_list_the_most_controversial_submissions(season_words, monkeypatch):
    from search.filters import spread
    from search.index import load_index
    from search.render import decision_figure
    from search.stats import ratings_by_decision

    papers = load_index(season_words).papers
    monkeypatch.setenv("SEARCH_INDEX", str(season_words))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["view"] = "stats"
    at.run()
    assert not at.exception and not at.error
    text = "\n".join(m.value for m in at.markdown)
    assert "Most controversial accepted" not in text and "\nnone" not in text
    assert "**Most controversial submissions** (widest spread of ratings)" in text
    widest = sorted((p for p in papers if p.decision == "Under review" and spread(p) is not None),
                    key=lambda p: (-spread(p), p.id))[:5]  # the five widest spreads, the withdrawn left out
    assert all(f"(?paper={p.id})" in text for p in widest)
    # the chart names its series: the submissions under review beside the withdrawn, in a legend
    assert any("Mean review ratings by decision (withdrawn, no decision yet)" in c.value for c in at.caption)
    fig = decision_figure(ratings_by_decision(papers))
    assert fig.layout.showlegend and [t.name for t in fig.data] == ["withdrawn", "no decision yet"]
    ran = run_cli("stats", "--index", str(season_words))
    assert "most controversial submissions (widest spread of ratings):" in ran.stdout


def test_a_list_sorted_by_controversy_shows_the_spread_on_the_command_line(season_words):
    from search.filters import spread
    from search.index import load_index

    papers = {p.id: p for p in load_index(season_words).papers}
    ran = cli("query", "language models", "--sort", "controversy", "-k", "5", "--index", str(season_words))
    assert ran.returncode == 0, ran.stderr
    rows = [line.split() for line in ran.stdout.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert len(rows) == 5
    for row in rows:  # rank, score, the value shown, decision..., id
        pid = next(w for w in row if w in papers)
        assert float(row[2]) == pytest.approx(spread(papers[pid]), abs=0.006)
        assert papers[pid].avg_rating is None or abs(float(row[2]) - papers[pid].avg_rating) > 0.006 or \
            spread(papers[pid]) == pytest.approx(papers[pid].avg_rating, abs=0.006)
    assert "spread of the ratings (standard deviation)" in ran.stdout
