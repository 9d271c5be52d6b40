"""Many venues in one index: a paper's venue, year, track, affiliations and citations, declared once
(corpus.Fields) and carried from every source through merging, papers.jsonl, the catalogue and --json."""
from __future__ import annotations

import json
from pathlib import Path

from search.catalog import Catalog
from search.corpus import FIELDS, Paper, load_corpus
from search.engine import Hit
from search.index import write_papers
from search.openreview.records import conference_year

ABSTRACT = "We study how venues and years of conference papers can be searched together in one index."


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_venue_fields_are_read_merged_written_and_shown(tmp_path):
    """A record's conference, year, track, affiliations and citations survive the merge with a copy that lacks
    them, papers.jsonl, the catalogue and a hit's --json."""
    bare = jsonl(tmp_path / "a.jsonl", [{"id": "X1", "abstract": ABSTRACT}])
    full = jsonl(tmp_path / "b.jsonl", [{
        "id": "X1", "abstract": ABSTRACT, "authors": ["Ada Lovelace", "Alan Turing"],
        "affiliations": ["University of London", ""], "conference": "COLM", "year": 2024, "track": "Poster",
        "citations": 0}])
    papers, _ = load_corpus([bare, full])
    assert len(papers) == 1
    p = papers[0]
    assert (p.conference, p.year, p.track, p.citations) == ("COLM", 2024, "Poster", 0)
    assert p.affiliations == ["University of London", ""]   # parallel to the authors, "" unknown

    write_papers(tmp_path / "papers.jsonl", papers)
    line = json.loads((tmp_path / "papers.jsonl").read_text())
    again = Paper.from_dict(line)
    assert (again.conference, again.year, again.track, again.affiliations, again.citations) == \
        ("COLM", 2024, "Poster", ["University of London", ""], 0)

    hit = Hit(again, 0.5, 1).to_dict()
    assert {k: hit[k] for k in ("conference", "year", "track", "affiliations", "citations")} == \
        {"conference": "COLM", "year": 2024, "track": "Poster", "affiliations": ["University of London", ""],
         "citations": 0}
    assert Catalog([again]).field("year") == [2024]


def test_every_declared_field_reaches_papers_jsonl_and_json():
    """A field declared in corpus.Fields needs no other line to reach papers.jsonl and a hit's --json."""
    p = Paper(id="a", abstract="x", text="x", title="t", title_derived=False)
    shown, kept = Hit(p, 0.1, 1).to_dict(), p.to_dict()
    for f in FIELDS:
        if not f.metadata.get("record_only"):
            assert f.name in shown and f.name in kept, f.name


def test_an_index_written_before_the_venue_fields_still_loads():
    """papers.jsonl of an older build has no conference, year, track, affiliations or citations."""
    old = {"id": "a", "abstract": "x", "text": "x", "title": "t", "title_derived": False, "sources": ["s"],
           "authors": [], "venue": "ICLR 2026 Poster", "decision": "Poster", "ratings": [6.0]}
    p = Paper.from_dict(old)
    assert (p.conference, p.year, p.track, p.affiliations, p.citations) == ("", None, "", [], None)


def test_an_openreview_venue_id_gives_the_conference_and_year():
    assert conference_year("ICLR.cc/2026/Conference") == ("ICLR", 2026)
    assert conference_year("NeurIPS.cc/2025/Conference") == ("NeurIPS", 2025)
    assert conference_year("colmweb.org/COLM/2024/Conference") == ("COLM", 2024)
    assert conference_year("NoYear/Conference") == ("", None)


# ---------------------------------------------------------------- Paper Copilot's venue lists

import gzip  # noqa: E402

import pytest  # noqa: E402

from conftest import ROOT, run_build, run_cli  # noqa: E402
from search.corpus import CorpusError  # noqa: E402
from search.filters import FILTERS, Filters  # noqa: E402

SHARED_LISTS = ROOT.parent / "shared" / "data" / "paperlists"


def entry(pid: str, title: str, abstract: str | None, status: str = "Poster", **more) -> dict:
    """One paper as Paper Copilot's lists write it: every value a string ('' unknown), lists joined by ';'."""
    return {"id": pid, "title": title, "track": "main", "status": status, "tldr": "", "abstract": abstract,
            "keywords": "", "primary_area": "", "author": "", "aff": "", "site": "", "rating": "",
            "confidence": "", "gs_citation": -1, **more}


