"""`python -m search fetch`: OpenReview notes to the build's JSONL, through a fake client (no network).

The fake returns the client library's own Note and Group objects, built from JSON of the shape the
API v2 answers (content fields as {"value": ...}, reviews under details["replies"])."""
from argparse import Namespace

import pytest
from openreview import OpenReviewException
from openreview.api import Group, Note

from conftest import run_py
from search import fetch
from search.cli import cmd_fetch, run_guarded
from search.corpus import load_corpus

VENUE = "ICLR.cc/2026/Conference"


def review(number: int, rating, confidence, name: str = "Official_Review") -> dict:
    return {"id": f"r{number}", "invitations": [f"{VENUE}/Submission{number}/-/{name}"],
            "content": {"rating": {"value": rating}, "confidence": {"value": confidence},
                        "summary": {"value": "..."}}}


def comment(number: int) -> dict:
    return {"id": f"c{number}", "invitations": [f"{VENUE}/Submission{number}/-/Official_Comment"],
            "content": {"comment": {"value": "a rating of 1 here is not a review"}, "rating": {"value": 1}}}


def paper(number: int, venueid: str = VENUE, venue: str = "ICLR 2026 Poster", replies=None,
          authors=None, **content) -> dict:
    fields = {"title": f"Paper {number}", "abstract": f"We study problem {number} and solve it well.",
              "authors": authors if authors is not None else [f"Author {number}", "Ada Lovelace"],
              "keywords": ["learning", f"topic {number}"], "primary_area": "optimization",
              "venue": venue, "venueid": venueid, "pdf": f"/pdf/{number}.pdf", **content}
    return {"id": f"id{number:04d}", "number": number, "forum": f"id{number:04d}",
            "invitations": [f"{VENUE}/-/Submission"],
            "content": {k: {"value": v} for k, v in fields.items() if v is not None},
            "details": {"replies": replies if replies is not None else [review(number, 6, 4), review(number, 8, 3),
                                                                        comment(number)]}}


class FakeClient:
    """get_group / get_notes as openreview.api.OpenReviewClient answers them; failures on request."""

    def __init__(self, notes: list[dict], fail: dict | None = None, group: dict | None = None):
        self.notes = [Note.from_json(n) for n in notes]
        self.fail = dict(fail or {})      # call name -> list of exceptions to raise first
        self.group = group if group is not None else {"id": VENUE, "content": {
            "review_name": {"value": "Official_Review"}, "submission_name": {"value": "Submission"}}}
        self.calls: list[tuple[str, dict]] = []

    def _maybe_fail(self, name: str):
        pending = self.fail.get(name) or []
        if pending:
            raise pending.pop(0)

    def get_group(self, id, details=None):
        self.calls.append(("get_group", {"id": id}))
        self._maybe_fail("get_group")
        if id != self.group["id"]:
            raise OpenReviewException({"name": "NotFoundError", "message": f"Group Not Found: {id}",
                                       "status": 404})
        return Group.from_json(self.group)

    def get_notes(self, content=None, details=None, limit=None, offset=None, with_count=None, **_):
        self.calls.append(("get_notes", {"offset": offset, "limit": limit, "details": details}))
        self._maybe_fail("get_notes")
        # the server filters on content.venueid; keep that, so a test can still slip others in
        page = self.notes[offset or 0:(offset or 0) + limit]
        if with_count and offset is None:
            return page, len(self.notes)
        return page


RATE_LIMIT = OpenReviewException({"name": "RateLimitError", "message": "Too many requests", "status": 429})


def test_records_have_every_field_and_review_means():
    client = FakeClient([paper(1)])
    [rec] = fetch.fetch_venue(client, VENUE, sleep=lambda s: None)
    assert rec == {"id": "id0001", "title": "Paper 1", "abstract": "We study problem 1 and solve it well.",
                   "authors": ["Author 1", "Ada Lovelace"], "keywords": ["learning", "topic 1"],
                   "primary_area": "optimization", "venue": "ICLR 2026 Poster",
                   "url": "https://openreview.net/forum?id=id0001", "pdf": "https://openreview.net/pdf?id=id0001",
                   "avg_rating": 7.0, "n_ratings": 2, "avg_confidence": 3.5}


