"""End to end in a real headless Chromium: search, open a paper, browse to similar ones, go back."""
import pytest

from browser import CHROMIUM, launch, streamlit_server
from conftest import ROOT

pytest.importorskip("playwright")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not __import__("os").path.exists(CHROMIUM), reason="needs /usr/bin/chromium")]


@pytest.fixture(scope="module")
def server(seed_index):
    with streamlit_server(ROOT, seed_index) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module; each test gets a fresh context (no cookies, storage or history)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = launch(p)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 1600})
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs
    yield page
    context.close()


def settled(page, timeout: float = 60_000) -> None:
    """Wait until the page's script has finished its run (Streamlit marks its root with the state)."""
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(timeout=timeout)


def no_error_on(page):
    body = page.inner_text("body")
    assert "Traceback" not in body and "Error" not in page.title()
    assert page.locator("[data-testid='stException']").count() == 0
    assert not page.dialogs


def test_search_open_paper_browse_similar_and_back(server, page):
    page.goto(server)
    box = page.get_by_role("textbox", name="Search papers by meaning")
    box.wait_for(timeout=60_000)
    box.fill("recognising printed music scores")
    page.get_by_role("button", name="Find papers", exact=True).click()
    first = page.locator("h5").first
    first.wait_for(timeout=30_000)
    page.wait_for_function("() => document.querySelectorAll('h5').length >= 10", timeout=30_000)
    assert "Legato" in first.inner_text()
    assert "q=recognising" in page.url
    no_error_on(page)

    page.get_by_role("button", name="Similar papers →").first.click()
    page.get_by_text("Most similar papers").wait_for(timeout=30_000)
    assert "paper=" in page.url
    page.wait_for_function("() => document.querySelectorAll('h5').length >= 11", timeout=30_000)
    opened = page.locator("h5").first.inner_text()
    assert "Legato" in opened
    similar_titles = page.locator("h5").all_inner_texts()[1:]
    assert len(similar_titles) == 10 and all("Legato" not in t for t in similar_titles)
    no_error_on(page)

    # one step further: the first similar paper becomes the opened one
    page.get_by_role("button", name="Similar papers →").first.click()
    page.wait_for_function("() => !document.querySelector('h5').innerText.includes('Legato')", timeout=30_000)
    no_error_on(page)

    page.go_back()
    page.wait_for_function("() => document.querySelector('h5') && document.querySelector('h5').innerText.includes('Legato')",
                           timeout=30_000)
    assert "paper=" in page.url


def test_abstract_math_renders_and_script_query_is_inert(server, page):
    page.goto(server + "/?q=" + "%3Cscript%3Ealert(1)%3C%2Fscript%3E%20comics")
    page.locator("h5").first.wait_for(timeout=60_000)
    page.locator(".ps-card math msup").first.wait_for(timeout=30_000)  # C$^3$B is typeset as MathML, not raw
    assert "C3B" in page.locator("h5").first.inner_text()
    assert "$^3$" not in page.inner_text("body") and page.locator("script:not([src])").filter(
        has_text="alert(1)").count() == 0
    no_error_on(page)



def test_map_renders_every_point_and_a_click_opens_the_paper(server, page, engine):
    page.goto(server + "/?view=map&q=music+score+recognition")
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelector('.js-plotly-plot')._fullData", timeout=30_000)
    names = page.evaluate("() => document.querySelector('.js-plotly-plot')._fullData.map(t => t.name)")
    counts = page.evaluate("() => document.querySelector('.js-plotly-plot')._fullData"
                           ".filter(t => (t.mode || '').startsWith('markers')).map(t => t.x.length)")
    assert "your query's hits" in names
    assert sum(counts) == len(engine.papers) + 10  # every paper once, the ten hits again on top (numbered)
    no_error_on(page)
    page.screenshot(path=str(ROOT / "tests" / ".last_map.png"))
    # a click on a point opens that paper: find the first point's pixel through plotly's own axes
    pos = page.evaluate("""() => { const gd = document.querySelector('.js-plotly-plot');
        const t = gd._fullData.find(t => t.mode === 'markers' && t.name !== "your query's hits");
        const L = gd._fullLayout, r = gd.getBoundingClientRect();
        return {id: t.customdata[0], x: r.left + L._size.l + L.xaxis.l2p(t.x[0]),
                y: r.top + L._size.t + L.yaxis.l2p(t.y[0])}; }""")
    page.mouse.click(pos["x"], pos["y"])
    page.wait_for_function("() => location.search.includes('paper=')", timeout=30_000)
    assert f"paper={pos['id']}" in page.url


