"""Progress of long jobs: lines in a log, names on a terminal, a status file for the page."""
import io
import json

from search.progress import still_coming, ProgressLog, duration, read_status, status_text


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_a_line_per_stage_and_every_interval():
    out, clock = io.StringIO(), Clock()
    log = ProgressLog(stream=out, interval=10, clock=clock)
    log("abstracts", 0, 1000)
    for done in range(100, 1001, 100):  # 100 texts a second
        clock.now += 1
        log("abstracts", done, 1000)
    log("topics", 0, 1)
    lines = out.getvalue().splitlines()
    assert lines[0] == "abstracts: 0/1,000 (0%)"
    assert lines[1] == "abstracts: 1,000/1,000 (100%), 100.0/s"  # the end; 10 s had not passed before it
    assert lines[2] == "topics…" and len(lines) == 3


def test_a_long_stage_reports_its_rate_and_time_left():
    out, clock = io.StringIO(), Clock()
    log = ProgressLog(stream=out, interval=10, clock=clock, job="build")
    log("sentences", 0, 34_359)
    clock.now = 12
    log("sentences", 840, 34_359)
    assert out.getvalue().splitlines()[-1] == "[build] sentences: 840/34,359 (2%), 70.0/s, ~7m59s left"


def test_a_terminal_gets_only_the_names_of_stages_without_a_bar():
    out = Tty()
    log = ProgressLog(stream=out)
    log("abstracts", 0, 66)
    log("abstracts", 66, 66)
    log("map", 0, 1)
    assert out.getvalue() == "map…\n"


def test_status_file_is_whole_json_with_stage_and_extra_fields(tmp_path):
    status, clock = tmp_path / "s.json", Clock()
    log = ProgressLog(stream=io.StringIO(), status_file=status, clock=clock, job="build")
    log.update(state="running", step=2, steps=2)
    log("abstracts", 0, 4315)
    clock.now = 10
    log("abstracts", 512, 4315)
    got = read_status(status)
    assert got["state"] == "running" and got["step"] == 2 and got["stage"] == "abstracts"
    assert got["done"] == 512 and got["total"] == 4315 and got["rate"] == 51.2 and got["eta"] == 74.3
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temporary file left
    status.write_text("{half")
    assert read_status(status) is None and read_status(tmp_path / "missing.json") is None
    json.loads(json.dumps(got))


def test_duration_reads_well():
    assert [duration(s) for s in (0, 9.6, 61, 3600 + 125)] == ["0s", "10s", "1m01s", "1h02m"]


def test_status_text_for_the_page_bar():
    fill, words = status_text({"stage": "sentences", "done": 8590, "total": 34359, "rate": 70.4, "eta": 366,
                               "step": 2, "steps": 2})
    assert fill == 8590 / 34359
    assert words == "sentences: 8,590 of 34,359 · 70/s · about 6m06s left in this stage · build 2 of 2"
    assert status_text({"stage": "topics", "done": 0, "total": 1}) == (0.0, "topics…")
    assert status_text({}) == (0.0, "starting…")


def test_the_page_gets_the_whole_jobs_time_left_at_the_pace_of_the_running_stage(tmp_path):
    clock, status = Clock(), tmp_path / "status.json"
    costs = {"abstracts": 85.0, "sentences": 81.0, "map": 5.0}  # measured seconds on some machine
    log = ProgressLog(stream=io.StringIO(), clock=clock, status_file=status, costs=costs)
    log("loading the model", 0, 1)
    clock.now = 20  # not a costed stage: its own wait says nothing of the whole
    log("abstracts", 0, 1000)
    clock.now = 62.5
    log("abstracts", 250, 1000)  # twice as slow as measured: 42.5 s for a quarter of 85
    state = read_status(status)
    assert state["eta"] == 127.5
    assert state["eta_all"] == 127.5 + 2 * (81 + 5)  # the later stages scaled by the same pace
    assert status_text(state)[1].endswith("about 5m00s left until every stage is built")
    assert state["eta_stages"] == {"abstracts": 127.5, "sentences": 127.5 + 162, "map": 127.5 + 172}


def test_the_whole_jobs_time_left_holds_steady_when_one_stage_starts_slow(tmp_path):
    """A loaded machine read "about 2h12m" at 92 s and "1h10m" minutes later: the estimate followed the
    running stage's own pace. Over a job whose stages each start slow (longest texts first) and end fast,
    once one stage is done the estimate stays within 15% of the job's length of the truth (the running
    stage's pace alone is off by 27% at each stage's start)."""
    clock, status = Clock(), tmp_path / "status.json"
    costs = {"abstracts": 100.0, "sentences": 100.0, "multilingual": 100.0}
    log = ProgressLog(stream=io.StringIO(), clock=clock, status_file=status, costs=costs)
    end = 300.0  # each stage: 100 s at a pace of one, the first half of its texts taking 70 of them
    errors, said = [], []
    for n, stage in enumerate(costs):
        for done in range(0, 101, 5):
            clock.now = 100.0 * n + (1.4 * done if done <= 50 else 70 + 0.6 * (done - 50))
            log(stage, done, 100)
            left = read_status(status)["eta_all"]
            said.append(left)
            if n and left is not None:
                errors.append(abs(left - (end - clock.now)) / end)
    assert said[0] is None  # nothing said from no work done
    assert len(errors) == 42 and max(errors) < 0.15, max(errors)
    # a job's second build (the venue after the seeds) starts its pace anew
    log("abstracts", 0, 100)
    clock.now += 1
    log("abstracts", 1, 100)
    assert read_status(status)["eta_all"] is None


def test_still_coming_says_when_each_stage_lands():
    status = {"stage": "sentences", "done": 30, "total": 100, "eta_stages": {"sentences": 70.0,
              "multilingual abstracts": 400.0, "multilingual sentences": 900.0, "multilingual titles": 1500.0}}
    words = still_coming(["sentences", "multilingual"], status)
    assert words == "why-this-result sentences (30% built, in about 1m10s), queries in other languages (in about 25m00s)"


def test_a_finished_background_job_is_reaped_not_left_defunct(tmp_path):
    import os
    import sys
    import time

    import pytest

    from search.background import spawn

    job = spawn([sys.executable, "-c", "print('built')"], tmp_path / "job.log")
    deadline = time.monotonic() + 30
    while job.returncode is None and time.monotonic() < deadline:  # set by the reaper's wait()
        time.sleep(0.05)
    assert job.returncode == 0 and (tmp_path / "job.log").read_text() == "built\n"
    with pytest.raises(ChildProcessError):  # nothing left in the process table to wait for
        os.waitpid(job.pid, os.WNOHANG)
