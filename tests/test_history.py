"""The record's history across re-fetches, against two real fetches of the same venue: the shared crawl's
earliest review versions (the venue before the discussion) and its latest, fetched through the official
client from the local API server, with a submission arriving, one withdrawn and one review added."""
from __future__ import annotations

import gzip
import json
import os
import time
from itertools import islice
from pathlib import Path

import pytest

from conftest import CRAWL, VENUE_NOTES, run_cli
from search.parts import history
from search.build import build_index
from search.engine import Engine
from search.filters import Filters
from search.index import load_index

DATES = ("2025-11-14", "2025-12-05")
OPTIONS = dict(explore=False, sentences=False, summaries=False, review_search=False)


def rating_of(note: dict, which: str) -> tuple[float | None, set[str]]:
    """The mean rating and the reviewers of a raw note, each review at its earliest or latest version:
    computed from the notes alone, as a reader of the crawl would, not through the fetch's records."""
    versions: dict[str, list[dict]] = {}
    for r in note["details"]["replies"]:
        if any(i.endswith("/-/Official_Review") for i in r["invitations"]):
            versions.setdefault(r["id"], []).append(r)
    chosen = [sorted(v, key=lambda r: r["tmdate"])[0 if which == "earliest" else -1] for v in versions.values()]
    ratings = [r["content"]["rating"]["value"] for r in chosen]
    who = {r["signatures"][0].rsplit("/", 1)[-1] for r in chosen}
    return (sum(ratings) / len(ratings) if ratings else None), who


@pytest.fixture(scope="module")
def fetches(tmp_path_factory, model, embedding_cache):
    """Two fetches built one after the other into one index (and the second alone into another): the notes,
    the index folders and the ids the test changed."""
    if not CRAWL.is_file():
        pytest.skip("needs ../shared/data/iclr2026_openreview.jsonl.gz (the ICLR 2026 crawl)")
    from openreview_server import OpenReviewServer, as_of, withdrawn
    from search.openreview.fetch import DEFAULT_VENUE, fetch_venue
    from search.openreview.api import Api

    d = tmp_path_factory.mktemp("history")
    with gzip.open(CRAWL, "rt", encoding="utf-8") as f:
        raw = [json.loads(line) for line in islice(f, VENUE_NOTES)]
    group = json.loads((CRAWL.parent / "iclr2026_openreview_group.json").read_text())
    arriving = raw[-1]["id"]
    gone = next(n["id"] for n in raw if "Withdrawn" not in n["content"]["venueid"]["value"] and n["id"] != arriving)
    # one review of a reviewed paper lands between the fetches
    late_review = next(n for n in raw if sum("Official_Review" in r["invitations"][0]
                                            for r in n["details"]["replies"]) >= 3 and n["id"] not in (gone, arriving))
    dropped = next(r["id"] for r in late_review["details"]["replies"] if "Official_Review" in r["invitations"][0])
    before = []
    for n in raw:
        if n["id"] == arriving:
            continue
        n = as_of(n, "earliest")
        if n["id"] == late_review["id"]:
            n = {**n, "details": {**n["details"], "replies": [r for r in n["details"]["replies"] if r["id"] != dropped]}}
        before.append(n)
    after = [withdrawn(n) if n["id"] == gone else n for n in raw]
    files = []
    for name, notes, when in zip(("before", "after"), (before, after), DATES):
        with OpenReviewServer(notes, group) as server:
            fetch_venue(Api(server.url), DEFAULT_VENUE, d / f"{name}.jsonl")
        stamp = time.mktime(time.strptime(when, "%Y-%m-%d"))
        os.utime(d / f"{name}.jsonl", (stamp, stamp))
        files.append(d / f"{name}.jsonl")
    for f in files:
        build_index([f], d / "index", model=model, cache_dir=embedding_cache, **OPTIONS)
    build_index([files[1]], d / "once", model=model, cache_dir=embedding_cache, **OPTIONS)
    return {"before": before, "after": after, "files": files, "index": d / "index", "once": d / "once",
            "arriving": arriving, "gone": gone, "late_review": late_review["id"], "dir": d}