def test_uploaded_bib_finds_papers_like_it(server, page, engine):
    target = engine.papers[7]
    bib = "@article{mine, title={Something}, abstract={" + target.text.replace("{", "").replace("}", "") + "}}\n"
    page.goto(server)
    settled(page)  # a file given while the first run still draws the page can be dropped with its widget
    page.get_by_text("Papers like these").click()
    page.locator("input[type=file]").set_input_files(
        files=[{"name": "mine.bib", "mimeType": "text/plain", "buffer": bib.encode()}])
    page.get_by_text("1 text(s) read from mine.bib").wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('h5').length >= 10", timeout=30_000)
    assert target.title.split()[0] in page.locator("h5").first.inner_text()
    page.locator("input[type=file]").set_input_files(
        files=[{"name": "scan.txt", "mimeType": "text/plain", "buffer": b"\x89PNG\x00\x00\x01"}])
    page.get_by_text("scan.txt: looks binary").wait_for(timeout=30_000)
    no_error_on(page)


def test_adding_a_hit_changes_the_url_and_the_bibtex_download_arrives(server, page):
    import bibtexparser

    page.goto(server + "/?q=music+score+recognition")
    # all ten cards drawn and none stale, so the first button is not clicked mid-draw
    page.wait_for_function("() => document.querySelectorAll('h5').length >= 10 && "
                           "!document.querySelector('[data-stale=\"true\"]')", timeout=60_000)
    add = page.get_by_role("button", name="+ Reading list").first
    title = add.evaluate("b => { let e = b; while (!e.querySelector('h5')) e = e.parentElement; "
                         "return e.querySelector('h5').innerText; }")  # the title on the button's own card
    add.click()
    page.wait_for_function("() => location.search.includes('list=')", timeout=30_000)
    page.get_by_role("button", name="Reading list (1)").click()
    page.wait_for_function("() => location.search.includes('view=list')", timeout=30_000)
    page.get_by_role("heading", name="Reading list (1)").wait_for(timeout=30_000)
    assert "view=list" in page.url and "list=" in page.url
    with page.expect_download(timeout=30_000) as info:
        page.get_by_role("button", name="Download BibTeX").click()
    text = open(info.value.path(), encoding="utf-8").read()
    library = bibtexparser.parse_string(text)
    assert len(library.entries) == 1 and not library.failed_blocks
    assert library.entries[0]["title"].strip("{}").split()[0] in title
    no_error_on(page)


HOSTILE = ROOT / "tests" / "hostile" / "hostile.jsonl"


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory, model, embedding_cache):
    from search.build import build_index

    out = tmp_path_factory.mktemp("hostile") / "index"
    build_index([HOSTILE], out, model=model, cache_dir=embedding_cache)
    with streamlit_server(ROOT, out) as url:
        yield url


def assert_inert(page):
    assert not page.dialogs, page.dialogs
    assert page.locator("img[onerror], iframe, [onclick]").count() == 0
    for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"):
        assert href.startswith(("http://", "https://", "/", "?", "#")), href


@pytest.mark.parametrize("view", ["?q=robust+kernels", "?paper=h1", "?paper=h4&k=5"])
def test_hostile_text_is_shown_as_text_and_runs_nothing(hostile_server, page, view):
    page.goto(hostile_server + "/" + view)
    page.locator("h5").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)  # give any injected script or handler time to fire
    for expander in page.get_by_text("Abstract").all():
        expander.click()
    page.wait_for_timeout(500)
    body = page.inner_text("body")
    if "paper=h1" in view or "q=" in view:
        assert "<script>alert(1)</script>" in body or "<script>alert('title')</script>" in body
    assert_inert(page)
    no_error_on(page)


