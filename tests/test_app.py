"""The page through Streamlit's AppTest: query -> results, ?paper= -> similar papers."""
import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from cards_page import buttons, cards, click, component
from conftest import ROOT, cache_copy
from search.index import read_manifest, resolve
from search.filters import Filters

APP = str(ROOT / "streamlit_app.py")


@pytest.fixture
def app(seed_index, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(seed_index))
    at = AppTest.from_file(APP, default_timeout=120)
    return at


def test_empty_state_offers_examples_that_run(app):
    app.run()
    assert not app.exception
    examples = [b for b in app.button if b.key and b.key.startswith("ex-")]
    assert len(examples) == 4
    examples[0].click().run()
    assert app.query_params["q"] == [examples[0].label] or app.query_params["q"] == examples[0].label
    assert len(buttons(app, "q", "similar")) == 10


def test_query_shows_ranked_results_with_similar_action(app):
    app.query_params["q"] = "optical flow robustness to corrupted images"
    app.run()
    assert not app.exception and not app.error
    shown = cards(app, "q")
    assert shown[0]["title"].startswith("1. RobustSpring")
    sims = buttons(app, "q", "similar")
    assert len(sims) == 10 and sims[0]["id"] == shown[0]["pid"]
    click(app, "q", "similar", sims[0]["id"])
    assert app.query_params["paper"] in ([shown[0]["pid"]], shown[0]["pid"])
    assert "Most similar papers" in [s.value for s in app.subheader]


def test_cards_show_the_score_they_are_sorted_by_and_far_queries_say_so(app):
    app.query_params["q"] = "optical flow robustness to corrupted images"
    app.run()
    scores = [float(c["small"].split("match ")[1].split()[0]) for c in cards(app, "q")]
    assert scores == sorted(scores, reverse=True) and " · cosine " in cards(app, "q")[0]["small"]
    assert not any("Nothing in this index" in i.value for i in app.info)
    app.query_params["q"] = "asdf qwer zxcv uiop hjkl"
    app.run()
    assert any("Nothing in this index is close" in i.value for i in app.info)


def test_paper_view_lists_similar_papers_without_itself(app, engine):
    pid = engine.papers[0].id
    app.query_params["paper"] = pid
    app.query_params["k"] = "5"
    app.run()
    assert not app.exception and not app.error
    assert [c["pid"] for c in cards(app, "v")] == [pid]
    sims = [b["id"] for b in buttons(app, "p", "similar")]
    assert len(sims) == 5 and pid not in sims


def test_unknown_paper_id_gets_a_message(app):
    app.query_params["paper"] = "doesnotexist"
    app.run()
    assert not app.exception
    assert "No paper with id" in app.error[0].value


def test_html_in_query_is_shown_as_text(app):
    app.query_params["q"] = "<script>alert(1)</script>"
    app.run()
    assert not app.exception
    assert app.text_area[0].value == "<script>alert(1)</script>"
    assert all("<script>" not in m.value for m in app.markdown)
    assert all("<script>" not in c["body"] for c in cards(app, "q"))


def test_long_query_warns_about_truncation(app):
    app.query_params["q"] = "diffusion " * 400
    app.run()
    assert "longer than the model's window" in app.warning[0].value


def test_broken_index_shows_message_not_traceback(tmp_path, monkeypatch):
    bad = tmp_path / "index"
    bad.mkdir()
    (bad / "manifest.json").write_text("{broken")
    monkeypatch.setenv("SEARCH_INDEX", str(bad))
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert "python index_build.py" in at.error[0].value
    # a broken index is reported, never built over by the page
    assert not (tmp_path / ".index.build.json").exists() and (bad / "manifest.json").read_text() == "{broken"


@pytest.fixture
def iclr_app(iclr_index, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(iclr_index))
    return AppTest.from_file(APP, default_timeout=120)


def test_real_metadata_evidence_and_openreview_link(iclr_app):
    iclr_app.query_params["q"] = "task grouping for multi-task learning"
    iclr_app.run()
    assert not iclr_app.exception and not iclr_app.error
    shown = cards(iclr_app, "q")
    assert "Ensemble Prediction of Task Affinity" in shown[0]["title"]
    assert ("Poster ·" in shown[0]["small"] or "Oral ·" in shown[0]["small"]) and "\nKeywords: " in shown[0]["small"]
    html = json.loads(component(iclr_app, "q").proto.json)["html"]
    why = html.split("<b>Why:</b>")[1].lower()
    # "grouping" marks "groups"; "task", in most of these papers, carries no meaning worth marking
    assert html.count("<b>Why:</b>") == 10 and "<strong>groups</strong>" in why and "<strong>task" not in why
    links = [link for c in shown for link in c["links"]]
    assert len(links) >= 9 and all(link.startswith("https://openreview.net/") for link in links)


