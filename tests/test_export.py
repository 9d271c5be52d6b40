"""Reading-list export (BibTeX, CSV, Markdown) and "papers like my list" (several ids at once)."""
import csv
import io
import json

import bibtexparser
import pytest

from conftest import run_cli
from search.corpus import Paper
from search.render.export import author_line, citation_key, export, review_line, latex_escape, to_bibtex, to_csv

HOSTILE = Paper(id="abc123", abstract=r"We get 50\% gains with $\textbf{C}$ on {braces} & co_op # \citep{x} }{",
                text="", title="Braces {and} 100% LaTeX_risk", title_derived=True, sources=["seeds/a.txt"],
                url="https://openreview.net/forum?id=abc123", keywords=["A&B"], primary_area="optimization")
PLAIN = Paper(id="xyz789", abstract="A plain abstract.", text="A plain abstract.", title="The Plain Paper",
              title_derived=False, sources=["data.jsonl"], authors=["Ada Lovelace", "Alan Turing"],
              avg_rating=6.5, avg_confidence=3.25, n_ratings=4, pdf="https://openreview.net/pdf?id=xyz789",
              venue="ICLR 2026 Poster", decision="Poster")


def test_latex_escape_leaves_balanced_compilable_text():
    out = latex_escape(HOSTILE.abstract)
    assert "{" not in out.replace("\\textbackslash{}", "") and "}" not in out.replace("\\textbackslash{}", "")
    assert r"50\%" in out and r"\&" in out and r"co\_op" in out and "citep" not in out


def test_bibtex_parses_and_round_trips_titles():
    text = to_bibtex([HOSTILE, PLAIN])
    lib = bibtexparser.parse_string(text)
    assert not lib.failed_blocks
    assert [e.key for e in lib.entries] == [citation_key(HOSTILE), citation_key(PLAIN)]
    first, second = (e.fields_dict for e in lib.entries)
    # a record without its venue claims none; an accepted paper is in the proceedings
    assert [e.entry_type for e in lib.entries] == ["misc", "inproceedings"]
    assert "booktitle" not in first and "year" not in first and "Venue and decision not given in" in first["note"].value
    assert second["year"].value == "2026" and "ICLR 2026" in second["booktitle"].value
    assert "derived" in first["note"].value and "note" not in second
    # an entry without authors says why, instead of looking like a paper nobody wrote
    assert "author" not in first and "Authors not given in the record" in first["note"].value
    assert second["title"].value == "{The Plain Paper}" and second["author"].value == "Ada Lovelace and Alan Turing"
    assert first["url"].value == HOSTILE.url
    # every field's braces balance, or BibTeX would not compile it
    for entry in lib.entries:
        for f in entry.fields:
            depth = 0
            for ch in f.value:
                depth += {"{": 1, "}": -1}.get(ch, 0)
                assert depth >= 0
            assert depth == 0, (f.key, f.value)


def test_citation_keys_are_stable_and_distinct():
    twin = Paper(**{**PLAIN.__dict__, "id": "xyz789-other"})
    assert citation_key(PLAIN) == "plain2026xyz789"
    keys = [e.key for e in bibtexparser.parse_string(to_bibtex([PLAIN, twin])).entries]
    assert len(set(keys)) == 2


def test_csv_parses_with_the_csv_module():
    rows = list(csv.DictReader(io.StringIO(to_csv([HOSTILE, PLAIN], {"abc123": "optimizers, adam"}))))
    assert [r["title"] for r in rows] == [HOSTILE.title, PLAIN.title]
    assert rows[0]["topic"] == "optimizers, adam" and rows[0]["primary_area"] == "optimization"
    assert rows[0]["sources"] == "seeds/a.txt"
    assert rows[0]["authors"] == "" and rows[0]["avg_rating"] == "" and rows[0]["n_ratings"] == ""
    assert rows[1]["authors"] == "Ada Lovelace; Alan Turing" and rows[1]["pdf"].endswith("id=xyz789")
    assert (rows[1]["avg_rating"], rows[1]["avg_confidence"], rows[1]["n_ratings"]) == ("6.5", "3.25", "4")


def test_markdown_links_and_marks_derived_titles():
    md = export([HOSTILE, PLAIN], "md")
    assert "(<https://openreview.net/forum?id=abc123>)" in md and "derived" in md and "`xyz789`" in md
    assert "\n  Ada Lovelace and Alan Turing\n" in md
    assert "rating 6.50 · confidence 3.25 · 4 reviews" in md and "no reviews" in md.split("\n")[2]
    with pytest.raises(ValueError):
        export([PLAIN], "docx")


def test_bibtex_carries_review_scores_where_there_are_some():
    first, second = (e.fields_dict for e in bibtexparser.parse_string(to_bibtex([HOSTILE, PLAIN])).entries)
    assert "rating" not in first and "reviews" not in first
    assert (second["rating"].value, second["confidence"].value, second["reviews"].value) == ("6.5", "3.25", "4")


def test_review_line():
    assert review_line(PLAIN) == "rating 6.50 · confidence 3.25 · 4 reviews" and review_line(HOSTILE) == "no reviews"
    assert review_line(Paper(**{**PLAIN.__dict__, "n_ratings": 1, "avg_confidence": None})) == "rating 6.50 · 1 review"


def test_author_line_shortens_long_lists():
    assert author_line(["A"]) == "A" and author_line(["A", "B", "C"]) == "A, B and C"
    assert author_line([str(i) for i in range(9)], 3) == "0, 1, 2 and 6 more"