@pytest.fixture(scope="module")
def conference_server(iclr_index):
    with streamlit_server(ROOT, iclr_index) as url:
        yield url


def test_stats_view_draws_its_charts_and_links_to_papers(conference_server, page, iclr_engine):
    page.goto(conference_server + "/?view=stats")
    page.get_by_text("The conference at a glance").wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=30_000)
    # one box per primary area in the first chart, drawn as SVG paths
    assert page.locator(".js-plotly-plot").first.locator("g.trace.boxes").count() == len(iclr_engine.catalog.areas)
    href = page.locator("a[href^='?paper=']").first.get_attribute("href")
    pid = href.split("=", 1)[1]
    page.goto(conference_server + "/" + href)  # (Streamlit opens Markdown links in a new tab)
    page.locator("h5").first.wait_for(timeout=30_000)
    assert iclr_engine.catalog.paper(pid).title[:30] in page.locator("h5").first.inner_text()
    no_error_on(page)


def test_sorting_by_rating_in_the_url_and_from_the_sidebar(conference_server, page, iclr_engine):
    from search.filters import Filters

    sorted_list = iclr_engine.search("graph neural networks", 10, filters=Filters(sort="rating"))
    page.goto(conference_server + "/?q=graph+neural+networks&sort=rating")
    page.get_by_text(sorted_list.order[:1].upper() + sorted_list.order[1:]).wait_for(timeout=60_000)
    page.wait_for_function(f"() => document.querySelectorAll('h5').length >= {len(sorted_list.hits)}",
                           timeout=60_000)

    def ratings() -> list[float]:
        texts = page.locator(".ps-small").all_inner_texts()
        return [float(t.split("rating ", 1)[1].split()[0]) for t in texts if "rating " in t]

    shown, titles = ratings(), page.locator("h5").all_inner_texts()
    assert len(titles) == len(sorted_list.hits) and shown == sorted(shown, reverse=True)
    # back to relevance from the sidebar: the URL follows and the order changes
    page.get_by_role("combobox", name="Sort by").click()
    page.get_by_role("option", name="relevance").click()
    page.wait_for_function("() => !location.search.includes('sort=rating')", timeout=30_000)
    page.wait_for_timeout(1500)
    # relevance is the default: the address says nothing of the sort
    assert "sort=" not in page.url and page.locator("h5").all_inner_texts() != titles
    no_error_on(page)


def test_map_lists_the_hits_beside_it_and_a_hit_rings_its_point_then_opens(conference_server, page, iclr_engine):
    hits = [h.paper for h in iclr_engine.search("graph neural networks", 10).hits]
    page.goto(conference_server + "/?view=map&q=graph+neural+networks")
    page.wait_for_function("() => document.querySelector('.js-plotly-plot') && "
                           "document.querySelector('.js-plotly-plot')._fullData", timeout=60_000)
    legend = page.evaluate("() => document.querySelector('.js-plotly-plot')._fullData"
                           ".filter(t => t.showlegend !== false && t.mode === 'markers').length")
    assert legend == len({p.primary_area or "no primary area" for p in iclr_engine.papers})
    third = page.get_by_role("button", name=f"3. {hits[2].title[:40]}")
    third.click()
    page.wait_for_function(f"() => location.search.includes('focus={hits[2].id}')", timeout=30_000)
    page.wait_for_function("() => { const gd = document.querySelector('.js-plotly-plot'); return gd && "
                           "gd._fullData && gd._fullData.some(t => t.name === 'the paper you picked'); }",
                           timeout=30_000)
    ringed = page.evaluate("() => document.querySelector('.js-plotly-plot')._fullData"
                           ".find(t => t.name === 'the paper you picked').customdata")
    assert ringed == [hits[2].id]
    page.get_by_role("button", name="Open the ringed paper →").click()
    page.wait_for_function(f"() => location.search.includes('paper={hits[2].id}')", timeout=30_000)
    page.locator("h5").first.wait_for(timeout=30_000)
    no_error_on(page)


