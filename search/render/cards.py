"""Result cards as one block of safe HTML: the page draws a list of ten as a single element.

Drawn as Streamlit elements, ten cards were some 120 elements and most of a query's time in the
browser (benchmarks/results/page.md). Every text here is escaped or comes from `render.display.to_html`;
buttons carry an action and an id for the page's click handler, nothing executable.
"""
from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from ..corpus import Paper
from ..engine import Engine, Hit, Result, score_text
from ..filters import venue_parts
from ..parts.history import moved
from ..parts.lexical import marker
from ..parts.reviews import scores_of, texts_of
from .display import fields_html, to_html
from .export import review_line


@dataclass(frozen=True)
class Card:
    """What one card shows. `body` and `abstract` are safe HTML (from display.to_html); the rest is plain text."""

    pid: str
    title: str
    rank: int | None = None
    lead: str = ""                # the authors' TL;DR, plain text, under the title
    small: tuple[str, ...] = ()   # grey lines under the title: venue, area, score, keywords
    authors: tuple[str, ...] = ()  # the names shown, each opening its author's page
    more_authors: int = 0         # the names past those shown
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
    if card.lead:
        parts.append(f'<p class="ps-lead">{e(card.lead)}</p>')
    if card.authors:
        names = [_button("author", name, name, "ps-author") for name in card.authors]
        said = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        if card.more_authors:
            said = ", ".join(names) + f" and {card.more_authors} more"
        parts.append(f'<p class="ps-small ps-authors">{said}</p>')
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


# ---------------------------------------------------------------- cards of papers and hits

def ratings_text(p: Paper) -> str:
    """"rating 6.0 · 4 6 6 8" (the mean, then each review's rating), or review_line's words without them."""
    if not p.ratings or p.avg_rating is None:
        return review_line(p)
    # the move since the previous fetch (or since the reviews were first posted): "rating 5.5 → 6.3"
    mean = f"{p.rating_from:.1f} → {p.avg_rating:.1f}" if moved(p) else f"{p.avg_rating:.1f}"
    return f"rating {mean} · {' '.join(f'{r:g}' for r in p.ratings)}"


def venue_label(p: Paper) -> str:
    """"COLM 2024", "ACL 2022 Findings": the venue and year, and the track where the decision does not say it."""
    conference, year, track = venue_parts(p)
    label = f"{conference} {year}" if year else conference
    return f"{label} {track}" if track and track.lower() not in (p.decision.lower(), "main") else label


def citations_text(p: Paper) -> str:
    return "" if p.citations is None else f"{p.citations:,} citation{'' if p.citations == 1 else 's'}"


def meta_line(p: Paper, score: str = "", reviews: bool = False, venues: bool = False) -> str:
    """The grey line under a card's title: decision, reviews, venue (with `venues`, in an index of several: its
    name and year), citations, area, score, where it came from."""
    bits = [p.decision] if p.decision else []   # Oral, Poster, Rejected, Withdrawn, Under review
    if p.decision and p.decision_from and p.decision_from != p.decision:
        bits = [f"{p.decision_from} → {p.decision}"]
    if p.new:
        bits.insert(0, "new since the previous fetch")
    if reviews:
        bits.append(ratings_text(p))
    if venues and venue_label(p):
        bits.append(venue_label(p))
    elif p.venue and not p.decision:  # with a decision the venue only repeats it ("Submitted to ICLR 2026")
        bits.append(p.venue.replace("ICLR 2026 ", "") if p.venue.startswith("ICLR 2026") else p.venue)
    if p.citations is not None:
        bits.append(citations_text(p))
    if p.primary_area:
        bits.append(p.primary_area)
    if score:
        bits.append(score)
    if p.title_derived:
        bits.append("title derived from the abstract")
    if not p.url:  # once a paper has its OpenReview record, the list it came from is noise
        bits.append("from " + "; ".join(p.sources))
    return " · ".join(bits)


def card(engine: Engine, p: Paper, listed: list[str], score: str = "", rank: int | None = None,
         more: tuple[str, ...] = (), body: str = "", topic: bool = True, similar: bool = True,
         abstract_open: bool = False) -> Card:
    label = engine.catalog.topic_label(p) if topic else ""
    # the open paper (abstract shown) names every author; a list card the first six
    shown = p.authors if abstract_open else p.authors[:6]
    small = (meta_line(p, score, engine.catalog.has_ratings, len(engine.catalog.facts.venue_years) > 1),
             *(["Keywords: " + ", ".join(p.keywords)] if p.keywords else []), *more)
    return Card(pid=p.id, title=p.title, rank=rank, lead=p.tldr, small=small, authors=tuple(shown),
                more_authors=len(p.authors) - len(shown), body=body, abstract=to_html(p.abstract),
                abstract_open=abstract_open, topic=(p.topic, label) if label else None, url=p.url,
                listed=p.id in listed, similar=similar)


def hit_card(engine: Engine, h: Hit, mark: Callable[[str], bool], listed: list[str], score_name: str) -> Card:
    why = "<b>Why:</b> " + " … ".join(to_html(s, mark) for s, _ in h.evidence) if h.evidence else ""
    if h.passage:  # what a reviewer wrote: the review search's match, or a summary closer than the abstract
        said = (f"<b>{html.escape(h.passage.reviewer)}, {html.escape(h.passage.field)}:</b> "
                f"{to_html(h.passage.text, mark)}")
        why = f"{why}<br>{said}" if why else said
    return card(engine, h.paper, listed, score_text(h, score_name), h.rank, body=why)


def result_cards(engine: Engine, result: Result, listed: list[str]) -> list[Card]:
    """A query's hits as cards, the query's words marked in what each shows."""
    mark = marker(result.terms)
    return [hit_card(engine, h, mark, listed, result.score_name) for h in result.hits]


def review_table(reviews: list[dict]) -> list[dict]:
    """A row of numbers per review (reviewer, each score, date): the table above the reviews' texts."""
    return [{"reviewer": r.get("reviewer", ""), **scores_of(r), "date": r.get("date", "")} for r in reviews]


def review_folds(reviews: list[dict]) -> list[tuple[str, str]]:
    """Each review as (its head: reviewer and rating, its texts as safe HTML), to draw folded."""
    folds = []
    for i, r in enumerate(reviews):
        scores = scores_of(r)
        head = r.get("reviewer", f"Review {i + 1}") + (f" · rating {scores['rating']:g}" if "rating" in scores else "")
        folds.append((head, fields_html(texts_of(r))))
    return folds


def similar_card(engine: Engine, source: Paper, h: Hit, listed: list[str], score_name: str) -> Card:
    keywords, (mine, theirs, _) = engine.shared(source.id, h.paper.id)
    if mine and theirs:
        body = f"<b>Closest sentences.</b> This paper: {to_html(mine)}<br>That paper: {to_html(theirs)}"
    elif "sentences" in engine.manifest.pending:  # an index published before its sentences stage
        body = "<i>The closest sentences of the two papers come when the build's sentences stage lands.</i>"
    else:
        body = ""
    return card(engine, h.paper, listed, score_text(h, score_name), h.rank,
                more=("Shared keywords: " + ", ".join(keywords),) if keywords else (), body=body)