def test_scores_written_as_text_and_unified_author_schema():
    replies = [review(2, "6: marginally above the acceptance threshold", "4: confident"),
               review(2, "3: reject", "2: unsure"), review(2, "n/a", None)]
    authors = [{"fullname": "Yann LeCun", "username": "~Yann_LeCun1"}, {"fullname": "Ada Lovelace"}]
    [rec] = fetch.fetch_venue(FakeClient([paper(2, replies=replies, authors=authors)]), VENUE)
    assert rec["authors"] == ["Yann LeCun", "Ada Lovelace"]
    assert rec["avg_rating"] == 4.5 and rec["n_ratings"] == 2 and rec["avg_confidence"] == 3.0


def test_no_public_reviews_leaves_the_fields_out_not_zero():
    [rec] = fetch.fetch_venue(FakeClient([paper(3, replies=[comment(3)])]), VENUE)
    assert "avg_rating" not in rec and "n_ratings" not in rec and "avg_confidence" not in rec


def test_review_names_come_from_the_venue_group():
    group = {"id": VENUE, "content": {"review_name": {"value": "Review"}, "review_rating": {"value": "score"}}}
    replies = [{"invitations": [f"{VENUE}/Submission4/-/Review"], "content": {"score": {"value": 9}}}]
    [rec] = fetch.fetch_venue(FakeClient([paper(4, replies=replies)], group=group), VENUE)
    assert rec["avg_rating"] == 9.0 and rec["n_ratings"] == 1


def test_withdrawn_rejected_and_abstractless_notes_are_left_out():
    notes = [paper(1), paper(2, venueid=f"{VENUE}/Withdrawn_Submission", venue="ICLR 2026 Conference Withdrawn"),
             paper(3, venueid=f"{VENUE}/Rejected_Submission"), paper(4, abstract=None), paper(5, title=None,
                                                                                          keywords=None)]
    recs = fetch.fetch_venue(FakeClient(notes), VENUE)
    assert [r["id"] for r in recs] == ["id0001", "id0005"]
    assert recs[1]["title"] == "" and recs[1]["keywords"] == []


def test_pages_are_followed_until_the_count(monkeypatch):
    monkeypatch.setattr(fetch, "PAGE", 3)
    client = FakeClient([paper(i) for i in range(1, 9)])
    seen = []
    recs = fetch.fetch_venue(client, VENUE, progress=lambda stage, done, total: seen.append((done, total)))
    assert [r["id"] for r in recs] == [f"id{i:04d}" for i in range(1, 9)]
    assert [c[1]["offset"] for c in client.calls if c[0] == "get_notes"] == [None, 3, 6]
    assert seen == [(3, 8), (6, 8), (8, 8)]
    assert all(c[1]["details"] == "replies" for c in client.calls if c[0] == "get_notes")


def test_rate_limits_are_retried_with_growing_waits():
    client = FakeClient([paper(1)], fail={"get_notes": [RATE_LIMIT, RATE_LIMIT]})
    waits = []
    recs = fetch.fetch_venue(client, VENUE, sleep=waits.append)
    assert len(recs) == 1 and waits == [fetch.BACKOFF, fetch.BACKOFF * 2]


def test_a_rate_limit_that_never_ends_is_one_error():
    client = FakeClient([paper(1)], fail={"get_notes": [RATE_LIMIT] * (fetch.RETRIES + 1)})
    with pytest.raises(fetch.FetchError, match="RateLimitError"):
        fetch.fetch_venue(client, VENUE, sleep=lambda s: None)


def test_wrong_venue_names_it():
    with pytest.raises(fetch.FetchError, match="no venue 'ICLR.cc/2031/Conference'"):
        fetch.fetch_venue(FakeClient([paper(1)]), "ICLR.cc/2031/Conference")


def test_unexpected_shapes_are_one_line_errors():
    class Odd(FakeClient):
        def get_notes(self, **kw):
            return {"notes": []}

    with pytest.raises(fetch.FetchError, match="unexpected answer"):
        fetch.fetch_venue(Odd([]), VENUE)
    with pytest.raises(fetch.FetchError, match="no accepted paper"):
        fetch.fetch_venue(FakeClient([]), VENUE)