@pytest.fixture(scope="module")
def venue_server(venue_index):
    with streamlit_server(ROOT, venue_index) as url:
        yield url


def test_a_paper_of_the_whole_venue_shows_its_fate_ratings_and_folded_reviews(venue_server, page, venue_engine,
                                                                             tmp_path_factory):
    paper = max(venue_engine.papers, key=lambda p: (len(p.ratings), bool(p.tldr)))
    page.goto(f"{venue_server}/?paper={paper.id}")
    page.get_by_text(f"Reviews · {paper.decision}").wait_for(timeout=60_000)
    settled(page)
    card = page.locator(".ps-card").first
    small = card.locator(".ps-small").inner_text()
    assert paper.decision in small and " ".join(f"{r:g}" for r in paper.ratings) in small
    if paper.tldr:
        assert card.locator(".ps-lead").inner_text().strip() == paper.tldr.strip()
    # one folded expander per review: its text is hidden until opened
    reviewers = [r for r in venue_engine.review_record(paper.id)["reviews"]]
    first = reviewers[0]
    summary = page.get_by_text(first["summary"][:50], exact=False)
    assert not summary.first.is_visible()
    # the reviewer's name is also in the scores table (a grid whose cells are hidden): the expander's own
    page.locator("[data-testid='stExpander'] summary").filter(has_text=first["reviewer"]).first.click()
    summary.first.wait_for(state="visible", timeout=10_000)
    shots = tmp_path_factory.mktemp("shots")
    page.screenshot(path=str(shots / "paper-reviews.png"), full_page=True)
    no_error_on(page)


def test_the_venue_opens_on_accepted_papers_and_one_click_searches_them_all(venue_server, page, venue_engine):
    from search.filters import decision_group

    page.goto(f"{venue_server}/?q=language+models")
    page.get_by_role("button", name="Search every submission").wait_for(timeout=60_000)
    settled(page)
    # the cards are drawn by a component after the script's run ends: wait for them, not only for the run
    page.locator(".ps-card .ps-small").first.wait_for(timeout=30_000)
    smalls = page.locator(".ps-small:not(.ps-authors)").all_inner_texts()
    assert smalls and all(any(d in s for d in ("Oral", "Poster", "Spotlight")) for s in smalls)
    page.get_by_role("button", name="Search every submission").click()
    page.wait_for_function("() => location.search.includes('decision=all')", timeout=30_000)
    page.wait_for_function("() => [...document.querySelectorAll('.ps-small')].some(e => /Rejected|Withdrawn/.test(e.innerText))",
                           timeout=30_000)
    no_error_on(page)


def test_a_reviews_math_is_drawn_on_the_paper_page(venue_server, page, venue_engine, tmp_path_factory):
    """Review texts went through st.html, whose sanitizer (DOMPurify, HTML profile) deleted every <math>:
    "for one-layer -local, -periodic". They are drawn as the cards' abstracts are, MathML kept."""
    import re

    from search.latex import MATH
    from search.parts.reviews import texts_of

    greek = {"tau": "τ", "Delta": "Δ"}

    def letters(review: dict) -> set[str]:  # the Greek letters its formulas ($\tau$, $N = O(\Delta^7)$) hold
        return {greek[name] for _, text in texts_of(review) for m in MATH.finditer(text)
                for name in re.findall(r"\\(tau|Delta)(?![A-Za-z])", m.group(1) or m.group(2) or "")}

    paper, review = next((p, r) for p in venue_engine.papers for r in venue_engine.review_record(p.id)["reviews"]
                         if letters(r))
    page.goto(f"{venue_server}/?paper={paper.id}")
    page.get_by_text("Reviews · ").first.wait_for(timeout=60_000)
    settled(page)
    page.locator("[data-testid='stExpander'] summary").filter(has_text=review["reviewer"]).first.click()
    folded = page.locator("[data-testid='stExpander']").filter(has_text=review["reviewer"]).first
    maths = folded.locator("math")
    maths.first.wait_for(state="visible", timeout=10_000)
    shown = " ".join(maths.all_text_contents())  # (MathML elements have no innerText)
    assert letters(review) <= set(shown), (letters(review), shown)
    folded.screenshot(path=str(tmp_path_factory.mktemp("shots") / "review-math.png"))
    no_error_on(page)


