"""Development sets in the BEIR layout, made from ../shared/data/iclr2026_papers.jsonl.

    python benchmarks/make_devsets.py [--out .devsets] [--queries 500] [--seed 0]

Each set holds all 4,302 papers and queries drawn at random (fixed seed), never picked by hand.
The index holds only what a real search would hold, never the field a query was taken from:
- keywords: query = the authors' keywords of a paper, joined; corpus = title + abstract.
- titles:   query = the paper's title (a one-line paraphrase of it); corpus = abstract only.
- unseen:   like keywords, but only papers none of whose keywords appears word for word in its
            title or abstract: the query must be matched by meaning, not by shared phrases.
The sets are written outside git (they are a copy of shared data) and rebuilt on demand.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from report import SHARED  # noqa: E402


def write_set(out: Path, corpus: list[dict], queries: list[tuple[str, str, str]]) -> None:
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as f:
        for doc in corpus:
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8") as f:
        for qid, text, _ in queries:
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    with open(out / "qrels" / "test.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, _, doc in queries:
            f.write(f"{qid}\t{doc}\t1\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    papers = [json.loads(line) for line in SHARED.open(encoding="utf-8")]
    rng = random.Random(args.seed)

    with_kw = [p for p in papers if len(p.get("keywords") or []) >= 2]
    picked = rng.sample(with_kw, args.queries)
    write_set(args.out / "keywords",
              [{"_id": p["id"], "title": p["title"], "text": p["abstract"]} for p in papers],
              [(f"kw-{p['id']}", ", ".join(p["keywords"]), p["id"]) for p in picked])

    def unseen(p: dict) -> bool:
        text = (p["title"] + " " + p["abstract"]).lower()
        return not any(k.lower() in text for k in p["keywords"])

    # few papers qualify, so seeds split them in two halves instead of sampling overlapping sets
    pool = [p for p in with_kw if unseen(p)
            and int(hashlib.sha1(p["id"].encode()).hexdigest(), 16) % 2 == args.seed % 2]
    picked = rng.sample(pool, min(args.queries, len(pool)))
    write_set(args.out / "unseen",
              [{"_id": p["id"], "title": p["title"], "text": p["abstract"]} for p in papers],
              [(f"u-{p['id']}", ", ".join(p["keywords"]), p["id"]) for p in picked])

    picked = rng.sample(papers, args.queries)
    write_set(args.out / "titles",
              [{"_id": p["id"], "text": p["abstract"]} for p in papers],
              [(f"t-{p['id']}", p["title"], p["id"]) for p in picked])
    print(f"wrote {args.out}/keywords, unseen ({len(pool)} eligible papers) and titles "
          f"(up to {args.queries} queries each, {len(papers)} papers)")


if __name__ == "__main__":
    main()