def test_area_filter_and_mode_from_the_url(iclr_app):
    iclr_app.query_params["q"] = "policy optimization"
    iclr_app.query_params["area"] = "reinforcement learning"
    iclr_app.query_params["mode"] = "keyword"
    iclr_app.run()
    assert not iclr_app.exception
    metas = [c["small"].split("\n")[0] for c in cards(iclr_app, "q")]
    assert metas and all("BM25 " in m and "reinforcement learning" in m for m in metas)
    assert iclr_app.radio[0].value == "keyword"
    assert iclr_app.multiselect[0].value == ["reinforcement learning"]


def test_old_seed_link_opens_the_merged_paper_with_shared_evidence(iclr_app, engine):
    seed = next(p for p in engine.papers if p.title.startswith("ETAP"))
    iclr_app.query_params["paper"] = seed.id
    iclr_app.run()
    assert not iclr_app.exception and not iclr_app.error
    [opened] = cards(iclr_app, "v")
    assert "Ensemble Prediction of Task Affinity" in opened["title"]
    similar = cards(iclr_app, "p")
    assert len(similar) == 10 and all(c["body"].startswith("Closest sentences. This paper: ") for c in similar)


def wait_for_job(out, seconds: float = 400) -> dict:
    from search import background
    from search.progress import read_status

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = read_status(background.status_file(out)) or {}
        if status.get("state") in ("done", "failed") and not background.busy(out):
            return status
        time.sleep(1)
    raise AssertionError(f"background build still running after {seconds} s: {status}")


@pytest.mark.slow
def test_first_run_serves_seeds_then_swaps_in_the_conference(tmp_path, monkeypatch, embedding_cache,
                                                             multilingual_seed_index):
    from search import background

    out = tmp_path / "fresh" / "index"
    # the default cache beside the index holds the seeds' vectors: the job embeds the conference's papers only
    cache_copy(embedding_cache, out.parent / ".embedding_cache")
    data = tmp_path / "conference.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": f"conf{i}", "title": f"Analytical engines {i}", "authors": ["Ada Lovelace", f"Author {i}"],
         "abstract": f"Notes on the analytical engine, part {i}: it can compose music of any complexity.",
         "avg_rating": 6.0 + i, "n_ratings": 3} for i in range(3)]))
    monkeypatch.setenv("SEARCH_INDEX", str(out))
    monkeypatch.setenv("SEARCH_DATA", str(data))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["q"] = "optical flow robustness to corrupted images"
    at.run()
    assert not at.exception and not at.error
    assert any("No index yet" in i.value and "whole conference follows" in i.value for i in at.info)
    assert background.busy(out)
    # a second page, or a second server, starts no second job while this one runs
    second = AppTest.from_file(APP, default_timeout=120)
    second.run()
    assert not second.exception
    assert not background.start(out, [[ROOT / "seeds"]])
    status = wait_for_job(out)
    assert status["state"] == "done" and status["steps"] == 2 and status["count"] == 69, status
    # the seeds, then seeds + conference (its first stage, then later ones: a few kept), now complete
    builds = [read_manifest(b) for b in sorted((out.parent / ".index.versions").iterdir())]
    assert [len(m.inputs) for m in builds][-1] == 2 and builds[-1].pending == []
    assert read_manifest(resolve(out)).count == 69
    at.run()
    assert not at.exception and not at.error and not at.info  # no banner once the build is done
    shown = cards(at, "q")
    assert shown and "RobustSpring" in shown[0]["title"]
    assert "69 papers" in at.sidebar.caption[0].value
    # the conference's authors: shown on the cards and a filter of the page
    at.query_params["q"] = "the analytical engine composes music"
    at.query_params["author"] = "LOVELACE"
    at.run()
    shown = cards(at, "q")
    assert len(shown) == 3 and all(c["small"].startswith("Ada Lovelace and Author") for c in shown)
    # nothing left to build: a later start of the page starts nothing
    assert background.plan(out, ROOT / "seeds", [data]) == []