@pytest.fixture(scope="module")
def engine(fetches, model, fingerprint):
    return Engine(load_index(fetches["index"]), model, fingerprint)


def expected_moves(before: list[dict], after: list[dict]) -> dict[str, float]:
    a = {n["id"]: rating_of(n, "latest")[0] for n in before}
    b = {n["id"]: rating_of(n, "latest")[0] for n in after}
    return {pid: round(b[pid] - a[pid], 3) for pid in a.keys() & b.keys()
            if a[pid] is not None and b[pid] is not None and abs(b[pid] - a[pid]) > 1e-3}


def test_the_changes_match_what_the_notes_say_paper_by_paper(fetches, engine):
    ran = run_cli("changes", "--json", "--index", str(fetches["index"]))
    assert ran.returncode == 0, ran.stderr
    said = json.loads(ran.stdout)
    assert (said["since"], said["until"], said["fetches"]) == ("2025-11-14T00:00:00Z", "2025-12-05T00:00:00Z", 2)
    want = expected_moves(fetches["before"], fetches["after"])
    assert len(want) >= 10  # the discussion moved ratings: the test compares something
    assert {m["id"]: round(m["move"], 3) for m in said["moved"]} == want
    assert [m["move"] for m in said["moved"]] == sorted((m["move"] for m in said["moved"]), reverse=True)
    assert [n["id"] for n in said["new"]] == [fetches["arriving"]]
    assert [w["id"] for w in said["withdrawn"]] == [fetches["gone"]]
    assert said["decisions"] == [] and said["removed"] == []
    before_who = {n["id"]: rating_of(n, "latest")[1] for n in fetches["before"]}
    grew = {n["id"]: len(rating_of(n, "latest")[1] - before_who[n["id"]]) for n in fetches["after"]
            if n["id"] in before_who and rating_of(n, "latest")[1] - before_who[n["id"]]}
    assert {r["id"]: r["reviews"] for r in said["new_reviews"]} == grew == {fetches["late_review"]: 1}
    # the table says the same, and where it sends a reader for the rest
    table = run_cli("changes", "-k", "2", "--index", str(fetches["index"])).stdout
    assert "Changes from the fetch of 2025-11-14" in table and f"withdrawn (1):\n  {fetches['gone']}" in table
    top = said["moved"][0]
    assert f"{top['from']:.2f} → {top['to']:.2f} ({top['move']:+.2f}) {top['id']}" in table


def test_the_papers_carry_their_move_for_sorts_filters_and_cards(fetches, engine):
    from search.render.cards import meta_line

    want = expected_moves(fetches["before"], fetches["after"])
    catalog = engine.catalog
    def ids(**given) -> set[str]:
        return {p.id for p in catalog.browse(catalog.known(Filters(decisions=("all",), **given)))}

    assert ids(changed=("new",)) == {fetches["arriving"]}
    assert ids(changed=("withdrawn",)) == {fetches["gone"]}
    assert ids(changed=("reviews",)) == {fetches["late_review"]}
    assert ids(changed=("up",)) == {pid for pid, m in want.items() if m > 0}
    assert ids(changed=("down",)) == {pid for pid, m in want.items() if m < 0}
    assert ids(changed=("up", "new")) == ids(changed=("up",)) | {fetches["arriving"]}
    assert ids(min_move=1.0) == {pid for pid, m in want.items() if abs(m) >= 1 - 1e-9}
    improved = catalog.browse(catalog.known(Filters(decisions=("all",), changed=("moved",), sort="improved")))
    moves = [history.move(p) for p in improved]
    assert moves == sorted(moves, reverse=True) and moves[0] == max(want.values())
    dropped = [history.move(p) for p in catalog.browse(catalog.known(Filters(decisions=("all",), changed=("moved",),
                                                                             sort="dropped")))]
    assert dropped == sorted(dropped) and dropped[0] == min(want.values())
    # a query's hits keep the sort, and the CLI reads the flags as the page reads its address
    ran = run_cli("query", "language models", "--decision", "all", "--changed", "moved", "--sort", "improved",
                  "--json", "-k", "5", "--index", str(fetches["index"]))
    hits = json.loads(ran.stdout)["hits"]
    assert hits and all(h["id"] in want for h in hits)
    assert [round(h["since_previous_fetch"]["move"], 3) for h in hits] == [want[h["id"]] for h in hits]
    assert [want[h["id"]] for h in hits] == sorted((want[h["id"]] for h in hits), reverse=True)
    up = catalog.paper(max(want, key=want.get))
    assert f"rating {up.rating_from:.1f} → {up.avg_rating:.1f}" in meta_line(up, reviews=True)
    assert meta_line(catalog.paper(fetches["arriving"])).startswith("new since the previous fetch")


