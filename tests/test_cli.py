"""The command line as a user runs it: exit codes, output, no tracebacks (in process where only the output
matters; real processes for the process itself: a pipe, a lock, the whole default build)."""
import json
import shutil

import pytest

from conftest import SEEDS, cache_copy, run_build, run_cli, run_py
from test_corpus import BAD


def test_query_json_lines(seed_index):
    r = run_py("-m", "search", "query", "optical flow robustness benchmark", "-k", "3", "--json",
               "--index", str(seed_index))
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["query"] == "optical flow robustness benchmark" and len(obj["hits"]) == 3
    assert set(obj["hits"][0]) >= {"id", "score", "title", "title_derived", "abstract", "sources"}
    assert "RobustSpring" in obj["hits"][0]["title"]


def test_query_file_from_stdin_one_line_per_query(seed_index):
    r = run_cli("query", "--file", "-", "-k", "2", "--json", env={"SEARCH_INDEX": str(seed_index)},
               stdin="music recognition\nmolecule reasoning benchmark\n")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["query"] for x in lines] == ["music recognition", "molecule reasoning benchmark"]


def test_similar_table_and_unknown_id(seed_index, engine):
    pid = engine.papers[0].id
    r = run_cli("similar", pid, "-k", "4", "--index", str(seed_index))
    assert r.returncode == 0 and r.stdout.count("\n") >= 5 and pid not in r.stdout.split("\n", 1)[1]
    r = run_cli("similar", "nosuchid", "--index", str(seed_index))
    assert r.returncode == 2 and "nosuchid" in r.stderr and "Traceback" not in r.stderr


def test_cli_on_missing_index_says_what_to_run(tmp_path):
    r = run_cli("query", "x", "--index", str(tmp_path / "none"))
    assert r.returncode == 2 and "python index_build.py" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("name,data,message", BAD, ids=[b[0] for b in BAD])
def test_build_refuses_bad_input_and_keeps_the_old_index(tmp_path, seed_index, name, data, message):
    out = tmp_path / "index"
    shutil.copytree(seed_index.resolve(), out)
    before = (out / "manifest.json").read_bytes()
    path = tmp_path / name
    if name == "emptydir":
        path.mkdir()
    elif data is not None:
        path.write_bytes(data)
    r = run_build(str(path), "--out", str(out))
    assert r.returncode == 2
    assert message in r.stderr and str(path) in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert (out / "manifest.json").read_bytes() == before


