"""The map: a 2D t-SNE layout of the paper vectors, computed at build time and stored as JSONL."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

MAP = "map.jsonl"
METHOD = ("scikit-learn t-SNE, cosine metric, PCA init, perplexity min(30, (n-1)/3), 350 iterations, "
          "Barnes-Hut angle 0.8, random_state 0")


def layout(vectors: np.ndarray, seed: int = 0) -> np.ndarray:
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


def map_figure(papers: list, xy: np.ndarray, topics: dict, hits: list[str] = (), listed: list[str] = ()):
    """The map as a plotly figure: points by topic, labels at topic centres, hits and the list on top.

    Every point carries its paper id as customdata, so a click can open the paper.
    """
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    palette = qualitative.Dark24 + qualitative.Light24
    by_topic: dict = {}
    for row, p in enumerate(papers):
        by_topic.setdefault(p.topic, []).append(row)
    fade = bool(hits)
    fig = go.Figure()
    for tid, rows in sorted(by_topic.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
        label = topics[tid].label if tid in topics else "no topic"
        fig.add_trace(go.Scattergl(
            x=xy[rows, 0], y=xy[rows, 1], mode="markers", name=label,
            marker={"size": 5, "color": palette[(tid or 0) % len(palette)], "opacity": 0.3 if fade else 0.75},
            customdata=[papers[r].id for r in rows], hovertext=[papers[r].title for r in rows],
            hovertemplate="%{hovertext}<extra>" + label.replace("<", "") + "</extra>"))
    rows_of = {p.id: r for r, p in enumerate(papers)}
    for ids, name, marker in ((hits, "your query's hits", {"size": 11, "color": "#d62728",
                                                            "line": {"width": 1.5, "color": "black"}}),
                              (listed, "your reading list", {"size": 16, "symbol": "star", "color": "gold",
                                                             "line": {"width": 1, "color": "black"}})):
        rows = [rows_of[i] for i in ids if i in rows_of]
        if rows:
            fig.add_trace(go.Scattergl(
                x=xy[rows, 0], y=xy[rows, 1], mode="markers", name=name, marker=marker,
                customdata=[papers[r].id for r in rows], hovertext=[papers[r].title for r in rows],
                hovertemplate="%{hovertext}<extra>" + name + "</extra>"))
    centres = [(t, np.median(xy[by_topic[t.id]], axis=0)) for t in topics.values() if t.id in by_topic]
    fig.add_trace(go.Scatter(
        x=[c[0] for _, c in centres], y=[c[1] for _, c in centres], mode="text", hoverinfo="skip",
        text=[", ".join(t.label.split(", ")[:2]) for t, _ in centres], textfont={"size": 10, "color": "#222"}))
    fig.update_layout(height=720, showlegend=False, margin={"l": 0, "r": 0, "t": 0, "b": 0},
                      xaxis={"visible": False}, yaxis={"visible": False}, clickmode="event+select",
                      plot_bgcolor="white")
    return fig
