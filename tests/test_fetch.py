"""`python -m search fetch` against a local server that speaks OpenReview's API v2 (tests/openreview_server.py),
through the official client: pages, counts, replies, and the faults of the real service and networks.

Notes are built in the exact shape the API returns (content fields as {"value": ...}, replies under
details["replies"] with invitations, signatures and dates), as in the shared crawl of ICLR 2026."""
import gzip
import json
import signal
import subprocess
import sys
import time
from itertools import islice
from pathlib import Path

import pytest

from conftest import ROOT, run_cli, run_py
from openreview_server import CUT, HTML, STALL, OpenReviewServer, Reply, rate_limit, too_many_requests
from search.openreview import records
from search.corpus import load_corpus
from search.openreview.fetch import fetch_venue, partial_paths
from search.openreview.api import Api, FetchError, Policy, is_openreview

VENUE = "ICLR.cc/2026/Conference"
GROUP = {"id": VENUE, "content": {k: {"value": v} for k, v in {
    "submission_id": f"{VENUE}/-/Submission", "submission_venue_id": f"{VENUE}/Submission",
    "withdrawn_venue_id": f"{VENUE}/Withdrawn_Submission",
    "desk_rejected_venue_id": f"{VENUE}/Desk_Rejected_Submission",
    "rejected_venue_id": f"{VENUE}/Rejected_Submission", "review_name": "Official_Review",
    "review_rating": "rating", "review_confidence": "confidence", "meta_review_name": "Meta_Review",
    "decision_name": "Decision", "decision_field_name": "decision"}.items()}}
SHARED = ROOT.parent / "shared" / "data"
# fast waits for the faults: where the server names no time the shipped policy waits 2, 4, 8, ... s
QUICK = ("--wait", "0.01", "--timeout", "2")
SECRETS = {"OPENREVIEW_USERNAME": "ada@example.org", "OPENREVIEW_PASSWORD": "hunter2"}


def reply(number: int, kind: str, content: dict, signer: str, n: int = 0) -> dict:
    return {"id": f"{kind[:3]}{number}x{n}", "forum": f"id{number:04d}", "replyto": f"id{number:04d}",
            "invitations": [f"{VENUE}/Submission{number}/-/{kind}", f"{VENUE}/-/Edit"],
            "signatures": [f"{VENUE}/Submission{number}/{signer}"], "readers": ["everyone"],
            "cdate": 1761785407369 + n, "tcdate": 1761785407369 + n,
            "content": {k: {"value": v} for k, v in content.items()}}


def review(number: int, rating, confidence, n: int = 0, **extra) -> dict:
    content = {"summary": f"Paper {number} studies a problem.", "soundness": 3, "presentation": 2,
               "contribution": 3, "strengths": "Clear.", "weaknesses": "Few baselines.",
               "questions": "1. How is the step size chosen?", "flag_for_ethics_review": ["No ethics review needed."],
               "rating": rating, "confidence": confidence, "code_of_conduct": "Yes", **extra}
    return reply(number, "Official_Review", content, f"Reviewer_R{n}", n)


ACCEPTED, REJECTED, WITHDRAWN = VENUE, f"{VENUE}/Rejected_Submission", f"{VENUE}/Withdrawn_Submission"


def note(number: int, venueid: str = ACCEPTED, venue: str = "ICLR 2026 Poster", replies=None,
         decision: str | None = None, **content) -> dict:
    fields = {"title": f"Paper {number}", "abstract": f"We study problem {number} and solve it well.",
              "keywords": ["learning", f"topic {number}"], "primary_area": "optimization",
              "venue": venue, "venueid": venueid, "pdf": f"/pdf/{number}.pdf", **content}
    if replies is None:
        replies = [review(number, 6, 4, 1), review(number, "8: accept, good paper", "3: fairly confident", 2),
                   reply(number, "Official_Comment", {"comment": "a rating of 1 here is no review", "rating": 1},
                         "Authors", 3)]
        if decision:
            replies.append(reply(number, "Decision", {"title": "Paper Decision", "decision": decision},
                                 "Program_Chairs", 4))
    return {"id": f"id{number:04d}", "number": number, "forum": f"id{number:04d}", "cdate": 1756727991855,
            "invitations": [f"{VENUE}/-/Submission"], "readers": ["everyone"],
            "content": {k: {"value": v} for k, v in fields.items() if v is not None},
            "details": {"replies": replies}}


def venue_notes(n: int = 10) -> list[dict]:
    """n submissions of every fate, in the shares of ICLR 2026."""
    kinds = [dict(decision="Accept (Poster)"), dict(venue="ICLR 2026 Oral", decision="Accept (Oral)"),
             dict(venueid=REJECTED, venue="Submitted to ICLR 2026", decision="Reject"),
             dict(venueid=WITHDRAWN, venue="ICLR 2026 Conference Withdrawn Submission"),
             dict(venueid=f"{VENUE}/Submission", venue="ICLR 2026 Conference Submission")]
    return [note(i, **kinds[i % len(kinds)]) for i in range(1, n + 1)]


@pytest.fixture
def serve():
    """serve(notes, **options) -> a started server; every server stops at the test's end."""
    started = []

    def make(notes=None, **options) -> OpenReviewServer:
        server = OpenReviewServer(venue_notes() if notes is None else notes, GROUP, **options).start()
        started.append(server)
        return server

    yield make
    for s in started:
        s.stop()