def test_a_papers_rating_history_shows_each_fetch_and_each_edit(fetches, engine):
    want = expected_moves(fetches["before"], fetches["after"])
    pid = max(want, key=lambda p: abs(want[p]))
    note = next(n for n in fetches["after"] if n["id"] == pid)
    points = engine.rating_history(pid)
    fetched = [p for p in points if p.source == "fetch"]
    assert [p.at for p in fetched] == ["2025-11-14T00:00:00Z", "2025-12-05T00:00:00Z"]
    assert fetched[0].mean == pytest.approx(rating_of(note, "earliest")[0], abs=1e-3)
    assert fetched[1].mean == pytest.approx(rating_of(note, "latest")[0], abs=1e-3)
    assert any(p.source == "edited" for p in points)  # the moves between, from the reviews' own versions
    assert [p.at for p in points] == sorted(p.at for p in points)


def test_one_fetch_has_no_history_yet_and_says_so_but_shows_the_discussions_moves(fetches, model, fingerprint):
    once = Engine(load_index(fetches["once"]), model, fingerprint)
    assert once.manifest.history.fetches == 1 and once.manifest.history.baseline == history.FIRST_POSTED
    c = once.changes()
    assert c.first_posted and not (c.new or c.withdrawn or c.decisions or c.new_reviews)
    # the moves since the reviews were first posted, from the one fetch's review versions
    want = {n["id"]: round(rating_of(n, "latest")[0] - rating_of(n, "earliest")[0], 3)
            for n in fetches["after"] if rating_of(n, "earliest")[0] is not None}
    assert {m["id"]: round(m["move"], 3) for m in c.moved} == {k: v for k, v in want.items() if abs(v) > 1e-3}
    fitted = once.catalog.known(Filters(changed=("new", "up")))
    assert fitted.changed == ("up",) and "changed=new (this index has one fetch: nothing to compare with yet)" \
        in fitted.unknown
    ran = run_cli("changes", "--index", str(fetches["once"]))
    assert ran.stdout.startswith("One fetch so far (2025-12-05T00:00:00Z): nothing to compare with yet.")


def built_twice(fetches, model, embedding_cache, out: Path) -> Path:
    for f in fetches["files"]:
        build_index([f], out, model=model, cache_dir=embedding_cache, **OPTIONS)
    return out


