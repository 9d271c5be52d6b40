"""While a build runs: a re-fetch's build replaces it (the page's button and `index_build.py`), carrying over every
vector it embedded; and what is not built yet is said as it is (still coming with its time left, or left by a build
that stopped), never as an index of an older version to rebuild."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SEEDS, cache_copy, run_cli
from search import background
from search.build import build_index
from search.engine import Result
from search.index import load_index, versions_dir
from search.notices import notice
from search.progress import part_note, with_build_notes, write_status

# a build that has done the abstracts' first 3% (the whole job's pace known): the time until each later stage is done
RUNNING = {"state": "running", "stage": "abstracts", "done": 600, "total": 19630, "eta": 2000.0,
           "eta_stages": {"abstracts": 1800.0, "topics": 1830.0, "map": 1860.0, "review search": 1900.0,
                          "sentences": 2500.0}}


def test_each_part_still_to_come_says_when_from_the_running_builds_status():
    assert part_note("topics and map", RUNNING) == "Topics and the map in about 31m00s."
    assert part_note("review search", RUNNING) == "Search within reviews in about 31m40s."
    assert part_note("sentences", {"stage": "sentences", "done": 30, "total": 100}) == \
        "Why-this-result sentences: 30% built."
    # a build that runs but cannot tell yet (downloading, loading the model): it brings the part, no time promised
    assert part_note("review search", {"stage": "loading the model", "done": 0, "total": 1}) == \
        "The build running now brings search within reviews."
    # no build runs (status None): it stopped before the part, which is said with how to finish it
    stopped = part_note("review search", None)
    assert stopped.startswith("The build stopped before search within reviews;") and "index_build.py" in stopped
    reviews = Result([], [notice("reviews coming")], mode="reviews")
    said = with_build_notes(reviews, lambda: RUNNING)
    assert said.endswith("Search within reviews in about 31m40s.") and "Try again in a minute" not in said
    across = Result([], [notice("multilingual coming", language="zh")])
    assert with_build_notes(across, lambda: None).endswith(part_note("multilingual", None))

REPLACED = ("the running build (pid 1234) was replaced by this one; it stopped at abstracts, 384 of 666 done, and "
            "every vector it embedded is carried over from the embedding cache")


class Stopped(Exception):
    pass


def stop_at_abstracts(stage: str, done: int, total: int) -> None:
    if stage == "abstracts":
        raise Stopped


@pytest.fixture(scope="module")
def words_venue(tmp_path_factory, model, embedding_cache, venue_records):
    """The fetched venue built to its words stage and stopped there: every later part (topics and the map, search
    within reviews) pending."""
    d = tmp_path_factory.mktemp("wordsvenue")
    venue = d / "venue.jsonl"
    shutil.copy(venue_records, venue)
    with pytest.raises(Stopped):
        build_index([venue], d / "index", model=model, cache_dir=cache_copy(embedding_cache, d / "cache", vectors=False),
                    words_first=1, progress=stop_at_abstracts)
    pending = load_index(d / "index").manifest.pending
    assert {"abstracts", "topics and map", "review search"} <= set(pending)
    return d / "index"


def hold_job_lock(out: Path) -> subprocess.Popen:
    """Another process holding the index's job lock, as a running build does (killed by the caller)."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import time; from pathlib import Path; from search.background import job_lock\n"
        f"with job_lock(Path({str(out)!r})):\n    print('held', flush=True); time.sleep(300)")],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


@pytest.fixture
def running_build(words_venue):
    """A build of the index running now, its status file saying how far it is."""
    holder = hold_job_lock(words_venue)
    write_status(background.status_file(words_venue), {**RUNNING, "replaced": REPLACED, "updated": time.time()})
    yield words_venue
    holder.kill()
    holder.wait()
    background.status_file(words_venue).unlink(missing_ok=True)


def test_the_cli_says_topics_map_and_review_search_come_with_the_running_build(running_build):
    for command in ("topics", "map"):
        ran = run_cli(command, "--index", str(running_build))
        assert ran.returncode == 0 and "older version" not in ran.stdout + ran.stderr
        assert ran.stdout.strip() == ("The topics and the map of this index are not built yet. "
                                      "Topics and the map in about 31m00s.")
    ran = run_cli("topics", "--json", "--index", str(running_build))
    assert json.loads(ran.stdout) == {"waiting": True, "message": "The topics and the map of this index are not "
                                      "built yet. Topics and the map in about 31m00s."}
    ran = run_cli("query", "reviewers found the ablations weak", "--mode", "reviews", "--json",
                  "--index", str(running_build))
    message = json.loads(ran.stdout)["message"]
    assert "Search within reviews is not built yet" in message and "Try again in a minute" not in message
    assert message.endswith("Search within reviews in about 31m40s.")