def fetch(server: OpenReviewServer, out: Path, *args: str, env: dict | None = None):
    return run_cli("fetch", "--api", server.url, "--out", str(out), *args, env=env)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def notes_requests(server: OpenReviewServer) -> list[dict]:
    return [r["params"] for r in server.log if r["path"] == "/notes"]


def only_output(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir())


# ---------------------------------------------------------------- what a fetch brings

def test_every_submission_with_its_reviews_and_fate(serve, tmp_path):
    notes = venue_notes(10)
    notes[0]["content"]["TLDR"] = {"value": "Code at https://github.com/ada/solver."}
    notes[0]["details"]["replies"].append(reply(1, "Meta_Review", {"metareview": "Solid work.",
                                                                   "recommendation": "Accept (Poster)"}, "Area_Chair_x"))
    notes[1]["content"]["authors"] = {"value": ["Ada Lovelace", "Alan Turing"]}
    server = serve(notes)
    out = tmp_path / "data" / "venue.jsonl"
    r = fetch(server, out)
    assert r.returncode == 0, r.stderr
    assert f"wrote 10 submissions of {VENUE} (10 with review scores) to {out}" in r.stdout
    recs = {rec["id"]: rec for rec in lines(out)}
    assert [recs[f"id{i:04d}"]["decision"] for i in range(1, 11)] == [
        "Oral", "Rejected", "Withdrawn", "Under review", "Poster"] * 2
    first = recs["id0001"]
    assert first["tldr"] == "Code at https://github.com/ada/solver." and first["code"] == "https://github.com/ada/solver"
    assert first["meta_review"] == {"author": "Area_Chair_x", "metareview": "Solid work.",
                                    "recommendation": "Accept (Poster)"}
    assert recs["id0002"]["authors"] == ["Ada Lovelace", "Alan Turing"]
    # two reviews (the comment's rating is no review); "8: accept, good paper" counts as 8
    assert first["avg_rating"] == 7.0 and first["n_ratings"] == 2 and first["avg_confidence"] == 3.5
    assert first["reviews"][1] == {"reviewer": "Reviewer_R2", "date": "2025-10-30", "soundness": 3,
                                   "presentation": 2, "contribution": 3, "rating": 8, "confidence": 3,
                                   "summary": "Paper 1 studies a problem.", "strengths": "Clear.",
                                   "weaknesses": "Few baselines.", "questions": "1. How is the step size chosen?"}
    assert only_output(out) == ["venue.jsonl"]  # no partial file left
    # the build reads the record: decision, TL;DR and code link come with each paper
    papers, _ = load_corpus([out])
    paper = {p.id: p for p in papers}["id0001"]
    assert (paper.decision, paper.code, paper.avg_rating) == ("Oral", "https://github.com/ada/solver", 7.0)
    # anonymous, one request for the group, pages by id after the last one
    assert [r["path"] for r in server.log] == ["/groups", "/notes"]
    assert notes_requests(server)[0] == {"invitation": f"{VENUE}/-/Submission", "details": "replies",
                                         "sort": "id", "limit": "1000", "count": "true"}


def test_accepted_only_keeps_the_short_record(serve, tmp_path):
    server = serve()
    out = tmp_path / "accepted.jsonl"
    r = fetch(server, out, "--accepted-only")
    assert r.returncode == 0 and "wrote 4 accepted papers" in r.stdout
    recs = lines(out)
    assert [x["id"] for x in recs] == ["id0001", "id0005", "id0006", "id0010"]
    assert recs[0] == {"id": "id0001", "title": "Paper 1", "abstract": "We study problem 1 and solve it well.",
                       "authors": [], "keywords": ["learning", "topic 1"], "primary_area": "optimization",
                       "venue": "ICLR 2026 Oral", "conference": "ICLR", "year": 2026,
                       "url": "https://openreview.net/forum?id=id0001",
                       "pdf": "https://openreview.net/pdf?id=id0001", "avg_rating": 7.0, "n_ratings": 2,
                       "avg_confidence": 3.5}
    assert notes_requests(server)[0]["content.venueid"] == VENUE


def test_a_capped_server_is_paged_by_id_to_the_end(serve, tmp_path):
    server = serve(venue_notes(10), cap=3)   # asks for 1,000 a page, gets 3
    out = tmp_path / "v.jsonl"
    r = fetch(server, out)
    assert r.returncode == 0, r.stderr
    assert [x["id"] for x in lines(out)] == [f"id{i:04d}" for i in range(1, 11)]
    assert [p.get("after") for p in notes_requests(server)] == [None, "id0003", "id0006", "id0009"]
    assert "downloading submissions: 10/10 (100%)" in r.stderr


@pytest.mark.parametrize("gone", ["id0002", "id0008"], ids=["already-fetched", "not-yet-fetched"])
def test_a_paper_leaving_mid_download_costs_no_other(serve, tmp_path, gone):
    # offset paging would skip the paper that moves into the removed one's place
    server = serve(venue_notes(10), cap=3)
    server.remove_after = {1: gone}
    out = tmp_path / "v.jsonl"
    r = fetch(server, out)
    assert r.returncode == 0, r.stderr
    expected = [f"id{i:04d}" for i in range(1, 11) if not (gone == "id0008" and i == 8)]
    assert [x["id"] for x in lines(out)] == expected


