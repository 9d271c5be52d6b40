"""The charts the page draws (plotly): how papers like this fared and where they appear, the venue's ratings by decision and by group,
a topic's ratings, the map, a paper's rating history. Each takes what the library computed and only draws it;
plotly is imported when a chart is drawn, never by a query."""
from __future__ import annotations

import numpy as np

from ..fared import COLOURS, GROUPS, Fared, Place, place_of
from ..parts.history import Point
from ..latex import to_unicode
from ..papermap import label_positions
from ..stats import RATED_GROUPS, GroupStats

def fared_figure(fared: Fared):
    """Each row's decisions as a stacked horizontal bar of shares (plotly), the neighbours on top."""
    import plotly.graph_objects as go

    rows = list(reversed(fared.rows()))
    names = [n if len(n) <= 44 else n[:43] + "…" for n, _ in rows]
    fig = go.Figure()
    for group in GROUPS:
        shares = [f.counts[group] / f.papers if f.papers else 0 for _, f in rows]
        if any(shares):
            fig.add_trace(go.Bar(y=names, x=shares, orientation="h", name=group, marker_color=COLOURS[group],
                                 customdata=[f.counts[group] for _, f in rows],
                                 hovertemplate=f"{group}: %{{customdata}} (%{{x:.0%}})<extra></extra>"))
    listed = [f.listed_only / f.papers if f.papers else 0 for _, f in rows]
    if any(listed):
        fig.add_trace(go.Bar(y=names, x=listed, orientation="h", name=LISTED, marker_color=LISTED_COLOUR,
                             customdata=[f.listed_only for _, f in rows],
                             hovertemplate=LISTED + ": %{customdata} (%{x:.0%})<extra></extra>"))
    fig.update_layout(barmode="stack", height=60 + 36 * len(rows), margin=dict(l=10, r=10, t=10, b=30),
                      xaxis=dict(tickformat=".0%", range=[0, 1]), legend=dict(orientation="h", y=-0.35),
                      template="plotly_white")
    return fig


LISTED = "in a list of accepted papers only"
LISTED_COLOUR = "#9fb7d9"


def where_figure(places: list[Place]):
    """Where the nearest papers appear: a bar a venue-year (most papers on top), split by how those papers
    fared where the venue-year's record has rejections, one colour where its list has accepted papers only."""
    import plotly.graph_objects as go

    rows = list(reversed(places))
    names = [x.name for x in rows]
    fig = go.Figure()
    for group in GROUPS:
        counts = [x.fate.counts[group] if x.fate else 0 for x in rows]
        if any(counts):
            fig.add_trace(go.Bar(y=names, x=counts, orientation="h", name=group, marker_color=COLOURS[group],
                                 hovertemplate=f"{group}: %{{x}}<extra></extra>"))
    rest = [x.papers - (sum(x.fate.counts.values()) if x.fate else 0) for x in rows]
    listed = [r if x.fate is None else 0 for r, x in zip(rest, rows)]
    unknown = [r if x.fate is not None else 0 for r, x in zip(rest, rows)]
    for name, values, colour in ((LISTED, listed, LISTED_COLOUR), ("decision not in the record", unknown, "#dddddd")):
        if any(values):
            fig.add_trace(go.Bar(y=names, x=values, orientation="h", name=name, marker_color=colour,
                                 hovertemplate=name + ": %{x}<extra></extra>"))
    fig.update_layout(barmode="stack", height=80 + 26 * len(rows), margin=dict(l=10, r=10, t=10, b=30),
                      xaxis=dict(title="of the nearest papers"), legend=dict(orientation="h", y=-0.25),
                      template="plotly_white")
    return fig


BIN = 0.25  # the decision chart's bins, in rating points


