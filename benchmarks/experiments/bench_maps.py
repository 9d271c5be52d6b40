"""Topics and the map at a whole venue's size: ours against the well-kept libraries, in one run.

    python benchmarks/experiments/bench_maps.py --index DIR [--out benchmarks/experiments/results/maps.md]

DIR is an index of every submission (bench_first_run.py's, or `python index_build.py seeds FILE`). Needs
`pip install umap-learn opentsne datamapplot` beside the project's requirements (not shipped). Each
method runs in a process of its own, so its time and peak memory (ru_maxrss, the vectors' load included:
see the "vectors only" row) are its own:
- maps: ours (scikit-learn t-SNE, papermap.METHOD), openTSNE (FFT-accelerated t-SNE, 2 threads), UMAP
  (umap-learn, cosine, 15 neighbours, 2 threads); trustworthiness@10 (cosine) on 2,000 sampled papers;
- topics: ours (k-means on vectors + LSA, topics.METHOD) and BERTopic's recipe (UMAP to 5 dimensions,
  then HDBSCAN; its outliers kept as one cluster for the NMI) against the primary areas;
- pictures: each map drawn with datamapplot, points coloured and labelled by our topics, side by side
  in PNGs beside the record.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
MAPS = ("ours: scikit-learn t-SNE", "openTSNE", "UMAP")
TOPICS = ("ours: k-means + LSA", "UMAP-5 + HDBSCAN (BERTopic's recipe)")


def file_of(method: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in method) + ".npy"


def vectors_of(index: Path):
    from search.index import load_index

    data = load_index(index)
    return data.papers, data.vectors.reconstruct_n(0, data.vectors.ntotal)


def one(index: Path, method: str, work: Path) -> dict:
    """Runs in its own process: one method, its output saved under `work`."""
    papers, vectors = vectors_of(index)
    t = time.perf_counter()
    if method == "ours: scikit-learn t-SNE":
        from search.papermap import coordinates

        out = coordinates(vectors)
    elif method == "openTSNE":
        from openTSNE import TSNE

        out = np.asarray(TSNE(metric="cosine", n_jobs=2, random_state=0).fit(vectors))
    elif method == "UMAP":
        import umap

        out = umap.UMAP(n_neighbors=15, min_dist=0.1, metric="cosine", n_jobs=2).fit_transform(vectors)
    elif method == "ours: k-means + LSA":
        from search import topics

        found = topics.compute_topics(papers, vectors)
        of = topics.assignments(found)
        out = np.array([of.get(p.id, -1) for p in papers])
        (work / "labels.json").write_text(json.dumps({t.id: t.label for t in found}))
    elif method == "UMAP-5 + HDBSCAN (BERTopic's recipe)":
        import umap
        from sklearn.cluster import HDBSCAN

        low = umap.UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine", n_jobs=2).fit_transform(vectors)
        out = HDBSCAN(min_cluster_size=10, metric="euclidean", cluster_selection_method="eom").fit_predict(low)
    else:  # "vectors only": the floor every row's memory stands on
        out = np.zeros(len(papers))
    seconds = time.perf_counter() - t
    np.save(work / file_of(method), out)
    return {"seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run(index: Path, method: str, work: Path) -> dict:
    r = subprocess.run([sys.executable, __file__, "--index", str(index), "--one", method, "--work", str(work)],
                       cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{method} failed:\n{r.stderr[-3000:]}")
    result = json.loads(r.stdout.strip().splitlines()[-1])
    result["out"] = np.load(work / file_of(method))
    return result


def picture(xy: np.ndarray, names: list[str], title: str, path: Path) -> None:
    import datamapplot

    # every map scaled as ours is (centred, within [-1, 1]): openTSNE's raw coordinates (hundreds of
    # units) took datamapplot past 24 GiB
    xy = xy - xy.mean(axis=0)
    xy = xy / np.abs(xy).max()
    fig, _ = datamapplot.create_plot(xy, np.array(names), title=title, label_font_size=9,
                                     noise_label="no topic", darkmode=False, font_family="DejaVu Sans")
    fig.savefig(path, dpi=90, bbox_inches="tight")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=RESULTS / "maps.md")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.index, args.one, args.work)))
        return
    import tempfile

    from sklearn.manifold import trustworthiness
    from sklearn.metrics import normalized_mutual_info_score

    # run as a script, sys.path holds this folder, not its parent benchmarks/ where report.py lives
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from report import machine, write_report

    papers, vectors = vectors_of(args.index)
    areas = np.array([p.primary_area or "" for p in papers])
    has_area = areas != ""
    work = Path(tempfile.mkdtemp(prefix="maps-"))
    floor = run(args.index, "vectors only", work)
    results = {m: run(args.index, m, work) for m in (*MAPS, *TOPICS)}
    sample = np.random.default_rng(0).choice(len(papers), min(2000, len(papers)), replace=False)
    labels = json.loads((work / "labels.json").read_text())
    ours = results[TOPICS[0]]["out"]
    names = [labels.get(str(t), "no topic") if t >= 0 else "no topic" for t in ours]
    lines = [f"# Topics and map at {len(papers):,} papers: ours against the libraries", "",
             f"`python benchmarks/experiments/bench_maps.py --index DIR` · {machine()} · "
             f"{time.strftime('%Y-%m-%d')}", "",
             f"Loading the vectors alone peaks at {floor['peak_mib']:.0f} MiB (every row below includes it).", "",
             "| map | trustworthiness@10 (2,000 sampled, cosine) | seconds | peak MiB | picture |",
             "|---|---|---|---|---|"]
    for m in MAPS:
        xy = results[m]["out"]
        png = args.out.parent / f"maps_{m.split(':')[0].lower().replace(' ', '_')}.png"
        picture(xy, names, m, png)
        trust = trustworthiness(vectors[sample], xy[sample], n_neighbors=10, metric="cosine")
        lines.append(f"| {m} | {trust:.3f} | {results[m]['seconds']:.1f} | {results[m]['peak_mib']:.0f} | "
                     f"[{png.name}]({png.name}) |")
    lines += ["", "| topics | topics found | papers in no topic | NMI vs primary area | seconds | peak MiB |",
              "|---|---|---|---|---|---|"]
    for m in TOPICS:
        found = results[m]["out"]
        nmi = normalized_mutual_info_score(areas[has_area], found[has_area])
        lines.append(f"| {m} | {len(set(found.tolist()) - {-1})} | {int((found < 0).sum()):,} | {nmi:.3f} | "
                     f"{results[m]['seconds']:.1f} | {results[m]['peak_mib']:.0f} |")
    distinct = len(set(labels.values()))
    lines += ["", f"Our topics' labels: {distinct} distinct of {len(labels)} topics."]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
