"""A paper's view (its card, reviews, rating history, how work like it fared, the papers most like it) and an
author's (their papers by venue and year, co-authors, affiliations)."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from urllib.parse import quote

import streamlit as st

from search.engine import Engine, UnknownPaper
from search.filters import Filters, fold
from search.progress import with_build_notes
from search.render import (card, fields_html, plain_markdown, plain_title, rating_figure, review_folds, review_table,
                           similar_card)

from .build import build_status
from .cards import CARDS, show_cards
from .hits import fared_panel, where_panel


def paper_view(engine: Engine, index_dir: Path, pid: str, k: int, filters: Filters, listed: list[str]) -> None:
    """One paper: its card, its reviews and their history, the panels, and the papers most like it."""
    paper = engine.catalog.paper(pid)
    if paper is None:
        st.error(f"No paper with id “{plain_markdown(pid)}” in this index. It may come from another index; "
                 "search for it instead.")
        return
    ids = f"id {paper.id}" + (f" (also {', '.join(paper.aliases)})" if paper.aliases else "")
    show_cards([card(engine, paper, listed, more=(ids,), similar=False, abstract_open=True)], "v", listed)
    reviews_section(engine, paper.id)
    history_section(engine, paper.id)
    fared_panel(engine, index_dir, pid=paper.id, key="p")
    where_panel(engine, pid=paper.id, key="p")
    st.subheader("Most similar papers")
    try:
        result = engine.similar([paper.id], k, filters)
    except UnknownPaper as e:
        st.error(str(e))
        return
    message = with_build_notes(result, partial(build_status, index_dir))
    if message:
        st.info(message)
    if result.order:
        st.caption(result.order[:1].upper() + result.order[1:])
    show_cards([similar_card(engine, paper, h, listed, result.score_name) for h in result.hits], "p", listed)


def author_link(name: str) -> str:
    """A Markdown link to an author's page."""
    return f"[{plain_markdown(name)}](?author={quote(name)})"


def author_view(engine: Engine, name: str) -> None:
    """An author's papers by venue and year, with co-authors and the affiliations their papers give; nothing
    where the records name no one (an anonymous record is on nobody's page)."""
    if not engine.catalog.has_authors:
        st.info("This index has no authors' names: OpenReview hides a submission's authors until it makes them "
                "public, and the seed lists name none. Paper Copilot's lists and fetches made after the decisions "
                "do.")
        return
    found = engine.author(name)
    if found is None:
        like = engine.authors_like(name, 10)
        st.warning(f"No author named “{plain_markdown(name)}” in this index."
                   + (" Authors whose names contain it: " + ", ".join(map(author_link, like)) if like else ""))
        return
    n = len(found.papers)
    st.subheader(plain_markdown(found.name))
    st.caption(f"{n:,} paper{'s' if n != 1 else ''} in this index, by venue and year"
               + (" · affiliations as their papers give them: " + plain_markdown("; ".join(
                   f"{a} ({c})" for a, c in found.affiliations)) if found.affiliations else ""))
    for place, papers in found.by_place():
        st.markdown(f"#### {plain_markdown(place)}")
        lines = []
        for p in papers:
            others = [a for a in p.authors if fold(a) != fold(found.name)]
            lines.append(f"- [{plain_markdown(plain_title(p.title))}](?paper={quote(p.id)})"
                         + (f" · {plain_markdown(p.decision)}" if p.decision else "")
                         + (" · with " + ", ".join(map(author_link, others)) if others else ""))
        st.markdown("\n".join(lines))
    if found.coauthors:
        st.markdown("#### Co-authors")
        st.markdown(", ".join(f"{author_link(a)} ({c})" for a, c in found.coauthors[:60])
                    + (f" and {len(found.coauthors) - 60} more" if len(found.coauthors) > 60 else ""))


def reviews_section(engine: Engine, pid: str) -> None:
    """The decision, the meta-review, a table of every review's scores and each review's texts, folded."""
    record = engine.review_record(pid)
    if not record["reviews"] and not record.get("meta_review"):
        return
    decision = record["decision"] or "no decision known"
    said = f" ({record['decision_text']})" if record.get("decision_text") else ""
    st.subheader(f"Reviews · {decision}")
    if said or record.get("meta_review"):
        with st.container(border=True):
            st.markdown(f"**Decision**: {plain_markdown(decision + said)}")
            if record.get("meta_review"):  # drawn as the cards are: st.html's sanitizer deletes MathML
                CARDS(data={"html": fields_html(record["meta_review"].items(), "b")}, key="cards-review-meta")
    elif record["reviews"]:
        st.caption("No meta-review is public for this paper.")
    rows = review_table(record["reviews"])
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch")
    for i, (head, texts) in enumerate(review_folds(record["reviews"])):
        with st.expander(head):
            CARDS(data={"html": texts}, key=f"cards-review-{i}")


def history_section(engine: Engine, pid: str) -> None:
    """A paper's ratings over time: each review as posted and edited, each fetch; the mean as a small chart."""
    points = engine.rating_history(pid)
    if not engine.manifest.history or not points:
        return
    st.subheader("Rating history")
    if len({p.mean for p in points}) < 2 and len(points) < 2:
        st.caption("No move yet: " + ("one fetch so far, and no review of this paper was edited after it was "
                                      "posted." if engine.manifest.history.fetches == 1 else
                                      "its ratings are the same in every fetch."))
        return
    st.plotly_chart(rating_figure(points), width="stretch", key="rating-history", config={"displayModeBar": False})
    reviewers = list(dict.fromkeys(r for p in points for r in p.ratings))
    words = {"posted": "posted", "edited": "edited", "fetch": "fetched"}
    same_day = len({p.at[:10] for p in points}) < len(points)  # two points of one day need their times
    rows = [{"when": f"{p.at[:16 if same_day else 10].replace('T', ' ')} ({words[p.source]})", "mean": round(p.mean, 2),
             **{r: f"{p.ratings[r]:g}" if r in p.ratings else "" for r in reviewers}} for p in points]
    st.dataframe(rows, hide_index=True, width="stretch")
    st.caption("Each review's rating as it was posted and after each edit (OpenReview keeps a review's versions), "
               "and as each fetch found it; the mean is of the reviews posted by then.")
