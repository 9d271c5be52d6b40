"""docs/architecture.md is the map of the code: it cannot drift from what the code holds."""
import functools
import importlib.util
import re
from dataclasses import fields

from conftest import ROOT
from search.manifest import Manifest

ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_module_of_the_library_is_on_the_map():
    modules = sorted(str(p.relative_to(ROOT / "search")) for p in (ROOT / "search").rglob("*.py")
                     if not p.name.startswith("__"))
    listed = set(re.findall(r"`search/([\w/]+\.py)`", ARCHITECTURE))
    assert len(modules) > 30 and [m for m in modules if m not in listed] == []
    assert [m for m in listed if not (ROOT / "search" / m).is_file()] == []  # nor a module that is gone


def test_every_manifest_entry_is_in_the_index_layout():
    layout = ARCHITECTURE[ARCHITECTURE.index("## The index folder"):ARCHITECTURE.index("## Every module")]
    entries = [f.name for f in fields(Manifest)]
    assert "multilingual" in entries and [e for e in entries if f"`{e}`" not in layout] == []


# the page's views (views/), which streamlit_app.py routes to
PAGE_VIEWS = sorted((ROOT / "views").glob("*.py"))

# the library's modules by their dotted names below search/ ("openreview.fetch"), the longest first: a name in
# a family of modules is cited with its family's
MODULES = sorted((".".join(p.relative_to(ROOT / "search").with_suffix("").parts)
                  for p in (ROOT / "search").rglob("*.py") if not p.stem.startswith("__")), key=lambda m: -len(m))