def test_the_cli_says_a_stopped_build_left_them_and_older_version_only_where_it_is_so(words_venue, tmp_path,
                                                                                    model, embedding_cache):
    ran = run_cli("map", "--index", str(words_venue))
    assert ran.returncode == 2 and "older version" not in ran.stderr
    assert "not built yet. The build stopped before topics and the map;" in ran.stderr
    ran = run_cli("query", "weak ablations", "--mode", "reviews", "--index", str(words_venue))
    assert "The build stopped before search within reviews;" in ran.stdout
    # an index built without them, finished: the one case where rebuilding is the answer
    build_index([SEEDS], tmp_path / "index", model=model, cache_dir=embedding_cache, explore=False)
    ran = run_cli("topics", "--index", str(tmp_path / "index"))
    assert ran.returncode == 2 and "built with an older version or for evaluation" in ran.stderr


def page(index: Path, monkeypatch, **params):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCH_INDEX", str(index))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception and not at.error
    return at


def test_the_page_says_what_is_still_coming_with_the_running_builds_time_left(running_build, monkeypatch):
    at = page(running_build, monkeypatch)  # the build's panel: what the running build replaced, said once
    assert [c.value for c in at.caption].count(REPLACED[0].upper() + REPLACED[1:] + ".") == 1
    infos = [i.value for i in page(running_build, monkeypatch, view="map").info]
    assert any(i.startswith("The map places papers by meaning") and i.endswith("Topics and the map in about 31m00s.")
               for i in infos), infos
    infos = [i.value for i in page(running_build, monkeypatch, topic="0").info]
    assert any("Topics come with the map" in i and i.endswith("in about 31m00s.") for i in infos), infos
    infos = [i.value for i in page(running_build, monkeypatch, q="weak ablations", mode="reviews").info]
    assert any(i.startswith("Search within reviews is not built yet") and i.endswith("in about 31m40s.")
               for i in infos), infos


def test_the_page_says_a_stopped_build_left_them(words_venue, monkeypatch):
    infos = [i.value for i in page(words_venue, monkeypatch, view="map").info]
    assert any("The build stopped before topics and the map" in i for i in infos), infos
    infos = [i.value for i in page(words_venue, monkeypatch, q="weak ablations", mode="reviews").info]
    assert any("The build stopped before search within reviews" in i for i in infos), infos


# ---------------------------------------------------------------- a re-fetch while a build runs

def test_a_fetch_while_a_build_runs_says_that_building_it_replaces_that_build(tmp_path):
    from openreview_server import OpenReviewServer
    from test_fetch import GROUP, venue_notes

    out = tmp_path / "index"
    holder = hold_job_lock(out)
    try:
        with OpenReviewServer(venue_notes(), GROUP) as server:
            ran = run_cli("fetch", "--api", server.url, "--out", str(tmp_path / "v.jsonl"),
                          env={"SEARCH_INDEX": str(out)})
    finally:
        holder.kill()
        holder.wait()
    assert ran.returncode == 0 and f"build their index with: python index_build.py seeds {tmp_path / 'v.jsonl'}" \
        in ran.stdout
    assert f"a build of {out} is running now: that command stops it and builds this fetch instead" in ran.stdout


def synthetic(path: Path, n: int, rated: int = 0) -> Path:
    """n short papers no cache holds; the first `rated` with a rating (what a re-fetch changes)."""
    topics = ["graph", "kernel", "policy", "diffusion", "protein", "retrieval", "robot", "sparse"]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps({"id": f"s{i}", "abstract": (
        f"Paper {i} studies {topics[i % 8]} methods for problem {i}. We propose a new estimator."),
        **({"avg_rating": 6.0, "n_ratings": 3} if i < rated else {})}) + "\n" for i in range(n)))
    os.replace(tmp, path)  # as the fetch publishes its file: by one rename
    return path


