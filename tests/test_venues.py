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
