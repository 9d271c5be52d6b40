"""Crash safety, concurrent builds and hot swap: a reader never sees a half-written index.

A build is stopped at each of its stages (the staged build publishes before its later stages: what is
served is then the old index or a stage of the new, whole either way), which its progress lines on stderr announce (and, while it
writes, at each file of the new build as it appears), not after guessed sleeps. SIGSTOP freezes the
files on disk exactly as a SIGKILL at that moment would leave them, so one build walks every stage;
real SIGKILLs while it embeds, while its multilingual workers run and while it writes prove the rest: the
workers leave with the build, the lock goes with the process, and the next build clears up what was left.
"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browser import CHROMIUM, launch, streamlit_server
from conftest import ROOT, SEEDS, cache_copy
from search.build import build_index
from search.encoding.embed import as_encoder
from search.engine import open_engine
from search.index import load_index, versions_dir

pytestmark = pytest.mark.crash
QUERY = "positional embeddings and long context"
# what index_build.py prints as each stage starts (to a pipe: one line per stage, then every 10 s)
# (the staged build publishes before each later stage with work to do, and "writing the index…" at last)
SO_FAR = "publishing the stages built so far…"
STAGES = ["embedding with", "abstracts: 0/", SO_FAR, "topics…", "map…", SO_FAR, "sentences: 0/", SO_FAR,
          "multilingual abstracts: 0/", "multilingual sentences: 0/", "multilingual titles: 0/", "writing the index…"]
# the files a build writes into its temporary directory, in order
FILES = ["papers.jsonl", "vectors.faiss", "sentences.jsonl", "sentences.npy", "sentence_offsets.npy", "bm25",
         "query_encoder.onnx", "tokenizer.json", "topics.json", "map.jsonl", "multilingual.faiss",
         "multilingual_sentences.npy", "multilingual_titles.npy", "manifest.json"]


def hits(index: Path, encoder) -> list[str]:
    """The index's answer to QUERY, every file's checksum verified on the way."""
    return [h.paper.id for h in open_engine(index, encoder).search(QUERY, 5).hits]


def synthetic(path: Path, n: int) -> Path:
    topics = ["graph", "kernel", "policy", "diffusion", "protein", "retrieval", "robot", "sparse"]
    path.write_text("".join(json.dumps({"id": f"s{i}", "abstract": (
        f"Paper {i} studies {topics[i % 8]} methods for problem {i}. We propose a new estimator. "
        f"Experiments on {i % 13} benchmarks show gains. Code is released.")}) + "\n" for i in range(n)))
    return path


def start_build(inputs: list[Path], out: Path, cache: Path) -> subprocess.Popen:
    # a process group of its own, so a test can tell whether the processes the build started are gone
    return subprocess.Popen([sys.executable, "index_build.py", *map(str, inputs), "--out", str(out),
                             "--cache", str(cache)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def group(pgid: int) -> list[int]:
    """The processes still alive in a process group."""
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid:
                    alive.append(int(entry))
            except ProcessLookupError:
                pass
    return alive


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL the build and every process it started, and reap it (clean-up after a failed test)."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def read_until(proc: subprocess.Popen, prefix: str) -> bool:
    """Read the build's stderr up to a line that starts with `prefix`; False if it ended first."""
    for line in proc.stderr:
        if line.startswith(prefix):
            return True
    return False


def new_file(vdir: Path, seen: set[str]) -> str | None:
    """A file of FILES that has appeared in the build's temporary directory since `seen`."""
    for d in vdir.glob("tmp-*"):
        for name in FILES:
            if name not in seen and (d / name).exists():
                return name
    return None


@pytest.fixture
def setup(tmp_path, model, fingerprint, embedding_cache, multilingual_seed_index):
    """A published index of the seeds, papers to add that no cache holds (the seeds' vectors, in both
    spaces, are in the session's cache), and the old index's answer."""
    out = tmp_path / "index"
    build_index([SEEDS], out, model=model, cache_dir=embedding_cache)
    extra = synthetic(tmp_path / "extra.jsonl", 40)
    encoder = as_encoder(model, fingerprint)  # the session's model: each check costs no model load
    return out, extra, encoder, hits(out, encoder)


def assert_served_whole(out: Path, encoder, before: list[str]) -> int:
    """The index served is a whole published one: the old (the seeds, answering as before) or a stage the
    new build (the seeds and 40 more) published; returns its count."""
    data = load_index(out)
    count = data.manifest.count
    assert count in (66, 106) and len(data.papers) == count
    answer = hits(out, encoder)  # every file's checksum verified on the way
    assert answer == before if count == 66 else len(answer) == 5
    assert len(list(versions_dir(out).glob("tmp-*"))) <= 1  # the next build clears it
    return count


