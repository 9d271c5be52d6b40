"""The page through Streamlit's AppTest: query -> results, ?paper= -> similar papers."""
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT

APP = str(ROOT / "streamlit_app.py")


@pytest.fixture
def app(seed_index, monkeypatch):
    monkeypatch.setenv("SEARCH_INDEX", str(seed_index))
    at = AppTest.from_file(APP, default_timeout=120)
    return at


def texts(at):
    return " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)


def test_empty_state_offers_examples_that_run(app):
    app.run()
    assert not app.exception
    examples = [b for b in app.button if b.key and b.key.startswith("ex-")]
    assert len(examples) == 4
    examples[0].click().run()
    assert app.query_params["q"] == [examples[0].label] or app.query_params["q"] == examples[0].label
    assert any(b.key.startswith("sim-") for b in app.button)


def test_query_shows_ranked_results_with_similar_action(app):
    app.query_params["q"] = "optical flow robustness to corrupted images"
    app.run()
    assert not app.exception and not app.error
    headers = [m.value for m in app.markdown if m.value.startswith("#####")]
    assert headers[0].startswith("##### 1\\. RobustSpring")
    sims = [b for b in app.button if b.key and b.key.startswith("sim-q-")]
    assert len(sims) == 10
    sims[0].click().run()
    assert "paper" in app.query_params and "Most similar papers" in [s.value for s in app.subheader]


def test_paper_view_lists_similar_papers_without_itself(app, engine):
    pid = engine.papers[0].id
    app.query_params["paper"] = pid
    app.query_params["k"] = "5"
    app.run()
    assert not app.exception and not app.error
    sims = [b.key for b in app.button if b.key and b.key.startswith("sim-p-")]
    assert len(sims) == 5 and f"sim-p-{pid}" not in sims


def test_unknown_paper_id_gets_a_message(app):
    app.query_params["paper"] = "doesnotexist"
    app.run()
    assert not app.exception
    assert "No paper with id" in app.error[0].value


def test_html_in_query_is_shown_as_text(app):
    app.query_params["q"] = "<script>alert(1)</script>"
    app.run()
    assert not app.exception
    assert app.text_input[0].value == "<script>alert(1)</script>"
    assert all("<script>" not in m.value for m in app.markdown)


def test_long_query_warns_about_truncation(app):
    app.query_params["q"] = "diffusion " * 400
    app.run()
    assert "longer than the model's window" in app.warning[0].value


def test_broken_index_shows_message_not_traceback(tmp_path, monkeypatch):
    bad = tmp_path / "index"
    bad.mkdir()
    (bad / "manifest.json").write_text("{broken")
    monkeypatch.setenv("SEARCH_INDEX", str(bad))
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert "python index_build.py" in at.error[0].value