def test_the_history_survives_rebuilds_and_further_fetches(fetches, model, embedding_cache, tmp_path):
    before = history.load(load_index(fetches["index"]).path)
    out = built_twice(fetches, model, embedding_cache, tmp_path / "index")
    # the same records again: no new fetch, "the previous fetch" stays what it was
    build_index([fetches["files"][1]], out, model=model, cache_dir=embedding_cache, **OPTIONS)
    again = history.load(load_index(out).path)
    assert again.fetches == before.fetches and again.papers == before.papers
    # a third fetch in which one more rating moved: three fetches, the first states kept
    rows = [json.loads(line) for line in fetches["files"][1].read_text(encoding="utf-8").splitlines()]
    moved = next(r for r in rows if r.get("reviews") and r["id"] != fetches["gone"])
    moved["reviews"][0]["rating"] = 10 if moved["reviews"][0]["rating"] != 10 else 2
    ratings = [r["rating"] for r in moved["reviews"] if "rating" in r]
    moved["avg_rating"] = sum(ratings) / len(ratings)  # as the fetch writes it
    third = tmp_path / "third.jsonl"
    third.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    build_index([third], out, model=model, cache_dir=embedding_cache, **OPTIONS)
    h = history.load(load_index(out).path)
    assert len(h.fetches) == 3 and h.fetches[:2] == before.fetches
    assert all(h.papers[pid]["states"][:len(e["states"])] == e["states"] for pid, e in before.papers.items())
    engine = Engine(load_index(out), model)
    assert [m["id"] for m in engine.changes().moved] == [moved["id"]]
    since_first = engine.changes(since="2025-11-20")  # the last fetch on or before that date: the first
    assert since_first.since == "2025-11-14T00:00:00Z" and moved["id"] in {m["id"] for m in since_first.moved}
    with pytest.raises(history.HistoryError, match="no fetch on or before 2024-01-01"):
        engine.changes(since="2024-01-01")
    ran = run_cli("changes", "--since", "yesterday", "--index", str(out))
    assert ran.returncode == 2 and "is not a date" in ran.stderr


def test_a_damaged_history_starts_again_and_never_stops_a_build(fetches, model, embedding_cache, tmp_path):
    out = built_twice(fetches, model, embedding_cache, tmp_path / "index")
    damaged = load_index(out).path / history.HISTORY
    os.unlink(damaged)  # a file of its own: the published one is a hard link shared with the other builds
    damaged.write_text("{not json\n", encoding="utf-8")
    report = build_index([fetches["files"][1]], out, model=model, cache_dir=embedding_cache, **OPTIONS)
    assert any("history" in n and "starts again" in n for n in report.notes)
    assert load_index(out).manifest.history.fetches == 1


def test_saved_searches_list_new_matches_and_moves_and_survive_a_restart(fetches, engine):
    from search import saved

    index = fetches["index"]
    arriving = engine.catalog.paper(fetches["arriving"])
    ran = run_cli("saved", "--add", arriving.title, "--decision", "all", "--index", str(index))
    assert ran.returncode == 0, ran.stderr
    path = saved.saved_file(index)
    assert path.parent == index.parent and path.is_file()
    listed = [json.loads(line) for line in run_cli("saved", "--json", "--index", str(index)).stdout.splitlines()]
    assert len(listed) == 1 and listed[0]["query"] == " ".join(arriving.title.split())
    assert fetches["arriving"] in [h["id"] for h in listed[0]["new"]]  # its own title finds the new paper
    want = expected_moves(fetches["before"], fetches["after"])
    assert all(h["id"] in want for h in listed[0]["moved"])
    assert listed[0]["link"].startswith("?q=") and "decision=all" in listed[0]["link"]
    news = saved.news(engine, saved.load(path)[0])  # read back from the file, as after a restart
    assert news.new and f": {len(news.new)} new paper" in news.words() and "(decision all)" in news.words()
    # saving it again keeps one; a damaged file is named and left as it is
    run_cli("saved", "--add", arriving.title, "--decision", "all", "--index", str(index))
    assert len(saved.load(path)) == 1
    good = path.read_text(encoding="utf-8")
    path.write_text(good[:-10], encoding="utf-8")
    ran = run_cli("saved", "--add", "another", "--index", str(index))
    assert ran.returncode == 2 and "cannot be read" in ran.stderr and "Traceback" not in ran.stderr
    assert path.read_text(encoding="utf-8") == good[:-10]
    path.write_text(good, encoding="utf-8")
    assert run_cli("saved", "--remove", arriving.title, "--index", str(index)).returncode == 0
    assert saved.load(path) == []