def test_records_without_an_abstract_are_counted_not_written(serve, tmp_path):
    notes = venue_notes(4)
    notes[2]["content"]["abstract"] = {"value": "  "}
    out = tmp_path / "v.jsonl"
    r = fetch(serve(notes), out)
    assert r.returncode == 0 and "wrote 3 submissions" in r.stdout and "(1 without an abstract left out)" in r.stdout
    assert len(lines(out)) == 3


# ---------------------------------------------------------------- the faults of the real service

def test_a_rate_limit_with_a_json_body_is_waited_out_and_announced(serve, tmp_path):
    server = serve().plan("/notes", rate_limit(reset_in=0), rate_limit(reset_in=0))
    out = tmp_path / "v.jsonl"
    r = fetch(server, out, *QUICK)
    assert r.returncode == 0, r.stderr
    waits = [line for line in r.stderr.splitlines() if line.startswith("rate-limited")]
    assert waits == ["rate-limited by OpenReview, waiting 0 s before try 2",
                     "rate-limited by OpenReview, waiting 0 s before try 3"]
    assert len(lines(out)) == 10 and len(notes_requests(server)) == 3


def test_the_reset_time_in_the_body_sets_the_wait(serve, tmp_path):
    server = serve().plan("/notes", rate_limit(reset_in=2))
    t = time.monotonic()
    r = fetch(server, tmp_path / "v.jsonl", *QUICK)
    assert r.returncode == 0 and 1 <= time.monotonic() - t < 15
    assert "rate-limited by OpenReview, waiting" in r.stderr and "before try 2" in r.stderr


def test_a_short_retry_after_is_waited_exactly_past_the_old_count_of_tries(serve, tmp_path):
    # the reported bug: six 429s with Retry-After: 1 ended the fetch "after 6 tries", having waited
    # 2 + 4 + 8 + 16 + 32 s of its own instead of 1 s each; here the shipped policy, no fast flags
    server = serve().plan("/notes", *[too_many_requests(retry_after=1)] * 6)
    out = tmp_path / "v.jsonl"
    t = time.monotonic()
    r = fetch(server, out)
    took = time.monotonic() - t
    assert r.returncode == 0, r.stderr
    assert len(lines(out)) == 10 and len(notes_requests(server)) == 7
    waits = [line for line in r.stderr.splitlines() if line.startswith("rate-limited")]
    assert waits == [f"rate-limited by OpenReview, waiting 1 s as OpenReview asks before try {n}"
                     for n in range(2, 8)]
    arrived = [x["time"] for x in server.log if x["path"] == "/notes"]
    gaps = [b - a for a, b in zip(arrived, arrived[1:])]
    # each wait is the second asked for (the old policy's shortest was 2 s), and all of them little more
    assert all(0.95 <= gap < 1.9 for gap in gaps) and sum(gaps) < 6 + 2, gaps
    assert took < 6 + 4


def test_the_retry_budget_ends_a_rate_limit_that_does_not_clear(serve, tmp_path):
    server = serve().plan("/notes", *[too_many_requests(retry_after=1)] * 20)
    out, said = tmp_path / "v.jsonl", []
    api = Api(server.url, Policy(budget=3), say=said.append)
    t = time.monotonic()
    with pytest.raises(FetchError) as e:
        fetch_venue(api, VENUE, out)
    # two waits of 1 s fit in 3 s; the third would not, so it is not begun
    assert 1.9 < time.monotonic() - t < 4
    assert str(e.value) == ("rate-limited by OpenReview: gave up after 2 s of tries and waits (3 tries, and "
                            "OpenReview asks for 1 s more), past the retry budget of 3 s; try again in a few "
                            "minutes, or allow longer with --retry-budget SECONDS")
    assert said == [f"rate-limited by OpenReview, waiting 1 s as OpenReview asks before try {n}" for n in (2, 3)]
    assert len(notes_requests(server)) == 3 and only_output(out) == []


def test_without_a_retry_after_the_waits_double_until_the_budget_is_spent(serve, tmp_path):
    # a server's own time is taken as it is; only where it names none do the waits grow, up to max_wait
    down = Reply(503, "Service Unavailable", content_type="text/plain")
    server = serve().plan("/notes", too_many_requests(retry_after=1), *[down] * 30)
    slept: list[float] = []
    api = Api(server.url, Policy(first_wait=2, max_wait=60, budget=200), say=lambda line: None,
              sleep=slept.append)
    with pytest.raises(FetchError) as e:
        fetch_venue(api, VENUE, tmp_path / "v.jsonl")
    assert slept == [1, 2, 4, 8, 16, 32, 60, 60]   # 183 s; 60 more would pass 200
    assert str(e.value).startswith("OpenReview is failing (HTTP 503): gave up after 3 minutes of tries and "
                                   "waits (9 tries), past the retry budget of 3 minutes; ")


def test_a_wait_of_an_hour_is_reported_not_slept(serve, tmp_path):
    server = serve().plan("/notes", rate_limit(reset_in=3600, retry_after=3600))
    out = tmp_path / "v.jsonl"
    t = time.monotonic()
    r = fetch(server, out, *QUICK)
    assert time.monotonic() - t < 10
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: rate-limited by OpenReview: OpenReview asks to wait 60 minutes; "
                               "run the same command again after ")
    assert only_output(out) == []


