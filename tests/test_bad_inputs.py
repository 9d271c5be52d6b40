"""The checked-in bad-input corpus (tests/bad_inputs/cases.json) against the loader, index_build.py,
the engine, the CLI and the page: each case works or gets a one-line message naming what and where,
no traceback ever, and the index built before stays loadable."""
import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, run_build, run_cli
from search.build import build_index
from search.corpus import CorpusError, load_corpus
from search.index import load_index
from search.encoding.multilingual import NON_LATIN, detect_language

HERE = Path(__file__).parent / "bad_inputs"
CASES = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
FILES = CASES["files"]
QUERIES = [("x" * 100_000 if q == "LONG" else q) for q in CASES["queries"]]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """The two cases too big to check in, written from their description."""
    d = tmp_path_factory.mktemp("generated")
    (d / "huge_line.txt").write_text("List\n" + "word " * (50 * 2**20 // 5) + "\n", encoding="utf-8")
    (d / "identical_100k.txt").write_text("List\n" + "The same abstract about graphs.\n" * 100_000, encoding="utf-8")
    return d


def case_path(name: str, generated: Path) -> Path:
    return generated / name.split(":", 1)[1] if name.startswith("GENERATED:") else HERE / name


def test_the_corpus_has_at_least_30_cases():
    assert len(FILES) + len(QUERIES) >= 30 and len(FILES) >= 30


@pytest.mark.parametrize("name,outcome,expect", FILES, ids=[f[0] for f in FILES])
def test_loader(name, outcome, expect, generated):
    path = case_path(name, generated)
    if outcome == "ok":
        papers, skipped = load_corpus([path])
        assert len(papers) == expect and not skipped
        assert all(p.text and "\x00" not in p.text and "\u202e" not in p.text for p in papers)
    else:
        with pytest.raises(CorpusError) as e:
            load_corpus([path])
        msg = str(e.value)
        assert expect in msg and path.name in msg and "\n" not in msg


ERRORS = [f for f in FILES if f[1] == "error"]


@pytest.mark.parametrize("name,outcome,expect", ERRORS, ids=[f[0] for f in ERRORS])
def test_index_build_refuses_and_keeps_the_old_index(name, outcome, expect, generated, seed_index, tmp_path):
    out = tmp_path / "index"
    shutil.copytree(seed_index.resolve(), out)
    before = load_index(out).manifest
    r = run_build(str(case_path(name, generated)), "--out", str(out))
    assert r.returncode == 2
    assert expect in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr + r.stdout
    assert load_index(out).manifest == before


def test_good_cases_build_together_in_process(model, generated, tmp_path, embedding_cache):
    oks = [case_path(n, generated) for n, o, _ in FILES if o == "ok"]
    report = build_index(oks, tmp_path / "index", model=model, cache_dir=embedding_cache)
    # crlf.txt and cr_only.txt hold the same two abstracts, which merge
    assert report.count == sum(e for _, o, e in FILES if o == "ok") - 2


def test_one_good_case_through_the_script(tmp_path, embedding_cache, capsys):
    import index_build

    code = index_build.run([str(HERE / "rtl_emoji.txt"), "--out", str(tmp_path / "index"),
                            "--cache", str(embedding_cache)])
    out = capsys.readouterr()
    assert code == 0 and "indexed 2 papers" in out.out and "Traceback" not in out.err


def test_broken_line_can_be_skipped_with_a_count(tmp_path, embedding_cache, capsys):
    import index_build

    code = index_build.run([str(HERE / "broken_line.jsonl"), "--out", str(tmp_path / "index"),
                            "--cache", str(embedding_cache), "--skip-bad-lines"])
    out = capsys.readouterr()
    assert code == 0 and "indexed 2 papers" in out.out
    assert "broken_line.jsonl:2: malformed JSON" in out.err and "1 malformed line(s) skipped" in out.err
    assert load_index(tmp_path / "index").manifest.skipped_lines == 1


@pytest.mark.parametrize("query", QUERIES, ids=[repr(q[:20]) for q in QUERIES])
def test_engine_answers_any_query(engine, query):
    result = engine.search(query, 5)
    if query.strip() and result.language != NON_LATIN:
        assert len(result.hits) == 5
    else:  # nothing to search, or another script on this English-only index: a message says so
        assert not result.hits and result.message


def test_cli_answers_every_query_from_a_file(seed_index):
    real = [q for q in QUERIES if q.strip()]
    r = run_cli("query", "--file", "-", "--json", "-k", "3", "--index", str(seed_index),
               stdin="\n".join(q.replace("\n", " ") for q in real) + "\n")
    assert r.returncode == 0 and "Traceback" not in r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    # every query answered: three hits, or for another script on this English-only index a message
    assert len(lines) == len(real)
    for q, x in zip(real, lines):
        other_script = detect_language(q.replace("\n", " ")) == NON_LATIN
        assert (not x["hits"] and "multilingual" in x["message"]) if other_script else len(x["hits"]) == 3


@pytest.mark.parametrize("query", ["", "   "])
def test_cli_empty_query_is_a_usage_error(seed_index, query):
    r = run_cli("query", query, "--index", str(seed_index))
    assert r.returncode == 2 and "empty query" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("query", QUERIES, ids=[repr(q[:20]) for q in QUERIES])
def test_page_answers_any_query(seed_index, monkeypatch, query):
    monkeypatch.setenv("SEARCH_INDEX", str(seed_index))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["q"] = query
    at.run()
    assert not at.exception and not at.error
    assert all("<script>" not in m.value for m in at.markdown)