def test_the_fetch_keeps_each_edited_reviews_earlier_versions(fetches):
    rows = {json.loads(line)["id"]: json.loads(line) for line in fetches["files"][1].read_text().splitlines()}
    edited = 0
    for note in fetches["after"]:
        for r in note["details"]["replies"]:
            if "Official_Review" not in r["invitations"][0]:
                continue
            versions = sorted((v for v in note["details"]["replies"] if v["id"] == r["id"]), key=lambda v: v["tmdate"])
            if len(versions) < 2 or r is not versions[-1] or note["id"] not in rows:
                continue
            who = r["signatures"][0].rsplit("/", 1)[-1]
            review = next(x for x in rows[note["id"]]["reviews"] if x["reviewer"] == who)
            assert [v["rating"] for v in review["versions"]] == [v["content"]["rating"]["value"] for v in versions[:-1]]
            assert review["rating"] == versions[-1]["content"]["rating"]["value"]
            edited += 1
    assert edited >= 5


def test_the_page_opens_on_what_changed_and_shows_a_papers_history(fetches, engine, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT

    monkeypatch.setenv("SEARCH_INDEX", str(fetches["index"]))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120).run()
    assert not at.exception
    panel = " ".join(m.value for m in at.markdown)
    assert "What changed" in panel and "since the fetch of 2025-11-14" in panel
    labels = [b.label for b in at.button]
    assert "1 new submission" in labels and "1 withdrawn" in labels
    next(b for b in at.button if b.label == "1 withdrawn").click().run()
    assert at.query_params["view"] in (["changes"], "changes")
    assert at.query_params["changed"] in (["withdrawn"], "withdrawn")
    assert not at.exception
    want = expected_moves(fetches["before"], fetches["after"])
    pid = max(want, key=lambda p: abs(want[p]))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["paper"] = pid
    at.run()
    assert not at.exception
    assert "Rating history" in [h.value for h in at.subheader]
    table = at.dataframe[-1].value
    assert list(table["mean"])[-1] == pytest.approx(rating_of(next(n for n in fetches["after"] if n["id"] == pid),
                                                              "latest")[0], abs=0.005)


def test_the_page_on_one_fetch_says_there_is_nothing_to_compare_yet(fetches, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT

    monkeypatch.setenv("SEARCH_INDEX", str(fetches["once"]))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["changed"] = "new"
    at.run()
    assert not at.exception
    assert any("One fetch so far" in m.value for m in at.markdown)
    assert any("changed=new (this index has one fetch" in w.value.replace("\\", "") for w in at.warning)


def paper(pid: str, ratings: list[float], decision: str = "Under review"):
    from search.corpus import Paper

    reviews = [{"reviewer": f"R{i}", "rating": r} for i, r in enumerate(ratings)]
    return Paper(id=pid, abstract="a", text="a", title=pid.upper(), title_derived=False, decision=decision,
                 avg_rating=sum(ratings) / len(ratings) if ratings else None, ratings=ratings, reviews=reviews)


def test_states_are_kept_only_where_a_fetch_changed_them():
    first = history.update(history.History(), [paper("a", [4, 6]), paper("b", [5])], "2025-11-14T00:00:00Z", "d1")
    assert history.update(first, [paper("a", [4, 6]), paper("b", [5])], "2025-11-20T00:00:00Z", "d2") is first
    second = history.update(first, [paper("a", [6, 6], "Poster"), paper("c", [3])], "2025-12-05T00:00:00Z", "d3")
    assert [len(second.papers[p]["states"]) for p in "abc"] == [2, 2, 1]
    assert second.papers["b"]["states"][-1] == {"fetch": 1, "absent": True}
    now = [paper("a", [6, 6], "Poster"), paper("c", [3])]
    history.mark(now, second)
    assert (now[0].rating_from, now[0].decision_from, now[0].new, now[1].new) == (5.0, "Under review", False, True)
    c = history.changes(second, now)
    assert [m["id"] for m in c.moved] == ["a"] and c.moved[0]["move"] == 1.0
    assert [d["to"] for d in c.decisions] == ["Poster"]
    assert [n["id"] for n in c.new] == ["c"] and [r["id"] for r in c.removed] == ["b"]
    # a seed line (no decision, no rating, no review) has no history
    assert history.state(paper("s", [], "")) is None