def test_intermittent_server_errors_are_retried(serve, tmp_path):
    server = serve(cap=4).plan("/notes", Reply(502, "<html>Bad Gateway</html>", content_type="text/html"),
                               Reply(500, {"name": "InternalServerError", "message": "oops"}))
    out = tmp_path / "v.jsonl"
    r = fetch(server, out, *QUICK)
    assert r.returncode == 0, r.stderr
    assert "OpenReview is failing (HTTP 502), waiting 0 s before try 2" in r.stderr
    assert "OpenReview is failing (HTTP 500), waiting 0 s before try 3" in r.stderr
    assert len(lines(out)) == 10


def test_a_persistent_failure_is_one_line_after_every_try(serve, tmp_path):
    server = serve().plan("/notes", *[Reply(503, "Service Unavailable", content_type="text/plain")] * 9)
    out = tmp_path / "v.jsonl"
    r = fetch(server, out, *QUICK, "--tries", "4")
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == "error: OpenReview is failing (HTTP 503) after 4 tries"
    assert r.stderr.count("before try") == 3 and len(notes_requests(server)) == 4
    assert only_output(out) == []   # nothing arrived, so no partial file either


def test_a_stall_times_out_and_is_retried(serve, tmp_path):
    server = serve(stall_s=30).plan("/notes", STALL)
    out = tmp_path / "v.jsonl"
    t = time.monotonic()
    r = fetch(server, out, "--wait", "0.01", "--timeout", "1")
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t < 10
    assert "OpenReview did not answer page 1 within 1 s, waiting 0 s before try 2" in r.stderr
    assert len(lines(out)) == 10


def test_a_server_that_never_answers_ends_in_bounded_time(serve, tmp_path):
    server = serve(stall_s=30).plan("/groups", STALL, STALL, STALL)
    out = tmp_path / "v.jsonl"
    t = time.monotonic()
    r = fetch(server, out, "--wait", "0.01", "--timeout", "1", "--tries", "3")
    assert r.returncode == 2 and time.monotonic() - t < 10
    assert r.stderr.splitlines()[-1] == ("error: OpenReview did not answer the venue group within 1 s "
                                         "after 3 tries")
    assert only_output(out) == []


@pytest.mark.parametrize("fault,words", [(CUT, "the answer for page 1 was cut short"),
                                         (HTML, "the answer for page 1 was not JSON (it looks like an HTML page)")])
def test_broken_answers_are_retried_then_named(serve, tmp_path, fault, words):
    out = tmp_path / "v.jsonl"
    r = fetch(serve().plan("/notes", fault), out, *QUICK)
    assert r.returncode == 0 and f"{words}, waiting" in r.stderr and len(lines(out)) == 10
    r = fetch(serve().plan("/notes", fault, fault, fault), tmp_path / "w.jsonl", *QUICK, "--tries", "3")
    assert r.returncode == 2 and r.stderr.splitlines()[-1] == f"error: {words} after 3 tries"
    assert not (tmp_path / "w.jsonl").exists()


def test_a_list_that_ends_short_is_an_error_not_a_file(serve, tmp_path):
    # a proxy that stops paging early: OpenReview announced 10, the pages end after 3
    notes = venue_notes(10)
    first = {"notes": notes[:3], "count": 10}
    server = serve(notes).plan("/notes", Reply(200, first), Reply(200, {"notes": []}),
                               Reply(200, {"notes": notes[:1], "count": 10}))
    out = tmp_path / "v.jsonl"
    r = fetch(server, out, *QUICK)
    assert r.returncode == 2 and not out.exists()
    assert r.stderr.splitlines()[-1].startswith(
        "error: OpenReview announced 10 submissions but its pages ended after 3 (a server or proxy that "
        "cuts lists short?); what arrived is kept in ")


def test_a_server_that_ignores_after_is_caught(serve, tmp_path):
    notes = venue_notes(10)
    server = serve(notes).plan("/notes", Reply(200, {"notes": notes[:3], "count": 10}),
                               Reply(200, {"notes": notes[:3]}))
    r = fetch(server, tmp_path / "v.jsonl", *QUICK)
    assert r.returncode == 2 and "OpenReview sent page 2 again" in r.stderr


def test_a_wrong_host_says_it_is_not_openreview(serve, tmp_path):
    server = serve()
    server.nginx = True
    r = fetch(server, tmp_path / "v.jsonl", *QUICK)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and len(server.log) == 1
    assert r.stderr == (f"error: {server.url} answered the venue group with HTTP 404 and it looks like an HTML "
                        "page: it does not look like OpenReview's API v2 (check --api or "
                        "OPENREVIEW_API_BASEURL_V2)\n")


def test_an_unknown_venue_is_named(serve, tmp_path):
    r = run_cli("fetch", "ICLR.cc/2031/Conference", "--api", serve().url, "--out", str(tmp_path / "x.jsonl"))
    assert r.returncode == 2 and "error: no venue 'ICLR.cc/2031/Conference' on OpenReview" in r.stderr


def test_credentials_in_the_environment_stay_unused_unless_asked(serve, tmp_path, monkeypatch):
    server = serve()
    r = fetch(server, tmp_path / "v.jsonl", env=SECRETS)
    assert r.returncode == 0
    assert "/login" not in [x["path"] for x in server.log]
    assert all(x["authorization"] is None for x in server.log)
    server.log.clear()
    # asked, and the host trusted by name: the login goes there and the token comes with every request
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    fetch_venue(Api(server.url, login=True, trust_host=True), VENUE, tmp_path / "w.jsonl")
    assert [x["path"] for x in server.log][0] == "/login"
    assert all(x["authorization"].startswith("Bearer ") for x in server.log[1:])


