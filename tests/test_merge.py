"""Merging what several inputs say of one paper: a seed line whose text differs slightly from its venue
record's is that record's paper; distinct papers stay distinct; what the merge did is told, not hidden."""
import gzip
import json
import re
from pathlib import Path

import pytest

from conftest import CRAWL, SEEDS
from search.corpus import load_corpus
from search.text import content_id

INTRO = ("Domain shift remains a key challenge in deploying machine learning models to the real world, and "
         "unsupervised domain adaptation aims to address this by minimising the domain discrepancy during "
         "training, but the discrepancy estimates suffer from high variance in stochastic settings.")
SEED = ("We propose **ReOrder**, a sampler that   reorders the training data so that each mini-batch holds "
        "a balanced mix of source and target examples. On five benchmarks $\\mathcal{O}(n)$ reordering "
        "improves accuracy by 3.1 points over random batches and halves the variance of the discrepancy "
        "estimate, at no extra cost in training time.")
# the record's version: markup gone, a word changed, a sentence added (as OpenReview's text often differs)
RECORD = ("We propose ReOrder, a sampler that reorders the training data so that every mini-batch holds "
          "a balanced mix of source and target examples. On five benchmarks O(n) reordering "
          "improves accuracy by 3.1 points over random batches and halves the variance of the discrepancy "
          "estimate, at no extra cost in training time. Code is released.")
OTHER = ("We propose stratified sampling of the target domain, which bounds the variance of the discrepancy "
         "estimate by the variance within strata; an optimal allocation of the samples to the strata "
         "follows in closed form, and on three benchmarks the method beats importance weighting.")


def venue_record(pid: str, abstract: str, **fields) -> dict:
    """A record as `python -m search fetch` writes it (search/openreview/records.py)."""
    return {"id": pid, "number": 7, "title": fields.pop("title", "Order Matters"), "abstract": abstract,
            "tldr": "", "authors": [], "keywords": ["domain adaptation"], "primary_area": "transfer learning",
            "venue": "ICLR 2026 Poster", "decision": fields.pop("decision", "Poster"),
            "url": f"https://openreview.net/forum?id={pid}", "pdf": f"https://openreview.net/pdf?id={pid}",
            "code": "", "avg_rating": 6.0, "n_ratings": 2, "avg_confidence": 3.5,
            "reviews": [{"reviewer": "Reviewer_a", "rating": 6, "confidence": 4, "summary": "Good."},
                        {"reviewer": "Reviewer_b", "rating": 6, "confidence": 3, "summary": "Fine."}],
            **fields}


def write(tmp_path: Path, seed_lines: list[str], records: list[dict]) -> list[Path]:
    seeds = tmp_path / "list.txt"
    seeds.write_text("My reading list\n" + "\n".join(seed_lines) + "\n", encoding="utf-8")
    venue = tmp_path / "venue.jsonl"
    venue.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return [seeds, venue]


def test_seed_line_that_differs_slightly_merges_into_its_record(tmp_path):
    notes: list[str] = []
    papers, skipped = load_corpus(write(tmp_path, [INTRO + " " + SEED], [venue_record("Rec1", INTRO + " " + RECORD)]),
                                  notes=notes)
    assert len(papers) == 1 and not skipped
    p = papers[0]
    assert (p.id, p.decision, p.n_ratings, len(p.reviews)) == ("Rec1", "Poster", 2, 2)
    assert p.sources == ["My reading list", "venue.jsonl"]
    assert p.abstract == INTRO + " " + RECORD          # the record's text, the publisher's version
    assert content_id(INTRO + " " + SEED) in p.aliases  # links made to the seed's paper still open it
    assert notes[0].startswith("merged 1 seed abstract(s) into their venue records")
    assert "list.txt:2 -> Rec1" in notes[1]