def decision_figure(by_decision: dict[str, list[float]]):
    """Mean ratings by decision (stats.ratings_by_decision) as overlaid histograms (Paper Copilot's view), each
    named in the legend, even alone: one unnamed grey series said nothing of what it counted. The bins are
    counted here: the browser gets a few dozen bars, not every paper's rating (at 19,630 papers the raw values
    were 92 KB of the page's charts and most of their drawing time)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for group, ratings in by_decision.items():
        name = RATED_GROUPS.get(group, group)
        starts, counts = _bins(ratings, BIN)
        fig.add_trace(go.Bar(x=starts + BIN / 2, y=counts, width=BIN, name=name, opacity=0.6,
                             marker_color=COLOURS[group], customdata=starts,
                             hovertemplate=f"{name}, rating %{{customdata:g}}–%{{x:g}}+: %{{y}} papers<extra></extra>"))
    fig.update_layout(barmode="overlay", bargap=0, height=280, margin=dict(l=10, r=10, t=10, b=40),
                      template="plotly_white", xaxis_title="mean review rating of a paper", yaxis_title="papers",
                      showlegend=True, legend=dict(orientation="h", y=1.1))
    return fig


def _bins(values: list[float], size: float) -> tuple[np.ndarray, np.ndarray]:
    """The starts of the `size`-wide bins that hold values, and how many each holds."""
    x = np.asarray(values, dtype=float)
    starts, counts = np.unique(np.floor(x / size) * size, return_counts=True)
    return starts, counts


def box_stats(values: list[float]) -> dict[str, float]:
    """What a box draws of its values, as plotly computes it (linear quartiles, whiskers to the farthest values
    within 1.5 interquartile ranges of the box), so that the page sends five numbers, not every value."""
    x = np.asarray(values, dtype=float)
    q1, median, q3 = np.percentile(x, [25, 50, 75])
    reach = 1.5 * (q3 - q1)
    return {"q1": q1, "median": median, "q3": q3, "lowerfence": x[x >= q1 - reach].min(),
            "upperfence": x[x <= q3 + reach].max(), "mean": x.mean()}


def box_figure(rows: list[GroupStats], axis: str):
    """A horizontal plotly box per group of its papers' mean ratings, the largest group on top; each box sent as
    its summary (box_stats): every paper's rating made 97-125 KB per chart at 19,630 papers."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for r in reversed([r for r in rows if r.ratings]):
        name = r.name if len(r.name) <= 48 else r.name[:47] + "…"
        stats = box_stats(r.ratings)
        fig.add_trace(go.Box(y=[name], **{k: [v] for k, v in stats.items()}, orientation="h", name=name,
                             marker_color="#c2334d", line_width=1.2,
                             hoverinfo="x", hovertemplate=None))
    fig.update_layout(showlegend=False, height=max(260, 24 * len(rows) + 80),
                      margin=dict(l=10, r=10, t=30, b=40), xaxis_title="mean review rating of a paper",
                      yaxis_title=axis, template="plotly_white")
    return fig