def test_login_to_a_host_that_is_not_openreview_is_refused(serve, tmp_path):
    # an --api pointed at a mirror, a proxy or a typo would otherwise receive the password
    server = serve()
    out = tmp_path / "v.jsonl"
    r = fetch(server, out, "--login", env=SECRETS)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr == (f"error: --login would send your OpenReview password to {server.url}, which is not "
                        "OpenReview's own API (https://api2.openreview.net); add --trust-host if you mean to "
                        "log in there\n")
    assert server.log == [] and only_output(out) == []   # not a request, so no password and no login


def test_login_to_openreview_itself_passes_the_host_check(monkeypatch):
    # the refusal names the host, not --login: OpenReview's own address goes on to the credentials
    for k in SECRETS:
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(FetchError, match="^--login needs OPENREVIEW_USERNAME and OPENREVIEW_PASSWORD"):
        Api("https://api2.openreview.net/", login=True)
    with pytest.raises(FetchError, match="^--login would send your OpenReview password to http://api2"):
        Api("http://api2.openreview.net", login=True)


def test_trust_host_lets_login_reach_the_host_named(serve, tmp_path):
    server = serve()
    r = fetch(server, tmp_path / "v.jsonl", "--login", "--trust-host", env=SECRETS)
    assert r.returncode == 0, r.stderr
    assert [x["path"] for x in server.log][0] == "/login"
    assert all(x["authorization"].startswith("Bearer ") for x in server.log[1:])


def test_the_retry_budget_is_set_on_the_command_line(serve, tmp_path):
    server = serve().plan("/notes", *[too_many_requests(retry_after=1)] * 20)
    r = fetch(server, tmp_path / "v.jsonl", "--retry-budget", "3")
    assert r.returncode == 2 and r.stderr.count("waiting 1 s as OpenReview asks") == 2
    assert r.stderr.splitlines()[-1] == (
        "error: rate-limited by OpenReview: gave up after 2 s of tries and waits (3 tries, and OpenReview asks "
        "for 1 s more), past the retry budget of 3 s; try again in a few minutes, or allow longer with "
        "--retry-budget SECONDS")


@pytest.mark.parametrize("url,own", [
    ("https://api2.openreview.net", True), ("https://api.openreview.net/", True),
    ("https://openreview.net", True), ("https://API2.openreview.net:443", True),
    ("http://api2.openreview.net", False),                    # the password in clear
    ("https://api2.openreview.net.example.org", False), ("https://example.org/api2.openreview.net", False),
    ("https://evil-openreview.net", False), ("https://api2.openreview.net:8443", False),
    ("https://api2.openreview.net:x", False), ("http://127.0.0.1:8000", False), ("https://localhost", False)])
def test_which_addresses_are_openreviews_own(url, own):
    assert is_openreview(url) is own


def test_the_address_comes_from_the_clients_own_variable(serve, tmp_path):
    server = serve()
    r = run_cli("fetch", "--out", str(tmp_path / "v.jsonl"), env={"OPENREVIEW_API_BASEURL_V2": server.url})
    assert r.returncode == 0 and len(server.log) == 2