def start_build(inputs: list[Path], out: Path, cache: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "index_build.py", *map(str, inputs), "--out", str(out), "--cache",
                             str(cache), "--no-multilingual", "--no-review-search", "--no-summaries"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def build_reaching(inputs: list[Path], out: Path, cache: Path, ok) -> subprocess.Popen:
    """index_build.py started, once its status file says `ok` (killed where it never does)."""
    proc = start_build(inputs, out, cache)
    try:
        wait_status(out, ok)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return proc


def wait_status(out: Path, ok, seconds: float = 300) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        said = background.status(out)
        if ok(said):
            return said
        time.sleep(0.2)
    raise AssertionError(f"the build never got there: {background.status(out)}")


def left_clean(out: Path) -> None:
    """No lock held, no claim, no stray build folder: the next build starts as after a clean end."""
    assert not background.build_running(out)
    assert not background._claim_file(out).exists() and not list(versions_dir(out).glob("tmp-*"))


def ended(proc: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out, err


@pytest.mark.crash
def test_a_build_of_a_refetch_replaces_the_running_build_and_carries_its_vectors_over(tmp_path, embedding_cache):
    out, data = tmp_path / "index", synthetic(tmp_path / "venue.jsonl", 200)
    cache = cache_copy(embedding_cache, tmp_path / "cache")  # the model's export (and any seeds' vectors)
    # a chunk of abstracts embedded: the stop must keep it, and the one under way
    first = build_reaching([SEEDS, data], out, cache,
                           lambda s: s.get("stage") == "abstracts" and (s.get("done") or 0) >= 128)
    synthetic(data, 200, rated=5)  # the re-fetch: ratings came
    second = start_build([SEEDS, data], out, cache)
    code, _, err = ended(first)
    assert code == 1 and "stopped: a newer build of the index replaced this one" in err and "Traceback" not in err
    assert load_index(out).manifest.count == 266  # what it published is served, whole, as the new build starts
    code, printed, err = ended(second)
    assert code == 0, err
    said = re.search(r"was replaced by this one; it stopped (?:at|as it finished) ([^,]+?)(?:, ([\d,]+) of ([\d,]+) "
                     r"done)?, and every vector it embedded is carried over from the embedding cache", err)
    assert said, err
    if said.group(1) == "abstracts":
        done, total = (int(g.replace(",", "")) for g in said.groups()[1:])
        assert total >= 200 and done >= 128  # the chunk it had reported, and the one under way when asked
    else:  # on a loaded machine it may have embedded them all before the new build asked it to stop
        done = total = 200
    # every vector the stopped build embedded came from the cache: none embedded twice, none lost
    assert f"({total - done} embedded, {266 - total + done} from cache)" in printed, printed
    final = load_index(out)
    assert final.manifest.count == 266 and final.manifest.pending == []
    assert final.manifest.inputs_digest == background.digest([SEEDS, data])
    assert sum(p.avg_rating is not None for p in final.papers) >= 5  # the re-fetch's data, not the first's
    left_clean(out)


def test_a_job_that_replaces_a_running_build_says_it_waits_for_that_build_to_stop(tmp_path, monkeypatch):
    # the page said only "starting…" for the minute the running build took to save its chunk (a new user's run)
    from search.progress import status_text

    out, spawned = tmp_path / "index", []
    monkeypatch.setattr(background, "spawn", lambda cmd, log: spawned.append(cmd))
    holder = hold_job_lock(out)
    try:
        assert background.start(out, [[SEEDS]], replace=True) and spawned
        said = status_text(background.status(out))[1]
    finally:
        holder.kill()
        holder.wait()
    assert said.startswith("stopping the running build once its chunk of abstracts is saved, then starting")
    assert background.start(out, [[SEEDS]], replace=True)  # none running: nothing to wait for
    assert status_text(background.status(out))[1] == "starting…"


@pytest.mark.crash
def test_a_build_stopped_by_a_plain_kill_says_so_not_that_a_newer_build_replaced_it(tmp_path, embedding_cache):
    # a new user's `kill PID` was told "a newer build of the index replaced this one", with nothing replacing it
    out, data = tmp_path / "index", synthetic(tmp_path / "venue.jsonl", 200)
    cache = cache_copy(embedding_cache, tmp_path / "cache")
    build = build_reaching([SEEDS, data], out, cache, lambda s: s.get("stage") == "abstracts")
    build.send_signal(signal.SIGTERM)
    code, _, err = ended(build)
    assert code == 1 and "stopped: by a signal (SIGTERM) from outside, not by a newer build" in err, err
    assert "replaced" not in err and "Traceback" not in err
    assert background.status(out)["state"] == "stopped"
    left_clean(out)


@pytest.mark.crash
def test_two_quick_refetches_end_in_one_consistent_index(tmp_path, embedding_cache):
    out, data = tmp_path / "index", synthetic(tmp_path / "venue.jsonl", 120)
    cache = cache_copy(embedding_cache, tmp_path / "cache")
    first = build_reaching([SEEDS, data], out, cache, lambda s: s.get("stage") == "abstracts")
    synthetic(data, 120, rated=3)
    second = start_build([SEEDS, data], out, cache)
    time.sleep(0.5)
    synthetic(data, 120, rated=6)
    third = start_build([SEEDS, data], out, cache)
    results = [ended(p) for p in (first, second, third)]
    # which of the later two publishes depends on when each reads the file (the second may read the last
    # fetch before the third claims the index): the first is replaced, one ends well, none says a traceback
    assert results[0][0] == 1 and "stopped: " in results[0][2] and 0 in [code for code, _, _ in results], results
    assert all("Traceback" not in err and (code == 0 or "stopped: " in err) for code, _, err in results)
    final = load_index(out)  # every file's checksum verified: one build, whole, of the last fetch
    assert final.manifest.count == 186 and final.manifest.inputs_digest == background.digest([SEEDS, data])
    assert sum(p.avg_rating is not None for p in final.papers) == 6
    left_clean(out)


@pytest.mark.crash
def test_the_page_offers_a_refetch_during_a_build_and_its_job_replaces_the_build(tmp_path, monkeypatch, model,
                                                                                  embedding_cache, venue_records,
                                                                                  multilingual_seed_index):
    from search.openreview.fetch import DEFAULT_VENUE, default_out

    out = tmp_path / "index"
    fetched = tmp_path / "data" / default_out(DEFAULT_VENUE).name  # where the page's fetch wrote it
    fetched.parent.mkdir()
    fetched.write_text("".join(venue_records.read_text().splitlines(keepends=True)[:3]))
    cache = cache_copy(embedding_cache, tmp_path / ".embedding_cache")  # the job's cache: beside the index
    build_index([SEEDS, fetched], out, model=model, cache_dir=cache, multilingual=True)
    holder = hold_job_lock(out)  # its build, running
    try:
        write_status(background.status_file(out), {**RUNNING, "updated": time.time()})
        monkeypatch.setenv("OPENREVIEW_API_BASEURL_V2", "http://127.0.0.1:9")  # nothing listens: no network
        at = page(out, monkeypatch)
        offer = at.button(key="fetch-conference")
        assert offer.label == "Fetch ICLR 2026 again from OpenReview" and not offer.disabled
        assert any("fetching again replaces it with a build of the new data" in c.value for c in at.caption)
        offer.click().run()
        assert not at.exception
        assert holder.wait(timeout=120) == -signal.SIGTERM  # the running build was stopped for the new one
        said = wait_status(out, lambda s: s.get("state") in ("done", "failed") and not background.busy(out), 400)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    # the download failed, so the build it replaced went on with the data fetched before: nothing lost
    assert said["state"] == "done" and "cannot reach OpenReview" in said["fetch_failed"], said
    assert said["replaced"].startswith("the running build (pid ") and "carried over" in said["replaced"]
    assert load_index(out).manifest.count == 69
    left_clean(out)


def test_a_file_refetched_while_its_build_runs_is_not_taken_for_built(tmp_path):
    """The build publishes the digest of the inputs it read, not of a file a re-fetch put in their place meanwhile:
    else the page would take the re-fetch for built, and serve the older papers as if they were it."""
    from conftest import FakeModel
    from search.build import inputs_digest

    data = synthetic(tmp_path / "venue.jsonl", 30)
    read = inputs_digest([data])

    def refetch(stage: str, done: int, total: int) -> None:
        if stage == "abstracts" and not done:
            synthetic(data, 30, rated=3)

    build_index([data], tmp_path / "index", model=FakeModel(), cache_dir=tmp_path / "cache", explore=False,
                sentences=False, summaries=False, review_search=False, words_first=1, progress=refetch)
    final = load_index(tmp_path / "index")
    assert final.manifest.inputs_digest == read != inputs_digest([data])
    assert all(p.avg_rating is None for p in final.papers)  # what it read: the file as it was
