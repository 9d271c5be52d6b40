from html.parser import HTMLParser

from search.render.display import _MATHML_TAGS, fields_html, plain_markdown, to_html
from search.sentences import split_sentences
from search.text import clean_for_model, content_id, match_key
from search.titles import derive_title


def test_latex_commands_and_escapes_are_cleaned():
    s = r"we propose C$^3$B ($\textbf{C}$omics $\textbf{C}$ross-$\textbf{C}$ultural $\textbf{B}$enchmark), up $25$\% \citep{Anderson1982Acquisition}."
    assert clean_for_model(s) == "we propose C3B (Comics Cross-Cultural Benchmark), up 25%."


def test_markdown_emphasis_is_cleaned():
    s = "by ***Dro**pping the **P**ositional **E**mbeddings (DroPE)* and _Top-$k$ Learning-to-Defer_ in snake_case"
    assert clean_for_model(s) == ("by Dropping the Positional Embeddings (DroPE) and Top-k "
                                  "Learning-to-Defer in snake_case")


def test_cleaning_is_idempotent_on_markup():
    s = r"$\textit{Math Blind}$ ***spatial transfer*** reduces cost by 18$\times$ at $O(1/\sqrt{K})$"
    once = clean_for_model(s)
    assert clean_for_model(once) == once
    assert "\\" not in once and "$" not in once and "*" not in once


def test_same_abstract_with_other_markup_has_same_key_and_id():
    a = r"We study $\textbf{robust}$ learning under 10\% noise."
    b = "We study **robust** learning under 10% noise."
    assert match_key(a) == match_key(b)
    assert content_id(a) == content_id(b)
    assert content_id(a) != content_id("We study robust learning under 20% noise.")


def test_display_html_keeps_math_and_escapes_html_and_links():
    out = to_html(r"Gains of $+6.89$% <script>alert(1)</script> [x](javascript:alert(1)) \textbf{bold}")
    assert "<math" in out and "<mn>6.89</mn>" in out
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "<a " not in out and "[x](javascript:alert(1))" in out
    assert "<strong>bold</strong>" in out


def test_display_html_neutralises_dangerous_tex():
    out = to_html(r"see $$\href{javascript:alert(1)}{click}$$ now")
    assert "href" not in out and "javascript:alert" not in out and "click" in out


# a review's sentence from the ICLR 2026 crawl: on the page its formulas vanished ("one-layer -local, -periodic")
REVIEW_MATH = (r"Theorem 4.1 shows that for one-layer $\tau$-local, $\Delta$-periodic limit transformers, if two "
               r"models agree on inputs up to length $N = O(L^{2}\Delta^{7}\tau^{2})$, with heads $\phi_{l,h}(j,i)$")


def start_tags(out: str) -> list[str]:
    found: list[str] = []
    parser = HTMLParser()
    parser.handle_starttag = lambda tag, attrs: found.append(tag)
    parser.feed(out)
    return found


def test_review_fields_draw_their_math_and_escape_their_names():
    hostile = "weak<img src=x onerror=alert(1)>_nesses"
    out = fields_html([("summary", REVIEW_MATH), (hostile, "Missing $\\varepsilon$.\n\n- one\n- two")])
    assert out.count("<math") == 5 and all(c in out for c in "τΔϕε")
    assert "<h6>Summary</h6>" in out and "<h6>Weak&lt;img src=x onerror=alert(1)&gt; nesses</h6>" in out
    assert set(start_tags(out)) <= {"div", "h6", "p", "ul", "li"} | _MATHML_TAGS, out
    meta = fields_html([("meta<script>alert(2)</script>_review", "Sound.")], "b")
    assert meta.startswith('<div class="ps-review"><b>Meta&lt;script&gt;alert(2)&lt;/script&gt; review</b><p>')
    assert "<script" not in meta


def test_plain_markdown_escapes_everything():
    assert plain_markdown("**a** <b>") == r"\*\*a\*\* \<b\>"


def test_title_names_the_method_when_the_abstract_does():
    ab = ("Recent advances in SciML have enabled neural operators. We propose GMsFEM-NO, a hybrid "
          "framework that combines the robustness of multiscale methods with neural operators.")
    assert derive_title(ab).startswith("GMsFEM-NO")


def test_title_prefers_acronym_with_its_expansion():
    ab = ("A fundamental problem is grouping tasks. In this paper, we propose ETAP (Ensemble Task "
          "Affinity Predictor), a scalable framework.")
    assert derive_title(ab) == "ETAP: Ensemble Task Affinity Predictor"


def test_title_falls_back_to_leading_clause():
    ab = "Algorithms increasingly serve as information mediators, shaping what we see. We analyse this."
    assert derive_title(ab) == "Algorithms increasingly serve as information mediators"


def test_field_acronym_is_not_taken_for_the_method():
    ab = ("Partial differential equations (PDEs) are everywhere. We introduce a solver for PDEs "
          "that is fast.")
    assert not derive_title(ab).startswith("PDEs")


def test_sentences_split_but_not_on_abbreviations():
    s = "We use e.g. graphs. Results improve by 3.5 points. Code is public."
    assert split_sentences(s) == ["We use e.g. graphs.", "Results improve by 3.5 points.", "Code is public."]


def test_marked_terms_are_bold_also_after_styled_math():
    out = to_html(r"$\textbf{C}$omics help cultural benchmarks", mark=lambda w: w.lower() == "cultural")
    assert "<b>C</b>omics" in out and "<strong>cultural</strong>" in out


def test_latex_control_space_shows_as_a_space():
    assert to_html(r"e.g., 90% coverage vs.\ 37% for bootstrap") == "e.g., 90% coverage vs. 37% for bootstrap"


def test_derived_titles_end_on_a_whole_phrase():
    ab = ("Someone who learns to walk shortest paths in New York can, upon receiving a map of Paris, immediately "
          "apply the same rule to navigate. This ability is compositional generalization.")
    assert derive_title(ab) == "Someone who learns to walk shortest paths in New York …"
    long = "Model merging methods combine models with different capabilities into a single one while maintaining " \
           "what each one knows about its own task."
    title = derive_title(long)
    assert title.endswith(" …") and title.split()[-2] not in {"while", "a", "the", "of", "with"}


def test_titles_latex_becomes_plain_unicode_for_places_without_math():
    from search.latex import to_unicode

    assert to_unicode(r"$\pi^3$: Scaling") == "π³: Scaling"
    assert to_unicode(r"$\alpha$-RL with $x_i$ and $O(n^{2})$") == "α-RL with xᵢ and O(n²)"
    assert to_unicode(r"$x^{ab}$") == "x^ab"  # no raised b: left readable rather than half raised
    assert to_unicode(r"Sch\"{o}lkopf \textbf{Bold} 50\%") == "Schölkopf Bold 50%"
    assert to_unicode("A plain title: 6.50") == "A plain title: 6.50"
    assert to_unicode(r"unbalanced $x^{2") and "\\" not in to_unicode(r"\unknowncommand{word} text")


def test_an_escaped_symbol_keeps_the_space_after_it():
    # "19.15\% improvement" read "19.15%improvement" in the model's text and in BibTeX (a new user's export)
    from search.latex import to_plain

    assert to_plain(r"a 19.15\% improvement, 25\%  of \$5 and \alpha") == "a 19.15% improvement, 25%  of $5 and alpha"
    assert clean_for_model(r"up to 99\% accuracy") == "up to 99% accuracy"