def test_second_build_at_once_refuses(tmp_path):
    import fcntl
    import os
    out = tmp_path / "index"
    fd = os.open(tmp_path / ".index.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        r = run_py("index_build.py", str(SEEDS), "--out", str(out))
    finally:
        os.close(fd)
    assert r.returncode == 2 and "another build" in r.stderr and not out.exists()


@pytest.mark.slow
def test_default_build_logs_progress_to_a_pipe_and_searches_chinese_across_languages(tmp_path, embedding_cache):
    out = tmp_path / "index"
    cache_copy(embedding_cache, tmp_path / ".embedding_cache", vectors=False)  # the default cache: all to embed
    r = run_py("index_build.py", str(SEEDS), "--out", str(out))  # stderr is a pipe here, as in a log file
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    for expected in ("abstracts: 0/66 (0%)", "abstracts: 66/66 (100%)", "sentences: 568/568 (100%)",
                     "multilingual abstracts: 66/66 (100%)", "topics…", "map…", "writing the index…"):
        assert any(line.startswith(expected) for line in lines), (expected, lines)
    assert "Traceback" not in r.stderr
    q = run_py("-m", "search", "query", "用统计检验发现大语言模型性能下降", "--index", str(out), "--json", "-k", "3")
    answer = json.loads(q.stdout)
    assert q.returncode == 0 and answer["space"] == "multilingual" and len(answer["hits"]) == 3
    assert "degrad" in " ".join(h["abstract"] for h in answer["hits"]).lower()


@pytest.fixture(scope="module")
def authored_index(tmp_path_factory, model, embedding_cache):
    """A few records with authors and review scores, as `python -m search fetch` writes them."""
    from search.build import build_index

    d = tmp_path_factory.mktemp("authored")
    rows = [("a1", ["Yann LeCun", "Ada Lovelace"], "Self-supervised learning of image features with joint embeddings."),
            ("a2", ["Jürgen Müller"], "Recurrent networks that learn long-term dependencies in sequences."),
            ("a3", ["Grace Hopper"], "A compiler that translates English-like statements for image processing.")]
    (d / "papers.jsonl").write_text("".join(json.dumps(
        {"id": pid, "title": f"Paper {pid}", "authors": names, "abstract": text, "avg_rating": 6.5,
         "avg_confidence": 3.5, "n_ratings": 4, "pdf": f"https://openreview.net/pdf?id={pid}"}) + "\n"
        for pid, names, text in rows))
    out = d / "index"
    build_index([d / "papers.jsonl"], out, model=model, cache_dir=embedding_cache, explore=False, sentences=False)
    return out


def test_author_filter_matches_part_of_a_name_ignoring_case_and_accents(authored_index, capsys):
    from search.cli import main

    assert main(["query", "image", "--author", "lecun", "--index", str(authored_index), "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [h["id"] for h in hits] == ["a1"] and hits[0]["authors"] == ["Yann LeCun", "Ada Lovelace"]
    assert (hits[0]["avg_rating"], hits[0]["avg_confidence"], hits[0]["n_ratings"]) == (6.5, 3.5, 4)
    assert main(["query", "sequences", "--author", "MULLER", "--author", "hopper", "--index",
                 str(authored_index), "--json"]) == 0
    assert sorted(h["id"] for h in json.loads(capsys.readouterr().out)["hits"]) == ["a2", "a3"]
    assert main(["similar", "a1", "--author", "Müller", "--index", str(authored_index), "--json"]) == 0
    assert [h["id"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["a2"]
    assert main(["query", "image", "--author", "Turing", "--index", str(authored_index)]) == 0
    assert "No paper matches these filters" in capsys.readouterr().out


def test_bibtex_of_a_record_with_authors_has_them(authored_index, capsys):
    import bibtexparser

    from search.cli import main

    assert main(["export", "a1", "a2", "--index", str(authored_index)]) == 0
    entries = bibtexparser.parse_string(capsys.readouterr().out).entries
    assert [e.fields_dict["author"].value for e in entries] == ["Yann LeCun and Ada Lovelace", "Jürgen Müller"]


def test_cli_sort_min_rating_and_stats_on_the_conference_slice(iclr_index, capsys):
    from search.cli import main

    assert main(["query", "graph neural networks", "--sort", "rating", "--min-rating", "6", "--json",
                 "--index", str(iclr_index)]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    ratings = [h["avg_rating"] for h in hits]
    assert hits and all(r >= 6 for r in ratings) and ratings == sorted(ratings, reverse=True)
    assert all({"avg_rating", "avg_confidence", "n_ratings", "authors"} <= set(h) for h in hits)
    assert main(["stats", "--json", "--index", str(iclr_index)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["group"] for r in rows} == {"all", "area", "topic"}
    assert all({"papers", "orals", "oral_share", "mean", "median", "best"} <= set(r) for r in rows)
    assert main(["stats", "--index", str(iclr_index)]) == 0
    assert "primary area" in capsys.readouterr().out
    r = run_cli("query", "x", "--min-rating", "12", "--index", str(iclr_index))
    assert r.returncode == 2 and "--min-rating" in r.stderr and "Traceback" not in r.stderr


def test_output_names_the_score_each_mode_ranks_by(seed_index, capsys):
    from search.cli import main

    q = "optical flow robustness to corrupted images"
    for mode, name, label in (("hybrid", "match", "match score"), ("semantic", "cosine", "cosine similarity"),
                              ("keyword", "BM25", "BM25 score")):
        assert main(["query", q, "--mode", mode, "--index", str(seed_index), "--json", "-k", "5"]) == 0
        out = json.loads(capsys.readouterr().out)
        scores = [h["score"] for h in out["hits"]]
        assert out["score"] == name and scores == sorted(scores, reverse=True)
        assert all(-1 <= h["cosine"] <= 1.0001 for h in out["hits"])
        assert main(["query", q, "--mode", mode, "--index", str(seed_index), "-k", "5"]) == 0
        assert f"columns: rank, {label}" in capsys.readouterr().out