def cli(tmp_path, client, venue=VENUE):
    out = tmp_path / "data" / "papers.jsonl"
    return out, run_guarded(lambda: cmd_fetch(Namespace(venue=venue, out=out, api=None), client=client))


def test_cli_writes_jsonl_the_build_reads(tmp_path, capsys):
    out, code = cli(tmp_path, FakeClient([paper(1), paper(2, replies=[])]))
    assert code == 0 and "wrote 2 accepted papers" in capsys.readouterr().out
    papers, _ = load_corpus([out])
    assert [p.id for p in papers] == ["id0001", "id0002"]
    assert papers[0].authors == ["Author 1", "Ada Lovelace"] and papers[0].avg_rating == 7.0
    assert papers[0].n_ratings == 2 and papers[1].avg_rating is None and papers[1].n_ratings is None
    assert papers[0].pdf.endswith("pdf?id=id0001")
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temporary file left


def test_cli_failure_writes_nothing_and_keeps_an_old_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fetch, "BACKOFF", 0.0)
    out = tmp_path / "data" / "papers.jsonl"
    out.parent.mkdir()
    out.write_text("old\n")
    failing = FakeClient([paper(i) for i in range(1, 5)], fail={"get_notes": [RATE_LIMIT] * 99})
    _, code = cli(tmp_path, failing)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert out.read_text() == "old\n" and len(list(out.parent.iterdir())) == 1


def test_write_is_atomic_when_interrupted(tmp_path):
    out = tmp_path / "papers.jsonl"
    out.write_text("old\n")

    def records():
        yield {"id": "a", "abstract": "x"}
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fetch.write_jsonl(records(), out)
    assert out.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["papers.jsonl"]


def test_default_out_names_the_venue():
    assert str(fetch.default_out("NeurIPS.cc/2025/Conference")) == "data/NeurIPS.cc_2025_Conference.jsonl"


def test_fetch_offline_is_one_line_and_no_file(tmp_path):
    # the real client, pointed at a local port where nothing listens: what a machine without network sees
    out = tmp_path / "x.jsonl"
    r = run_py("-m", "search", "fetch", "--out", str(out), "--api", "http://127.0.0.1:9", timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "OpenReview" in r.stderr and r.stdout == ""
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_background_job_fetches_then_builds_seeds_and_conference(tmp_path, monkeypatch, embedding_cache):
    """The page's "Get all of ICLR 2026" job, in process with the fake client and the real model."""
    from conftest import SEEDS, cache_copy
    from search import background
    from search.index import load_index
    from search.progress import read_status

    out, data = tmp_path / "index", tmp_path / "data" / "conference.jsonl"
    cache_copy(embedding_cache, tmp_path / ".embedding_cache")  # the job's default cache: the seeds are in it
    code = background.run(out, [[SEEDS, data]], multilingual=False, fetch=VENUE,
                          client=FakeClient([paper(i) for i in range(1, 4)]))
    status = read_status(background.status_file(out))
    assert code == 0 and status["state"] == "done" and status["count"] == 69
    assert len(data.read_text().splitlines()) == 3
    papers = {p.id: p for p in load_index(out).papers}
    assert papers["id0001"].authors == ["Author 1", "Ada Lovelace"] and papers["id0001"].avg_rating == 7.0
    assert background.plan(out, SEEDS, [data]) == []


def test_background_job_that_cannot_fetch_says_why_and_builds_nothing(tmp_path):
    from conftest import SEEDS
    from search import background
    from search.progress import read_status

    out = tmp_path / "index"
    code = background.run(out, [[SEEDS, tmp_path / "c.jsonl"]], fetch="ICLR.cc/2031/Conference",
                          client=FakeClient([paper(1)]))
    status = read_status(background.status_file(out))
    assert code == 1 and status["state"] == "failed" and "no venue 'ICLR.cc/2031/Conference'" in status["message"]
    assert not out.exists() and not (tmp_path / "c.jsonl").exists()
