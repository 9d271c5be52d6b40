"""Development sets in the BEIR layout, made from ../shared/data/iclr2026_papers.jsonl.

    python benchmarks/make_devsets.py [--out .devsets] [--queries 500] [--seed 0]

Each set holds all 4,302 papers and queries drawn at random (fixed seed), never picked by hand.
The index holds only what a real search would hold, never the field a query was taken from:
- keywords: query = the authors' keywords of a paper, joined; corpus = title + abstract.
- titles:   query = the paper's title (a one-line paraphrase of it); corpus = abstract only.
- unseen:   like keywords, but only papers none of whose keywords appears word for word in its
            title or abstract: the query must be matched by meaning, not by shared phrases.
- names:    query = a method's name as its title opens ("OrthAlign: ..." -> "OrthAlign"), for names
            that appear in no other paper; corpus = title + abstract.
and from the hand-written queries in benchmarks/data/ (written before any result was seen; each row
says whether it is a development or a held-out query; --seed 0 writes the first, any other seed the second):
- questions:   plain questions ("how do I make a language model read longer documents?"); relevant =
               every paper whose authors' keywords include one of the question's keywords, fixed in advance.
- paraphrases: a paper's contribution in other words than its title; relevant = that paper.
- zh, fr:      the same papers' problem in one line of Chinese and of French.
The sets are written outside git (they are a copy of shared data) and rebuilt on demand.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from report import SHARED

DATA = ROOT / "benchmarks" / "data"


def write_set(out: Path, corpus: list[dict], queries: list[tuple[str, str, str]]) -> None:
    """A BEIR set; a query id given several times has several relevant papers."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as f:
        for doc in corpus:
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8") as f:
        for qid, text in dict((q, t) for q, t, _ in queries).items():
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    with open(out / "qrels" / "test.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, _, doc in queries:
            f.write(f"{qid}\t{doc}\t1\n")


NAME = re.compile(r"^([A-Za-z][\w-]*[A-Z][\w-]*)\s*:")  # a title that opens with a coined name


def title_corpus(papers: list[dict]) -> list[dict]:
    return [{"_id": p["id"], "title": p["title"], "text": p["abstract"]} for p in papers]


def write_names(out: Path, papers: list[dict], rng: random.Random, n: int, seed: int) -> None:
    """Names that open a title and appear in no other paper: typing one should find its paper."""
    named = [(m.group(1), p) for p in papers if (m := NAME.match(p["title"])) and sum(c.isupper() for c in m.group(1)) >= 2]
    texts = [p["title"] + " " + p["abstract"] for p in papers]
    unique = [(name, p) for name, p in named
              # the substring test first: the regex over every text for every name took minutes
              if sum(1 for t in texts if name in t and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", t)) == 1]
    half = [(name, p) for name, p in unique
            if int(hashlib.sha1(p["id"].encode()).hexdigest(), 16) % 2 == seed % 2]
    picked = rng.sample(half, min(n, len(half)))
    write_set(out, title_corpus(papers), [(f"n-{p['id']}", name, p["id"]) for name, p in picked])


def write_handwritten(out: Path, papers: list[dict], split: str) -> None:
    ids = {p["id"] for p in papers}
    rows = [json.loads(line) for line in (DATA / "questions.jsonl").open(encoding="utf-8")]
    queries = []
    for i, row in enumerate(r for r in rows if r["split"] == split):
        wanted = {k.lower() for k in row["keywords"]}
        for p in papers:
            if wanted & {k.lower().strip() for k in p["keywords"]}:
                queries.append((f"q{i}", row["question"], p["id"]))
    write_set(out / "questions", title_corpus(papers), queries)
    rows = [json.loads(line) for line in (DATA / "paraphrases.jsonl").open(encoding="utf-8")]
    rows = [r for r in rows if r["split"] == split and r["paper"] in ids]
    for lang, name in (("en", "paraphrases"), ("zh", "zh"), ("fr", "fr")):
        write_set(out / name, title_corpus(papers), [(f"{lang}-{r['paper']}", r[lang], r["paper"]) for r in rows])


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
    write_names(args.out / "names", papers, rng, args.queries, args.seed)
    write_handwritten(args.out, papers, "dev" if args.seed == 0 else "held-out")
    print(f"wrote {args.out}/keywords, names, questions, paraphrases, zh, fr, unseen ({len(pool)} eligible papers) and titles "
          f"(up to {args.queries} queries each, {len(papers)} papers)")


if __name__ == "__main__":
    main()