def test_distinct_papers_sharing_a_long_first_sentence_stay_apart(tmp_path):
    # as ICLR 2026's "Order Matters" and "Variance Matters" (tktzkmqIfm, xK2EcRC3xJ): one first paragraph
    notes: list[str] = []
    papers, _ = load_corpus(write(tmp_path, [INTRO + " " + SEED], [venue_record("Rec2", INTRO + " " + OTHER)]),
                            notes=notes)
    assert len(papers) == 2
    seed = next(p for p in papers if p.id != "Rec2")
    assert seed.sources == ["My reading list"] and seed.decision == "" and not notes


def test_a_seed_line_too_short_to_judge_is_not_merged(tmp_path):
    papers, _ = load_corpus(write(tmp_path, ["Sparse attention for long documents."],
                                  [venue_record("Rec3", "Sparse attention for long documents, revisited.")]))
    assert len(papers) == 2


def test_a_placeholder_abstract_is_kept_and_reported(tmp_path):
    # ICLR 2026's withdrawn 5bvQnhTCM1 has the abstract "."; its title is all there is to search by
    notes: list[str] = []
    records = [venue_record("5bvQnhTCM1", ".", title="A withdrawn paper", decision="Withdrawn"),
               venue_record("Rec4", INTRO + " " + OTHER)]
    papers, skipped = load_corpus(write(tmp_path, [SEED], records), notes=notes)
    assert len(papers) == 3 and not skipped
    assert next(p for p in papers if p.id == "5bvQnhTCM1").title == "A withdrawn paper"
    assert any("5bvQnhTCM1 ('.')" in n and "no abstract to search by" in n for n in notes)


def test_two_submissions_of_one_file_with_the_same_abstract_stay_two_papers(tmp_path):
    # ICLR 2026's withdrawn XknlDPufux ("na") and Uh8NGna3VE ("n/a") merged into one: 2,350 withdrawn of 2,351
    notes: list[str] = []
    records = [venue_record("XknlDPufux", "na", decision="Withdrawn"),
               venue_record("Uh8NGna3VE", "n/a", decision="Withdrawn")]
    papers, _ = load_corpus(write(tmp_path, [SEED], records), notes=notes)
    assert sorted(p.id for p in papers if p.decision == "Withdrawn") == ["Uh8NGna3VE", "XknlDPufux"]
    assert all("Uh8NGna3VE" not in p.aliases for p in papers)
    assert any(n.startswith("kept Uh8NGna3VE") and "XknlDPufux" in n for n in notes)


def test_one_paper_in_two_files_under_two_ids_is_still_one_paper(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps(venue_record("A1", RECORD)) + "\n", encoding="utf-8")
    b.write_text(json.dumps({"id": "arXiv:1", "abstract": RECORD}) + "\n", encoding="utf-8")
    papers, _ = load_corpus([a, b])
    assert len(papers) == 1 and papers[0].id == "A1" and "arXiv:1" in papers[0].aliases


def test_the_seeds_alone_need_no_note():
    notes: list[str] = []
    papers, skipped = load_corpus([SEEDS], notes=notes)
    assert len(papers) == 66 and not skipped and not notes


# ---------------------------------------------------------------- the real venue

# the 13 seed papers whose seed text differs from their ICLR 2026 record's (found by loading the seeds with
# all 19,630 records: they were the 13 papers shown twice, "no decision (13)")
NEAR_IDENTICAL = ["Rh72R0VXPS", "RduOiisl1S", "RdoXks7VmJ", "jxyEci13Dd", "jxtCMoZIu8", "jwkdKpioHJ",
                  "jv1a8MPymM", "jr9hGWQioP", "mJiPqOzc3O", "mIKqVWGjwI", "mGeeRFToaW"]
# two of them are rewritten abstracts (3-word phrases shared: 0.36 and 0.12; words: 0.63 and 0.47), no closer
# than two distinct submissions can be (0.26; 0.52): see NEAR_DUPLICATE in search/corpus.py
REWRITTEN = ["RYwQ0xQcAh", "jrKj2G2bQ4"]
# distinct submissions that share their first paragraph, and withdrawn ones with no abstract to speak of
OTHERS = ["tktzkmqIfm", "xK2EcRC3xJ", "XknlDPufux", "Uh8NGna3VE", "5bvQnhTCM1", "qMVLCslNI5"]