HOSTILE_HTML = ('<img src=x onerror="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)">a link</a>'
                '<div class="ps-card" data-pid="p1" onclick="alert(4)" style="display:none"><h5>Title</h5>'
                '<button type="submit" class="ps-btn" data-action="list" data-id="p1" onmouseover="alert(5)">'
                '+ Reading list</button><math display="inline"><mi href="javascript:alert(6)">τ</mi></math>'
                '<svg onload="alert(7)"></svg><iframe src="javascript:alert(8)"></iframe>'
                '<form action="javascript:alert(9)"><input value="kept as text"></form><b>bold</b></div>')


def draw_cards(page, html: str) -> None:
    """The cards' component script (assets/cards.js) alone in a blank page, as Streamlit mounts it."""
    page.goto("about:blank")
    page.evaluate("""async ([src, html]) => {
        const url = URL.createObjectURL(new Blob([src], {type: "text/javascript"}));
        const draw = (await import(url)).default;
        const parent = document.createElement("div");
        document.body.appendChild(parent);
        window.sent = [];
        draw({data: {html}, parentElement: parent, setTriggerValue: (name, value) => window.sent.push([name, value])});
    }""", [(ROOT / "assets" / "cards.js").read_text(encoding="utf-8"), html])


def test_the_cards_script_builds_the_dom_and_nothing_in_its_html_runs(page):
    """The script builds elements itself (no innerHTML): if the server's escaping ever missed a tag, the
    page still creates only the cards' own elements and attributes."""
    assert "innerHTML" not in (ROOT / "assets" / "cards.js").read_text(encoding="utf-8")
    draw_cards(page, HOSTILE_HTML)
    page.wait_for_timeout(500)  # time for an onerror or onload to fire
    assert not page.dialogs, page.dialogs
    assert page.locator("img, script, iframe, svg, form, input, [style]").count() == 0
    assert page.evaluate("() => [...document.querySelectorAll('.ps-cards *')].flatMap(e => [...e.attributes])"
                         ".filter(a => /^(on.*|href|src|action|style)$/.test(a.name)).map(a => a.name)") == []
    text = page.inner_text(".ps-cards")
    assert "a link" in text and "Title" in text and "alert(2)" not in text  # a script's text is not shown
    assert page.locator(".ps-card[data-pid='p1'] math mi").text_content() == "τ"
    assert page.evaluate("() => document.querySelector('.ps-cards math').namespaceURI") == \
        "http://www.w3.org/1998/Math/MathML"
    button = page.locator("button[data-action='list']")
    assert button.get_attribute("type") == "button"
    button.click()
    assert page.evaluate("() => window.sent") == [["action", {"kind": "list", "id": "p1"}]]


def test_the_cards_script_draws_the_servers_cards_and_reviews_as_they_are(page):
    from search.render.cards import Card, cards_html
    from search.render.display import fields_html, to_html

    html = cards_html([Card(pid="p1", title="A <b>title</b> & more", rank=1, lead="TL;DR", small=("Poster", "x"),
                            body="<b>Why:</b> " + to_html(r"a $\frac{a}{b}$ **bold**"),
                            abstract=to_html(r"We use $\tau$-local heads $\phi_{l,h}(j,i)$."), abstract_open=True,
                            topic=(3, "graphs"), url="https://openreview.net/forum?id=p1&x=1", listed=True),
                       Card(pid="p2", title="Second", url="javascript:alert(1)")])
    html += fields_html([("summary", "One.\n\n- a $\\Delta$\n- b"), ("weak<i>x</i>_nesses", "Two.")])
    draw_cards(page, html)
    # the same elements, attributes and text as the HTML parsed by the browser itself
    same = page.evaluate("""(html) => { const t = document.createElement("template"); t.innerHTML = html;
        return document.querySelector(".ps-cards").innerHTML === t.innerHTML; }""", html)
    assert same
    assert page.locator("a[href='https://openreview.net/forum?id=p1&x=1'][target=_blank]").count() == 1
