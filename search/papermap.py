"""The map: a 2D t-SNE layout of the paper vectors, computed at build time and stored as JSONL."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np


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
