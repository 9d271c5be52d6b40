"""Property-based tests (hypothesis) for the parser and the text cleaner."""
import json
import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search.corpus import CorpusError, load_corpus
from search.render.display import to_html
from search.text import clean_for_model, content_id

MARKUP = st.sampled_from(["$", "\\", "{", "}", "*", "_", "**", "\\textbf{", "\\citep{", "$$", "\\%", "^",
                          "<script>", "](javascript:", "\n", "\r", "\x00", "\u202e", "é", "论文", "🙂"])
# whole hostile HTML and the Markdown that would make some: what to_html must show as text
HOSTILE = st.sampled_from(["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "<iframe src=javascript:alert(2)>",
                           "<a href=\"javascript:alert(3)\">x</a>", "<svg onload=alert(4)>", "javascript:alert(5)",
                           "![x](javascript:alert(6))", "![img](http://x/y.png)", "[x](javascript:alert(7))",
                           "<javascript:alert(8)>", "<http://x>", "<b onclick=alert(9)>b</b>", "<!-- c -->",
                           "<math><mi href=javascript:alert(10)>x</mi></math>", "$\\href{javascript:alert(11)}{x}$",
                           "$\\text{<img src=x onerror=alert(12)>}$", "`<img src=x>`", "&lt;img&gt;", "\\<img>"])
TEXT = st.lists(st.one_of(st.text(max_size=12), MARKUP, HOSTILE), max_size=30).map("".join)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(TEXT)
def test_cleaning_is_idempotent(text):
    once = clean_for_model(text)
    assert clean_for_model(once) == once


@FAST
@given(TEXT)
def test_display_html_never_raises_and_never_keeps_raw_html(text):
    out = to_html(text)
    assert "<script" not in out and "<img" not in out and "<iframe" not in out and "<svg" not in out
    assert not re.search(r"<[a-z][^>]*\s(on\w+|href|src)\s*=", out, re.I), out  # no tag with a handler or link
    assert "<a " not in out and "<!--" not in out


@FAST
@given(st.binary(max_size=400))
def test_any_bytes_give_papers_or_a_clean_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("prop") / random.choice(["x.txt", "x.jsonl", "x.csv"])
    path.write_bytes(data)
    try:
        papers, _ = load_corpus([path])
    except CorpusError as e:
        assert str(e) and "\n" not in str(e) and str(path) in str(e)
    else:
        assert papers and all(p.id and p.text for p in papers)


@FAST
@given(TEXT)
def test_any_text_line_gives_papers_or_a_clean_error(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("prop") / "list.txt"
    path.write_text("Header\n" + text, encoding="utf-8")
    try:
        papers, _ = load_corpus([path])
    except CorpusError as e:
        assert "\n" not in str(e) and str(path) in str(e)
    else:
        assert all(p.text == clean_for_model(p.text) for p in papers)


ABSTRACT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")),
                   min_size=5, max_size=80).filter(lambda s: len(clean_for_model(s)) > 2 and s.strip())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ABSTRACT, min_size=1, max_size=8, unique_by=lambda s: content_id(s)), st.randoms(),
       st.lists(ABSTRACT, max_size=3))
def test_ids_are_stable_under_reordering_and_added_files(tmp_path_factory, abstracts, rnd, extra):
    d = tmp_path_factory.mktemp("ids")
    (d / "a.txt").write_text("List\n" + "\n".join(abstracts), encoding="utf-8")
    before = {content_id(p.abstract): p.id for p in load_corpus([d / "a.txt"])[0]}
    shuffled = abstracts[:]
    rnd.shuffle(shuffled)
    (d / "a.txt").write_text("List\n" + "\n".join(shuffled), encoding="utf-8")
    (d / "b.jsonl").write_text("".join(json.dumps({"abstract": e}) + "\n" for e in extra) or "\n")
    try:
        after = {content_id(p.abstract): p.id for p in load_corpus([d])[0]}
    except CorpusError:  # b.jsonl with no records is refused; the list alone must still agree
        after = {content_id(p.abstract): p.id for p in load_corpus([d / "a.txt"])[0]}
    assert all(after[k] == v for k, v in before.items())