def test_cli_export_formats(seed_index, engine):
    ids = [p.id for p in engine.papers[:3]]
    r = run_cli("export", *ids, "--format", "bibtex", "--index", str(seed_index))
    assert r.returncode == 0, r.stderr
    lib = bibtexparser.parse_string(r.stdout)
    assert not lib.failed_blocks and len(lib.entries) == 3
    r = run_cli("export", *ids, ids[0], "--format", "csv", "--index", str(seed_index))
    assert [row["id"] for row in csv.DictReader(io.StringIO(r.stdout))] == ids  # duplicates once


def test_cli_export_names_unknown_ids_and_refuses_empty(seed_index, engine):
    r = run_cli("export", engine.papers[0].id, "nosuch1", "--index", str(seed_index))
    assert r.returncode == 2 and "nosuch1" in r.stderr and r.stdout == "" and "Traceback" not in r.stderr
    r = run_cli("export", "--file", "-", "--index", str(seed_index), stdin="\n")
    assert r.returncode == 2 and "nothing to export" in r.stderr


def test_similar_to_several_papers_never_returns_them(engine):
    ids = [p.id for p in engine.papers[:5]]
    result = engine.similar(ids, k=20)
    found = [h.paper.id for h in result.hits]
    assert len(found) == 20 and not set(found) & set(ids) and result.mode == "svm"


def test_similar_file_one_request_per_line(seed_index, engine):
    a, b, c = (p.id for p in engine.papers[:3])
    r = run_cli("similar", "--file", "-", "--json", "-k", "3", "--index", str(seed_index),
               stdin=f"{a} {b}\n{c}\n")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["paper"] for x in lines] == [f"{a} {b}", c]
    assert not {h["id"] for h in lines[0]["hits"]} & {a, b}


def test_like_a_list_finds_its_area(iclr_engine):
    """Five papers of one area: the list's area comes up far more often than by chance (real model)."""
    shares, bases = [], []
    for area in iclr_engine.catalog.areas:
        members = [p.id for p in iclr_engine.papers if p.primary_area == area]
        if len(members) < 10:
            continue
        hits = iclr_engine.similar(members[:5], k=10).hits
        shares.append(sum(h.paper.primary_area == area for h in hits) / 10)
        bases.append(len(members) / len(iclr_engine.papers))
    assert len(shares) >= 4
    assert sum(shares) / len(shares) >= 2.5 * sum(bases) / len(bases), (shares, bases)


def test_markdown_shows_titles_latex_as_plain_unicode_and_escapes_only_markdown():
    paper = Paper(id="t1", abstract="A.", text="A.", title=r"$\pi^3$: Sch\"{o}lkopf's $\mathcal{O}(n^{2})$ *scaling* [v2]",
                  title_derived=False, sources=["x.jsonl"], url="https://openreview.net/forum?id=t1")
    line = export([paper], "md").splitlines()[2]
    assert line.startswith("- [π³: Schölkopf's 𝒪(n²) \\*scaling\\* \\[v2\\]](<https://")


def test_bibtex_cites_only_accepted_papers_as_published(venue_words):
    """`python -m search export IDS --format bibtex` on a fetched venue: a rejected, withdrawn or undecided
    submission is no paper of the proceedings; it is @misc, its OpenReview page and its standing said."""
    from search.index import load_index

    papers = load_index(venue_words).papers
    one = {d: next(p for p in papers if p.decision == d) for d in ("Poster", "Rejected", "Withdrawn", "Under review")}
    ran = run_cli("export", *(p.id for p in one.values()), "--format", "bibtex", "--index", str(venue_words))
    assert ran.returncode == 0, ran.stderr
    lib = bibtexparser.parse_string(ran.stdout)
    assert not lib.failed_blocks
    entries = {e.fields_dict["url"].value.rsplit("=", 1)[-1]: e for e in lib.entries}
    accepted = entries[one["Poster"].id]
    assert accepted.entry_type == "inproceedings" and "(ICLR 2026)" in accepted.fields_dict["booktitle"].value
    for decision, standing in (("Rejected", "rejected"), ("Withdrawn", "withdrawn"), ("Under review", "under review")):
        e, p = entries[one[decision].id], one[decision]
        assert e.entry_type == "misc" and "booktitle" not in e.fields_dict, decision
        assert e.fields_dict["howpublished"].value == f"\\url{{{p.url}}}" and e.fields_dict["year"].value == "2026"
        assert e.fields_dict["note"].value.startswith(f"Submitted to ICLR 2026; {standing}")


def test_each_venue_its_booktitle_and_year():
    from search.render.export import booktitle

    def of(**fields):
        return booktitle(Paper(**{**PLAIN.__dict__, **fields}))

    assert of() == ("The Fourteenth International Conference on Learning Representations (ICLR 2026)", "2026")
    assert of(conference="COLM", year=2025) == ("Conference on Language Modeling (COLM 2025)", "2025")
    assert of(conference="nips", year=2015) == ("Advances in Neural Information Processing Systems (NeurIPS 2015)", "2015")
    assert of(conference="ICLR", year=2017) == ("The Fifth International Conference on Learning Representations (ICLR 2017)", "2017")
    assert of(conference="ACL", year=2022, track="Findings") == (
        "Findings of the Association for Computational Linguistics: ACL 2022", "2022")
    assert of(conference="SomeConf", year=None) == ("SomeConf", "")
    colm = Paper(**{**PLAIN.__dict__, "conference": "COLM", "year": 2024})
    entry = bibtexparser.parse_string(to_bibtex([colm])).entries[0]
    assert entry.key == "plain2024xyz789" and entry.fields_dict["year"].value == "2024"
    assert entry.fields_dict["booktitle"].value == "Conference on Language Modeling (COLM 2024)"
