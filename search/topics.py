"""Topics: clusters of the papers, computed at build time, each labelled with its distinctive terms."""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .corpus import Paper
from .text import stem_of

TOPICS = "topics.json"
METHOD = ("k-means (k = sqrt(n), 4 inits, seed 0) on [MiniLM vector, LSA-100 of TF-IDF over unigrams and "
          "bigrams of text + keywords]; c-TF-IDF labels from the same counts, words that name no field "
          "passed over, no two labels of one word set")
# Words a machine-learning venue's topics share so widely that a label of them says nothing ("language,
# llms"); they stay among a topic's terms and enter its label only when nothing else is left.
LABEL_GENERIC = frozenset("""
language languages llm llms large neural network networks deep training trained models model learning
""".split())
LABEL_TERMS = 3
TOP_TERMS = 10

# Words every abstract uses; IDF alone keeps them when there are few topics.
BOILERPLATE = frozenset("""
paper propose proposed proposes present presents introduce introduces novel approach approaches method
methods methodology framework frameworks results result show shows shown demonstrate demonstrates
achieve achieves achieving state art existing work works use uses using used based new performance
improve improves improved improving significantly significant effective effectively efficient
experiments experimental extensive evaluation evaluate evaluated outperforms outperforming better
key various different problem problems study studies task tasks model models learning data code
available github com https http www open source however also well including address remains
challenge challenges challenging recent recently prior previous furthermore moreover specifically
leverage leverages leveraging enable enables enabling provide provides despite across wide range
paradigm strong strongly make makes making first one two three way ways lack high low large
""".split())
_TOKEN = r"(?u)\b[a-zA-Z][a-zA-Z-]*[a-zA-Z]\b"


@dataclass
class Topic:
    id: int
    label: str
    terms: list[str]          # the top distinctive terms, best first
    size: int
    papers: list[str]         # ids, closest to the topic's centre first

    def to_dict(self) -> dict:
        return asdict(self)


def topic_count(n: int) -> int:
    """A handful for tens of papers, tens for thousands."""
    return max(1, min(n, round(math.sqrt(n))))


def _documents(papers: list[Paper]) -> list[str]:
    # keywords joined with full stops so their words do not run into the abstract's n-grams
    return [p.text + " . " + " . ".join(p.keywords) for p in papers]


def term_counts(papers: list[Paper]):
    """Counts of unigrams and bigrams per paper (text and keywords), stop words out; one pass serves
    both the clustering and the labels."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    vectorizer = CountVectorizer(ngram_range=(1, 2), token_pattern=_TOKEN, min_df=2 if len(papers) > 20 else 1,
                                 stop_words=sorted(ENGLISH_STOP_WORDS | BOILERPLATE))
    try:
        counts = vectorizer.fit_transform(_documents(papers))
    except ValueError:  # nothing but stop words anywhere
        return None, np.array([], dtype=object)
    return counts, vectorizer.get_feature_names_out()


def cluster(vectors: np.ndarray, counts, k: int, seed: int = 0) -> np.ndarray:
    """Topic number per paper: k-means over the vectors joined with an LSA of the words.

    The words add what the authors' keywords and terms say; measured better than the vectors
    alone against the authors' primary areas (benchmarks/bench_explore.py).
    """
    from sklearn.cluster import KMeans
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.preprocessing import normalize

    n = len(vectors)
    if n <= 1 or k <= 1:
        return np.zeros(n, dtype=np.int64)
    features = [vectors]
    if counts is not None:
        tfidf = TfidfTransformer(sublinear_tf=True).fit_transform(counts)
        dims = min(100, n - 1, tfidf.shape[1] - 1)
        if dims >= 2:
            features.append(normalize(TruncatedSVD(dims, random_state=seed).fit_transform(tfidf)))
    return KMeans(min(k, n), n_init=4, random_state=seed).fit_predict(np.hstack(features)).astype(np.int64)


def _stems(term: str) -> set[str]:
    return {stem_of(w)[:5] for w in term.split()}


def distinct_terms(ranked: list[str], n: int) -> list[str]:
    """The first n terms that do not repeat an earlier one ("privacy, private" is one idea)."""
    chosen: list[str] = []
    for term in ranked:
        if any(_stems(term) & _stems(c) or term in c or c in term for c in chosen):
            continue
        chosen.append(term)
        if len(chosen) == n:
            break
    return chosen


def ctfidf_terms(counts, vocab: np.ndarray, labels: np.ndarray, top: int = TOP_TERMS) -> dict[int, list[str]]:
    """Each topic's most distinctive terms by class-based TF-IDF (as BERTopic), near-repeats removed."""
    from scipy import sparse

    topics = sorted(set(labels.tolist()))
    if counts is None:
        return {t: [] for t in topics}
    member = sparse.csr_matrix((np.ones(len(labels)), (np.searchsorted(topics, labels), np.arange(len(labels)))),
                               shape=(len(topics), len(labels)))
    by_topic = np.asarray((member @ counts).todense(), dtype=np.float64)
    tf = by_topic / np.maximum(by_topic.sum(axis=1, keepdims=True), 1)
    avg = by_topic.sum() / max(len(topics), 1)
    weights = tf * np.log(1 + avg / np.maximum(by_topic.sum(axis=0), 1))
    out = {}
    for i, topic in enumerate(topics):
        order = np.argsort(-weights[i], kind="stable")[:200]
        ranked = [vocab[j] for j in order if by_topic[i, j] >= 2 and _clean_term(vocab[j])]
        out[topic] = distinct_terms(ranked, top)
    return out