COLM = [
    entry("colmA1", "Reward models for preference alignment",
          "We train reward models for aligning large language models with human preferences from pairwise "
          "comparisons, and study <i>over-optimisation</i> &mdash; when the policy exploits the reward model.",
          author="Ada Müller;Bo Chen", aff="ETH Zürich+Google;Stanford University", rating="5;7;7",
          confidence="4;3;3", gs_citation=120, keywords="alignment;reward models",
          site="https://openreview.net/forum?id=colmA1"),
    entry("colmA2", "Tokenizers for many languages",
          "We compare tokenizers of multilingual language models across 90 languages and show that "
          "<Subject, Verb, Object> orders change how many tokens a sentence needs.",
          author="Chen Li;Dana Roe", aff="Tsinghua University;", gs_citation=3,
          site="https://openreview.net/forum?id=colmA2"),
    entry("colmA3", "Evaluating language models without a count",
          "We evaluate language models on long documents with a benchmark of questions whose answers are "
          "spread over many pages.", author="Eve Park", aff="KAIST", gs_citation=-1,
          site="https://openreview.net/forum?id=colmA3"),
]
ICLR = [
    entry("iclrB1", "Graph networks for molecules", "Graph neural networks predict the properties of molecules "
          "from their structure, trained on quantum chemistry calculations.", "Poster", rating="6;7;8",
          site="https://openreview.net/forum?id=iclrB1", author="Frank Ode", gs_citation=40),
    entry("iclrB2", "A rejected idea about language models", "We propose a new way to pretrain language "
          "models with a curriculum of documents sorted by length.", "Reject", rating="3;4;4",
          site="https://openreview.net/forum?id=iclrB2", author="Gina Hu", gs_citation=2),
    entry("iclrB3", "A withdrawn paper about robots", "Robots learn to grasp objects from demonstrations "
          "recorded with a camera on the gripper.", "Withdraw", site="https://openreview.net/forum?id=iclrB3",
          author="Hal Ito"),
    entry("iclrB4", "No abstract at all", "", "Poster", site="https://openreview.net/forum?id=iclrB4"),
]
ACL = [
    entry("2022.acl-long.1", "Parsing with transformers", "A transformer parser reads sentences into "
          "dependency trees and beats earlier parsers on twelve treebanks.", "Long",
          author="Ivan Ng; Jo Sato", aff="University of Tokyo; University of Tokyo", gs_citation=15),
    entry("2022.findings-acl.2", "Summaries of meetings", "We summarise long meeting transcripts with language "
          "models that first segment them into topics.", "Findings", author="Kim Lee",
          aff="Seoul National University", gs_citation=8),
]
KDD = [entry("site_1", "A KDD paper", None, ""), entry("site_2", "Another KDD paper", "", "")]


