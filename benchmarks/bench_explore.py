"""Topics and map: NMI of topics against the authors' primary areas, trustworthiness of the map, and
the topics + map stage timed against the embedding of the same abstracts, all in one run.

Needs an index of ../shared/data (`python index_build.py seeds ../shared/data/iclr2026_papers.jsonl
--out DIR`). Writes results/explore.md.

    python benchmarks/bench_explore.py --index DIR
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.manifold import trustworthiness
from sklearn.metrics import normalized_mutual_info_score

from report import write_report
from search import papermap, topics
from search.encoding.embed import load_model
from search.index import load_index


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--embed-sample", type=int, default=600, help="abstracts embedded to time the rate")
    args = ap.parse_args()
    data = load_index(args.index)
    papers, vectors = data.papers, data.vectors.reconstruct_n(0, data.vectors.ntotal)
    areas = np.array([p.primary_area for p in papers])
    has_area = areas != ""
    n = len(papers)

    def nmi(labels: np.ndarray) -> float:
        return normalized_mutual_info_score(areas[has_area], labels[has_area])

    t = time.perf_counter()
    found = topics.compute_topics(papers, vectors)
    topic_s = time.perf_counter() - t
    of = topics.assignments(found)
    ours = np.array([of[p.id] for p in papers])
    t = time.perf_counter()
    xy = papermap.coordinates(vectors)
    map_s = time.perf_counter() - t

    model = load_model(data.manifest.model.name)
    sample = [p.text for p in papers[: args.embed_sample]]
    model.encode(sample[:32], batch_size=32)  # warm up
    t = time.perf_counter()
    model.encode(sample, batch_size=32, normalize_embeddings=True)
    embed_s = (time.perf_counter() - t) * n / len(sample)

    rows = [("this build: k-means on vectors + LSA of words", len(found), nmi(ours))]
    for k in (30, len(found), 120):
        rows.append((f"plain k-means on the vectors, k = {k}",
                     k, nmi(KMeans(k, n_init=4, random_state=0).fit_predict(vectors))))
    rows.append(("vectors + LSA of words, k = 120", 120,
                 nmi(topics.cluster(vectors, topics.term_counts(papers)[0], 120))))

    rng = np.random.default_rng(0)
    s = rng.choice(n, min(1000, n), replace=False)
    trust_tsne = trustworthiness(vectors[s], xy[s], n_neighbors=10, metric="cosine")
    from sklearn.manifold import TSNE

    t = time.perf_counter()  # the previous setting: 500 iterations, the default Barnes-Hut angle
    before = TSNE(2, metric="cosine", init="pca", perplexity=min(30.0, (n - 1) / 3), random_state=0,
                  max_iter=500, n_jobs=2).fit_transform(vectors)
    before_s = time.perf_counter() - t
    trust_before = trustworthiness(vectors[s], before[s], n_neighbors=10, metric="cosine")
    trust_pca = trustworthiness(vectors[s], PCA(2, random_state=0).fit_transform(vectors)[s], n_neighbors=10,
                                metric="cosine")
    unassigned = sum(1 for p in papers if p.topic is None)

    lines = [f"# Topics and map ({n:,} papers, {int(has_area.sum()):,} with a primary area)", "",
             f"`python benchmarks/bench_explore.py --index DIR` · {os.cpu_count()} cores · "
             f"{platform.processor() or platform.machine()} · {time.strftime('%Y-%m-%d')}", "",
             "| topics | k | NMI vs primary_area |", "|---|---|---|"]
    lines += [f"| {name} | {k} | {score:.3f} |" for name, k, score in rows]
    lines += ["", f"Unassigned papers: {unassigned} (every paper is in one topic).", "",
              "| map (1,000 sampled papers, cosine) | trustworthiness@10 | seconds |", "|---|---|---|",
              f"| t-SNE (this build: {papermap.METHOD}) | {trust_tsne:.3f} | {map_s:.1f} |",
              f"| t-SNE, 500 iterations, angle 0.5 (the earlier setting) | {trust_before:.3f} | {before_s:.1f} |",
              f"| PCA | {trust_pca:.3f} | |", "",
              "| stage | seconds | share of embedding |", "|---|---|---|",
              f"| embedding {n:,} abstracts (rate from {len(sample)}, batch 32) | {embed_s:.1f} | 100% |",
              f"| topics | {topic_s:.1f} | {100 * topic_s / embed_s:.1f}% |",
              f"| map | {map_s:.1f} | {100 * map_s / embed_s:.1f}% |",
              f"| topics + map | {topic_s + map_s:.1f} | {100 * (topic_s + map_s) / embed_s:.1f}% |", "",
              "Labels of the ten largest topics:", ""]
    lines += [f"- {t.label} ({t.size})" for t in found[:10]]
    write_report(lines, Path(__file__).parent / "results" / "explore.md")


if __name__ == "__main__":
    main()