def test_background_build_failure_is_shown_and_not_retried(tmp_path, monkeypatch, seed_index):
    import shutil

    from search import background

    out = tmp_path / "index"
    shutil.copytree(seed_index.parent, tmp_path, dirs_exist_ok=True, symlinks=True)
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"abstract": "fine"}\n{"abstract": \n')
    monkeypatch.setenv("SEARCH_INDEX", str(out))
    monkeypatch.setenv("SEARCH_DATA", str(bad))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    status = wait_for_job(out, 120)
    assert status["state"] == "failed" and "broken.jsonl:2" in status["message"]
    at.run()
    assert not at.exception and "broken.jsonl:2" in at.error[0].value
    assert not background.running(out) and background.failed(out, background.plan(out, ROOT / "seeds", [bad]))
    assert len(cards(at, "q")) == 0 and "66 papers" in at.sidebar.caption[0].value  # seeds still served


def test_topic_view_lists_its_papers_and_combines_with_facets(iclr_index, iclr_engine, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(iclr_index))
    topic = iclr_engine.catalog.topics[0]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["topic"] = str(topic.id)
    at.run()
    assert not at.exception and not at.error
    assert topic.label in at.subheader[0].value
    shown = cards(at, "t")
    assert len(shown) == topic.size
    assert shown[0]["pid"] == topic.papers[0]
    area = next(p.primary_area for p in map(iclr_engine.catalog.paper, topic.papers) if p.primary_area)
    at.query_params["area"] = area
    at.run()
    assert 0 < len(cards(at, "t")) == len(iclr_engine.catalog.topic_papers(topic.id, Filters(areas=(area,)))) < topic.size + 1


def test_every_hit_links_its_topic(app, engine):
    app.query_params["q"] = "music score recognition"
    app.run()
    shown = cards(app, "q")
    links = buttons(app, "q", "topic")
    assert len(links) == 10 and all(b["label"].startswith("Topic: ") for b in links)
    assert links[0]["id"] == str(engine.catalog.paper(shown[0]["pid"]).topic)
    click(app, "q", "topic", links[0]["id"])
    assert app.query_params["topic"] in ([links[0]["id"]], links[0]["id"])
    assert app.subheader[0].value.startswith("Topic:")


def test_unknown_topic_gets_a_message(app):
    app.query_params["topic"] = "99999"
    app.run()
    assert not app.exception and "No topic" in app.error[0].value


def test_map_view_draws_every_paper(app, engine):
    app.query_params["view"] = "map"
    app.query_params["q"] = "music score recognition"
    app.run()
    assert not app.exception and not app.error
    chart = app.get("plotly_chart")[0]
    fig = json.loads(chart.proto.spec)
    ids = [i for t in fig["data"] if t.get("customdata") and "hits" not in t.get("name", "")
           and "list" not in t.get("name", "") for i in t["customdata"]]
    assert sorted(ids) == sorted(p.id for p in engine.papers)
    hits = [t for t in fig["data"] if t.get("name") == "your query's hits"]
    assert len(hits) == 1 and len(hits[0]["customdata"]) == 10


def test_map_view_warns_about_a_truncated_query(app):
    app.query_params["view"] = "map"
    app.query_params["q"] = "diffusion " * 400
    app.run()
    assert not app.exception and "longer than the model's window" in app.warning[0].value


def test_list_view_keeps_valid_ids_names_bad_ones_and_offers_downloads(app, engine):
    a, b = engine.papers[0].id, engine.papers[3].id
    app.query_params["view"] = "list"
    app.query_params["list"] = f"{a},bogusid,{b}"
    app.run()
    assert not app.exception
    assert "bogusid" in app.warning[0].value
    assert app.subheader[0].value == "Reading list (2)"
    downloads = app.get("download_button")
    assert len(downloads) == 3
    assert [c["pid"] for c in cards(app, "l")] == [a, b]
    more = [c["pid"] for c in cards(app, "m")]
    assert len(more) == 10 and a not in more and b not in more
    # removing a paper rewrites the list in the URL
    assert [x["label"] for x in buttons(app, "l", "list")] == ["✓ In reading list (remove)"] * 2
    click(app, "l", "list", a)
    assert app.query_params["list"] in ([b], b)


def test_adding_a_hit_puts_it_in_the_url_list(app):
    app.query_params["q"] = "music score recognition"
    app.run()
    add = buttons(app, "q", "list")[0]
    assert add["label"] == "+ Reading list"
    click(app, "q", "list", add["id"])
    assert app.query_params["list"] in ([add["id"]], add["id"])
    now = [b["label"] for b in buttons(app, "q", "list") if b["id"] == add["id"]]
    assert now == ["✓ In reading list (remove)"]


def test_empty_list_says_so(app):
    app.query_params["view"] = "list"
    app.run()
    assert "reading list is empty" in app.info[0].value


def test_loaded_engine_is_kept_out_of_the_per_run_garbage_collection(app):
    """Streamlit collects garbage after every run; the engine's objects must not be scanned each time."""
    import gc

    from views.build import get_engine

    # this run's freeze, not one an earlier test of this worker left (its engine maybe evicted since, and freed)
    get_engine.clear()
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    app.query_params["q"] = "graph neural networks"
    app.run()
    assert not app.exception
    assert gc.get_freeze_count() > 10_000   # the engine, loaded by this run, and all else alive then: frozen


def test_submitting_the_box_writes_nothing_above_the_title(app):
    """Streamlit's magic writes any bare non-call expression; a callback's `a() if x else b()` once put "None" on top."""
    app.run()
    app.text_area(key="query_box").input("music score recognition")
    app.button[[b.label for b in app.button].index("Find papers")].click().run()
    assert not app.exception
    assert app.query_params["q"] in (["music score recognition"], "music score recognition")
    assert type(app.main.children[0]).__name__ == "Title"
    assert "None" not in [m.value for m in app.markdown]


def test_seed_page_offers_the_conference_and_says_why_a_download_failed(index_copy, monkeypatch):
    # a local port where nothing listens stands for a machine without network: tests never go online
    monkeypatch.setenv("SEARCH_INDEX", str(index_copy))
    monkeypatch.setenv("OPENREVIEW_API_BASEURL_V2", "http://127.0.0.1:9")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    offer = at.button(key="fetch-conference")
    assert "ICLR 2026" in offer.label and not offer.disabled
    offer.click().run()
    assert not at.exception
    status = wait_for_job(index_copy, 120)
    assert status["state"] == "failed" and "cannot reach OpenReview" in status["message"]
    at.run()
    assert "The download stopped: cannot reach OpenReview" in at.error[0].value
    assert "66 papers" in at.sidebar.caption[0].value  # the seeds are still served


@pytest.fixture
def conference_app(iclr_index, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(iclr_index))
    return AppTest.from_file(APP, default_timeout=120)


def test_a_setting_put_back_to_its_default_leaves_the_address(conference_app):
    """sort=relevance, mode=hybrid, k=10 and a cleared minimum say nothing the address without them does not."""
    at = conference_app
    at.query_params["q"] = "graph neural networks"
    at.run()
    at.selectbox(key="sort_w").select("rating").run()
    at.radio(key="mode_w").set_value("semantic").run()
    at.number_input(key="min_rating_w").set_value(6.0).run()
    assert {k: at.query_params[k] for k in ("sort", "mode", "min_rating")} in (
        {"sort": "rating", "mode": "semantic", "min_rating": "6"}, {"sort": ["rating"], "mode": ["semantic"],
                                                                    "min_rating": ["6"]})
    at.selectbox(key="sort_w").select("relevance").run()
    at.radio(key="mode_w").set_value("hybrid").run()
    at.number_input(key="min_rating_w").set_value(None).run()
    at.selectbox(key="k_w").select(20).run()
    at.selectbox(key="k_w").select(10).run()
    assert not at.exception and not {"sort", "mode", "min_rating", "k"} & set(at.query_params)
    assert at.query_params["q"] in ("graph neural networks", ["graph neural networks"])


def test_cards_show_review_scores_and_the_list_sorts_by_them(conference_app):
    at = conference_app
    at.query_params["q"] = "graph neural networks"
    at.query_params["sort"] = "rating"
    at.query_params["min_rating"] = "5.5"
    at.run()
    assert not at.exception and not at.error
    shown = cards(at, "q")
    metas = [next(line for line in c["small"].splitlines() if line.startswith("rating ")) for c in shown]
    ratings = [float(m.split()[1]) for m in metas]
    assert shown and ratings == sorted(ratings, reverse=True) and min(ratings) >= 5.5
    assert all("review" in m for m in metas)
    assert at.selectbox(key="sort_w").value == "rating" and at.number_input(key="min_rating_w").value == 5.5


def test_stats_view_draws_charts_with_tables_beside_them(conference_app, iclr_engine):
    at = conference_app
    at.query_params["view"] = "stats"
    at.run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 2
    tables = [m.value for m in at.markdown if m.value.startswith("| | papers")]
    assert len(tables) == 2
    assert tables[0].count("\n") == len(iclr_engine.catalog.areas) + 1 and "(?paper=" in tables[0]
    assert tables[1].count("(?topic=") == len(iclr_engine.catalog.topics)


def test_bad_settings_in_the_address_are_named_not_silently_dropped(conference_app):
    at = conference_app
    for key, value in (("q", "graph neural networks"), ("k", "7"), ("mode", "fast"), ("sort", "stars"),
                       ("min_rating", "eleven")):
        at.query_params[key] = value
    at.run()
    assert not at.exception
    notice = at.warning[0].value
    # "stars" could be a sub-score of some venue's reviews: this index has none, and says so
    assert all(bit in notice for bit in ("k\\=7", "mode\\=fast", "sort 'stars'", "min\\_rating\\=eleven"))
    assert len(cards(at, "q")) == 10  # the defaults apply


def test_a_paste_longer_than_the_limit_is_cut_and_said_so(app):
    app.run()
    app.text_area(key="query_box").input("optical flow " * 3000)
    app.button[[b.label for b in app.button].index("Find papers")].click().run()
    assert not app.exception
    assert any("first 20,000" in w.value for w in app.warning)
    assert len(app.query_params["q"][0] if isinstance(app.query_params["q"], list) else app.query_params["q"]) == 20_000


@pytest.mark.parametrize("params", [
    {}, {"q": "equivariant networks"}, {"q": "equivariant networks", "sort": "rating"},
    {"q": "equivariant networks", "sort": "oral", "min_rating": "6"}, {"view": "map"}, {"view": "map", "q": "graphs"},
    {"view": "list"}, {"view": "stats"}, {"topic": "0"}, {"view": "list", "list": "PAPER"}, {"paper": "PAPER"},
], ids=lambda p: "&".join(f"{k}={v}" for k, v in p.items()) or "home")
def test_every_view_opens_on_an_index_without_ratings_venues_or_decisions(app, engine, params):
    assert not engine.catalog.has_ratings and not engine.catalog.venues  # the seeds: what a fresh clone serves
    for key, value in params.items():
        app.query_params[key] = value.replace("PAPER", engine.papers[0].id)
    app.run()
    assert not app.exception and not app.error
    if params.get("view") == "stats":
        table = next(m.value for m in app.markdown if m.value.startswith("| | papers"))
        assert table.count("(?topic=") == len(engine.catalog.topics)  # counts by topic, no rating columns
        assert "mean rating" not in table and any("no review ratings" in c.value for c in app.caption)
    if params.get("sort"):  # a sort the index cannot honour says so, and the list is by relevance
        assert any("no review ratings" in i.value for i in app.info)
        assert len(cards(app, "q")) == 10  # a minimum rating no paper can meet is named and left out
    if "min_rating" in params:
        assert any("this index has no review ratings" in w.value for w in app.warning)


def test_a_sorted_list_keeps_what_matches_and_says_so(conference_app, iclr_engine):
    at = conference_app
    at.query_params["q"] = "graph neural networks"
    at.query_params["sort"] = "rating"
    at.run()
    result = iclr_engine.search("graph neural networks", 10, filters=Filters(sort="rating"))
    matched = "paper that matches" if result.matched == 1 else "papers that match"  # one on a small index
    note = next(c.value for c in at.caption if f"{matched}, best rated first" in c.value)
    assert f"{result.matched} {matched}" in note and "hybrid ranking" in note
    assert [c["pid"] for c in cards(at, "q")] == [h.paper.id for h in result.hits]


def test_seed_cards_name_the_list_not_its_file(app):
    app.query_params["q"] = "equivariant networks"
    app.run()
    smalls = " ".join(c["small"] for c in cards(app, "q"))
    assert "from ICLR 2026 Papers" in smalls and ".txt" not in smalls


def test_a_list_with_empty_and_control_ids_names_only_the_bad_id(app):
    app.query_params["view"] = "list"
    app.query_params["list"] = "nope,,\x00"
    app.run()
    assert not app.exception
    assert [w.value for w in app.warning] == ["Not in this index, left out of the reading list: nope"]
