"""Result cards as HTML: abstracts' emphasis and math drawn, anything else in them shown as text."""
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from search.render.cards import Card, card_html
from search.render.display import _MATHML_ATTRS, _MATHML_TAGS, mathml, to_html

SAFE_TAGS = {"strong", "em", "b", "br"} | _MATHML_TAGS


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


def test_emphasis_and_query_terms_are_bold_and_html_is_text():
    out = to_html("We **propose** a *new* <img src=x onerror=alert(1)> model & [a link](http://x)",
                  lambda w: w == "model")
    assert "<strong>propose</strong>" in out and "<em>new</em>" in out and "<strong>model</strong>" in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out and "&amp;" in out
    assert [t for t, _ in tags(out)] == ["strong", "em", "strong"]


def test_latex_text_commands_and_math():
    out = to_html(r"$\textbf{C}$omics at 50\% \citep{x}, cost $\mathcal{O}(n^2)$")
    assert out.startswith("<b>C</b>omics at 50%") and "citep" not in out
    assert '<math display="inline">' in out and "<msup><mi>n</mi><mn>2</mn></msup>" in out


def test_math_that_would_carry_html_links_or_styles_is_shown_as_source():
    for tex in (r"\text{<img src=x onerror=alert(1)>}", r"\style{color:red}{x}", r"\color{red}{x}"):
        out = to_html(f"see ${tex}$ here")
        assert "<math" not in out and "<img" not in out and "style=" not in out, out
    assert mathml(r"\text{<img src=x onerror=alert(1)>}") is None
    assert mathml(r"\frac{a}{b}").startswith('<math display="inline"><mrow><mfrac>')


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("ab <>&\"'$\\{}_*^[]()!#`\n") + ["\\text{", "\\frac", "<img ", "onerror=",
                                                                         "\\href{", "**", "\\style{"]),
                max_size=30).map("".join))
def test_any_text_becomes_only_inert_tags(text):
    for tag, attrs in tags(to_html(text, lambda w: w == "a")):
        assert tag in SAFE_TAGS, (tag, text)
        assert set(attrs) <= _MATHML_ATTRS, (attrs, text)


def test_card_escapes_its_fields_and_carries_its_actions():
    card = Card(pid='p"1', title="<b>T</b>", rank=2, small=("Poster · <i>x</i>", "Keywords: a, b"),
                body="<b>Why:</b> ok", abstract="text", topic=(7, "graphs <x>"), url="javascript:alert(1)",
                listed=True)
    out = card_html(card)
    assert "<h5>2. &lt;b&gt;T&lt;/b&gt;</h5>" in out and "&lt;i&gt;x&lt;/i&gt;" in out
    assert 'data-pid="p&quot;1"' in out and "javascript:" not in out and "<a " not in out
    actions = [(a["data-action"], a["data-id"]) for t, a in tags(out) if t == "button"]
    assert actions == [("topic", "7"), ("similar", 'p"1'), ("list", 'p"1')]
    assert "✓ In reading list (remove)" in out and "<details><summary>Abstract</summary>" in out


def test_card_links_openreview_in_a_new_tab_and_can_open_its_abstract():
    out = card_html(Card(pid="p1", title="T", abstract="a", abstract_open=True, similar=False,
                         url="https://openreview.net/forum?id=x&y=1"))
    [(_, link)] = [(t, a) for t, a in tags(out) if t == "a"]
    assert link["href"] == "https://openreview.net/forum?id=x&y=1" and link["target"] == "_blank"
    assert "noopener" in link["rel"] and "<details open>" in out
    assert [a["data-action"] for t, a in tags(out) if t == "button"] == ["list"]


# ---------------------------------------------------------------- a paper's reviews on the page

def test_the_paper_page_draws_review_math_and_shows_review_field_names_as_text(seed_index, engine, monkeypatch):
    """A review's formulas reach the browser as MathML in the cards' component (st.html's sanitizer deleted
    them: "for one-layer -local, -periodic"), and a field name from the venue's form is text, not HTML."""
    from streamlit.testing.v1 import AppTest

    from cards_page import html
    from conftest import ROOT
    from search.engine import Engine

    review = {"reviewer": "Reviewer_m4th", "rating": 6,
              "summary": r"for one-layer $\tau$-local, $\Delta$-periodic transformers up to length $N = O(L^2)$",
              "weak<img src=x onerror=alert(1)>_nesses": r"The heads $\phi_{l,h}(j,i)$ are not defined."}
    record = {"decision": "Accept (Poster)", "decision_text": "",
              "meta_review": {"meta<script>alert(2)</script>_review": r"Sound for $\tau$-local models."},
              "reviews": [review]}
    monkeypatch.setattr(Engine, "review_record", lambda self, pid: {"id": pid, **record})
    monkeypatch.setenv("SEARCH_INDEX", str(seed_index))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["paper"] = engine.papers[0].id
    at.run()
    assert not at.exception
    meta, first = html(at, "review-meta"), html(at, "review-0")
    assert meta and first, "the reviews are not drawn by the cards' component"
    assert meta.count("<math") == 1 and "τ" in meta
    assert first.count("<math") == 4 and all(c in first for c in "τΔϕ")
    assert "<b>Meta&lt;script&gt;alert(2)&lt;/script&gt; review</b>" in meta
    assert "<h6>Weak&lt;img src=x onerror=alert(1)&gt; nesses</h6>" in first
    for out in (meta, first):
        assert {t for t, _ in tags(out)} <= {"div", "b", "h6", "p"} | SAFE_TAGS, out
    # nothing of the reviews goes through st.html any more
    assert not [e for e in at.get("html") if "alert" in str(e.proto) or "periodic" in str(e.proto)]