# `module.name` (or `module.Class.attr`) where module is one of the library's: not a path (`.index.versions/`,
# `assets/cards.js`) nor a file name (`parts.explore.py`, `encoding.multilingual.png`)
CITED = re.compile(r"(?<![\w./-])(" + "|".join(map(re.escape, MODULES)) + r")\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
FILE_ENDINGS = {"py", "md", "js", "png", "json", "jsonl", "npy", "faiss", "onnx", "log", "txt", "gz", "csv"}
SECTION = re.compile(r"\b(README|docs/\w+\.md)(?:'s)?,? \"([^\"]+)\"")


def cited_texts():
    """Where the code is described: the docs' code spans, the code's comments and docstrings."""
    import io
    import tokenize

    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        yield doc.name, text, re.findall(r"`([^`\n]+)`", text)
    for source in [*sorted((ROOT / "search").rglob("*.py")), ROOT / "streamlit_app.py", *PAGE_VIEWS,
                   ROOT / "index_build.py"]:
        tokens = tokenize.generate_tokens(io.StringIO(source.read_text(encoding="utf-8")).readline)
        said = [t.string for t in tokens if t.type == tokenize.COMMENT
                or (t.type == tokenize.STRING and t.string.startswith(('"""', "'''")))]
        yield source.name, "\n".join(said), said


def unresolved(name: str) -> bool:
    import importlib

    module = next(m for m in MODULES if name.startswith(m + "."))
    path = name[len(module) + 1:].split(".")
    if path[-1] in FILE_ENDINGS:
        return False
    obj = importlib.import_module(f"search.{module}")
    for part in path:
        if not hasattr(obj, part):
            return True
        obj = getattr(obj, part)
    return False


def test_every_module_name_the_docs_and_comments_cite_exists():
    cited = {(where, f"{m}.{n}") for where, _, spans in cited_texts() for span in spans
             for m, n in CITED.findall(span)}
    assert len(cited) > 50  # the scan finds what it should: the docs cite the code often
    assert sorted((where, name) for where, name in cited if unresolved(name)) == []


def test_every_section_the_docs_and_comments_cite_is_there():
    cited = {(where, doc, section) for where, text, _ in cited_texts() for doc, section in SECTION.findall(text)}
    headings = {doc: set(re.findall(r"^#+ (.+?)\s*$", (ROOT / ("README.md" if doc == "README" else doc))
                                    .read_text(encoding="utf-8"), re.M)) for _, doc, _ in cited}
    assert len(cited) >= 4
    assert sorted(c for c in cited if c[2] not in headings[c[1]]) == []


def test_the_drift_checks_catch_a_name_or_a_section_that_is_gone():
    assert unresolved("render.display.to_htm") and not unresolved("render.display.to_html")
    assert unresolved("build._write") and not unresolved("index.write_unembedded")
    assert not unresolved("parts.explore.py") and CITED.findall("`.index.versions/`") == []
    assert unresolved("openreview.records.reviews") and not unresolved("openreview.records.review")
    assert CITED.findall("`openreview.fetch.fetch_venue`") == [("openreview.fetch", "fetch_venue")]
    assert SECTION.findall('(README, "Layout of the code")') == [("README", "Layout of the code")]


README = (ROOT / "README.md").read_text(encoding="utf-8")
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")


def numbers(text: str) -> list[tuple[str, float, int]]:
    """Each number of a text as written, its value and its decimals ("1,377" -> 1377.0, 0)."""
    return [(m.group(0), float(m.group(1).replace(",", "") + "." + (m.group(2) or "0")), len(m.group(2) or ""))
            for m in NUMBER.finditer(text)]


def not_in_record(figure: str, record: str) -> list[str]:
    """The numbers a README figure quotes that no number of its record gives, at the figure's precision. It
    checks presence, not place: a record re-measured moves its figures, and the README's stale ones fail here
    (10.2 s quoted where the record said 10.1 s), though a number found elsewhere in a long record passes."""
    given = [v for _, v, _ in numbers(record)]
    return [raw for raw, v, d in numbers(figure) if not any(round(g, d) == v for g in given)]


def headline_rows() -> list[tuple[str, str, str]]:
    """The README's headline figures: (what, figure, the text of the records it links; "same": the row above's)."""
    table = README[README.index("## Headline figures"):README.index("## Tests")]
    rows, records = [], ""
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("what", "---"):
            continue
        links = re.findall(r"\]\((benchmarks/results/[^)]+\.md)\)", cells[3])
        records = " ".join((ROOT / link).read_text(encoding="utf-8") for link in links) or records
        rows.append((cells[0], cells[1], records))
    return rows


def test_every_headline_figure_is_in_the_record_it_links():
    """A second check of the generated table, by other code than benchmarks/figures.py's: every number quoted
    is one its records give."""
    rows = headline_rows()
    assert len(rows) >= 10 and all(record for _, _, record in rows)
    assert [(what[:50], missing) for what, figure, record in rows if (missing := not_in_record(figure, record))] == []


@functools.cache
def figures():
    """benchmarks/figures.py, loaded by its path (a script, not a module of an installed package)."""
    spec = importlib.util.spec_from_file_location("headline_figures", ROOT / "benchmarks" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_headline_figures_are_those_the_records_give():
    """`python benchmarks/figures.py` wrote the table from the records as they are: a figure edited by hand, or a
    record re-measured without running it again, fails here."""
    rows = figures().table(figures().read_records())
    assert len(rows) >= 10 and figures().differences(README, rows) == []
    measured = {m for _, _, m, _ in rows}
    assert measured >= {"2026-12-04", "2026-12-07"} and "undated" not in measured  # each row says when


def test_a_figure_template_quotes_no_number_of_its_own():
    """Every number of a figure comes from its record, but its targets and the names of its measures."""
    own = re.compile(r"target ≤ \d+(?:\.\d+)? s|P@\d+|\bin 1\b")
    fixed = [(row.what[:40], own.sub("", re.sub(r"\{\w+\}", "", row.figure))) for row in figures().ROWS]
    assert [(what, n) for what, text in fixed for n, _, _ in numbers(text)] == []


def test_a_remeasured_record_or_a_hand_edit_fails_the_figure_check():
    f = figures()
    texts = f.read_records()
    rows = f.table(texts)
    fetch = next(i for i, row in enumerate(rows) if row[0].startswith("fetch all"))
    assert rows[fetch][1:3] == ("10.1 s, 258 MiB peak", "2026-12-06")
    remeasured = dict(texts, **{"fetch.md": texts["fetch.md"].replace("| pages of 1,000 | 10.1 | 21 | 258 |",
                                                                      "| pages of 1,000 | 12.3 | 21 | 301 |")
                                .replace("· 2026-12-06", "· 2027-01-02")})
    moved = f.table(remeasured)
    assert moved[fetch][1:3] == ("12.3 s, 301 MiB peak", "2027-01-02")
    assert [i for i, (a, b) in enumerate(zip(rows, moved)) if a != b] == [fetch]  # nothing else moved
    said = f.differences(README, moved)
    assert len(said) == 2 and all(f"headline row {fetch + 1} ('fetch all" in line for line in said)
    assert "figure: the README says '10.1 s, 258 MiB peak', the records give '12.3 s, 301 MiB peak'" in said[0]
    edited = README.replace("| 10.1 s, 258 MiB peak |", "| 10.0 s, 258 MiB peak |")
    assert edited != README and len(f.differences(edited, rows)) == 1
    assert f.differences(README.replace("| 144 ms / 100 ms", "| 140 ms / 100 ms"), rows)  # the "not met" row too
    assert f.differences(README.replace(f.BEGIN, ""), rows) == [  # no markers: said, no traceback
        f"README.md lacks the markers {f.BEGIN} ... {f.END} around the headline figures"]


def test_a_record_lacking_what_its_row_reads_names_the_record_and_the_row():
    import pytest

    f = figures()
    texts = f.read_records()
    no_line = dict(texts, **{"fetch.md": re.sub(r"^\| pages of 1,000 .*\n", "", texts["fetch.md"], flags=re.M)})
    with pytest.raises(f.Missing, match=r"^row 'fetch all .*': fetch\.md: no table rows where "
                                        r"\{'run': 'pages of 1,000'\} with a column 'seconds'"):
        f.table(no_line)
    no_heading = dict(texts, **{"judged.md": texts["judged.md"].replace("## Held-out", "## Later")})
    with pytest.raises(f.Missing, match=r"^row \"researchers' .*\": judged\.md: nothing matches '\^## Held-out"):
        f.table(no_heading)
    undated = dict(texts, **{"fetch.md": texts["fetch.md"].replace("· 2026-12-06", "")})
    assert [row[2] for row in f.table(undated) if row[0].startswith("fetch all")] == ["undated"]
    # a row reads only the records its command cell links: its "measured" date is theirs
    wrong = f.Row("x", "{s}", lambda record: {"s": record("scale.md").text[:3]},
                  "`x` ([fetch.md](benchmarks/results/fetch.md))")
    with pytest.raises(f.Missing, match="^row 'x': reads scale.md, which its command cell does not link"):
        f.table(texts, [wrong])
    with pytest.raises(f.Missing, match="^row 'x': KeyError: 'p99'"):  # a template's name its values lack
        f.table(texts, [f.Row("x", "{p50} / {p99}", lambda record: {"p50": "1"}, wrong.command)])


def test_the_figures_command_checks_and_rewrites_the_readme(tmp_path):
    import subprocess
    import sys

    def run(*args):
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "figures.py"), *args],
                              capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout + done.stderr

    readme = tmp_path / "README.md"
    readme.write_text(README.replace("| 139 ms |", "| 130 ms |").replace("| 0.519 |", "| 0.52 |"), encoding="utf-8")
    rc, said = run("--check", "--readme", str(readme))
    assert rc == 1 and "Traceback" not in said and len(said.splitlines()) == 3  # two differences and the hint
    assert "the README says '130 ms', the records give '139 ms'" in said and "'0.52', the records give '0.519'" in said
    assert run("--readme", str(readme))[0] == 0 and readme.read_text(encoding="utf-8") == README
    assert run("--check", "--readme", str(readme)) == (0, "")
    results = tmp_path / "results"
    results.mkdir()
    for name, text in figures().read_records().items():
        (results / name).write_text(text.replace("| pages of 1,000 |", "| pages of 999 |"), encoding="utf-8")
    rc, said = run("--check", "--readme", str(readme), "--results", str(results))
    assert rc == 1 and said.startswith("figures: row 'fetch all") and len(said.splitlines()) == 1