def _clean_term(term: str) -> bool:
    words = term.split()
    return all(len(w) > 2 and not re.search(r"(.)\1\1", w) for w in words) and len(set(words)) == len(words)


def compute_topics(papers: list[Paper], vectors: np.ndarray, seed: int = 0) -> list[Topic]:
    """Topics ordered by size (largest first, ids 0..), papers inside by closeness to the centre."""
    if not papers:
        return []
    counts, vocab = term_counts(papers)
    labels = cluster(vectors, counts, topic_count(len(papers)), seed)
    terms = ctfidf_terms(counts, vocab, labels)
    sizes = {t: int((labels == t).sum()) for t in set(labels.tolist())}
    order = sorted(sizes, key=lambda t: (-sizes[t], t))
    labels_of = distinct_labels([terms.get(t, []) for t in order])
    topics = []
    for new_id, t in enumerate(order):
        rows = np.flatnonzero(labels == t)
        centre = vectors[rows].mean(axis=0)
        rows = rows[np.argsort(-(vectors[rows] @ centre), kind="stable")]
        topics.append(Topic(new_id, labels_of[new_id] or f"topic {new_id}", terms.get(t, []), len(rows),
                            [papers[r].id for r in rows]))
    return topics


def distinct_labels(term_lists: list[list[str]], n: int = LABEL_TERMS) -> list[str]:
    """A label per topic from its ranked terms: words that name no field ("language", "llms") are passed
    over while others remain, and no label has the same words as an earlier one ("flow, matching" and
    "matching, flow" are one label)."""
    used: set[frozenset[str]] = set()
    out = []
    for terms in term_lists:
        telling = [t for t in terms if not set(t.split()) <= LABEL_GENERIC]
        ranked = telling + [t for t in terms if t not in telling]
        label = ranked[:n]
        for start in range(1, max(len(ranked) - n + 1, 1)):  # a repeat: slide to later terms
            if frozenset(" ".join(label).split()) not in used:
                break
            label = ranked[:n - 1] + ranked[n - 1 + start:n + start]
        used.add(frozenset(" ".join(label).split()))
        out.append(", ".join(label))
    return out


def write_topics(path: Path, topics: list[Topic], method: str = METHOD) -> None:
    doc = {"method": method, "topics": [t.to_dict() for t in topics]}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def read_topics(path: Path) -> list[Topic]:
    return [Topic(**t) for t in json.loads(path.read_text(encoding="utf-8"))["topics"]]


def assignments(topics: list[Topic]) -> dict[str, int]:
    """Paper id -> topic id."""
    return {pid: t.id for t in topics for pid in t.papers}
