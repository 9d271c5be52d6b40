"""The statistics view: the conference at a glance, by decision, venue and year, area, affiliation and topic;
what it computes from a build's papers alone is made once a build and shared by every session."""
from __future__ import annotations

import streamlit as st

from search.engine import Engine
from search.filters import MIN_DECIDED
from search.render import box_figure, decision_figure, plain_markdown, plain_title
from search.stats import (CONTROVERSIAL, RATED_GROUPS, GroupStats, controversial, papers_words, ratings_by_decision,
                          submissions, undecided_note)
from search.stats import groups as stats_groups

from .build import once
from .cards import share, short

def stats_table(engine: Engine, rows: list[GroupStats], rated: bool) -> str:
    """A Markdown table of group summaries (screen readers read it; the chart shows the same), the
    best-rated paper of each as a link to it. Without ratings (the seeds) it counts papers only."""
    def fmt(v: float | None) -> str:
        return f"{v:.2f}" if v is not None else "–"

    if not rated:
        out = ["| | papers |", "|---|---|"]
        for r in rows:
            name = plain_markdown(r.name) if r.id is None else f"[{plain_markdown(r.name)}](?topic={r.id})"
            out.append(f"| {name} | {r.papers:,} |")
        return "\n".join(out)
    decided = any(r.decisions or r.listed_only for r in rows)
    out = ["| | papers | orals | " + ("accepted (of decided) | " if decided else "") +
           "mean rating | median | middle half | best rated (mean rating) |",
           "|---|---|---|" + ("---|" if decided else "") + "---|---|---|---|"]
    for r in rows:
        best = ""
        if r.best:
            best = "; ".join(f"[{plain_markdown(short(plain_title(p.title), 48))}](?paper={p.id}) "
                             f"({p.avg_rating:.2f})" for p in map(engine.catalog.paper, r.best))
        name = plain_markdown(r.name) if r.id is None else f"[{plain_markdown(r.name)}](?topic={r.id})"
        accepted = r.acceptance_words() + " | " if decided else ""
        out.append(f"| {name} | {r.papers:,} | {share(r.oral_share)} | {accepted}"
                   f"{fmt(r.mean)} | {fmt(r.median)} | {fmt(r.q1)}–{fmt(r.q3)} | {best} |")
    return "\n".join(out)


SHOWN_GROUPS = 20  # rows of a long statistics table until the reader asks for all


def stats_view(engine: Engine) -> None:
    """The conference in figures: each group's papers, orals and ratings, as charts and tables."""
    groups = once(engine, "stats groups", lambda: dict(stats_groups(engine.papers, engine.catalog.topics)))
    whole = groups["all"][0]
    rated = whole.rated > 0
    scales = engine.catalog.scales_said()
    st.subheader("The conference at a glance" if not scales else "The index at a glance")
    if rated:
        st.caption(f"{papers_words(submissions(engine.papers), whole.papers)}, {whole.orals:,} orals "
                   f"({share(whole.oral_share)}); {whole.rated:,} "
                   f"with public reviews, mean rating {whole.mean:.2f} (median {whole.median:.2f}). Each box spans "
                   "the middle half of its papers' mean ratings, the line inside is the median.")
        if scales:  # a mean over 1-4 and 1-10 ratings is no venue's: the table by venue and year compares within each
            st.warning(f"Its venues rate on different scales ({scales}): the ratings over all of "
                       "them mix unlike numbers. The table by venue and year gives each its own.")
    else:
        st.caption(f"{whole.papers:,} papers. This index holds no review ratings (the seed lists have none): "
                   "the figures below count papers. The conference fetched from OpenReview "
                   "(`python -m search fetch`) brings ratings, decisions and their charts.")
    if whole.decisions:
        decisions_panel(engine, whole)
    sections = [("venue", "venue and year", "By venue and year"), ("area", "primary area", "By primary area"),
                ("affiliation", "affiliation", "By affiliation (the 20 with most papers)"), ("topic", "topic", "By topic")]
    for key, axis, heading in sections:
        if not groups.get(key):
            continue
        st.markdown(f"#### {heading}")
        rows = groups[key]
        if len(rows) > SHOWN_GROUPS + 5 and not st.toggle(f"All {len(rows):,} ({axis}s)", key=f"all-{key}"):
            # a long table is most of the view's time in the browser: the tables of 140 topics took 0.6 s of
            # 2.4 s (benchmarks/results/start.md)
            largest = set(sorted(range(len(rows)), key=lambda i: -rows[i].papers)[:SHOWN_GROUPS])
            rows = [r for i, r in enumerate(rows) if i in largest]
            st.caption(f"The {SHOWN_GROUPS} with most papers of {len(groups[key]):,}.")
        shown = f"{key} {len(rows)}"
        if rated:
            st.plotly_chart(once(engine, f"stats {shown}", lambda: box_figure(rows, axis)), width="stretch",
                            config={"displayModeBar": False}, key=f"stats-{key}")
        st.markdown(once(engine, f"stats table {shown}", lambda: stats_table(engine, rows, rated)))


def decisions_panel(engine: Engine, whole: GroupStats) -> None:
    """Mean ratings by decision, and the papers reviewers disagreed on most."""
    st.markdown("#### By decision")
    counts = ", ".join(f"{n:,} {g}" for g, n in whole.decisions.items())
    rated = once(engine, "ratings by decision", lambda: ratings_by_decision(engine.papers))
    named = [RATED_GROUPS[g] for g in rated]
    st.caption(f"{counts}; accepted: {whole.acceptance_words()}. No rate is shown from fewer than {MIN_DECIDED} "
               f"decided papers. Mean review ratings by decision ({', '.join(named)}):")
    said = undecided_note(engine.catalog.undecided)
    if said:
        st.info(said + " Their areas' rates wait for those decisions.")
    st.plotly_chart(once(engine, "decision figure", lambda: decision_figure(rated)), width="stretch",
                    key="stats-decision", config={"displayModeBar": False})
    cols = st.columns(2)
    for col, (fate, papers) in zip(cols, once(engine, "controversial", lambda: controversial(engine.papers)).items()):
        col.markdown(f"**Most controversial {CONTROVERSIAL[fate]}** (widest spread of ratings)")
        col.markdown("\n".join(f"- [{plain_markdown(short(plain_title(p.title), 60))}](?paper={p.id}) "
                               f"({' '.join(f'{x:g}' for x in p.ratings)})" for p in papers) or "none")
