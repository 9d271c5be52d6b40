"""The recipes of docs/architecture.md ("Where to add"), followed in a scratch copy of the project: a paper's
field, a sort and a boolean filter are each added where the recipe says (one place each) and must reach the
build, the CLI's flags and --help, --json, the page's sidebar and its address, with nothing else edited."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cache_copy

pytestmark = pytest.mark.slow

# what a copy of the project needs to build an index, answer the CLI and draw the page
PROJECT = ("search", "views", "assets", ".streamlit", "streamlit_app.py", "index_build.py")

FIELD = "    number: int | None = None  # the submission's number at its venue\n"
SORT = ('    Sort("number", "submission number, newest first", "newest submissions first",\n'
        '         lambda p: (-p.number if p.number is not None else LAST,), needs=""),\n')
FILTER = ('    Flag("with_tldr", "tldr", lambda p: bool(p.tldr), "only papers with a TL;DR",\n'
          '         widget=Widget("flag", "Only papers with a TL;DR")),\n')

PAPERS = [{"id": f"r{n}", "title": title, "abstract": abstract, "number": number, "tldr": tldr}
          for n, (title, abstract, number, tldr) in enumerate([
              ("Sparse attention for long documents", "We make attention sparse so that transformers read long "
               "documents at a fraction of the cost, and measure the quality kept on summarisation.", 12,
               "Sparse attention reads long documents cheaply."),
              ("Graph networks for molecules", "A graph neural network predicts molecular properties from the "
               "atoms and bonds, beating fingerprints on three benchmarks.", 40, ""),
              ("Long-context retrieval", "Retrieval for language models over long contexts: we index passages and "
               "attend only to the retrieved ones, matching full attention at a tenth of the memory.", 7,
               "Retrieval instead of full attention."),
          ])]


def _insert(path: Path, after: str, text: str) -> None:
    """The recipe's one edit: `text` inserted after the first line that starts with `after`."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.startswith(after))
    path.write_text("".join([*lines[:at + 1], text, *lines[at + 1:]]), encoding="utf-8")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory, embedding_cache) -> Path:
    """A copy of the project with the three recipes applied, and an index built from papers that carry the field."""
    root = tmp_path_factory.mktemp("scratch")
    for name in PROJECT:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, root / name)
    _insert(root / "search/corpus.py", "    citations: int | None", FIELD)
    _insert(root / "search/filters.py", "    Sort(\"relevance\"", SORT)
    _insert(root / "search/filters.py", "FILTERS: tuple[Filter, ...] = (", FILTER)
    records = root / "papers.jsonl"
    records.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    built = subprocess.run([sys.executable, "index_build.py", str(records), "--out", "index", "--cache",
                            str(cache_copy(embedding_cache, root / "cache")), "--no-summaries", "--no-review-search"],
                           cwd=root, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    return root


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "search", *args], cwd=root, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "SEARCH_INDEX": str(root / "index")})


def test_a_field_a_sort_and_a_boolean_filter_reach_the_cli_and_json_from_one_line_each(scratch):
    helped = cli(scratch, "query", "--help").stdout
    assert "--tldr" in helped and "only papers with a TL;DR" in helped and "number: newest submissions first" in \
        " ".join(helped.split())
    ran = cli(scratch, "query", "attention over long documents", "--sort", "number", "--json", "-k", "3")
    assert ran.returncode == 0, ran.stderr
    hits = json.loads(ran.stdout)["hits"]
    numbers = [h["number"] for h in hits]   # the field in --json, read from the records by its type
    assert sorted(numbers, reverse=True) == numbers and set(numbers) <= {12, 40, 7} and numbers
    bare = cli(scratch, "query", "attention over long documents", "--tldr", "--json")  # a boolean flag is bare
    assert bare.returncode == 0, bare.stderr
    assert {h["id"] for h in json.loads(bare.stdout)["hits"]} == {"r0", "r2"}


# The page of the copy, run through AppTest in a process of its own (this one has imported the project's own
# `search`): what the sidebar offers, and the address after the box is ticked and unticked.
PAGE = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("streamlit_app.py", default_timeout=120)
at.query_params["q"] = "attention over long documents"
at.run()
box = lambda: next(c for c in at.sidebar.checkbox if c.label == "Only papers with a TL;DR")
sorts = next(s for s in at.sidebar.selectbox if s.label == "Sort by").options
box().check().run()
ticked = dict(at.query_params)
box().uncheck().run()
print(json.dumps({"errors": [str(e.value) for e in at.exception], "sorts": sorts, "ticked": ticked,
                  "unticked": dict(at.query_params)}))
"""


def test_the_filter_and_sort_reach_the_page_and_its_address(scratch):
    ran = subprocess.run([sys.executable, "-c", PAGE], cwd=scratch, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "SEARCH_INDEX": str(scratch / "index")})
    assert ran.returncode == 0, ran.stderr[-3000:]
    page = json.loads(ran.stdout.strip().splitlines()[-1])
    assert not page["errors"]
    # a sort that needs no ratings is offered on an index without them, by its label
    assert "submission number, newest first" in page["sorts"]
    assert page["ticked"].get("tldr") in ("1", ["1"])   # ticked: tldr=1 in the address
    assert "tldr" not in page["unticked"]     # unticked: nothing written, not tldr=False
