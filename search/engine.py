"""The engine that answers queries: search by text (semantic, keyword, hybrid), and similar papers."""
from __future__ import annotations

import unicodedata
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import lexical, ranking
from .corpus import Paper
from .embed import load_model, model_dimension, model_fingerprint, token_count
from .evidence import Evidence, shared_keywords
from .index import REBUILD, IndexData, IndexLoadError, load_index
from .layout import MAP, read_map
from .multilingual import NON_LATIN, detect_language
from .query_encoder import load_encoder
from .topics import TOPICS, Topic, read_topics

# Shown on the empty page; tests check that each one finds a clear first hit among the seeds.
EXAMPLE_QUERIES = [
    "extending the context window of a language model without finetuning",
    "neural network equivariant to any symmetry subgroup",
    "benchmark of chemical reasoning over molecular graphs",
    "which tasks should be trained together in multi-task learning",
]

MODES = ("hybrid", "semantic", "keyword")
DEFAULT_MODE = "hybrid"   # measured best on the development sets (README, "Search quality")
DEFAULT_FUSION = "blend"  # weighed per kind of query (ranking.Weights); "rrf" for reciprocal-rank fusion
MAX_QUERY_CHARS = 20_000  # longer input is cut before tokenising; the model sees 256 tokens anyway
POOL = 100                # candidates each ranker contributes to the fusion
RRF_K = 60
NO_MULTILINGUAL = ("This query looks like another language ({language}), and this index was built without the "
                   "multilingual space (--no-multilingual), so it can only match English. Rebuild it with "
                   "`python index_build.py` (the multilingual space is on by default) to search across "
                   "languages, or ask in English.")
# Below this best cosine (in either space) nothing is close to the query; below the second, when no paper
# shares a word with it either. Development queries under 0.20 are all names BM25 finds, and none lacks a
# shared word; text that is no paper's subject falls under one or the other (benchmarks/results/ranking.md).
NOTHING_CLOSE, NO_SHARED_WORD_CLOSE = 0.20, 0.30
SORTS = ("relevance", "rating", "oral")  # relevance; mean review rating; orals first, then rating
SORT_POOL = 30            # a sorted list re-orders this many of the most relevant papers (or k if more)
SVM_C = 0.01             # arxiv-sanity's setting for "papers like my library"


class UnknownPaper(LookupError):
    """One or more ids name no paper in the index."""

    def __init__(self, ids: list[str]):
        self.ids = ids
        super().__init__(f"no paper with id {', '.join(repr(i) for i in ids)} in this index")


@dataclass
class Hit:
    paper: Paper
    score: float              # what the list is ranked by (Result.score_name says which score)
    rank: int
    evidence: list[tuple[str, float]] = field(default_factory=list)  # closest sentences
    cosine: float | None = None  # cosine similarity to the query (or the papers), whatever the ranking

    def to_dict(self) -> dict:
        p = self.paper
        return {"id": p.id, "score": round(float(self.score), 6),
                "cosine": None if self.cosine is None else round(float(self.cosine), 6), "title": p.title,
                "title_derived": p.title_derived, "abstract": p.abstract, "sources": p.sources,
                "url": p.url, "keywords": p.keywords, "primary_area": p.primary_area, "venue": p.venue,
                "topic": p.topic, "authors": p.authors, "pdf": p.pdf, "avg_rating": p.avg_rating,
                "avg_confidence": p.avg_confidence, "n_ratings": p.n_ratings,
                "evidence": [s for s, _ in self.evidence]}


@dataclass
class Result:
    hits: list[Hit] = field(default_factory=list)
    message: str = ""         # shown instead of, or above, the hits
    truncated: bool = False   # the query was longer than the model's window
    mode: str = ""
    terms: set[str] = field(default_factory=set)  # query stems, for marking matches
    language: str = "en"      # as detected; other languages rank in the multilingual space
    space: str = "english"    # "multilingual" when the query was searched across languages
    score_name: str = "cosine"  # what Hit.score is: "match" (hybrid blend), "cosine", "BM25" or "SVM"
    kind: str = ""            # how ranking.query_kind read the query (ranking.KINDS)


