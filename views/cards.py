"""The cards component: one element draws a whole list of cards (and a review's texts), its buttons acted on
before the rerun; and the short words the lists beside the cards share."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import streamlit as st

from search.render import Card, cards_html

from .address import go, toggle_list

# One element for a whole list of cards: drawn as Streamlit elements, ten cards were ~120 elements and
# most of a query's time in the browser (benchmarks/results/page.md). Its buttons send back
# {"kind", "id"}; `on_card_action` acts on them before the rerun draws the page.
ASSETS = Path(__file__).parent.parent / "assets"
CARDS = st.components.v2.component("paper_search_cards", css=(ASSETS / "cards.css").read_text(encoding="utf-8"),
                                   js=(ASSETS / "cards.js").read_text(encoding="utf-8"), isolate_styles=False)


def show_cards(cards: list[Card], key: str, listed: list[str]) -> None:
    """A list of cards as one component under `cards-{key}` (nothing for no cards)."""
    if cards:
        CARDS(data={"html": cards_html(cards)}, key=f"cards-{key}",
              on_action_change=partial(on_card_action, f"cards-{key}", listed))


def on_card_action(key: str, listed: list[str]) -> None:
    """A card's button, acted on: open its paper, topic or author, or add it to the list or take it off."""
    action = st.session_state[key].get("action") or {}
    kind, target = action.get("kind"), str(action.get("id", ""))
    if kind == "similar":
        go(paper=target)
    elif kind == "topic":
        go(topic=target)
    elif kind == "author":
        go(author=target)
    elif kind == "list":
        toggle_list(target, listed)


def share(value: float | None) -> str:
    """A share as a percentage, or "–" where it is not known."""
    return "–" if value is None else f"{value:.0%}"


def short(text: str, n: int) -> str:
    """The text cut to `n` characters, an ellipsis ending what was cut."""
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"