def write_list(path: Path, rows: list) -> Path:
    data = json.dumps(rows).encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def lists(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    write_list(d / "colm2024.json", COLM)
    write_list(d / "iclr2018.json.gz", ICLR)
    write_list(d / "acl2022.json", ACL)
    write_list(d / "kdd2023.json", KDD)
    return d


@pytest.fixture(scope="module")
def lists_index(tmp_path_factory, model, embedding_cache) -> Path:
    """The hand-made lists above (a directory of them), built with the real model."""
    from search.build import build_index

    d = tmp_path_factory.mktemp("lists")
    build_index([lists(d / "lists")], d / "index", model=model, cache_dir=embedding_cache, explore=False,
                sentences=False, summaries=False, review_search=False, multilingual=False)
    return d / "index"


def test_a_directory_of_venue_lists_is_read_as_papers_with_their_venue_decision_people_and_citations(tmp_path):
    notes: list[str] = []
    papers, skipped = load_corpus([lists(tmp_path)], notes=notes)
    by = {p.id: p for p in papers}
    assert skipped == [] and len(papers) == 8
    a1 = by["colmA1"]
    assert (a1.conference, a1.year, a1.decision, a1.track, a1.venue) == ("COLM", 2024, "Poster", "Poster",
                                                                         "COLM 2024 Poster")
    assert a1.authors == ["Ada Müller", "Bo Chen"]
    assert a1.affiliations == ["ETH Zürich + Google", "Stanford University"]   # "+": two of one author
    assert (a1.ratings, a1.avg_rating, a1.n_ratings, a1.citations) == ([5.0, 7.0, 7.0], 6.3333, 3, 120)
    assert a1.keywords == ["alignment", "reward models"]
    assert by["colmA2"].affiliations == ["Tsinghua University", ""]          # parallel: "" unknown
    assert by["colmA3"].citations is None                                      # gs_citation -1: unknown
    # the decision from the status; a published list's own words are accepted, kept as the track
    assert [by[i].decision for i in ("iclrB1", "iclrB2", "iclrB3")] == ["Poster", "Rejected", "Withdrawn"]
    assert by["iclrB2"].venue == "Submitted to ICLR 2018"
    acl = by["acl2022-2022.findings-acl.2"]   # a proceedings' own id is its venue's: prefixed
    assert (acl.conference, acl.year, acl.decision, acl.track) == ("ACL", 2022, "Accepted", "Findings")
    # entries without an abstract: left out and counted once per file (KDD's lists have none)
    assert "iclrB4" not in by
    told = [n for n in notes if "no abstract" in n]
    assert len(told) == 2 and any("kdd2023.json: 2 of 2 entries" in n for n in told)
    assert any("iclr2018.json.gz: 1 of 4 entries" in n for n in told)


def test_an_invitation_to_the_workshop_track_is_no_acceptance(tmp_path):
    """ICLR 2013-2018's "Workshop": the paper was not in the conference's programme, so it counts against the
    acceptance rate and is cited as a submission, not as a paper of the proceedings."""
    from search.filters import decision_group
    from search.render.export import published
    from search.stats import groups

    papers, _ = load_corpus([write_list(tmp_path / "iclr2017.json", [
        entry("w1", "Invited", "A paper invited to the workshop track of the conference.", status="Workshop"),
        entry("p1", "Accepted", "A paper accepted as a poster at the conference itself.", status="Poster"),
        entry("r1", "Rejected", "A paper the conference rejected after its reviews were in.", status="Reject")])])
    by = {p.title: p for p in papers}   # ids not OpenReview's are prefixed with the venue-year
    assert (by["Invited"].decision, decision_group(by["Invited"].decision)) == ("Workshop track", "rejected")
    kind, _, note = published(by["Invited"])
    assert kind == "misc" and note == "Submitted to ICLR 2017; invited to the workshop track"
    whole = dict(groups(papers, {}))["all"][0]
    assert whole.decisions.get("accepted") == 1 and whole.decisions.get("rejected") == 2


def test_html_in_a_list_is_cleaned_as_other_abstracts_are(tmp_path):
    papers, _ = load_corpus([write_list(tmp_path / "colm2024.json", COLM)])
    a1, a2 = papers[0], papers[1]
    assert "*over-optimisation* — when" in a1.abstract          # emphasis as Markdown, entities as characters
    assert "<i>" not in a1.text and "&mdash;" not in a1.text and "over-optimisation — when" in a1.text
    assert "<Subject, Verb, Object>" in a2.abstract             # not a tag: kept


def test_a_paper_two_sources_describe_is_one_paper(tmp_path):
    """The same OpenReview id in a list and a fetch's record (their abstracts differ a little), and the same
    title and abstract without ids, are one paper each."""
    listed = write_list(tmp_path / "colm2024.json", COLM)
    fetched = jsonl(tmp_path / "fetch.jsonl", [{
        "id": "colmA1", "abstract": "We train reward models to align large language models with human preferences.",
        "title": "Reward models for preference alignment", "decision": "Poster", "reviews": [{"rating": 6}]}])
    notes: list[str] = []
    papers, _ = load_corpus([fetched, listed], notes=notes)
    assert [p.id for p in papers].count("colmA1") == 1 and len(papers) == 3
    merged = next(p for p in papers if p.id == "colmA1")
    assert merged.citations == 120 and merged.affiliations and merged.sources == ["fetch.jsonl", "colm2024.json"]
    assert any("another abstract" in n for n in notes)
    same = [entry("", "Same paper", "An abstract that two lists give word for word, about parsing sentences.")]
    papers, _ = load_corpus([write_list(tmp_path / "naacl2021.json", same),
                             write_list(tmp_path / "coling2020.json", same)])
    assert len(papers) == 1 and len(papers[0].sources) == 2


@pytest.mark.parametrize("name, data, said", [
    ("colm2024.json", b'{"papers": []}', "colm2024.json: not a venue list: expected a JSON array"),
    ("colm2024.json.gz", gzip.compress(json.dumps(COLM).encode())[:200], "colm2024.json.gz: truncated"),
    ("colm2024.json.gz", b"not gzip at all", "colm2024.json.gz: not a readable gzip file"),
    ("colm2024.json", b'[{"id": "x", "abstract": "a"', "colm2024.json: malformed JSON"),
    ("colm2024.json", json.dumps([COLM[0], "a string"]).encode(), "colm2024.json:entry 2: expected a JSON object"),
    ("colm2024.json", json.dumps([{**COLM[0], "rating": "5;six"}]).encode(),
     "colm2024.json:entry 1 (colmA1): 'rating' must be numbers"),
])
def test_a_bad_list_is_one_line_naming_the_file_and_entry(tmp_path, name, data, said):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(CorpusError) as e:
        load_corpus([tmp_path / name])
    assert said in str(e.value) and "\n" not in str(e.value)


def test_a_failed_build_from_a_bad_list_publishes_nothing_and_the_previous_index_stays(tmp_path, index_copy):
    before = (index_copy / "papers.jsonl").read_bytes()
    bad = tmp_path / "icml2019.json.gz"
    bad.write_bytes(gzip.compress(json.dumps(COLM).encode())[:150])
    ran = run_build(str(bad), "--out", str(index_copy))
    assert ran.returncode != 0
    assert "icml2019.json.gz: truncated" in ran.stderr and "Traceback" not in ran.stderr
    assert (index_copy / "papers.jsonl").read_bytes() == before


def test_venue_year_and_affiliation_filters_across_venues(lists_index):
    def ids(*args: str) -> list[str]:
        ran = run_cli("query", "language models", "-k", "20", "--json", "--index", str(lists_index), *args)
        assert ran.returncode == 0, ran.stderr
        return sorted(h["id"] for h in json.loads(ran.stdout)["hits"])

    assert ids("--venue", "COLM") == ["colmA1", "colmA2", "colmA3"]
    assert ids("--venue", "colm 2024") == ["colmA1", "colmA2", "colmA3"]
    assert ids("--venue", "ACL 2022 Findings") == ["acl2022-2022.findings-acl.2"]
    assert ids("--venue", "ICLR", "--venue", "ACL 2022 Long", "--decision", "all") == \
        ["acl2022-2022.acl-long.1", "iclrB1", "iclrB2", "iclrB3"]
    assert ids("--year", "2017-2019", "--decision", "all") == ["iclrB1", "iclrB2", "iclrB3"]
    assert ids("--year", "2018", "--year", "2022") == ["acl2022-2022.acl-long.1", "acl2022-2022.findings-acl.2",
                                                       "iclrB1"]
    assert ids("--affiliation", "eth zurich") == ["colmA1"]            # folded as authors' names are
    assert ids("--affiliation", "university of tokyo") == ["acl2022-2022.acl-long.1"]
    assert ids("--author", "muller") == ["colmA1"] and ids("--author", "kim lee") == ["acl2022-2022.findings-acl.2"]


@pytest.mark.parametrize("args, said", [
    (("--venue", "COLN"), "venue 'COLN' (no venue of that name in this index; close: COLM)"),
    (("--venue", "ICLR 2019"), "venue 'ICLR 2019' (this index has ICLR of 2018)"),
    (("--venue", "ACL 2022 Findngs"), "no 'findngs' among its tracks and decisions; close: findings"),
    (("--year", "2030"), "year 2030 (this index has no paper of 2030: its papers are of 2018, 2022, 2024)"),
    (("--year", "soon"), "--year soon (use a year such as 2024 or a range such as 2017-2019)"),
])
def test_an_unknown_venue_or_year_is_one_line_naming_it(lists_index, args, said):
    ran = run_cli("query", "language models", "--index", str(lists_index), *args)
    assert ran.returncode == 2 and said in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1 and "Traceback" not in ran.stderr


def test_cited_sorts_most_cited_first_with_papers_without_a_count_last_and_says_how_many(lists_index):
    ran = run_cli("query", "language models", "-k", "20", "--sort", "cited", "--json", "--index", str(lists_index))
    hits = json.loads(ran.stdout)["hits"]
    counts = [h["citations"] for h in hits]
    known = [c for c in counts if c is not None]
    assert known == sorted(known, reverse=True) and None in counts
    assert counts.index(None) == len(known)                      # those without a count come last
    assert {h["id"]: (h["venue"], h["conference"], h["year"]) for h in hits}["colmA1"] == \
        ("COLM 2024 Poster", "COLM", 2024)
    table = run_cli("query", "language models", "-k", "20", "--sort", "cited", "--index", str(lists_index)).stdout
    assert f"{counts.count(None)} of them without a citation count, last" in table


def test_venues_lists_each_venue_year_with_decisions_and_what_it_carries(lists_index):
    ran = run_cli("venues", "--json", "--index", str(lists_index))
    rows = {r["venue"]: r for r in map(json.loads, ran.stdout.splitlines())}
    assert list(rows) == ["ACL 2022", "COLM 2024", "ICLR 2018"]
    iclr, colm = rows["ICLR 2018"], rows["COLM 2024"]
    assert (iclr["papers"], iclr["accepted"], iclr["rejected"], iclr["withdrawn"]) == (3, 1, 1, 1)
    assert not iclr["accepted_only"] and colm["accepted_only"]
    assert colm["carries"] == {"abstracts": 3, "reviews": 1, "authors": 3, "affiliations": 3, "citations": 2}
    assert iclr["carries"]["affiliations"] == 0
    text = run_cli("venues", "--index", str(lists_index)).stdout
    assert "accepted papers only (the list names no rejections)" in text and "1 accepted, 1 rejected" in text


def test_people_filters_are_hidden_where_the_index_names_no_one():
    """An anonymous record (ICLR 2026 submissions before the decisions): no author or affiliation widget, and
    the CLI's flag refused with why."""
    anonymous = Catalog([Paper(id="a", abstract="x", text="x", title="t", title_derived=False,
                               venue="ICLR 2026 Poster", conference="ICLR", year=2026)])
    people = [f for f in FILTERS if f.key in ("author", "affiliation")]
    assert [f.shown(anonymous.facts) for f in people] == [False, False]
    named = Catalog([Paper(id="a", abstract="x", text="x", title="t", title_derived=False, authors=["A B"],
                           affiliations=["MIT"])])
    assert [f.shown(named.facts) for f in people] == [True, True]
    fitted = anonymous.known(Filters(affiliations=("MIT",)))
    assert fitted.affiliations == () and fitted.unknown == ("affiliation 'MIT' (this index has no affiliations)",)


def test_the_page_draws_the_declared_venue_year_and_affiliation_widgets(lists_index, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCH_INDEX", str(lists_index))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["venue"] = "COLM 2024"
    at.query_params["q"] = "language models"
    at.run()
    assert not at.exception
    venue = next(w for w in at.multiselect if w.label == "Venue")
    assert venue.value == ["COLM 2024"] and "ICLR 2018" in venue.options
    assert [w.label for w in at.multiselect if w.label == "Year"] == ["Year"]
    assert {"Author", "Affiliation"} <= {w.label for w in at.text_input}
    assert "most cited" in next(w for w in at.selectbox if w.label == "Sort by").options


def test_the_shared_colm_list_reads_whole():
    path = SHARED_LISTS / "colm" / "colm2024.json.gz"
    if not path.is_file():
        pytest.skip("needs ../shared/data/paperlists (Paper Copilot's venue lists)")
    papers, skipped = load_corpus([path])
    assert len(papers) == 299 and skipped == []
    assert {(p.conference, p.year, p.decision) for p in papers} == {("COLM", 2024, "Poster")}
    assert sum(p.citations is not None for p in papers) == 299 and all(p.authors for p in papers)
    assert sum(bool(p.ratings) for p in papers) == 299


def test_the_pages_background_build_takes_a_folder_of_lists_from_search_data(tmp_path):
    """SEARCH_DATA may name a folder of venue lists: the page plans the build of seeds + lists over it."""
    from search import background

    d = lists(tmp_path / "lists")
    steps, unreadable = background.planned(tmp_path / "index", ROOT / "seeds", [d])
    assert unreadable == "" and steps == [[ROOT / "seeds"], [ROOT / "seeds", d]]
    assert background.digest([d]) != background.digest([d / "colm2024.json"])


def test_where_names_the_seed_lists_as_having_no_venue_or_decision():
    # "no venue: 1 paper (its record lists only accepted papers, 61 of them...)" for the seeds (a new user's run)
    from search.fared import Fate, Place

    counts = {"accepted": 0, "rejected": 0, "withdrawn": 0, "undecided": 61}
    seeds = Place("", None, 1, Fate(61, counts))
    assert seeds.words() == "no venue: 1 paper (no venue or decision in its record)"
    listed = Place("COLM", 2024, 2, Fate(299, {**counts, "accepted": 299, "undecided": 0}))
    assert "lists only accepted papers, 299 of them" in listed.words()