def test_the_figure_check_fails_on_a_figure_its_record_does_not_give():
    record = "| warm query | 144 ms (p90 159) |\n| memory | 1377 MiB / 79 MiB |\n| ratio | 1.45× |"
    assert not_in_record("144 ms / 1,377 MiB (1.45×)", record) == []
    fetch = (ROOT / "benchmarks" / "results" / "fetch.md").read_text(encoding="utf-8")
    assert not_in_record("10.1 s, 258 MiB peak", fetch) == [] and not_in_record("10.2 s, 257 MiB peak", fetch)
    assert not_in_record("145 ms / 1,378 MiB (1.6×)", record) == ["145", "1,378", "1.6"]
    assert not_in_record("9.7 ms", "9.74 ms") == [] and not_in_record("9.8 ms", "9.74 ms") == ["9.8"]


def library_imports(source: str) -> set[str]:
    """The library modules a script imports (`from search import x` counts x, `from search.render import y`
    counts search.render), wherever the import sits."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "search":
            found |= ({f"search.{a.name}" for a in node.names} if node.module == "search" else {node.module})
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "search"}
    return found


def test_the_page_reaches_the_library_through_eight_modules_at_most():
    # the page is streamlit_app.py and its views together
    page = set().union(*(library_imports(p.read_text(encoding="utf-8"))
                         for p in [ROOT / "streamlit_app.py", *PAGE_VIEWS]))
    assert len(page) <= 8, sorted(page)
    assert "search.engine" in page and "search.render" in page
    # the count is of what the page names: a module reached through another is not imported here
    assert library_imports("from search import background\nfrom search.render.cards import card\nimport search.x") \
        == {"search.background", "search.render.cards", "search.x"}


def test_the_docs_lists_of_filters_and_sorts_are_drawn_from_the_declarations():
    from search.filters import FILTERS, SORT_LIST
    from search.reference import refreshed, stale

    assert stale() == []   # `python -m search.reference --write` after a filter or sort changes
    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    assert all(f"`--{f.flag}" in usage for f in FILTERS) and all(f"`{s.name}`" in usage for s in SORT_LIST)
    # a declaration the text lacks is caught: the block is drawn afresh, so an edited one differs
    edited = usage.replace("`cited`, most cited first", "`cited`, most cited")
    assert edited != usage and refreshed(edited) == usage


def test_no_filter_or_sort_is_listed_by_hand_in_the_cli_help():
    from conftest import run_cli
    from search.filters import SORT_LIST

    helped = " ".join(run_cli("query", "--help").stdout.split())
    assert all(f"{s.name}: {s.words}" in helped for s in SORT_LIST[1:])   # --sort's help names every sort


def test_the_page_is_a_router_over_views_of_a_readable_size():
    lines = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in [ROOT / "streamlit_app.py", *PAGE_VIEWS]}
    assert len(lines) > 8 and "views/__init__.py" in lines
    assert lines["streamlit_app.py"] < 300, lines
    assert {name: n for name, n in lines.items() if name.startswith("views/") and n >= 400} == {}


def test_the_library_imports_no_streamlit():
    """search/ serves the CLI and the benchmarks as well as the page: Streamlit stays in streamlit_app.py and views/."""
    import ast

    found = []
    for path in sorted((ROOT / "search").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "streamlit"]
    assert found == []


def test_the_build_names_no_part_and_the_engine_does_not_import_the_build():
    """Each later part is declared in its own module and listed in parts/registry.py: the build runs what the
    registry lists without naming a part (neither a part's name nor a module that declares one), and the
    engine reads the registry, never the build."""
    import ast
    import io
    import tokenize

    from search.parts import registry

    def imported(path) -> set[str]:
        """The last part of each module a file imports, and each name it imports from one."""
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names |= {(node.module or "").rsplit(".", 1)[-1], *(a.name for a in node.names)}
            elif isinstance(node, ast.Import):
                names |= {a.name.rsplit(".", 1)[-1] for a in node.names}
        return names - {""}

    declaring = {p.compute.__module__.rsplit(".", 1)[1] for p in registry.PARTS}
    assert declaring == {"explore", "review_search", "evidence", "multilingual", "summaries"}
    build = ROOT / "search" / "build.py"
    assert imported(build) & declaring == set() and "registry" in imported(build)
    source = build.read_text(encoding="utf-8")
    strings = {t.string.strip("\"'") for t in tokenize.generate_tokens(io.StringIO(source).readline)
               if t.type == tokenize.STRING}
    assert strings & {p.name for p in registry.PARTS} == set() and "PART[" not in source
    engine = imported(ROOT / "search" / "engine.py")
    assert "build" not in engine and "registry" in engine
    for part in (ROOT / "search" / "parts").glob("*.py"):  # nor does a part: the build imports the registry
        assert "build" not in imported(part), part.name