def test_offline_is_one_line_at_once_and_no_file(tmp_path):
    # the real client, pointed at a local port where nothing listens: what a machine without network sees
    out = tmp_path / "x.jsonl"
    t = time.monotonic()
    r = run_py("-m", "search", "fetch", "--out", str(out), "--api", "http://127.0.0.1:9", timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and time.monotonic() - t < 30
    assert r.stderr == "error: cannot reach OpenReview at http://127.0.0.1:9 (connection refused)\n"
    assert r.stdout == "" and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- interrupted, resumed

def test_a_download_that_fails_midway_resumes_from_its_last_page(serve, tmp_path):
    server = serve(venue_notes(10), cap=3).plan("/notes", None, None, *[Reply(503, "down", content_type="text/plain")] * 2)
    out = tmp_path / "v.jsonl"
    old = "an earlier, complete download\n"
    out.write_text(old)
    r = fetch(server, out, *QUICK, "--tries", "2")
    partial, state = partial_paths(out)
    assert r.returncode == 2 and r.stderr.splitlines()[-1] == (
        f"error: OpenReview is failing (HTTP 503) after 2 tries; what arrived is kept in {partial}: run the "
        "same command to resume")
    assert out.read_text() == old   # the previous file stays until a whole one replaces it
    assert [x["id"] for x in lines(partial)] == [f"id{i:04d}" for i in range(1, 7)]
    assert json.loads(state.read_text())["after"] == "id0006"
    server.log.clear()
    r = fetch(server, out, *QUICK)
    assert r.returncode == 0, r.stderr
    assert f"resuming the download in {partial}: 6 of 10 submissions already there" in r.stderr
    assert notes_requests(server)[0]["after"] == "id0006"
    assert [x["id"] for x in lines(out)] == [f"id{i:04d}" for i in range(1, 11)]
    assert only_output(out) == ["v.jsonl"]


def test_a_partial_page_written_before_a_kill_is_fetched_again(serve, tmp_path):
    # the kill came after a page was appended but before its state was saved: the page is dropped
    server = serve(venue_notes(10), cap=3).plan("/notes", None, None, *[Reply(503, "down", content_type="text/plain")] * 2)
    out = tmp_path / "v.jsonl"
    fetch(server, out, *QUICK, "--tries", "2")
    partial, _ = partial_paths(out)
    with open(partial, "a") as f:
        f.write('{"id": "id0007", "abstract": "half a pa')
    assert fetch(server, out, *QUICK).returncode == 0
    assert [x["id"] for x in lines(out)] == [f"id{i:04d}" for i in range(1, 11)]


def test_a_partial_of_another_scope_is_not_mixed_in(serve, tmp_path):
    server = serve(venue_notes(10), cap=3).plan("/notes", None, *[Reply(503, "down", content_type="text/plain")] * 2)
    out = tmp_path / "v.jsonl"
    assert fetch(server, out, *QUICK, "--tries", "2").returncode == 2
    r = fetch(server, out, *QUICK, "--accepted-only")
    assert r.returncode == 0 and "resuming" not in r.stderr
    assert [x["id"] for x in lines(out)] == ["id0001", "id0005", "id0006", "id0010"]


def as_from_a_terminal() -> None:
    """SIGINT at its default and not blocked in the command, whatever the test worker passes on: a child
    started with SIGINT ignored or blocked ignores Ctrl-C too (twice in the full suite the command ran on
    past the signal; alone it never did)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.parametrize("how", ["kill", "ctrl-c"])
def test_a_killed_fetch_resumes(serve, tmp_path, how):
    """The real command in its own process, killed (SIGKILL) or interrupted (SIGINT) on its third page."""
    server = serve(venue_notes(10), cap=3, stall_s=60).plan("/notes", None, None, STALL)
    out = tmp_path / "v.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "search", "fetch", "--api", server.url, "--out", str(out),
                             "--timeout", "60"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_from_a_terminal)
    partial, state = partial_paths(out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(notes_requests(server)) < 3:
        time.sleep(0.05)
    assert len(notes_requests(server)) == 3
    proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    if how == "ctrl-c":
        assert proc.returncode == 130
        assert err.splitlines()[-1] == (f"error: interrupted; what arrived is kept in {partial}: run the same "
                                        "command to resume")
    assert not out.exists() and json.loads(state.read_text())["notes"] == 6
    r = fetch(server, out, *QUICK)
    assert r.returncode == 0 and "6 of 10 submissions already there" in r.stderr
    assert [x["id"] for x in lines(out)] == [f"id{i:04d}" for i in range(1, 11)]


# ---------------------------------------------------------------- the records

NAMES = records.VenueNames.from_group(VENUE, GROUP["content"])


@pytest.mark.parametrize("venueid,venue,said,fate", [
    (ACCEPTED, "ICLR 2026 Oral", "Accept (Oral)", "Oral"),
    (ACCEPTED, "ICLR 2026 Spotlight", None, "Spotlight"),
    (ACCEPTED, "ICLR 2026 Poster", "Accept (Poster)", "Poster"),
    (ACCEPTED, "ICLR 2026", None, "Accepted"),
    (REJECTED, "Submitted to ICLR 2026", "Reject", "Rejected"),
    (WITHDRAWN, "ICLR 2026 Conference Withdrawn Submission", None, "Withdrawn"),
    (f"{VENUE}/Desk_Rejected_Submission", "ICLR 2026 Conference Desk Rejected Submission", None, "Desk rejected"),
    (f"{VENUE}/Submission", "ICLR 2026 Conference Submission", None, "Under review"),
    (f"{VENUE}/Submission", "ICLR 2026 Conference Submission", "Accept (Spotlight)", "Spotlight"),
    (f"{VENUE}/Submission", "ICLR 2026 Conference Submission", "Reject", "Rejected"),
])
def test_decisions_use_the_groups_names(venueid, venue, said, fate):
    content = {"venueid": {"value": venueid}, "venue": {"value": venue}}
    decision = {"content": {"decision": {"value": said}}} if said else None
    assert records.decision_of(content, decision, NAMES) == fate


def test_review_numbers_and_texts():
    r = records.review(review(1, "6: marginally above the acceptance threshold", "4: confident", 1,
                              questions="1. Why? 2. How?", details_of_ethics_concerns="none"))
    assert r["rating"] == 6 and r["confidence"] == 4 and r["soundness"] == 3
    assert r["questions"] == "1. Why? 2. How?" and "code_of_conduct" not in r
    assert "details_of_ethics_concerns" not in r and "flag_for_ethics_review" not in r
    assert [records.number(v) for v in ("6", "6.5: weak", 7.0, "1. How", "n/a", True)] == [6, 6.5, 7, None, None, None]


def test_code_links_from_the_abstract_or_tldr():
    assert records.code_link("See https://anonymous.4open.science/r/MoGA.", "") == \
        "https://anonymous.4open.science/r/MoGA"
    assert records.code_link("no link", "code: (https://github.com/a/b)") == "https://github.com/a/b"
    assert records.code_link("https://arxiv.org/abs/1", "") == ""


def test_the_page_job_fetches_every_submission_then_builds(serve, tmp_path, embedding_cache):
    """The page's "Get all of ICLR 2026" job, in process, against the local server and with the real model."""
    from conftest import SEEDS, cache_copy
    from search import background
    from search.index import load_index
    from search.openreview.api import Api
    from search.progress import read_status

    server = serve(venue_notes(6))
    out, data = tmp_path / "index", tmp_path / "data" / "conference.jsonl"
    cache_copy(embedding_cache, tmp_path / ".embedding_cache")  # the job's default cache: the seeds are in it
    code = background.run(out, [[SEEDS, data]], multilingual=False, fetch=VENUE, api=Api(server.url))
    status = read_status(background.status_file(out))
    assert code == 0 and status["state"] == "done" and status["count"] == 72
    assert len(data.read_text().splitlines()) == 6  # the rejected, withdrawn and undecided too
    papers = {p.id: p for p in load_index(out).papers}
    assert papers["id0001"].venue == "ICLR 2026 Oral" and papers["id0001"].avg_rating == 7.0
    assert papers["id0002"].decision == "Rejected" and papers["id0003"].decision == "Withdrawn"
    assert background.plan(out, SEEDS, [data]) == []


def test_the_page_job_that_cannot_fetch_says_why_and_builds_nothing(serve, tmp_path):
    from conftest import SEEDS
    from search import background
    from search.openreview.api import Api
    from search.progress import read_status

    out = tmp_path / "index"
    code = background.run(out, [[SEEDS, tmp_path / "c.jsonl"]], fetch="ICLR.cc/2031/Conference",
                          api=Api(serve().url))
    status = read_status(background.status_file(out))
    assert code == 1 and status["state"] == "failed" and "no venue 'ICLR.cc/2031/Conference'" in status["message"]
    assert not out.exists() and not (tmp_path / "c.jsonl").exists()


# ---------------------------------------------------------------- the real crawl, a slice of it

@pytest.mark.skipif(not (SHARED / "iclr2026_openreview.jsonl.gz").exists(),
                    reason="needs ../shared/data/iclr2026_openreview.jsonl.gz (the ICLR 2026 crawl)")
def test_a_slice_of_the_real_crawl_matches_its_decisions_and_scores(tmp_path):
    with gzip.open(SHARED / "iclr2026_openreview.jsonl.gz", "rb") as f:
        raw = list(islice(f, 400))
    group = json.loads((SHARED / "iclr2026_openreview_group.json").read_text())
    with OpenReviewServer(raw, group, cap=150) as server:
        out = tmp_path / "iclr.jsonl"
        r = run_cli("fetch", "--api", server.url, "--out", str(out))
    assert r.returncode == 0, r.stderr
    got = {x["id"]: x for x in lines(out)}
    assert len(got) == 400
    fates = {"ICLR 2026 Oral": "Oral", "ICLR 2026 Poster": "Poster", "Submitted to ICLR 2026": "Rejected",
             "ICLR 2026 Conference Withdrawn Submission": "Withdrawn",
             "ICLR 2026 Conference Submission": "Under review"}
    for line in raw:
        n = json.loads(line)
        latest = {}  # a review edited after posting is listed once per version: its last one stands
        for r in n["details"]["replies"]:
            if r["invitations"][0].endswith("/-/Official_Review") and r["mdate"] >= latest.get(r["id"], {"mdate": 0})["mdate"]:
                latest[r["id"]] = r
        reviews = list(latest.values())
        rec = got[n["id"]]
        assert rec["decision"] == fates[n["content"]["venue"]["value"]]
        assert len(rec["reviews"]) == len(reviews) == rec.get("n_ratings", 0)
        if reviews:
            mean = sum(r["content"]["rating"]["value"] for r in reviews) / len(reviews)
            assert rec["avg_rating"] == pytest.approx(mean, abs=1e-4)


# ---------------------------------------------------------------- several venues in one call

COLM = "colmweb.org/COLM/2025/Conference"
# a venue that names everything its own way: its rating is a 1-5 "recommendation" (its reviews carry a
# "rating" sub-score too, which ICLR's names would take for the rating), its decisions come as a
# "Final_Decision" reply's "verdict", and its rejected papers sit under a venue id of its own
COLM_GROUP = {"id": COLM, "content": {k: {"value": v} for k, v in {
    "submission_id": f"{COLM}/-/Submission", "rejected_venue_id": f"{COLM}/Rejected",
    "review_name": "Review", "review_rating": "recommendation", "review_confidence": "reviewer_confidence",
    "meta_review_name": "Area_Chair_Report", "decision_name": "Final_Decision",
    "decision_field_name": "verdict"}.items()}}


def colm_note(number: int, venueid: str, venue: str, verdict: str, recommendations=(4, 5)) -> dict:
    def answer(kind: str, content: dict, signer: str, n: int) -> dict:
        return {"id": f"c{kind[:3]}{number}x{n}", "forum": f"colm{number:02d}", "replyto": f"colm{number:02d}",
                "invitations": [f"{COLM}/Submission{number}/-/{kind}"], "signatures": [f"{COLM}/Submission{number}/{signer}"],
                "cdate": 1751328000000 + n, "tcdate": 1751328000000 + n,
                "content": {k: {"value": v} for k, v in content.items()}}

    replies = [answer("Review", {"summary": "A language model study.", "recommendation": r,
                                 "reviewer_confidence": 3, "rating": 9}, f"Reviewer_C{n}", n)
               for n, r in enumerate(recommendations, 1)]
    replies.append(answer("Final_Decision", {"verdict": verdict}, "Program_Chairs", 9))
    fields = {"title": f"COLM paper {number}", "abstract": f"Language models learn task {number} in context.",
              "venue": venue, "venueid": venueid, "authors": ["Grace Hopper"]}
    return {"id": f"colm{number:02d}", "number": number, "forum": f"colm{number:02d}", "cdate": 1743465600000,
            "invitations": [f"{COLM}/-/Submission"], "content": {k: {"value": v} for k, v in fields.items()},
            "details": {"replies": replies}}


def two_venues() -> list[dict]:
    """Four ICLR submissions, two of COLM, and one that both venues list (the same OpenReview id)."""
    both = note(99, decision="Accept (Poster)")
    both["invitations"] = [f"{VENUE}/-/Submission", f"{COLM}/-/Submission"]
    return venue_notes(4) + [both, colm_note(1, COLM, "COLM 2025", "Accept"),
                             colm_note(2, f"{COLM}/Rejected", "Submitted to COLM 2025", "Reject", (1, 2))]


def test_two_venues_in_one_call_each_with_its_own_names(tmp_path):
    server = OpenReviewServer(two_venues(), [GROUP, COLM_GROUP]).start()
    try:
        r = run_cli("fetch", VENUE, COLM, "--api", server.url, "--out-dir", str(tmp_path / "data"))
    finally:
        server.stop()
    assert r.returncode == 0, r.stderr
    iclr, colm = tmp_path / "data" / "ICLR.cc_2026_Conference.jsonl", tmp_path / "data" / "colmweb.org_COLM_2025_Conference.jsonl"
    assert r.stdout.splitlines() == [
        f"wrote 5 submissions of {VENUE} (5 with review scores) to {iclr}",
        f"wrote 3 submissions of {COLM} (2 with review scores) to {colm}",   # ICLR reviewed the shared one
        f"build their index with: python index_build.py seeds {iclr} {colm}"]
    # every group before any page: a mistyped second id would end the call before the first download
    assert [(x["path"], x["params"].get("id") or x["params"].get("invitation")) for x in server.log] == [
        ("/groups", VENUE), ("/groups", COLM), ("/notes", f"{VENUE}/-/Submission"), ("/notes", f"{COLM}/-/Submission")]
    got = {x["id"]: x for x in lines(colm)}
    # COLM's rating is its 1-5 recommendation, not the "rating" sub-score ICLR's names would read
    assert (got["colm01"]["avg_rating"], got["colm01"]["n_ratings"], got["colm01"]["avg_confidence"]) == (4.5, 2, 3.0)
    # each review's numbers under the index's names: its rating the recommendation, the form's own "rating"
    # kept apart (read as the rating, cards showed 9 9 beside a mean of 4.5, and moves from 9 to 4.5)
    assert (got["colm02"]["avg_rating"], got["colm01"]["reviews"][0]["rating"]) == (1.5, 4)
    first = got["colm01"]["reviews"][0]
    assert (first["confidence"], first["form_rating"]) == (3, 9) and "recommendation" not in first
    # its decisions by its own reply and venue id: under ICLR's names both would be "Under review"
    assert (got["colm01"]["decision"], got["colm02"]["decision"]) == ("Accepted", "Rejected")
    assert {(x["conference"], x["year"]) for x in got.values()} == {("COLM", 2025)}
    assert {(x["conference"], x["year"]) for x in lines(iclr)} == {("ICLR", 2026)}
    assert {x["id"]: x["decision"] for x in lines(iclr)}["id0002"] == "Rejected"   # ICLR's own, unchanged
    assert {x["id"]: x["avg_rating"] for x in lines(iclr)}["id0001"] == 7.0        # ICLR's 0-10 rating field
    # the paper both list is in both files, and the build takes them together as one paper
    assert "id0099" in got and "id0099" in {x["id"] for x in lines(iclr)}
    papers, _ = load_corpus([iclr, colm])
    ids = [p.id for p in papers]
    assert len(ids) == len(set(ids)) == 7 and "id0099" in ids


def test_a_mistyped_second_venue_ends_the_call_before_any_download(serve, tmp_path):
    server = serve()
    r = run_cli("fetch", VENUE, "colmweb.org/COLM/2031/Conference", "--api", server.url,
                "--out-dir", str(tmp_path))
    assert r.returncode == 2 and r.stderr == (
        "error: no venue 'colmweb.org/COLM/2031/Conference' on OpenReview (ids look like ICLR.cc/2026/Conference, "
        "NeurIPS.cc/2025/Conference)\n")
    assert [x["path"] for x in server.log] == ["/groups", "/groups"] and list(tmp_path.iterdir()) == []


def test_a_venue_failing_partway_keeps_the_venues_before_it(tmp_path):
    down = Reply(503, "Service Unavailable", content_type="text/plain")
    server = OpenReviewServer(two_venues(), [GROUP, COLM_GROUP]).start().plan("/notes", None, down, down)
    try:
        r = run_cli("fetch", VENUE, COLM, "--api", server.url, "--out-dir", str(tmp_path), *QUICK, "--tries", "2")
    finally:
        server.stop()
    assert r.returncode == 2
    iclr = tmp_path / "ICLR.cc_2026_Conference.jsonl"
    assert r.stdout == f"wrote 5 submissions of {VENUE} (5 with review scores) to {iclr}\n"
    assert r.stderr.splitlines()[-1] == (f"error: {COLM}: OpenReview is failing (HTTP 503) after 2 tries (only the "
                                         f"rest: python -m search fetch {COLM} with the same options)")
    assert len(lines(iclr)) == 5 and only_output(iclr) == [iclr.name]


def test_out_names_one_file_only(serve, tmp_path):
    r = run_cli("fetch", VENUE, COLM, "--api", serve().url, "--out", str(tmp_path / "x.jsonl"))
    assert r.returncode == 2 and r.stderr.startswith("error: --out names one venue's file; with several venues "
                                                     "use --out-dir DIR")