def test_a_build_frozen_at_every_stage_leaves_the_old_index_whole(setup, embedding_cache, tmp_path):
    out, extra, encoder, before = setup
    proc = start_build([SEEDS, extra], out, cache_copy(embedding_cache, tmp_path / "c"))
    frozen: list[str] = []
    served: dict[str, int] = {}

    def freeze_and_check(point: str) -> None:
        proc.send_signal(signal.SIGSTOP)
        try:
            served[point] = assert_served_whole(out, encoder, before)
            frozen.append(point)
        finally:
            proc.send_signal(signal.SIGCONT)

    try:
        for stage in STAGES:
            assert read_until(proc, stage), f"the build ended before {stage!r}: {proc.wait()}"
            freeze_and_check(stage)
        seen: set[str] = set()
        while proc.poll() is None:  # writing: freeze as each file appears
            name = new_file(versions_dir(out), seen)
            if name:
                seen.add(name)
                freeze_and_check(name)
            else:
                time.sleep(0.0005)
        assert proc.wait() == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            kill(proc)
    assert frozen[:len(STAGES)] == STAGES and len(frozen) > len(STAGES), frozen  # at least one file too
    # the old index served while the abstracts were embedded, the new one (staged) while the sentences were
    assert served["abstracts: 0/"] == 66 and served["sentences: 0/"] == 106
    assert load_index(out).manifest.count == 66 + 40  # thawed, it finished and published


@pytest.mark.parametrize("point", ["abstracts: 0/", "multilingual sentences: 0/", "vectors.faiss"])
def test_sigkill_leaves_the_old_index_and_the_next_build_clears_up(setup, embedding_cache, tmp_path, model,
                                                                   point):
    out, extra, encoder, before = setup
    proc = start_build([SEEDS, extra], out, cache_copy(embedding_cache, tmp_path / "c"))
    try:
        if point in FILES:
            assert read_until(proc, SO_FAR)
            deadline = time.time() + 60
            while not any((t / point).exists() for t in versions_dir(out).glob("tmp-*")):
                assert proc.poll() is None and time.time() < deadline, f"the build never wrote {point}"
                time.sleep(0.0005)
        else:
            assert read_until(proc, point), f"the build ended before {point!r}"
        assert proc.poll() is None, "the build finished before it could be killed"
        proc.send_signal(signal.SIGKILL)  # the build alone, as the OOM killer or a crash would
        proc.wait()
        # its multilingual workers leave with it; a worker still importing on a loaded machine takes seconds
        deadline = time.time() + 30
        while group(proc.pid) and time.time() < deadline:
            time.sleep(0.2)
        assert not group(proc.pid), "processes of the killed build are still running"
    finally:
        if group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    assert_served_whole(out, encoder, before)
    # the lock died with the process: the next build runs, clears what the killed one left, publishes
    report = build_index([SEEDS], out, model=model, cache_dir=embedding_cache)
    assert report.count == 66 and not list(versions_dir(out).glob("tmp-*"))
    assert hits(out, encoder) == before


def test_two_builds_at_once_one_wins_whole(tmp_path, embedding_cache, multilingual_seed_index):
    small = synthetic(tmp_path / "small.jsonl", 40)
    out = tmp_path / "index"
    a = start_build([SEEDS], out, cache_copy(embedding_cache, tmp_path / "ca"))
    time.sleep(0.05)
    b = start_build([SEEDS, small], out, cache_copy(embedding_cache, tmp_path / "cb"))
    results = [(p.wait(), p.communicate()) for p in (a, b)]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 1], results  # the one that asked for the lock last replaced the other
    loser = next(err for code, (_, err) in results if code == 1)
    assert "stopped: a newer build" in loser and "Traceback" not in loser
    winner_count = 66 if results[0][0] == 0 else 106
    data = load_index(out)  # checksums verified: one build, whole
    assert data.manifest.count == winner_count == len(data.papers)


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs /usr/bin/chromium")
def test_hot_swap_while_serving(tmp_path, model, embedding_cache, multilingual_seed_index):
    from playwright.sync_api import sync_playwright

    out, cache = tmp_path / "index", cache_copy(embedding_cache, tmp_path / "c")
    build_index([SEEDS], out, model=model, cache_dir=cache)
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "zebra1", "title": "Zebrafish Telemetry Transformers",
                               "abstract": "We track zebrafish swimming with acoustic telemetry tags and "
                                           "a transformer that forecasts shoal trajectories."}) + "\n")
    with streamlit_server(ROOT, out) as url, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        dialogs = []
        page.on("dialog", lambda dlg: (dialogs.append(dlg.message), dlg.dismiss()))

        def ask(q: str) -> str:
            page.goto(f"{url}/?q={q}&k=5")
            page.locator("h5").first.wait_for(timeout=60_000)
            assert page.locator("[data-testid='stException']").count() == 0
            return page.locator("h5").first.inner_text()

        assert "Zebrafish" not in ask("zebrafish telemetry")
        build = start_build([SEEDS, new], out, cache)
        answered, switched = 0, False
        while build.poll() is None:  # sessions keep answering throughout the build
            new_index = "Zebrafish" in ask("zebrafish telemetry")
            assert new_index or not switched, "went back to the old index after seeing the new one"
            switched |= new_index
            answered += 1
        assert build.returncode == 0 and answered >= 1
        assert "Zebrafish" in ask("zebrafish telemetry tracking")  # no restart needed
        assert not dialogs
        browser.close()
