"""Reading and clicking the page's card lists (one HTML component each) from Streamlit's AppTest."""
from __future__ import annotations

import json
from html.parser import HTMLParser


class _Cards(HTMLParser):
    """Cards as dicts: pid, title, small (grey lines), body and abstract text, buttons, links."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: list[dict] = []
        self.field: str | None = None
        self.button: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class") or ""
        if "ps-card" in cls.split():
            self.cards.append({"pid": a["data-pid"], "title": "", "lead": "", "small": "", "body": "", "abstract": "",
                               "buttons": [], "links": []})
        elif tag == "h5":
            self.field = "title"
        elif "ps-lead" in cls:
            self.field = "lead"
        elif "ps-small" in cls:  # the authors' line, then the grey lines: one text, a line each
            self.field = "small"
            if self.cards[-1]["small"]:
                self.cards[-1]["small"] += "\n"
        elif "ps-body" in cls:
            self.field = "body"
        elif "ps-abstract" in cls:
            self.field = "abstract"
        elif tag == "button":
            self.button = {"action": a["data-action"], "id": a["data-id"], "label": ""}
        elif tag == "a":
            self.cards[-1]["links"].append(a.get("href"))
        elif tag == "br" and self.field:
            self.cards[-1][self.field] += "\n"

    def handle_endtag(self, tag):
        if tag == "button" and self.button is not None:
            self.cards[-1]["buttons"].append(self.button)
            self.button = None
        elif tag in ("h5", "p", "div"):
            self.field = None

    def handle_data(self, data):
        if self.button is not None:
            self.button["label"] += data
            if self.button["action"] == "author" and self.field:  # a name is read in its line too
                self.cards[-1][self.field] += data
        elif self.field:
            self.cards[-1][self.field] += data


def component(at, key: str):
    found = [e for e in at.get("bidi_component") if e.proto.id.endswith(f"-cards-{key}")]
    return found[0] if found else None


def html(at, key: str) -> str | None:
    """The HTML a component draws (a card list's, or a review's: keys "review-meta", "review-0", ...)."""
    element = component(at, key)
    return None if element is None else json.loads(element.proto.json)["html"]


def cards(at, key: str) -> list[dict]:
    """The cards of the list with this key ("q" results, "p" similar, "v" the open paper, "t", "l", "m", "u")."""
    element = component(at, key)
    if element is None:
        return []
    parser = _Cards()
    parser.feed(json.loads(element.proto.json)["html"])
    return parser.cards


def buttons(at, key: str, action: str) -> list[dict]:
    return [b for c in cards(at, key) for b in c["buttons"] if b["action"] == action]


def click(at, key: str, action: str, target: str):
    """What the browser sends when a card's button is clicked: the component's trigger, then a rerun."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id

    element = component(at, key)
    assert any(b["id"] == target for b in buttons(at, key, action)), f"no {action} button for {target}"
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id = _make_trigger_id(element.proto.id, "events")
    state.json_trigger_value = json.dumps([{"event": "action", "value": {"kind": action, "id": target}}])
    return at._run(states)