@pytest.fixture(scope="module")
def affected(tmp_path_factory) -> tuple[list, list[str]]:
    """The seeds with the records of the papers above, fetched through the API as `python -m search fetch`
    fetches them, loaded together."""
    if not CRAWL.is_file():
        pytest.skip("needs ../shared/data/iclr2026_openreview.jsonl.gz (the ICLR 2026 crawl)")
    from openreview_server import OpenReviewServer
    from search.openreview.fetch import DEFAULT_VENUE, fetch_venue
    from search.openreview.api import Api

    wanted = set(NEAR_IDENTICAL + REWRITTEN + OTHERS)
    head = re.compile(rb'\{"id":\s*"([^"]+)"')
    with gzip.open(CRAWL, "rb") as f:
        raw = [line for line in f if (m := head.match(line)) and m.group(1).decode() in wanted]
    assert len(raw) == len(wanted)
    group = json.loads((CRAWL.parent / "iclr2026_openreview_group.json").read_text())
    out = tmp_path_factory.mktemp("affected") / "venue.jsonl"
    with OpenReviewServer(raw, group) as server:
        fetch_venue(Api(server.url), DEFAULT_VENUE, out)
    notes: list[str] = []
    papers, _ = load_corpus([SEEDS, out], notes=notes)
    return papers, notes


def test_real_seeds_merge_into_their_slightly_different_records(affected):
    papers, notes = affected
    by_id = {p.id: p for p in papers}
    for pid in NEAR_IDENTICAL:
        p = by_id[pid]
        # the record's id, decision and reviews; the seed list(s) it came from and the venue file
        assert p.decision in ("Poster", "Oral", "Under review") and p.reviews, pid
        assert len(p.sources) >= 2 and p.sources[-1] == "venue.jsonl", pid
    assert notes[0].startswith(f"merged {len(NEAR_IDENTICAL)} seed abstract(s) into their venue records")
    # the seeds' papers without a record: the 53 whose records this venue file leaves out, and the two
    # rewritten ones (before the fix all 13 were among them); every record is a paper of its own
    assert sum(not p.decision for p in papers) == 66 - len(NEAR_IDENTICAL + REWRITTEN) + len(REWRITTEN)
    assert len(papers) == 66 + len(REWRITTEN) + len(OTHERS)


def test_real_withdrawn_placeholders_are_papers_and_reported(affected):
    papers, notes = affected
    ids = {p.id for p in papers}
    assert set(OTHERS) <= ids
    assert any("5bvQnhTCM1 ('.')" in n for n in notes)
    assert any(n.startswith("kept ") and "Uh8NGna3VE" in n and "XknlDPufux" in n for n in notes)


@pytest.mark.xfail(strict=True, reason="the record's abstract is rewritten: its overlap with the seed's text "
                   "is below that of two distinct submissions, so no text rule merges it safely")
def test_real_rewritten_seed_abstracts_merge(affected):
    papers, _ = affected
    assert all(len(p.sources) >= 2 for p in papers if p.id in REWRITTEN)


def test_the_build_prints_what_reading_merged(tmp_path):
    """`index_build.py` says what it merged and what it kept apart, not only how many papers it indexed."""
    from conftest import FakeModel
    from search.build import build_index

    inputs = write(tmp_path, [INTRO + " " + SEED], [venue_record("Rec1", INTRO + " " + RECORD),
                                                   venue_record("Dot1", ".", title="Withdrawn")])
    report = build_index(inputs, tmp_path / "index", model=FakeModel(), explore=False, sentences=False,
                         summaries=False, review_search=False)
    assert report.count == 2
    assert any(n.startswith("merged 1 seed abstract(s)") for n in report.notes)
    assert any("Dot1" in n and "no abstract" in n for n in report.notes)
