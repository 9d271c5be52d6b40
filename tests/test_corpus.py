import json
import shutil

import pytest

from conftest import SEEDS
from search.corpus import CorpusError, load_corpus


def ids_by_text(papers):
    return {p.text: p.id for p in papers}


def test_seeds_hold_66_papers_and_merged_ones_remember_both_lists():
    papers, skipped = load_corpus([SEEDS])
    assert len(papers) == 66 and not skipped
    merged = [p for p in papers if len(p.sources) == 2]
    assert len(merged) == 10
    assert any("ICLR 2026 论文列表" in s for p in merged for s in p.sources)
    assert len({p.id for p in papers}) == 66


def test_ids_survive_added_files_and_reordered_lines(tmp_path):
    before = ids_by_text(load_corpus([SEEDS])[0])
    d = tmp_path / "seeds"
    shutil.copytree(SEEDS, d)
    f = sorted(d.glob("*.txt"))[0]
    header, *lines = f.read_text(encoding="utf-8").split("\n")
    f.write_text("\n".join([header] + list(reversed(lines))), encoding="utf-8")
    (d / "extra.jsonl").write_text(json.dumps({"abstract": "A brand new abstract about sparse attention."}) + "\n")
    after = ids_by_text(load_corpus([d])[0])
    assert len(after) == 67
    assert all(after[t] == i for t, i in before.items())


def test_jsonl_and_csv_exports_read_with_their_fields(tmp_path):
    j = tmp_path / "a.jsonl"
    j.write_text(json.dumps({"id": "X1", "title": "Given Title", "abstract": "We propose FOO, a method.",
                             "authors": ["A. B", "C. D"], "keywords": ["k1", "k2"], "url": "https://x.org/1"}) + "\n")
    c = tmp_path / "b.csv"
    c.write_text("Title,Abstract,Authors,Keywords\nCsv Paper,\"An abstract, with a comma.\",A; B,x; y\n")
    papers, _ = load_corpus([j, c])
    by_id = {p.id: p for p in papers}
    assert by_id["X1"].title == "Given Title" and not by_id["X1"].title_derived
    assert by_id["X1"].authors == ["A. B", "C. D"] and by_id["X1"].url == "https://x.org/1"
    csv_paper = next(p for p in papers if p.id != "X1")
    assert csv_paper.title == "Csv Paper" and csv_paper.keywords == ["x", "y"]
    assert csv_paper.id.startswith("p")


def test_given_record_merges_with_seed_and_keeps_the_seed_id(tmp_path):
    seed_papers = load_corpus([SEEDS])[0]
    seed = next(p for p in seed_papers if p.title.startswith("ETAP"))
    j = tmp_path / "full.jsonl"
    j.write_text(json.dumps({"id": "OR123", "title": "Real Title", "abstract": seed.text}) + "\n")
    papers, _ = load_corpus([SEEDS, j])
    assert len(papers) == 66
    merged = next(p for p in papers if p.id == "OR123")
    assert merged.title == "Real Title" and seed.id in merged.aliases
    assert len(merged.sources) == 2


BAD = [
    ("missing", None, "no such file"),
    ("emptydir", None, "holds no abstract files"),
    ("empty.txt", b"", "file is empty"),
    ("header.txt", b"Only a header\n\n", "no abstracts after the header"),
    ("bin.txt", b"\x00\x01\x02\xff binary", "looks binary"),
    ("latin1.txt", "Header\nCaf\xe9 abstract about learning.\n".encode("latin-1"), "not valid UTF-8"),
    ("bad.jsonl", b'{"abstract": "fine one"}\n{"abstract": broken\n', ":2: malformed JSON"),
    ("noabs.csv", b"title,summary\nA,B\n", "no 'abstract' column"),
    ("notobj.jsonl", b'["abstract"]\n', "expected a JSON object"),
]


@pytest.mark.parametrize("name,data,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_file_and_problem(tmp_path, name, data, message):
    path = tmp_path / name
    if name == "emptydir":
        path.mkdir()
    elif data is not None:
        path.write_bytes(data)
    with pytest.raises(CorpusError) as e:
        load_corpus([path])
    assert message in str(e.value) and str(path) in str(e.value)
    assert "\n" not in str(e.value)


def test_skip_bad_lines_reports_what_was_left_out(tmp_path):
    j = tmp_path / "mixed.jsonl"
    j.write_text('{"abstract": "good one about graphs"}\nnot json\n{"abstract": "good two about images"}\n')
    papers, skipped = load_corpus([j], skip_bad=True)
    assert len(papers) == 2 and len(skipped) == 1 and ":2:" in skipped[0]


def test_duplicate_id_with_other_abstract_is_refused(tmp_path):
    j = tmp_path / "dup.jsonl"
    j.write_text('{"id": "A", "abstract": "one text"}\n{"id": "A", "abstract": "another text"}\n')
    with pytest.raises(CorpusError, match=r"dup.jsonl:2: duplicate id 'A'"):
        load_corpus([j])


def test_bom_crlf_and_utf16_are_read(tmp_path):
    a = tmp_path / "bom.txt"
    a.write_bytes("\ufeffList\r\nAn abstract about kernels.\r\n\r\nAnother about trees.\r\n".encode("utf-8"))
    b = tmp_path / "u16.txt"
    b.write_bytes("List\nA third abstract about proteins.\n".encode("utf-16"))
    papers, _ = load_corpus([a, b])
    assert [p.text for p in papers] == ["An abstract about kernels.", "Another about trees.",
                                        "A third abstract about proteins."]
