"""Across venues, on one index of four venue-years built with the real model: the ICLR 2026 submissions a fetch
brings (conftest: venue_records: every decision, anonymous), ICLR 2017 from Paper Copilot's list (accepted and
rejected papers, with authors), and COLM 2024 and 2025 from theirs (the lists' files, cut short) (accepted papers only, with authors and
affiliations). Where work like this appears, an author's page, statistics per venue and year and by
institution, BibTeX per venue, the map by venue and year."""
import gzip
import json
from collections import Counter
from pathlib import Path

import bibtexparser
import pytest

from conftest import ROOT, run_cli, shared_dir
from search.filters import decision_group, fold

LISTS = ROOT.parent / "shared" / "data" / "paperlists"
AUTHOR = "Greg Durrett"          # six COLM 2025 papers and three of COLM 2024 in the lists
STATUS = {"Poster": "Poster", "Oral": "Oral", "Spotlight": "Spotlight", "Reject": "Rejected"}


def list_subset(path: Path, n: int, keep: str = "") -> list[dict]:
    """The first n entries of a Paper Copilot list with a plain status (and every one naming `keep`), as the
    list gives them."""
    entries = json.loads(gzip.open(path).read())
    chosen = [e for e in entries if e["status"] in STATUS and keep and keep in e["author"].split(";")]
    return chosen + [e for e in entries if e["status"] in STATUS and e not in chosen][:n]


def entries(path: Path) -> list[dict]:
    """A subset's entries with what the tests compare: authors, affiliations (one an author), decision."""
    out = []
    for e in json.loads(path.read_text()):
        authors, affs = e["author"].split(";"), e["aff"].split(";")
        out.append({"authors": authors, "affiliations": [affs[i] if i < len(affs) else "" for i in range(len(authors))],
                    "decision": STATUS[e["status"]]})
    return out


@pytest.fixture(scope="session")
def mixed_records(tmp_path_factory, venue_records) -> list[Path]:
    """The fetched ICLR 2026 submissions and three Paper Copilot lists, cut short, as the lists are published
    (a JSON array each, named by venue and year): the build reads them as a user's would be."""
    if not LISTS.is_dir():
        pytest.skip("needs ../shared/data/paperlists (Paper Copilot's lists)")
    cuts = (("iclr/iclr2017", 60, ""), ("colm/colm2025", 20, AUTHOR), ("colm/colm2024", 10, AUTHOR))

    def make(d: Path) -> None:
        for name, n, keep in cuts:
            (d / f"{name.split('/')[1]}.json").write_text(json.dumps(list_subset(LISTS / f"{name}.json.gz", n, keep)))

    d = shared_dir(tmp_path_factory, "mixed-lists", make)
    return [venue_records, *(d / f"{name.split('/')[1]}.json" for name, _, _ in cuts)]


@pytest.fixture(scope="session")
def mixed_index(tmp_path_factory, model, mixed_records, embedding_cache) -> Path:
    from search.build import build_index

    def make(d: Path) -> None:
        build_index(mixed_records, d / "index", model=model, cache_dir=embedding_cache, multilingual=False)

    return shared_dir(tmp_path_factory, "mixedindex", make) / "index"


@pytest.fixture(scope="session")
def mixed_engine(mixed_index, model, fingerprint):
    from search.engine import Engine
    from search.index import load_index

    return Engine(load_index(mixed_index), model, fingerprint)


