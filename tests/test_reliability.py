"""Crash safety, concurrent builds and hot swap: a reader never sees a half-written index."""
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browser import CHROMIUM, launch, streamlit_server
from conftest import ROOT, SEEDS, run_py
from search.engine import open_engine
from search.index import load_index, versions_dir

pytestmark = pytest.mark.crash
QUERY = "positional embeddings and long context"


def hits(index: Path) -> list[str]:
    return [h.paper.id for h in open_engine(index).search(QUERY, 5).hits]


def synthetic(path: Path, n: int) -> Path:
    topics = ["graph", "kernel", "policy", "diffusion", "protein", "retrieval", "robot", "sparse"]
    path.write_text("".join(json.dumps({"id": f"s{i}", "abstract": (
        f"Paper {i} studies {topics[i % 8]} methods for problem {i}. We propose a new estimator. "
        f"Experiments on {i % 13} benchmarks show gains. Code is released.")}) + "\n" for i in range(n)))
    return path


def start_build(inputs: list[Path], out: Path, cache: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "index_build.py", *map(str, inputs), "--out", str(out),
                             "--cache", str(cache)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(pred, proc: subprocess.Popen, timeout: float = 120) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if pred():
            return True
        time.sleep(0.001)
    return False


def tmp_file(vdir: Path, name: str):
    return lambda: any((d / name).exists() for d in vdir.glob("tmp-*"))


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("crash")
    out, warm = d / "index", d / "warm-cache"
    assert run_py("index_build.py", str(SEEDS), "--out", str(out), "--cache", str(d / "c")).returncode == 0
    extra = synthetic(d / "extra.jsonl", 1500)
    # a finished build elsewhere fills a cache, so later runs reach the writing stage in seconds
    assert run_py("index_build.py", str(SEEDS), str(extra), "--out", str(d / "other"), "--cache", str(warm)).returncode == 0
    return out, extra, warm, d, hits(out)


KILLS = [("loading", "after", 0.3), ("loading", "after", 1.5), ("loading", "after", 3.0),
         ("embedding", "after", 7.0), ("embedding", "after", 10.0), ("embedding", "after", 14.0),
         ("writing", "file", "papers.jsonl"), ("writing", "file", "vectors.faiss"),
         ("writing", "file", "sentences.npy"), ("writing", "file", "sentence_offsets.npy"),
         ("writing", "file", "bm25")]


@pytest.mark.parametrize("stage,how,when", KILLS, ids=[f"{s}-{w}" for s, _, w in KILLS])
def test_sigkill_at_any_point_leaves_the_old_index(setup, stage, how, when):
    out, extra, warm, d, before = setup
    cache = warm if stage == "writing" else d / f"cold-{when}"
    proc = start_build([SEEDS, extra], out, cache)
    if how == "after":
        time.sleep(when)
    else:
        assert wait_for(tmp_file(versions_dir(out), when), proc), f"build never wrote {when}"
    assert proc.poll() is None, "the build finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert load_index(out).manifest["count"] == 66
    assert hits(out) == before
    assert len(list(versions_dir(out).glob("tmp-*"))) <= 1  # the next build clears it


def test_next_build_clears_what_killed_builds_left(setup):
    out, extra, warm, d, before = setup
    r = run_py("index_build.py", str(SEEDS), "--out", str(out), "--cache", str(warm))
    assert r.returncode == 0
    assert not list(versions_dir(out).glob("tmp-*")) and hits(out) == before


def test_two_builds_at_once_one_wins_whole(tmp_path):
    small = synthetic(tmp_path / "small.jsonl", 40)
    out = tmp_path / "index"
    a = start_build([SEEDS], out, tmp_path / "ca")
    time.sleep(0.05)
    b = start_build([SEEDS, small], out, tmp_path / "cb")
    results = [(p.wait(), p.communicate()) for p in (a, b)]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, (_, err) in results if code == 2)
    assert "another build" in loser and "Traceback" not in loser
    winner_count = 66 if results[0][0] == 0 else 106
    data = load_index(out)  # checksums verified: one build, whole
    assert data.manifest["count"] == winner_count == len(data.papers)


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs /usr/bin/chromium")
def test_hot_swap_while_serving(tmp_path):
    from playwright.sync_api import sync_playwright

    out = tmp_path / "index"
    assert run_py("index_build.py", str(SEEDS), "--out", str(out), "--cache", str(tmp_path / "c")).returncode == 0
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
        build = start_build([SEEDS, new], out, tmp_path / "c")
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
