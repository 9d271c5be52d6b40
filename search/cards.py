"""Result cards as one block of safe HTML: the page draws a list of ten as a single element.

Drawn as Streamlit elements, ten cards were some 120 elements and most of a query's time in the
browser (benchmarks/results/page.md). Every text here is escaped or comes from `text.to_html`;
buttons carry an action and an id for the page's click handler, nothing executable.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

@dataclass(frozen=True)
class Card:
    """What one card shows. `body` and `abstract` are safe HTML (from text.to_html); the rest is plain text."""

    pid: str
    title: str
    rank: int | None = None
    small: tuple[str, ...] = ()   # grey lines under the title: venue, area, score, keywords
    body: str = ""
    abstract: str = ""
    abstract_open: bool = False
    topic: tuple[int, str] | None = None   # (id, label)
    url: str = ""
    listed: bool = False
    similar: bool = True


def _button(action: str, target: str, label: str, cls: str = "") -> str:
    return (f'<button type="button" class="ps-btn {cls}" data-action="{action}" data-id="{html.escape(target)}">'
            f"{html.escape(label)}</button>")


def card_html(card: Card) -> str:
    e = html.escape
    title = f"{card.rank}. {card.title}" if card.rank else card.title
    parts = [f'<div class="ps-card" data-pid="{e(card.pid)}"><h5>{e(title)}</h5>']
    if card.small:
        parts.append('<p class="ps-small">' + "<br>".join(e(s) for s in card.small) + "</p>")
    if card.body:
        parts.append(f'<div class="ps-body">{card.body}</div>')
    if card.abstract:
        parts.append(f'<details{" open" if card.abstract_open else ""}><summary>Abstract</summary>'
                     f'<div class="ps-abstract">{card.abstract}</div></details>')
    row = []
    if card.topic:
        row.append(_button("topic", str(card.topic[0]), f"Topic: {card.topic[1]}", "ps-link"))
    if card.similar:
        row.append(_button("similar", card.pid, "Similar papers →"))
    row.append(_button("list", card.pid, "✓ In reading list (remove)" if card.listed else "+ Reading list"))
    if card.url.startswith(("https://", "http://")):
        row.append(f'<a class="ps-btn" href="{e(card.url)}" target="_blank" rel="noopener noreferrer">'
                   "OpenReview ↗</a>")
    parts.append('<div class="ps-actions">' + "".join(row) + "</div></div>")
    return "".join(parts)


def cards_html(cards: list[Card]) -> str:
    return "".join(card_html(c) for c in cards)