def histogram_figure(ratings: list[float], name: str):
    """One group's mean ratings as a histogram in half-point bins (a topic's page)."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Histogram(x=ratings, xbins={"size": 0.5}, marker_color="#c2334d",
                                 hovertemplate="rating %{x}: %{y} papers<extra></extra>", name=name))
    fig.update_layout(height=220, margin=dict(l=10, r=10, t=10, b=40), bargap=0.05, template="plotly_white",
                      xaxis_title="mean review rating of a paper", yaxis_title="papers")
    return fig


DECISION_COLOURS = {"Oral": "#00441b", "Spotlight": "#238b45", "Poster": "#74c476", "Accepted": "#41ab5d",
                    "Rejected": "#d6604d", "Desk rejected": "#67001f", "Workshop track": "#f4a582", "Withdrawn": "#969696",
                    "Under review": "#4393c3"}


COLOUR_WORDS = {"area": "primary area", "venue": "venue", "year": "year", "topic": "topic", "decision": "decision"}


def map_colours(places: list[tuple[str, int | None]], has_decisions: bool) -> tuple[str, ...]:
    """What the map can be coloured by on an index of these venue-years: a venue or year only where it holds
    more than one, the decision where it knows any."""
    venues = {c for c, _ in places}
    years = {y for _, y in places if y}
    return ("area", *(("venue",) if len(venues) > 1 else ()), *(("year",) if len(years) > 1 else ()), "topic",
            *(("decision",) if has_decisions else ()))


def _venue_of(p) -> str:
    return place_of(p)[0] or "no venue"


def _year_groups(papers: list, rows: list[int]) -> list[tuple[str, list[int], str]]:
    """One group a year of these rows, oldest first, on a sequential scale (older lighter); papers without one
    last, grey."""
    from plotly.colors import sample_colorscale

    groups: dict = {}
    for row in rows:
        groups.setdefault(place_of(papers[row])[1], []).append(row)
    years = sorted(y for y in groups if y is not None)
    steps = sample_colorscale("Viridis", [i / max(len(years) - 1, 1) for i in range(len(years))]) if years else []
    named = [(str(y), groups[y], c) for y, c in zip(years, steps)]
    return named + ([("no year", groups[None], "#bbbbbb")] if None in groups else [])


def map_figure(papers: list, xy: np.ndarray, topics: dict, hits: list[str] = (), listed: list[str] = (),
               colour: str = "area", focus: str | None = None, shown: np.ndarray | None = None):
    """The map as a plotly figure: points coloured by primary area, venue, year or decision (with a legend) or by
    topic, topic
    labels that do not overlap, the query's hits numbered as in the list beside the map, the reading
    list as stars and one focused paper ringed. `shown`: the rows the filters allow (None: every paper); the
    topics' labels stay where the whole venue puts them.

    Every point carries its paper id as customdata, so a click can open the paper.
    """
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    fade = bool(hits)
    fig = go.Figure()
    drawn = [(row, p) for row, p in enumerate(papers) if shown is None or shown[row]]
    if colour == "topic":
        groups: dict = {}
        for row, p in drawn:
            groups.setdefault(p.topic, []).append(row)
        palette = qualitative.Dark24 + qualitative.Light24
        named = [(topics[t].label if t in topics else "no topic", rows, palette[(t or 0) % len(palette)])
                 for t, rows in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))]
    elif colour == "decision":
        groups = {}
        for row, p in drawn:
            groups.setdefault(p.decision or "no decision", []).append(row)
        order = [*DECISION_COLOURS, "no decision"]
        named = [(name, groups[name], DECISION_COLOURS.get(name, "#bbbbbb")) for name in order if name in groups]
    elif colour == "year":
        named = _year_groups(papers, [row for row, _ in drawn])
    else:
        groups = {}
        key = _venue_of if colour == "venue" else (lambda p: p.primary_area or "no primary area")
        for row, p in drawn:
            groups.setdefault(key(p), []).append(row)
        palette = qualitative.Safe + qualitative.Vivid  # 11 + 11 colours that stay apart
        ordered_groups = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        named = [(name, rows, palette[i % len(palette)]) for i, (name, rows) in enumerate(ordered_groups)]
    for name, rows, colour_of in named:
        fig.add_trace(go.Scattergl(
            x=xy[rows, 0], y=xy[rows, 1], mode="markers", name=f"{name} ({len(rows)})",
            marker={"size": 5, "color": colour_of, "opacity": 0.3 if fade else 0.75},
            customdata=[papers[r].id for r in rows], hovertext=[to_unicode(papers[r].title) for r in rows],
            hovertemplate="%{hovertext}<extra>" + name.replace("<", "") + "</extra>"))
    rows_of = {p.id: r for r, p in enumerate(papers)}
    for ids, name, marker, numbered in (
            (listed, "your reading list", {"size": 16, "symbol": "star", "color": "gold",
                                           "line": {"width": 1, "color": "black"}}, False),
            (hits, "your query's hits", {"size": 16, "color": "#d62728", "line": {"width": 1.5, "color": "black"}},
             True),
            ([focus] if focus else [], "the paper you picked", {"size": 30, "color": "rgba(0,0,0,0)",
                                                                 "line": {"width": 3, "color": "black"}}, False)):
        rows = [rows_of[i] for i in ids if i in rows_of]
        if rows:
            fig.add_trace(go.Scatter(
                x=xy[rows, 0], y=xy[rows, 1], mode="markers+text" if numbered else "markers", name=name,
                marker=marker, text=[str(n) for n in range(1, len(rows) + 1)] if numbered else None,
                textfont={"size": 9, "color": "white"}, textposition="middle center",
                customdata=[papers[r].id for r in rows], hovertext=[to_unicode(papers[r].title) for r in rows],
                hovertemplate="%{hovertext}<extra>" + name + "</extra>", showlegend=False))
    by_topic: dict = {}
    for row, p in enumerate(papers):
        by_topic.setdefault(p.topic, []).append(row)
    centres = [(", ".join(t.label.split(", ")[:2]), *np.median(xy[by_topic[t.id]], axis=0).tolist())
               for t in sorted(topics.values(), key=lambda t: -t.size) if t.id in by_topic]
    shown = label_positions(centres)
    fig.add_trace(go.Scatter(
        x=[x for _, x, _ in shown], y=[y for _, _, y in shown], mode="text", hoverinfo="skip", showlegend=False,
        text=[t for t, _, _ in shown], textfont={"size": 11, "color": "#111"}))
    fig.update_layout(height=760, showlegend=colour != "topic", margin={"l": 0, "r": 0, "t": 0, "b": 0},
                      legend={"orientation": "h", "y": -0.02, "yanchor": "top", "font": {"size": 11},
                              "itemclick": False, "itemdoubleclick": False},
                      xaxis={"visible": False}, yaxis={"visible": False}, clickmode="event+select",
                      plot_bgcolor="white")
    return fig


def rating_figure(points: list[Point]):
    """A paper's mean rating over time, as steps from value to value (it holds until the next point)."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Scatter(x=[p.at for p in points], y=[p.mean for p in points], mode="lines+markers",
                               line_shape="hv", hovertemplate="%{x}<br>mean %{y:.2f}<extra></extra>"))
    low, high = min(p.mean for p in points), max(p.mean for p in points)
    fig.update_layout(height=200, margin=dict(l=10, r=10, t=10, b=30), template="plotly_white",
                      yaxis=dict(title="mean rating", range=[max(0, low - 1), high + 1]))
    return fig