def cli_json(*args: str) -> dict:
    r = run_cli(*args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# ---------------------------------------------------------------- where work like this appears

def test_where_counts_the_nearest_papers_by_venue_and_year(mixed_index, mixed_engine):
    by_id = {p.id: p for p in mixed_engine.papers}
    pid = next(p.id for p in mixed_engine.papers if p.conference == "COLM" and p.year == 2025)
    got = cli_json("where", "--paper", pid, "-k", "50", "--index", str(mixed_index))
    ids = got["ids"]
    assert len(ids) == 50 and pid not in ids and "does not predict" in got["note"]
    places = {(x["venue"], x["year"]): x for x in got["places"]}
    assert {k: x["papers"] for k, x in places.items()} == Counter((by_id[i].conference, by_id[i].year) for i in ids)
    assert [x["papers"] for x in got["places"]] == sorted((x["papers"] for x in got["places"]), reverse=True)
    for (conference, year), x in places.items():
        mine = [by_id[i] for i in ids if (by_id[i].conference, by_id[i].year) == (conference, year)]
        if conference == "COLM":   # a list of accepted papers only: no fate, no rate
            assert x["rejections_known"] is False and x["fate"] is None
        else:                      # ICLR 2026 and 2017 hold their rejections: how these papers fared there
            assert x["rejections_known"] is True
            assert x["fate"]["counts"] == {g: sum(decision_group(p.decision) == g for p in mine)
                                           for g in ("accepted", "rejected", "withdrawn", "undecided")}
            every = [p for p in mixed_engine.papers if (p.conference, p.year) == (conference, year)]
            assert x["whole"]["papers"] == len(every)
    words = run_cli("where", "language model reasoning", "--index", str(mixed_index)).stdout
    assert "COLM 2025: " in words and "lists only accepted papers" in words and "does not predict" in words


def test_fared_leaves_lists_of_accepted_papers_out_of_its_counts(mixed_index, mixed_engine):
    """Without it, COLM's accepted papers among the neighbours make the accepted share of a list's choosing."""
    by_id = {p.id: p for p in mixed_engine.papers}
    got = cli_json("fared", "language models", "--index", str(mixed_index))
    ids = got["neighbours"]["ids"]
    colm = [by_id[i] for i in ids if by_id[i].conference == "COLM"]
    assert colm, "the query should reach COLM's papers"
    assert got["neighbours"]["listed_only"] == len(colm)
    assert got["neighbours"]["counts"]["accepted"] == sum(
        decision_group(by_id[i].decision) == "accepted" for i in ids if by_id[i].conference == "ICLR")
    # the row beside the neighbours tallies every venue-year of the index: it is not named as one venue
    said = run_cli("fared", "language models", "--index", str(mixed_index)).stdout
    assert "the whole venue" not in said and "every venue of the index (4 venue-years):" in said


# ---------------------------------------------------------------- statistics per venue and year, institutions

def test_stats_per_venue_year_give_rates_only_where_rejections_are_in_the_record(mixed_index, mixed_records):
    rows = [json.loads(line) for line in run_cli("stats", "--json", "--index", str(mixed_index)).stdout.splitlines()]
    venues = {r["name"]: r for r in rows if r["group"] == "venue"}
    assert set(venues) == {"ICLR 2026", "ICLR 2017", "COLM 2025", "COLM 2024"}
    colm = entries(mixed_records[2])
    assert venues["COLM 2025"]["acceptance_rate"] is None and venues["COLM 2025"]["decided"] == 0
    assert venues["COLM 2025"]["listed_only"] == len(colm)
    iclr17 = entries(mixed_records[1])
    accepted = sum(r["decision"] != "Rejected" for r in iclr17)
    assert venues["ICLR 2017"]["acceptance_rate"] == round(accepted / len(iclr17), 4)
    # the whole index's rate counts the venues whose records hold rejections only
    whole = next(r for r in rows if r["group"] == "all")
    assert whole["listed_only"] == venues["COLM 2025"]["listed_only"] + venues["COLM 2024"]["listed_only"]
    assert whole["decisions"]["accepted"] == venues["ICLR 2017"]["decisions"]["accepted"] + \
        venues["ICLR 2026"]["decisions"]["accepted"]
    table = run_cli("stats", "--index", str(mixed_index)).stdout
    assert "a list of" in table and "accepted papers only: no rate" in table


def test_stats_name_the_institutions_with_most_papers(mixed_index, mixed_records):
    rows = [json.loads(line) for line in run_cli("stats", "--json", "--index", str(mixed_index)).stdout.splitlines()]
    top = [r for r in rows if r["group"] == "affiliation"]
    recs = [e for path in mixed_records[1:] for e in entries(path)]
    counts = Counter(k for r in recs for k in {fold(a) for aff in r["affiliations"] for a in aff.split("+") if a.strip()})
    assert top and [r["papers"] for r in top] == sorted((r["papers"] for r in top), reverse=True)
    assert top[0]["papers"] == max(counts.values()) and counts[fold(top[0]["name"])] == top[0]["papers"]


# ---------------------------------------------------------------- an author's page

def test_author_page_by_venue_and_year_with_coauthors(mixed_index, mixed_records):
    got = cli_json("author", "greg DURRETT", "--index", str(mixed_index))
    recs = [e for path in mixed_records[1:] for e in entries(path)]
    mine = [r for r in recs if AUTHOR in r["authors"]]
    assert got["name"] == AUTHOR and got["papers"] == len(mine) == 9
    assert [(v["venue"], len(v["papers"])) for v in got["venues"]] == [("COLM 2025", 6), ("COLM 2024", 3)]
    together = Counter(a for r in mine for a in r["authors"] if a != AUTHOR)
    assert {c["name"]: c["papers"] for c in got["coauthors"]} == dict(together)
    assert got["coauthors"][0]["papers"] == max(together.values())
    words = run_cli("author", AUTHOR, "--index", str(mixed_index)).stdout
    assert words.startswith(f"{AUTHOR}: 9 papers") and "\nCOLM 2025\n" in words and "Co-authors" in words
    # a part of a name is no one's whole name: one line with the names that contain it
    r = run_cli("author", "Durre", "--index", str(mixed_index))
    assert r.returncode == 2 and r.stderr == f"error: no author named 'Durre' in this index; names that contain it: {AUTHOR}\n"


def test_an_anonymous_record_names_nobody(venue_index):
    r = run_cli("author", "Anyone", "--index", str(venue_index))
    assert r.returncode == 2 and r.stderr.startswith("error: this index has no authors' names")


# ---------------------------------------------------------------- BibTeX per venue, the map by venue and year

def test_bibtex_gives_each_venue_its_booktitle_and_year(mixed_index, mixed_engine):
    from search.filters import in_programme

    picks = {}  # a paper of each venue-year's programme: a submission not (yet) in it cites no booktitle
    for p in mixed_engine.papers:
        if in_programme(p):
            picks.setdefault((p.conference, p.year), p.id)
    r = run_cli("export", *picks.values(), "--format", "bibtex", "--index", str(mixed_index))
    entries = {e.fields_dict["url"].value: e.fields_dict for e in bibtexparser.parse_string(r.stdout).entries}
    by_place = {place: entries[mixed_engine.catalog.paper(pid).url] for place, pid in picks.items()}
    assert {place: (e["booktitle"].value, e["year"].value) for place, e in by_place.items()} == {
        ("ICLR", 2026): ("The Fourteenth International Conference on Learning Representations (ICLR 2026)", "2026"),
        ("ICLR", 2017): ("The Fifth International Conference on Learning Representations (ICLR 2017)", "2017"),
        ("COLM", 2025): ("Conference on Language Modeling (COLM 2025)", "2025"),
        ("COLM", 2024): ("Conference on Language Modeling (COLM 2024)", "2024")}


def test_the_map_is_coloured_by_venue_or_year(mixed_engine):
    from search.render import map_colours, map_figure

    assert map_colours(mixed_engine.venue_years(), True) == ("area", "venue", "year", "topic", "decision")
    assert map_colours([("ICLR", 2026)], False) == ("area", "topic")
    papers, xy, topics = mixed_engine.papers, mixed_engine.catalog.map_xy, mixed_engine.catalog.topics
    venues = Counter(p.conference for p in papers)
    traces = {t.name for t in map_figure(papers, xy, topics, colour="venue").data if t.name}
    assert {f"{c} ({n})" for c, n in venues.items()} <= traces
    years = [t.name for t in map_figure(papers, xy, topics, colour="year").data if t.name and t.name[0].isdigit()]
    assert years == [f"{y} ({n})" for y, n in sorted(Counter(p.year for p in papers).items())]


def test_similar_papers_and_a_reading_list_across_venues(mixed_index, mixed_engine):
    colm = [p.id for p in mixed_engine.papers if p.conference == "COLM"][:2]
    iclr = next(p.id for p in mixed_engine.papers if p.conference == "ICLR" and p.year == 2017)
    one = cli_json("similar", colm[0], "-k", "20", "--index", str(mixed_index))
    hits = one["results"][0]["hits"] if "results" in one else one["hits"]
    assert len({(h["conference"], h["year"]) for h in hits}) > 1 and colm[0] not in [h["id"] for h in hits]
    listed = cli_json("similar", *colm, iclr, "-k", "10", "--index", str(mixed_index))
    hits = listed["results"][0]["hits"] if "results" in listed else listed["hits"]
    assert hits and not {h["id"] for h in hits} & {*colm, iclr}


# ---------------------------------------------------------------- the page (AppTest)

APP = str(ROOT / "streamlit_app.py")


@pytest.fixture
def mixed_app(mixed_index, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCH_INDEX", str(mixed_index))
    return AppTest.from_file(APP, default_timeout=120)


def test_page_where_panel_opens_on_a_query(mixed_app, mixed_engine):
    at = mixed_app
    at.query_params["q"] = "language models"
    at.run()
    assert not at.exception
    assert any(e.label.startswith("Where work like this appears") for e in at.expander)
    assert not any("lists only accepted papers" in m.value for m in at.markdown)   # computed only once opened
    at.session_state["where-open-q"] = True
    at.run()
    panel = next(m.value for m in at.markdown if "COLM 2025:" in m.value).replace("\\", "")
    fared = mixed_engine.fared(query="language models", k=50)
    assert all(x.name + ":" in panel for x in fared.places)
    assert any("does not predict" in c.value for c in at.caption)


def test_page_author_view(mixed_app):
    at = mixed_app
    at.query_params["author"] = AUTHOR
    at.run()
    assert not at.exception
    assert [s.value for s in at.subheader][-1] == AUTHOR
    md = "\n".join(m.value for m in at.markdown)
    assert "#### COLM 2025" in md and "#### COLM 2024" in md and "#### Co-authors" in md
    assert md.count("(?paper=") == 9 and "(?author=" in md
    at.query_params["author"] = "Nobody Atall"
    at.run()
    assert any("No author named" in w.value for w in at.warning)


def test_an_author_on_a_card_opens_their_page(mixed_app):
    """Each name on a result card is a button to its author's page; an anonymous card names nobody."""
    from cards_page import buttons, cards, click

    at = mixed_app
    at.query_params["q"] = "language models"
    at.query_params["venue"] = "COLM"
    at.run()
    assert not at.exception
    names = buttons(at, "q", "author")
    assert names and all(b["label"] == b["id"] for b in names)  # the button reads the name it opens
    first = cards(at, "q")[0]
    assert [b["id"] for b in first["buttons"] if b["action"] == "author"][:1], "the first COLM card names its authors"
    name = names[0]["id"]
    click(at, "q", "author", name)
    assert not at.exception
    assert at.query_params["author"] == name and [s.value for s in at.subheader][-1] == name


def test_page_map_coloured_by_venue(mixed_app, mixed_engine):
    at = mixed_app
    at.query_params["view"] = "map"
    at.query_params["color"] = "venue"
    at.run()
    assert not at.exception
    radio = next(r for r in at.radio if r.label == "Colour by")
    assert radio.options == ["primary area", "venue", "year", "topic", "decision"] and radio.value == "venue"
    assert any("coloured by venue" in c.value for c in at.caption)


def test_the_cli_table_names_each_hits_venue_and_year_where_they_differ(mixed_index):
    # "Poster" alone could be ICLR 2026's, COLM 2024's or COLM 2025's (a new user's run)
    table = run_cli("query", "language models", "--venue", "COLM", "-k", "20", "--index", str(mixed_index)).stdout
    rows = [line for line in table.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert len(rows) == 20 and all(("COLM 2025" in r) != ("COLM 2024" in r) for r in rows), table
    assert {"COLM 2025", "COLM 2024"} <= {v for v in ("COLM 2025", "COLM 2024") for r in rows if v in r}
    assert "columns: rank, " in table and "venue and year (- none), id, title" in table
    one = run_cli("query", "language model reasoning", "--venue", "COLM 2025", "--index", str(mixed_index)).stdout
    assert "venue and year" not in one  # one venue: the column says nothing
