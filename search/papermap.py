"""The map: a 2D t-SNE layout of the paper vectors, computed at build time and stored as JSONL."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .latex import to_unicode

MAP = "map.jsonl"
METHOD = ("scikit-learn t-SNE, cosine metric, PCA init, perplexity min(30, (n-1)/3), 350 iterations, "
          "Barnes-Hut angle 0.8, random_state 0")


def coordinates(vectors: np.ndarray, seed: int = 0) -> np.ndarray:
    """(n, 2) map coordinates scaled to [-1, 1]; t-SNE keeps neighbours together (PCA does not)."""
    from sklearn.manifold import TSNE

    n = len(vectors)
    if n < 4:  # t-SNE needs a few points; a line keeps the map drawable
        return np.column_stack([np.linspace(-1, 1, n) if n > 1 else np.zeros(n), np.zeros(n)])
    # 350 iterations and a coarser Barnes-Hut angle (0.8): about 30% less time than 500 iterations at
    # angle 0.5 for the same trustworthiness (benchmarks/bench_explore.py measures both)
    xy = TSNE(2, metric="cosine", init="pca", perplexity=min(30.0, (n - 1) / 3), random_state=seed,
              max_iter=350, angle=0.8, n_jobs=2).fit_transform(np.asarray(vectors, dtype=np.float32))
    xy = xy - xy.mean(axis=0)
    return xy / max(float(np.abs(xy).max()), 1e-12)


def write_map(path: Path, ids: list[str], xy: np.ndarray, topic_of: dict[str, int]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for pid, (x, y) in zip(ids, xy.tolist()):
            f.write(json.dumps({"id": pid, "x": round(x, 6), "y": round(y, 6), "topic": topic_of.get(pid)})
                    + "\n")


def read_map(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def label_positions(centres: list[tuple[str, float, float]], width: float = 0.02,
                    height: float = 0.07) -> list[tuple[str, float, float]]:
    """The labels that fit without overlapping, in the order given (largest topic first): a label
    whose box (about `width` a character by `height`, in map units) meets a placed one is left out."""
    placed: list[tuple[str, float, float]] = []
    for text, x, y in centres:
        half = len(text) * width / 2
        if all(abs(x - px) >= half + len(pt) * width / 2 or abs(y - py) >= height for pt, px, py in placed):
            placed.append((text, x, y))
    return placed


# the accepted in greens (darker the higher), the rejected in reds, the rest in greys and blue
DECISION_COLOURS = {"Oral": "#00441b", "Spotlight": "#238b45", "Poster": "#74c476", "Accepted": "#41ab5d",
                    "Rejected": "#d6604d", "Desk rejected": "#67001f", "Withdrawn": "#969696",
                    "Under review": "#4393c3"}


def map_figure(papers: list, xy: np.ndarray, topics: dict, hits: list[str] = (), listed: list[str] = (),
               colour: str = "area", focus: str | None = None):
    """The map as a plotly figure: points coloured by primary area or decision (with a legend) or by topic, topic
    labels that do not overlap, the query's hits numbered as in the list beside the map, the reading
    list as stars and one focused paper ringed.

    Every point carries its paper id as customdata, so a click can open the paper.
    """
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    fade = bool(hits)
    fig = go.Figure()
    if colour == "topic":
        groups: dict = {}
        for row, p in enumerate(papers):
            groups.setdefault(p.topic, []).append(row)
        palette = qualitative.Dark24 + qualitative.Light24
        named = [(topics[t].label if t in topics else "no topic", rows, palette[(t or 0) % len(palette)])
                 for t, rows in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))]
    elif colour == "decision":
        groups = {}
        for row, p in enumerate(papers):
            groups.setdefault(p.decision or "no decision", []).append(row)
        order = [*DECISION_COLOURS, "no decision"]
        named = [(name, groups[name], DECISION_COLOURS.get(name, "#bbbbbb")) for name in order if name in groups]
    else:
        groups = {}
        for row, p in enumerate(papers):
            groups.setdefault(p.primary_area or "no primary area", []).append(row)
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