def fold(name: str) -> str:
    """A name for matching: lower case, accents dropped ("Müller" -> "muller")."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def score_text(hit: Hit, score_name: str) -> str:
    """The score a list is ranked by, and the cosine beside it when that is another score."""
    if score_name == "cosine" or hit.cosine is None:
        return f"{score_name} {hit.score:.3f}"
    return f"{score_name} {hit.score:.3f} · cosine {hit.cosine:.3f}"


def nothing_close(best: float, shared_word: bool = True, name_found: bool = False) -> str:
    """A notice above the list when even the closest paper is far from the query ("" when one is close).

    best: the closest paper's cosine; shared_word: some paper holds one of the query's words (BM25 > 0);
    name_found: the query is a name some paper holds, close by its letters whatever its cosine."""
    if name_found or best >= (NOTHING_CLOSE if shared_word else NO_SHARED_WORD_CLOSE):
        return ""
    return (f"Nothing in this index is close to this (the closest paper's similarity is {best:.2f}); "
            "the list below is the least far. Try other words, or check what was searched.")


def sort_key(paper: Paper, sort: str) -> tuple:
    """Best first under a sort other than relevance; papers without reviews go last."""
    rating = -paper.avg_rating if paper.avg_rating is not None else float("inf")
    if sort == "oral":
        return (0 if "oral" in paper.venue.lower().split() else 1, rating)
    return (rating,)


def ordered(rows: Iterable[int], papers: list[Paper], sort: str) -> list[int]:
    """Rows re-ordered by `sort` (a stable sort: equal keys keep their relevance order)."""
    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r}; choose one of {', '.join(SORTS)}")
    rows = [int(r) for r in rows]
    return rows if sort == "relevance" else sorted(rows, key=lambda r: sort_key(papers[r], sort))


def top_rows(scores: np.ndarray, n: int) -> np.ndarray:
    """Rows of the n highest finite scores, best first."""
    n = min(n, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top], kind="stable")]
    return top[np.isfinite(scores[top])]


def rrf(rankings: Iterable[np.ndarray], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal-rank fusion of ranked row lists."""
    fused: dict[int, float] = {}
    for ranked in rankings:
        for rank, row in enumerate(ranked):
            fused[int(row)] = fused.get(int(row), 0.0) + 1.0 / (k + rank + 1)
    return fused


