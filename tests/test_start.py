"""Commands that start fast: each reads only the parts of the index it uses (search/engine.py, Parts), so a
part's loader that fails (here: raises) breaks only the commands that need that part."""
import json
from dataclasses import replace

import pytest

from conftest import run_cli

# every part of the index a command may read, beside the papers and their vectors
PARTS = ("query encoder", "BM25", "reviews", "history", "topics and map", "sentences", "multilingual", "summaries")
QUERY = "how can reinforcement learning make language models reason better?"


def commands(pid: str) -> dict[str, tuple[list[str], set[str]]]:
    """Each command, and the parts it may read."""
    return {
        "query": (["query", QUERY, "--decision", "all"],
                  # the hybrid list: the query's vector, BM25, why each result (sentences), the reviewers'
                  # summaries re-scoring it and the summary that lifted a paper (quoted from its review)
                  {"query encoder", "BM25", "sentences", "summaries", "reviews"}),
        # ranked by BM25, each hit's cosine and closest sentence shown: the query's vector still
        "query by words": (["query", "reinforcement learning", "--mode", "keyword", "--decision", "all"],
                           {"query encoder", "BM25", "sentences"}),
        "search within reviews": (["query", "ablation", "--mode", "reviews", "--decision", "all"], {"reviews"}),
        "similar": (["similar", pid, "--decision", "all"], {"BM25"}),
        "stats": (["stats"], {"topics and map"}),
        "topics": (["topics"], {"topics and map"}),
        "map": (["map"], {"topics and map"}),
        "reviews": (["reviews", pid], {"reviews"}),
        "export": (["export", pid, "--format", "csv"], {"topics and map"}),
        "changes": (["changes"], {"history"}),
    }


def forbid(monkeypatch, parts: set[str]) -> None:
    """Make each of these parts' loaders raise."""
    from search import engine
    from search.parts import history, lexical, registry, reviews

    def boom(*_args, **_kw):
        raise AssertionError("a part this command does not need was loaded")

    loaders = {"query encoder": (engine, "load_encoder"), "BM25": (lexical, "Lexical"), "reviews": (reviews, "load"),
               "history": (history, "load")}
    for name in parts & loaders.keys():
        monkeypatch.setattr(*loaders[name], boom)
    monkeypatch.setattr(registry, "PARTS", tuple(replace(p, load=boom) if p.name in parts and p.load else p
                                                 for p in registry.PARTS))


@pytest.mark.parametrize("command", list(commands("")))
def test_a_command_loads_only_the_parts_it_uses(command, venue_index, monkeypatch):
    pid = json.loads((venue_index / "papers.jsonl").read_text().splitlines()[0])["id"]
    argv, needs = commands(pid)[command]
    expected = run_cli(*argv, "--index", str(venue_index))
    assert expected.returncode == 0, expected.stderr
    forbid(monkeypatch, set(PARTS) - needs)
    ran = run_cli(*argv, "--index", str(venue_index))
    assert (ran.returncode, ran.stderr) == (0, "") and ran.stdout == expected.stdout


def test_a_part_that_cannot_be_read_is_refused_when_first_used(tmp_path, venue_index):
    """Loading is lazy, the checks are not: a damaged part is refused with its name the moment a command reads
    it, and a command that does not read it is not held up."""
    import shutil

    copy = tmp_path / "index"
    shutil.copytree(venue_index.resolve(), copy)
    topics = copy / "topics.json"
    topics.write_bytes(topics.read_bytes().replace(b"{", b"[", 1))  # same size, another checksum
    ran = run_cli("topics", "--index", str(copy))
    assert ran.returncode == 2 and "topics.json does not match its checksum" in ran.stderr
    assert "Traceback" not in ran.stderr
    first = json.loads((copy / "papers.jsonl").read_text().splitlines()[0])["id"]
    assert run_cli("reviews", first, "--index", str(copy)).returncode == 0


def test_a_paper_read_back_is_the_paper_written(venue_index):
    """Paper.from_dict's quick way for papers.jsonl's lines (no __init__) gives the paper __init__ gives, the
    record's own fields (which papers.jsonl leaves out) at their defaults, each paper its own."""
    from search.corpus import Paper
    from search.index import load_index

    papers = load_index(venue_index).papers
    slow = [Paper(**{k: v for k, v in p.to_dict().items()}) for p in papers]
    assert papers == slow and [repr(p) for p in papers] == [repr(p) for p in slow]
    assert papers[0].reviews == [] and papers[0].reviews is not papers[1].reviews