class Engine:
    def __init__(self, data: IndexData, model, fingerprint: str | None = None, query_cache: int = 256,
                 fusion: str = DEFAULT_FUSION, weights: ranking.Weights = ranking.DEFAULT_WEIGHTS):
        expected = data.manifest["model"]
        if model_dimension(model) != data.manifest["dimension"]:
            raise IndexLoadError(f"the index at {data.path} has {data.manifest['dimension']}-d vectors but "
                                 f"the query model makes {model_dimension(model)}-d ones; {REBUILD}")
        if (fingerprint or model_fingerprint(model)) != expected["fingerprint"]:
            raise IndexLoadError(f"the index at {data.path} was built with another model "
                                 f"({expected['name']}); {REBUILD} with this one")
        self.data = data
        self.model = model
        self.papers = data.papers
        self.max_tokens = int(model.max_seq_length)
        self.fusion, self.weights = fusion, weights
        self._row = {}
        for row, p in enumerate(self.papers):
            for pid in [p.id, *p.aliases]:
                self._row.setdefault(pid, row)
        self.exact = (data.manifest.get("index") or {}).get("exact", True)
        # FAISS keeps its own copy; this one serves similar(), fusion and filtered scoring directly.
        # Beside an approximate index (a corpus too big for exact search) it is kept in float16:
        # half the memory, cosines within 1e-3.
        self.vectors = all_vectors(data.vectors, np.float32 if self.exact else np.float16)
        self.lexical = lexical.Lexical(data.path, len(self.papers))
        self.evidence = Evidence.load(data.path) if data.manifest.get("sentences") else None
        self.multilingual = self._load_multilingual(data)
        self.areas = sorted({p.primary_area for p in self.papers if p.primary_area})
        self.venues = sorted({p.venue for p in self.papers if p.venue})
        self._area = np.array([p.primary_area for p in self.papers], dtype=object)
        self._venue = np.array([p.venue for p in self.papers], dtype=object)
        self._authors = ["\n".join(fold(a) for a in p.authors) for p in self.papers]
        self._derived = np.array([p.title_derived for p in self.papers], dtype=bool)
        self._rating = np.array([np.nan if p.avg_rating is None else p.avg_rating for p in self.papers], float)
        self.has_ratings = bool(np.isfinite(self._rating).any())
        rated = self._rating[np.isfinite(self._rating)]
        self.rating_summary = (f"mean {rated.mean():.2f}, median {np.median(rated):.2f}" if len(rated) else "")
        self.has_authors = any(self._authors)
        self._cache: OrderedDict[str, tuple[np.ndarray, bool]] = OrderedDict()
        self._cache_size = query_cache
        self.topics, self.map_xy = self._load_explore(data)

    def _load_explore(self, data: IndexData) -> tuple[dict[int, Topic], np.ndarray | None]:
        """Topics by id and map coordinates by row, when the build made them."""
        if not data.manifest.get("explore"):
            return {}, None
        topics = {t.id: t for t in read_topics(data.path / TOPICS)}
        xy = np.full((len(self.papers), 2), np.nan, dtype=np.float32)
        for point in read_map(data.path / MAP):
            row = self._row.get(point["id"])
            if row is not None:
                xy[row] = (point["x"], point["y"])
        if np.isnan(xy).any():
            raise IndexLoadError(f"{data.path / MAP} lacks some papers; {REBUILD}")
        return topics, xy

    def topic_label(self, paper: Paper) -> str:
        t = self.topics.get(paper.topic) if paper.topic is not None else None
        return t.label if t else ""

    def topic_labels(self, papers: Iterable[Paper]) -> dict[str, str]:
        """Paper id -> its topic's label (for exports)."""
        return {p.id: self.topic_label(p) for p in papers}

    def topic_papers(self, tid: int, areas: Iterable[str] = (), venues: Iterable[str] = (),
                     authors: Iterable[str] = (), min_rating: float | None = None,
                     sort: str = "relevance") -> list[Paper]:
        """A topic's papers under the filters, closest to its centre first (or by `sort`)."""
        mask = self.mask(areas, venues, authors, min_rating)
        rows = [self._row[pid] for pid in self.topics[tid].papers]
        return [self.papers[r] for r in ordered((r for r in rows if mask is None or mask[r]), self.papers, sort)]

    def split_ids(self, ids: Iterable[str]) -> tuple[list[str], list[str]]:
        """Known ids (once each, in order, as the paper's main id) and unknown ones."""
        known: dict[str, None] = {}
        unknown: list[str] = []
        for raw in ids:
            pid = raw.strip()
            if not pid:
                continue
            paper = self.paper(pid)
            if paper is None:
                unknown.append(pid)
            else:
                known.setdefault(paper.id)
        return list(known), unknown

    @property
    def manifest(self) -> dict:
        return self.data.manifest

    def paper(self, pid: str) -> Paper | None:
        row = self._row.get(pid.strip())
        return None if row is None else self.papers[row]

    def row(self, pid: str) -> int | None:
        return self._row.get(pid.strip())

    def _cached(self, key: str, compute) -> tuple[np.ndarray, bool]:
        """A small LRU of query vectors: a repeated query costs no second encode."""
        if key in self._cache:
            self._cache.move_to_end(key)
        else:
            self._cache[key] = compute()
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return self._cache[key]

    def encode_query(self, query: str) -> tuple[np.ndarray, bool]:
        """The query vector and whether the model had to cut the query."""
        def compute() -> tuple[np.ndarray, bool]:
            text = query[:MAX_QUERY_CHARS]
            truncated = len(query) > MAX_QUERY_CHARS or token_count(self.model, text) > self.max_tokens
            vec = self.model.encode([text], normalize_embeddings=True, convert_to_numpy=True,
                                    show_progress_bar=False).astype(np.float32)
            return vec, truncated

        return self._cached(query, compute)

    def _load_multilingual(self, data: IndexData):
        """The second vector space, when the index was built with --multilingual."""
        import faiss

        from .multilingual import SENTENCE_VECTORS, TITLE_VECTORS, VECTORS, MultilingualEncoder

        meta = data.manifest.get("multilingual")
        if not meta:
            return None
        encoder = MultilingualEncoder()
        if encoder.fingerprint != meta["fingerprint"]:
            raise IndexLoadError(f"the index at {data.path} has a multilingual space from another "
                                 f"encoder; {REBUILD} with --multilingual")
        index = faiss.read_index(str(data.path / VECTORS))
        if index.ntotal != len(self.papers):
            raise IndexLoadError(f"{data.path / VECTORS} holds {index.ntotal} vectors for "
                                 f"{len(self.papers)} papers; {REBUILD}")
        detect_language("warm the language detector up")  # its first call loads models (~1 s)
        sentences = None
        if self.evidence is not None and meta.get("sentences"):
            vecs = np.load(data.path / SENTENCE_VECTORS, allow_pickle=False).astype(np.float32)
            sentences = Evidence(self.evidence.sentences, vecs, self.evidence.offsets)
        titles = np.load(data.path / TITLE_VECTORS, allow_pickle=False)
        return {"encoder": encoder, "abstracts": index.reconstruct_n(0, index.ntotal), "titles": titles,
                "evidence": sentences}

    def _multilingual_candidates(self, vec: np.ndarray) -> ranking.Candidates:
        """Every paper's multilingual signals: cosine to its abstract, its title and its closest sentence."""
        ml, q = self.multilingual, vec.ravel()
        sentence = None
        if ml["evidence"] is not None:
            sentence = np.maximum.reduceat(ml["evidence"].vectors @ q, ml["evidence"].offsets[:-1])
        return ranking.Candidates(np.arange(len(self.papers)), np.zeros(len(self.papers), np.float32),
                                  ml["abstracts"] @ q, sentence, ml["titles"] @ q, self._derived)

    def clear_cache(self) -> None:
        """Forget cached query vectors (for timing runs that must encode every query)."""
        self._cache.clear()

    def mask(self, areas: Iterable[str] = (), venues: Iterable[str] = (), authors: Iterable[str] = (),
             min_rating: float | None = None) -> np.ndarray | None:
        """Rows allowed by the filters, or None when nothing is filtered.

        An author filter keeps papers with an author whose name contains any of the given names
        (case and accents ignored: "lecun" finds "Yann LeCun"); a minimum rating keeps reviewed
        papers whose mean rating is at least that."""
        areas, venues = list(areas), list(venues)
        names = [n for n in (fold(a) for a in authors) if n]
        if not areas and not venues and not names and min_rating is None:
            return None
        m = np.ones(len(self.papers), dtype=bool)
        if areas:
            m &= np.isin(self._area, areas)
        if venues:
            m &= np.isin(self._venue, venues)
        if names:
            m &= np.fromiter((any(n in a for n in names) for a in self._authors), bool, len(self.papers))
        if min_rating is not None:
            m &= self._rating >= float(min_rating)  # NaN (no reviews) compares False
        return m

    # ------------------------------------------------------------ rankers

    def _dense_rank(self, vec: np.ndarray, pool: int, mask: np.ndarray | None) -> np.ndarray:
        """The pool nearest rows by FAISS, among those the mask allows."""
        import faiss

        index = self.data.vectors
        # one query: waking FAISS's OpenMP team costs more than it saves, and its spinning threads take
        # the core the query encoder needs. The setting holds for the calling thread only.
        faiss.omp_set_num_threads(1)
        if mask is None:
            _, rows = index.search(vec, pool)
        elif not self.exact:  # an approximate index misses filtered rows; the allowed ones are scored exactly
            allowed = np.flatnonzero(mask)
            scores = self.vectors[allowed].astype(np.float32) @ vec.ravel()
            return allowed[top_rows(scores, pool)]
        else:
            allowed = np.flatnonzero(mask).astype(np.int64)
            params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed))
            _, rows = index.search(vec, min(pool, len(allowed)) or 1, params=params)
        return rows[0][rows[0] >= 0]

    def _lexical_rank(self, scores: np.ndarray, pool: int, mask: np.ndarray | None) -> np.ndarray:
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        nonzero = np.flatnonzero(scores > 0)
        if len(nonzero) > pool:
            nonzero = nonzero[np.argpartition(-scores[nonzero], pool)[:pool]]
        return nonzero[np.argsort(-scores[nonzero], kind="stable")]

    def candidates(self, vec: np.ndarray, dense_rows: np.ndarray, lex_rows: np.ndarray, lex_scores: np.ndarray,
                   ml: ranking.Candidates | None = None) -> ranking.Candidates:
        """The union of the dense and BM25 pools with each paper's signals (for the blend, and for tuning it)."""
        rows = np.unique(np.concatenate([dense_rows, lex_rows])).astype(np.int64)
        if ml is not None:
            return ranking.Candidates(rows, lex_scores[rows], ml.doc[rows],
                                      None if ml.sentence is None else ml.sentence[rows], ml.title[rows],
                                      ml.derived[rows])
        sentence = None
        if self.evidence is not None:
            sentence = ranking.best_sentence(self.evidence.vectors, self.evidence.offsets, rows, vec)
        return ranking.Candidates(rows, lex_scores[rows], self.vectors[rows] @ vec.ravel(), sentence)

    def _fuse(self, cands: ranking.Candidates, kind: str) -> tuple[np.ndarray, np.ndarray]:
        if self.fusion == "rrf":
            dense = cands.rows[np.argsort(-cands.dense(self.weights, kind), kind="stable")]
            lex = cands.rows[cands.lexical > 0][np.argsort(-cands.lexical[cands.lexical > 0], kind="stable")]
            fused = rrf([dense, lex])
            rows = np.array(sorted(fused, key=lambda r: -fused[r]), dtype=np.int64)
            return rows, np.array([fused[r] for r in rows.tolist()]) * (RRF_K + 1) / 2  # 1.0: first in both
        return ranking.rank(cands, self.weights, kind)

    # ------------------------------------------------------------ queries

    def search(self, query: str, k: int = 10, mode: str = DEFAULT_MODE, areas: Iterable[str] = (),
               venues: Iterable[str] = (), evidence: bool = True, authors: Iterable[str] = (),
               min_rating: float | None = None, sort: str = "relevance") -> Result:
        """The k papers that answer the query best under the mode and filters.

        A sort other than relevance re-orders the query's SORT_POOL most relevant papers, so it
        ranks what answers the query, not the whole conference."""
        query = (query or "").strip()
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if not query:
            return Result(message="Type a question or a topic to search.", mode=mode)
        mask = self.mask(areas, venues, authors, min_rating)
        if not self.papers or (mask is not None and not mask.any()):
            return Result(message="No paper matches these filters.", mode=mode)
        k = max(1, min(int(k), len(self.papers)))
        n = k if sort == "relevance" else max(k, SORT_POOL)  # the candidates a sort re-orders
        pool = max(POOL, n)
        language = detect_language(query[:2000])
        notice = NO_MULTILINGUAL.format(language=language) if language != "en" and not self.multilingual else ""
        if notice and language == NON_LATIN:  # surely not English: English-only vectors would rank noise
            return Result(message=notice, mode=mode, language=language)
        text = query[:MAX_QUERY_CHARS]
        kind = ranking.query_kind(text)
        ml = None
        if language != "en" and self.multilingual:  # MiniLM knows English only: rank across languages
            vec, truncated = self._encode_multilingual(text), False
            ml, sentences = self._multilingual_candidates(vec), self.multilingual["evidence"]
            ml_scores = ml.dense(self.weights)
            ml_scores = ml_scores if mask is None else np.where(mask, ml_scores, -np.inf)
        else:
            vec, truncated = self.encode_query(query)
            sentences = self.evidence
        terms = self.lexical.meaningful(lexical.query_terms(text))

        def dense(n: int) -> np.ndarray:
            return self._dense_rank(vec, n, mask) if ml is None else top_rows(ml_scores, n)

        lex_scores = self.lexical.scores(text)
        if mode == "semantic":
            rows = dense(n)
            scores = self.vectors[rows] @ vec.ravel() if ml is None else ml_scores[rows]
            score_name = "cosine"
        else:
            lex_rows = self._lexical_rank(lex_scores, pool, mask)
            if mode == "keyword":
                rows, scores, score_name = lex_rows, lex_scores[lex_rows], "BM25"
            else:
                cands = self.candidates(vec, dense(pool), lex_rows, lex_scores, ml)
                rows, scores = self._fuse(cands, kind)
                score_name = "match"
        score_of = dict(zip(rows[:n].tolist(), np.asarray(scores[:n], dtype=float).tolist()))
        rows = np.asarray(ordered(rows[:n], self.papers, sort)[:k], dtype=np.int64)
        if ml is None:
            cosines = self.vectors[rows] @ vec.ravel() if len(rows) else np.zeros(0)
        else:
            cosines = ml_scores[rows]
        explain = evidence and sentences is not None
        hits = [Hit(self.papers[r], score_of[r], i + 1, sentences.best(r, vec) if explain else [], float(c))
                for i, (r, c) in enumerate(zip(rows.tolist(), cosines))]
        messages = []
        if truncated:
            messages.append(f"Your text is longer than the model's window of {self.max_tokens} tokens; "
                            "only its beginning was searched.")
        elif not hits:
            messages.append("No paper contains these words. Try the semantic or hybrid mode.")
        if hits and mode != "keyword":
            matched = bool(lex_scores.max() > 0)
            # across languages BM25 rarely has a word to share: the cosine alone decides there
            messages.append(nothing_close(max(h.cosine for h in hits), matched or ml is not None,
                                          kind == "name" and matched))
        if notice:  # a Latin-script language may be misread English: searched in English, and said so
            messages += [notice, "It was searched as English."]
        return Result(hits, " ".join(m for m in messages if m), truncated, mode, terms, language,
                      "english" if ml is None else "multilingual", score_name, kind)

    def _encode_multilingual(self, query: str) -> np.ndarray:
        # the same LRU, under keys an English query cannot have
        return self._cached("\x00ml\x00" + query,
                            lambda: (self.multilingual["encoder"].encode([query]), False))[0]

    def similar(self, ids: list[str], k: int = 10, areas: Iterable[str] = (), venues: Iterable[str] = (),
                mode: str = "hybrid", authors: Iterable[str] = (), min_rating: float | None = None,
                sort: str = "relevance") -> Result:
        """The papers nearest to the given ones together, never one of them.

        Several ids rank by a per-list SVM (mode "svm"). For one paper, hybrid (the default, measured best for same-area neighbours) fuses the vector ranking with
        BM25 using the papers' own text as the query; semantic uses the vectors alone.
        """
        ids = [i.strip() for i in ids if i.strip()]
        unknown = [i for i in ids if self.row(i) is None]
        if unknown or not ids:
            raise UnknownPaper(unknown or ids)
        rows = sorted({self.row(i) for i in ids})
        mode = "svm" if len(rows) > 1 else mode
        vec = self.vectors[rows].mean(axis=0, keepdims=True)
        vec = (vec / max(float(np.linalg.norm(vec)), 1e-12)).astype(np.float32)
        mask = self.mask(areas, venues, authors, min_rating)
        mask = np.ones(len(self.papers), dtype=bool) if mask is None else mask.copy()
        mask[rows] = False
        if not mask.any():
            return Result(message="No other paper matches these filters.", mode=mode)
        k = max(1, min(int(k), int(mask.sum())))
        n = k if sort == "relevance" else max(k, SORT_POOL)
        if mode == "svm":
            svm = np.where(mask, self._svm_scores(rows), -np.inf)
            found = top_rows(svm, n).tolist()
            score_of, score_name = {r: float(svm[r]) for r in found}, "SVM"
        elif mode == "hybrid":
            dense_rows = self._dense_rank(vec, max(POOL, n), mask)
            lex = self.lexical.scores(" ".join(self.papers[r].text for r in rows), question=False)
            fused = rrf([dense_rows, self._lexical_rank(lex, max(POOL, n), mask)])
            found = sorted(fused, key=lambda r: -fused[r])[:n]
            # reciprocal-rank fusion scaled so that first in both rankings is 1.0
            score_of, score_name = {r: fused[r] * (RRF_K + 1) / 2 for r in found}, "match"
        else:
            found = self._dense_rank(vec, n, mask).tolist()
            score_of, score_name = None, "cosine"
        found = ordered(found, self.papers, sort)[:k]
        cosines = (self.vectors[found] @ vec.ravel()).tolist()
        hits = [Hit(self.papers[r], c if score_of is None else score_of[r], i + 1, cosine=c)
                for i, (r, c) in enumerate(zip(found, cosines))]
        return Result(hits, mode=mode, score_name=score_name)

    def like_texts(self, texts: list[str], k: int = 10, areas: Iterable[str] = (),
                   venues: Iterable[str] = (), authors: Iterable[str] = (), min_rating: float | None = None,
                   sort: str = "relevance") -> Result:
        """Papers like some texts (uploaded abstracts or titles): the same per-list SVM, texts as positives."""
        texts = [t.strip()[:MAX_QUERY_CHARS] for t in texts if t and t.strip()]
        if not texts:
            return Result(message="No text to compare with.", mode="svm")
        mask = self.mask(areas, venues, authors, min_rating)
        if not self.papers or (mask is not None and not mask.any()):
            return Result(message="No paper matches these filters.", mode="svm")
        extra = self.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False).astype(np.float32)
        scores = self._svm_scores([], extra)
        k = max(1, min(int(k), len(self.papers)))
        n = k if sort == "relevance" else max(k, SORT_POOL)
        found = top_rows(scores if mask is None else np.where(mask, scores, -np.inf), n).tolist()
        found = ordered(found, self.papers, sort)[:k]
        centre = extra.mean(axis=0)
        centre /= max(float(np.linalg.norm(centre)), 1e-12)
        cosines = (self.vectors[found] @ centre).tolist()
        hits = [Hit(self.papers[r], float(scores[r]), i + 1, cosine=c) for i, (r, c) in enumerate(zip(found, cosines))]
        # each text's own closest paper: a list of far texts is far even when their centre happens not to be
        best = float((self.vectors @ extra.T).max()) if len(self.papers) else 0.0
        return Result(hits, nothing_close(best), mode="svm", score_name="SVM")

    def _svm_scores(self, rows: list[int], extra: np.ndarray | None = None) -> np.ndarray:
        """Papers like a list: a linear SVM per list, the list against all other papers (as arxiv-sanity).

        Measured better than the mean of the list's vectors for same-area neighbours (benchmarks/).
        `extra` adds positives that are not papers of the index (uploaded texts).
        """
        from sklearn.svm import LinearSVC

        labels = np.zeros(len(self.papers), dtype=np.int8)
        labels[rows] = 1
        train = self.vectors
        if extra is not None and len(extra):
            train = np.vstack([self.vectors, extra])
            labels = np.concatenate([labels, np.ones(len(extra), dtype=np.int8)])
        svm = LinearSVC(C=SVM_C, class_weight="balanced", max_iter=10_000, tol=1e-6, random_state=0)
        return svm.fit(train, labels).decision_function(self.vectors)

    def shared(self, pid: str, other: str) -> tuple[list[str], tuple[str, str, float]]:
        """What two papers share: common keywords and their closest pair of sentences."""
        a, b = self.row(pid), self.row(other)
        if a is None or b is None:
            raise UnknownPaper([i for i, r in ((pid, a), (other, b)) if r is None])
        pair = self.evidence.closest_pair(a, b) if self.evidence is not None else ("", "", 0.0)
        return shared_keywords(self.papers[a], self.papers[b]), pair


def all_vectors(index, dtype=np.float32, chunk: int = 100_000) -> np.ndarray:
    """Every vector of a FAISS index by row, decoded chunk by chunk (no float32 copy of all at once)."""
    import faiss

    try:
        faiss.extract_index_ivf(index).make_direct_map()  # IVF lists need it to find a row
    except RuntimeError:
        pass  # not an IVF index
    out = np.empty((index.ntotal, index.d), dtype=dtype)
    for start in range(0, index.ntotal, chunk):
        n = min(chunk, index.ntotal - start)
        out[start:start + n] = index.reconstruct_n(start, n)
    return out


def open_engine(index_dir: Path, model=None, fingerprint: str | None = None, **options) -> Engine:
    """Load an index and its query encoder: the ONNX export the build shipped, else the model it was
    built with (or check the model given against it)."""
    data = load_index(index_dir)
    if model is None:
        model = query_model(data)
    return Engine(data, model, fingerprint, **options)


def query_model(data: IndexData):
    """What encodes queries for this index: its ONNX export (no torch), or the sentence-transformers model."""
    return load_encoder(data.path, data.manifest) or load_model(data.manifest["model"]["name"])
