"""The engine that answers queries: search by text (semantic, keyword, hybrid), similar papers, papers like
texts. It holds an index's catalogue (catalog.py), its rankers (rankers.py) and the query cache
(query_cache.py), and turns the rows they rank into results."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from . import fusion
from .parts import evidence, explore, history, lexical, registry, reviews, summaries
from .parts import multilingual as ml_part
from .parts.part import Part
from . import notices as say
from .notices import Notice, notice
from .catalog import Catalog, UnknownPaper, ordered
from .fared import Fared, place_of, places, rejections_known, tally
from .filters import NO_FILTERS, SORT_POOL, SORTS, Filters, decision_group, sort_named, spread
from .corpus import Paper
from .encoding.embed import as_encoder, load_model
from .parts.evidence import Evidence, shared_keywords
from .index import REBUILD, IndexData, IndexLoadError, load_index, read_manifest, resolve, verify_files
from .papermap import MAP
from .manifest import FORMAT, MANIFEST, Manifest, ManifestError
from .encoding.multilingual import NON_LATIN, MultilingualSpace, detect_language
from .query_cache import MAX_QUERY_CHARS, QueryCache
from .encoding.query_encoder import LazyEncoder, load_encoder
from .fusion import rrf_ranked
from .rankers import POOL, Rankers, top_rows, unit

__all__ = ["Engine", "Filters", "Hit", "IndexLoadError", "Result", "UnknownPaper", "load_query_model", "open_engine",
           "SORTS", "MAX_QUERY_CHARS", "POOL", "top_rows"]

# Shown on the empty page; tests check that each one finds a clear first hit among the seeds.
EXAMPLE_QUERIES = [
    "extending the context window of a language model without finetuning",
    "neural network equivariant to any symmetry subgroup",
    "benchmark of chemical reasoning over molecular graphs",
    "which tasks should be trained together in multi-task learning",
]

MODES = ("hybrid", "semantic", "keyword")
DEFAULT_MODE = "hybrid"   # measured best on the development sets (docs/quality.md, "Search quality")
DEFAULT_FUSION = "blend"  # weighed per kind of query (fusion.Weights); "rrf" for reciprocal-rank fusion
# Below this best cosine (in either space) nothing is close to the query; below the second, when no paper
# shares a word with it either. Development queries under 0.20 are all names BM25 finds, and none lacks a
# shared word; text that is no paper's subject falls under one or the other (benchmarks/results/ranking.md).
NOTHING_CLOSE, NO_SHARED_WORD_CLOSE = 0.20, 0.30
# An uploaded text shorter than this in words that carry meaning is no abstract or title ("port = 8501"), and
# short strings get inflated cosines ("headless = true" is 0.30 from a conference paper): such a text can't
# make an upload close.
UPLOAD_WORDS = 3
# The share of the papers a filter allows that must have their vector for the hybrid ranking to rank by meaning
# (Engine._by_words): the build's first group of vectors published (2,000 of 19,630) is above it, the seeds' 66
# vectors cached beside a venue still to embed are below it.
HYBRID_SHARE = 0.05
# ... and keeps of them those whose score is at least a share of the best one's: the 30 most relevant
# papers of a broad query are not all relevant, and a sort by rating would lift the off-topic ones.
# Shares chosen on the development questions and keyword queries together, for the most relevant papers
# among the 10 a sorted list shows (benchmarks/results/sorted.md): the hybrid match score at 0.70
# (questions 1.88 relevant papers shown against 1.72 unfloored; a keyword query's one relevant paper
# shown 0.81 times in 1 against 0.38), the cosine at 0.60 for lists ranked otherwise (1.88 and 0.46:
# the cosine separates less, so its best floor cuts little).
MATCH_FLOOR, COSINE_FLOOR = 0.70, 0.60
# Ranked by words (the build's words stage, Result.by_words) there is no cosine: the floor is a share of the
# best BM25 score, chosen as the two above (benchmarks/results/sorted_words.md): 0.60 shows 1.26 relevant papers
# of 10 on the development questions and keyword queries against 0.90 unfloored (held out: questions 1.96
# against 1.92, keyword queries 0.76 against 0.41).
WORDS_FLOOR = 0.60
# A query in another language shorter than this (in characters: Chinese packs a phrase in a few) gives the
# multilingual encoder little to go on: 让大模型同时满足多个人类偏好 ("make an LLM satisfy several human
# preferences", 14 characters) brings nothing relevant in its top 5, where the technique's name, 多目标偏好对齐
# ("multi-objective preference alignment"), or a sentence on what the paper does finds it first.
SHORT_ACROSS = 16


@dataclass
class Hit:
    paper: Paper
    score: float              # what the list is ranked by (Result.score_name says which score)
    rank: int
    evidence: list[tuple[str, float]] = field(default_factory=list)  # closest sentences
    cosine: float | None = None  # cosine similarity to the query (or the papers), whatever the ranking
    passage: reviews.Passage | None = None  # search within reviews: the review paragraph that matched

    def to_dict(self) -> dict:
        p = self.paper
        # every declared field of the paper (corpus.Fields): `venue` the venue's own words ("ICLR 2026 Oral",
        # "COLM 2024 Poster"), `conference` and `year` its short name and year, `citations` Google Scholar's count
        out = {"id": p.id, "score": round(float(self.score), 6),
               "cosine": None if self.cosine is None else round(float(self.cosine), 6), "title": p.title,
               "title_derived": p.title_derived, "abstract": p.abstract, "sources": p.sources, "topic": p.topic,
               **p.fields_dict(), "reviews": review_summary(p), "evidence": [s for s, _ in self.evidence]}
        if history.moved(p) or p.new or p.decision_from:  # where it stood at the previous fetch
            out["since_previous_fetch"] = {"new": p.new, "rating_from": p.rating_from, "move": history.move(p),
                                           "decision_from": p.decision_from or None,
                                           "reviews_added": p.reviews_added}
        if self.passage:
            out["review_passage"] = {"reviewer": self.passage.reviewer, "field": self.passage.field,
                                     "text": self.passage.text}
        return out


def review_summary(p: Paper) -> dict:
    """A paper's reviews in numbers: how many, each rating, their spread, the sub-scores' means."""
    s = spread(p)
    return {"count": p.n_ratings or len(p.ratings), "ratings": p.ratings,
            "spread": None if s is None else round(s, 4), "sub_scores": p.sub_scores}


@dataclass
class Result:
    hits: list[Hit] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)  # shown instead of, or above, the hits (notices.py)
    truncated: bool = False   # the query was longer than the model's window
    mode: str = ""
    terms: set[str] = field(default_factory=set)  # query stems, for marking matches
    language: str = "en"      # as detected; other languages rank in the multilingual space
    space: str = "english"    # "multilingual" when the query was searched across languages
    score_name: str = "cosine"  # what Hit.score is: "match" (hybrid blend), "cosine", "BM25" or "SVM"
    kind: str = ""            # how fusion.query_kind read the query (fusion.KINDS)
    sort: str = "relevance"   # the order the hits are in (filters.SORT_LIST, or a sub-score)
    matched: int = 0          # under a sort: the papers above the relevance floor, of which hits are the first
    undecided: int = 0        # of the best matches among accepted and undecided papers, how many the accepted-only
    #                           list left out for having no decision yet (Engine.search counts them)
    # The build's words stage (no abstract embedded yet, or a re-fetch's new papers not yet): progress.meaning_note
    # words these with the time left, for the page and the CLI alike.
    by_words: bool = False    # meaning was asked for, but no paper has its vector yet: ranked by BM25 alone
    waiting: bool = False     # the answer needs vectors not embedded yet (similar papers, papers like texts)
    unembedded: int = 0       # papers the filters allow that have no vector yet: found by their words only

    @property
    def message(self) -> str:
        """The notices in words (notices.py)."""
        return say.text(self.notices)

    @property
    def left_out(self) -> str:
        """The undecided matches an accepted-only list leaves out, in words ("" when none)."""
        return say.left_out(self.undecided, len(self.hits))

    @property
    def order(self) -> str:
        """What a sorted list holds, in words ("12 papers that match, best rated first"); "" by relevance."""
        if self.sort == "relevance" or not self.hits:
            return ""
        sort = sort_named(self.sort, [self.sort])
        said = say.order(self.matched, len(self.hits), sort.words)
        lacking = sum(1 for h in self.hits if sort.lacks(h.paper)) if sort.lacks else 0
        return f"{said}; {lacking} of them {sort.lacks_words}, last" if lacking else said


@dataclass
class Setup:
    """What every list starts from (Engine._setup)."""
    sort: str                     # the sort applied: relevance on an index without ratings
    notice: Notice | None         # why the sort asked for was not applied (None when it was)
    mask: np.ndarray | None       # the rows the filters allow (None: all)
    k: int                        # the list's length, within the papers allowed
    take: int                     # candidates to take: k by relevance, SORT_POOL or more to re-order
    answer: Result | None = None  # the whole answer when the filters leave no paper


@dataclass
class Read:
    """A query as the pipeline reads it (Engine._read): what is searched, how, and in which space."""
    text: str                 # as searched: cut to MAX_QUERY_CHARS, a question's words as asked
    kind: str                 # fusion.query_kind
    language: str
    mode: str                 # the mode run: "keyword" while too few papers have their vector (by_words)
    by_words: bool
    notice: Notice | None     # another language on an index that can only search it as English
    terms: set[str] = field(default_factory=set)   # its stems that carry meaning, for marking matches
    lex_scores: np.ndarray | None = None          # BM25 of every paper
    vec: np.ndarray | None = None                 # in the English space, or the multilingual one (ml)
    truncated: bool = False
    ml: fusion.Candidates | None = None          # every paper's multilingual signals
    ml_scores: np.ndarray | None = None           # their dense score, -inf where the filters leave a paper out
    sentences: Evidence | None = None             # the sentence vectors of the space it is ranked in


def score_text(hit: Hit, score_name: str) -> str:
    """The score a list is ranked by, and the cosine beside it when that is another score."""
    if score_name == "cosine" or hit.cosine is None:
        return f"{score_name} {hit.score:.3f}"
    return f"{score_name} {hit.score:.3f} · cosine {hit.cosine:.3f}"


def nothing_close(best: float, shared_word: bool = True, name_found: bool = False) -> Notice | None:
    """A notice above the list when even the closest paper is far from the query (None when one is close).

    best: the closest paper's cosine; shared_word: some paper holds one of the query's words (BM25 > 0);
    name_found: the query is a name some paper holds, close by its letters whatever its cosine."""
    if name_found or best >= (NOTHING_CLOSE if shared_word else NO_SHARED_WORD_CLOSE):
        return None
    return notice("nothing close", best=round(float(best), 4))


def nothing_close_upload(texts: list[str], best: np.ndarray) -> Notice | None:
    """The notice for uploaded texts, given each one's closest cosine: close when some text long enough to
    be an abstract or a title is close."""
    judged = [b for t, b in zip(texts, best) if len(fusion.content_words(t)) >= UPLOAD_WORDS]
    if judged:
        return nothing_close(float(max(judged)))
    return notice("nothing close to texts", words=UPLOAD_WORDS, best=round(float(max(best, default=0.0)), 4))


def above_floor(rows: list[int], scores: Iterable[float], floor: float) -> list[int]:
    """The rows (most relevant first) whose score is at least `floor` times the best of them."""
    scores = [float(c) for c in scores]
    best = max(scores, default=0.0)
    return [r for r, c in zip(rows, scores) if c >= floor * best]


def clamp(k: int, n: int) -> int:
    """A list length the user asked for, within 1 and the papers there are."""
    return max(1, min(int(k), n))


class Engine:
    """Answers queries over one loaded index: `search`, `similar`, `like_texts` and `shared`."""

    def __init__(self, data: IndexData, model, fingerprint: str | None = None, query_cache: int = 256,
                 fusion: str = DEFAULT_FUSION, weights: fusion.Weights = fusion.DEFAULT_WEIGHTS, lazy: bool = False):
        """lazy: each part of the index (BM25, the reviews, topics and map, sentences, the multilingual space, the
        reviewers' summaries, and a LazyEncoder's model) is read at its first use, so a command loads only what
        it needs (open_engine's way); otherwise all of them now, each refused at once where it cannot be read."""
        encoder = as_encoder(model, fingerprint)
        m = data.manifest
        if encoder.get_embedding_dimension() != m.dimension:
            raise IndexLoadError(f"the index at {data.path} has {m.dimension}-d vectors but "
                                 f"the query model makes {encoder.get_embedding_dimension()}-d ones; {REBUILD}")
        if encoder.fingerprint != m.model.fingerprint:
            raise IndexLoadError(f"the index at {data.path} was built with another model "
                                 f"({m.model.name}); {REBUILD} with this one")
        self.data, self.model = data, encoder
        self.papers = data.papers
        self.max_tokens = encoder.max_seq_length
        self.fusion, self.weights = fusion, weights
        # the loaders below close over `parts` and `data`, never over the engine: a cycle back to it would keep a
        # dropped engine alive past reference counting, and the page freezes engines out of the collector
        parts = self.parts = Parts(data)   # each later part as it loads (Part.load); None where absent
        fetches = m.history.fetches if m.history else 0
        self.catalog = Catalog(data.papers, fetches=fetches, explored=lambda: _explored(data, parts),
                               baseline=m.history.baseline if m.history else "")
        self.rankers = Rankers(data.vectors, m.index.exact, lambda: _bm25(data), parts, self.catalog.derived,
                               data.unembedded)
        self.queries = QueryCache(encoder, lambda: ml.encoder if (ml := parts.multilingual) else None,
                                  query_cache)
        self._fates: dict = {}
        self._places: dict | None = None   # (conference, year) -> Fate, made on first use
        self._known: set = set()           # the venue-years whose records hold rejections, made with _places
        self._changes: dict = {}
        if not lazy:
            self.load_all()

    def load_all(self) -> None:
        """Read every part of the index now (what a lazy engine reads at each part's first use)."""
        loaded = [self.parts[name] for name in self.parts]
        loaded += [self.catalog.topics, self.reviews, self.rankers.lexical, self.rankers.vectors,
                   self.rankers.ml_evidence]
        if isinstance(self.model, LazyEncoder):
            loaded.append(self.model.encoder)

    @cached_property
    def reviews(self) -> reviews.Reviews | None:
        """The reviews part: each paper's reviews one seek away, their search read at its first use."""
        try:
            return reviews.load(self.data.path, self.manifest.reviews, len(self.papers), self.data.verified)
        except (OSError, ValueError) as e:
            raise IndexLoadError(f"{self.data.path}: its reviews cannot be read ({e}); {REBUILD}") from None

    @property
    def manifest(self) -> Manifest:
        return self.data.manifest

    @property
    def vectors(self) -> np.ndarray:
        return self.rankers.vectors

    @property
    def evidence(self) -> Evidence | None:
        return self.rankers.evidence

    @property
    def multilingual(self):
        return self.rankers.multilingual

    def has_vector(self, pid: str | None = None) -> bool:
        """Whether a paper (or, without one, enough papers to rank by meaning) is embedded yet: what
        similar papers and the fared panel need."""
        embedded = self.rankers.embedded
        if embedded is None:
            return True
        if pid is None:
            return not self._by_words(None)
        row = self.catalog.row(pid)
        if row is None:
            raise UnknownPaper([pid])
        return bool(embedded[row])

    def _by_words(self, mask: np.ndarray | None, share: float = 0.5) -> bool:
        """Whether fewer than `share` of the papers the filters allow have their vector. Ranking by meaning alone
        (and the lists that need vectors: similar papers, papers like these) waits for half of them: over fewer
        it would leave most papers out. The hybrid ranking gives a paper without a vector a closeness from its
        words (rankers.by_words_closeness), so it ranks by meaning from HYBRID_SHARE on, the first group of
        vectors a build publishes (2,000 of 19,630); the seeds' 66 vectors beside a venue still to embed are
        too few to call a ranking by meaning."""
        embedded = self.rankers.embedded
        if embedded is None:
            return False
        allowed = embedded if mask is None else embedded[mask]
        return int(allowed.sum()) < share * len(allowed)

    def _unembedded(self, mask: np.ndarray | None) -> int:
        embedded = self.rankers.embedded
        if embedded is None:
            return 0
        return int((~embedded).sum() if mask is None else (mask & ~embedded).sum())

    def encode_query(self, query: str) -> tuple[np.ndarray, bool]:
        """The query vector and whether the model had to cut the query."""
        return self.queries.english(query)

    def clear_cache(self) -> None:
        """Forget cached query vectors (for timing runs that must encode every query)."""
        self.queries.clear()

    def _hits(self, rows: list[int], scores: dict[int, float] | None, cosines: Iterable[float],
              evidence=None) -> list[Hit]:
        """Rows in order as hits: each with the score the list is ranked by (the cosine where `scores` is
        None) and, given `evidence(row)`, the sentences that matched."""
        return [Hit(self.papers[r], c if scores is None else scores[r], i + 1,
                    evidence(r) if evidence else [], None if c is None else float(c))
                for i, (r, c) in enumerate(zip(rows, cosines))]

    # ------------------------------------------------------------ queries

    def search(self, query: str, k: int = 10, mode: str = DEFAULT_MODE, filters: Filters = NO_FILTERS,
               evidence: bool = True) -> Result:
        """The k papers that answer the query best under the mode and filters.

        A sort other than relevance re-orders the query's SORT_POOL most relevant papers, so it
        ranks what answers the query, not the whole conference. On the accepted papers of an index where
        some submissions have no decision yet (whole areas of a partial fetch), `Result.undecided` counts
        the undecided ones the same query ranks among its k best: the list the accepted-only view hides."""
        result = self._search(query, k, mode, filters, evidence)
        if filters.decisions == ("accepted",) and self.catalog.undecided and result.hits:
            wider = self._search(query, k, mode, replace(filters, decisions=("accepted", "undecided")), False)
            result.undecided = sum(decision_group(h.paper.decision) == "undecided" for h in wider.hits)
        return result

    def _search(self, query: str, k: int, mode: str, filters: Filters, evidence: bool) -> Result:
        """The query pipeline: read the query -> candidates, fused -> re-scored by the reviewers' summaries
        -> floor and order -> hits, with the notices that say how they were found."""
        query = (query or "").strip()
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if not query:
            return Result(notices=[notice("empty query")], mode=mode)
        setup = self._setup(filters, k, mode)
        if setup.answer:
            return setup.answer
        sort, unsorted, mask, k, n = setup.sort, setup.notice, setup.mask, setup.k, setup.take
        q = self._read(query, mode, mask)
        if isinstance(q, Result):
            return q
        rows, scores, score_name = self._ranked(q, mask, n)
        blended = dict(zip(rows.tolist(), np.asarray(scores, dtype=float).tolist()))
        rows, scores, rescored = self._rescored(q, rows, scores, score_name, n)
        score_of = dict(zip(rows[:n].tolist(), np.asarray(scores[:n], dtype=float).tolist()))
        floor_scores, floor = self._floor(q, blended, score_name)
        pool = rows[:n].tolist()
        rows, kept = self._order(pool, floor_scores, sort, k, floor)
        hits = self._found(q, rows, score_of, evidence, rescored)
        notices, unembedded = self._notices(q, hits, unsorted, mask)
        if said := self._mixed_scales(filters, sort, kept if sort != "relevance" else pool):  # what was ordered
            notices.append(said)
        return Result(hits, notices, q.truncated, mode, q.terms, q.language,
                      "english" if q.ml is None else "multilingual", score_name, q.kind, sort, len(kept),
                      by_words=q.by_words, unembedded=unembedded)

    def _read(self, query: str, mode: str, mask: np.ndarray | None) -> Read | Result:
        """The query's language, kind, the mode it runs in and its vector in the space it is ranked in; a
        Result where it cannot be searched (a script the index has no space for)."""
        rk = self.rankers
        language = detect_language(query[:2000], rk.lexical.english_word)
        missing = "multilingual coming" if "multilingual" in self.manifest.pending else "no multilingual"
        told = notice(missing, language=language) if language != "en" and not rk.multilingual else None
        if told and language == NON_LATIN:  # surely not English: English-only vectors would rank noise
            return Result(notices=[told], mode=mode, language=language)
        kind = fusion.query_kind(query[:MAX_QUERY_CHARS])
        query = fusion.as_asked(query, kind)
        text = query[:MAX_QUERY_CHARS]
        by_words = mode != "keyword" and self._by_words(mask, HYBRID_SHARE if mode == "hybrid" else 0.5)
        q = Read(text, kind, language, "keyword" if by_words else mode, by_words, told,
                 terms=rk.lexical.meaningful(lexical.query_terms(text)), lex_scores=rk.lexical.scores(text))
        if by_words:  # the words stage: no vector to compare the query with
            return q
        if language != "en" and rk.multilingual:  # MiniLM knows English only: rank across languages
            q.vec = self.queries.across_languages(text)
            q.ml, q.sentences = rk.multilingual_candidates(q.vec), rk.ml_evidence
            scores = q.ml.dense(self.weights)
            q.ml_scores = scores if mask is None else np.where(mask, scores, -np.inf)
        else:
            q.vec, q.truncated = self.queries.english(query)
            q.sentences = rk.evidence
        return q

    def _cosines(self, q: Read, rows) -> np.ndarray:
        return self.rankers.cosines(rows, q.vec) if q.ml is None else q.ml_scores[rows]

    def _ranked(self, q: Read, mask: np.ndarray | None, n: int) -> tuple[np.ndarray, np.ndarray, str]:
        """The candidates in the query's mode, best first, with their scores and the score's name."""
        rk, pool = self.rankers, max(POOL, n)

        def dense(m: int) -> np.ndarray:
            return rk.dense(q.vec, m, mask) if q.ml is None else top_rows(q.ml_scores, m)

        if q.mode == "semantic":
            rows = dense(n)
            return rows, self._cosines(q, rows), "cosine"
        lex_rows = rk.lexical_rows(q.lex_scores, pool, mask)
        if q.mode == "keyword":
            return lex_rows, q.lex_scores[lex_rows], "BM25"
        rows, scores = fusion.fuse(rk.candidates(q.vec, dense(pool), lex_rows, q.lex_scores, q.ml), q.kind,
                                   self.fusion, self.weights)
        return rows, scores, "match"

    def _rescored(self, q: Read, rows: np.ndarray, scores: np.ndarray, score_name: str, n: int):
        """The English blend's best re-scored by the reviewers' summaries (the view its weight was chosen
        over: summaries.py), and whether they were."""
        rk = self.rankers
        if not (score_name == "match" and q.ml is None and rk.summaries is not None and self.fusion == "blend"):
            return rows, scores, False
        top = max(POOL, n)
        return (*summaries.rescore(rows[:top], scores[:top], rk.summaries.best(rows[:top], q.vec)), True)

    def _floor(self, q: Read, blended: dict[int, float], score_name: str):
        """What a sorted list's relevance floor is measured on, and the floor."""
        if score_name == "match":  # the floor is measured on the blend, before the summaries' view
            return (lambda r: [blended[i] for i in r]), MATCH_FLOOR
        if q.vec is None:  # ranked by words: the share of the best BM25 score
            return (lambda r: [blended[i] for i in r]), WORDS_FLOOR
        return (lambda r: self._cosines(q, r)), COSINE_FLOOR

    def _found(self, q: Read, rows: list[int], score_of: dict[int, float], evidence: bool,
               rescored: bool) -> list[Hit]:
        """The rows as hits: each with its cosine (none for a paper not embedded yet), the sentences that
        matched, and the reviewer's summary that lifted it where one did."""
        rk = self.rankers
        cosines = [None] * len(rows) if q.vec is None else self._cosines(q, rows)
        if rk.embedded is not None:  # a paper without its vector has no cosine to show
            cosines = [c if rk.embedded[r] else None for r, c in zip(rows, cosines)]
        explain = (lambda r: q.sentences.best(r, q.vec)) if evidence and q.sentences is not None else None
        hits = self._hits(rows, score_of, cosines, explain)
        if explain and rescored and self.reviews:
            for h, row in zip(hits, rows):
                if h.cosine is not None:
                    h.passage = self._summary_said(row, q.vec, h.cosine, q.terms)
        return hits

    def _mixed_scales(self, filters: Filters, sort: str, pool: list[int]) -> Notice | None:
        """Where a list is sorted by the reviews' numbers and its papers' venues rate on different scales, or a
        minimum rating applies across such venues (it leaves out every paper of the smaller scale), say so."""
        named = sort_named(sort, self.catalog.sub_scores)
        if filters.min_rating is not None:
            rows = self.catalog.mask(replace(filters, min_rating=None))
        elif sort != "relevance" and named.needs == "has_ratings":
            rows = pool
        else:
            return None
        said = self.catalog.scales_said(rows)
        return notice("mixed scales", scales=said) if said else None

    def _notices(self, q: Read, hits: list[Hit], unsorted: Notice | None,
                 mask: np.ndarray | None) -> tuple[list[Notice], int]:
        """What the list says above it, and how many of the papers searched have no vector yet."""
        messages = [notice("by words") if q.by_words else None, unsorted]
        if q.truncated:
            messages.append(notice("truncated", tokens=self.max_tokens))
        elif not hits:
            messages.append(notice("no word" if q.by_words else "no word, try meaning"))
        if any(h.cosine is not None for h in hits) and q.mode != "keyword":
            matched = bool(q.lex_scores.max() > 0)
            # across languages BM25 rarely has a word to share: the cosine alone decides there
            best = max(h.cosine for h in hits if h.cosine is not None)
            messages.append(nothing_close(best, matched or q.ml is not None, q.kind == "name" and matched))
        if q.ml is not None and len(q.text.strip()) < SHORT_ACROSS:
            messages.append(notice("across short"))
        if q.notice:  # a Latin-script language may be misread English: searched in English, and said so
            messages += [q.notice, notice("searched as English")]
        unembedded = 0 if q.mode == "keyword" and not q.by_words else self._unembedded(mask)
        if unembedded and not q.by_words:
            messages.append(notice("new left out" if q.mode == "semantic" else "new by words", n=unembedded))
        return [m for m in messages if m], unembedded

    def _setup(self, filters: Filters, k: int, mode: str, exclude: list[int] = ()) -> Setup:
        """What every list starts from. The sort falls back to relevance, and says so, on an index without
        ratings; a sort takes SORT_POOL candidates to re-order, relevance k; `answer` is the Result to give
        when the filters leave no paper."""
        sort, unsorted = filters.sort, None
        named = sort_named(sort, self.catalog.sub_scores)  # ValueError for a sort this index cannot give
        if not named.offered(self.catalog.facts):
            sort, unsorted = "relevance", notice("no citations" if named.needs == "has_citations" else "no ratings")
        mask = self.catalog.mask(filters)
        if len(exclude):
            mask = np.ones(len(self.papers), dtype=bool) if mask is None else mask.copy()
            mask[exclude] = False
        if not self.papers or (mask is not None and not mask.any()):
            other = "other " if len(exclude) else ""
            return Setup(sort, unsorted, mask, 0, 0, Result(
                notices=[n for n in (notice("no paper", other=other), unsorted) if n], mode=mode))
        k = clamp(k, len(self.papers) if mask is None else int(mask.sum()))
        return Setup(sort, unsorted, mask, k, k if sort == "relevance" else max(k, SORT_POOL))

    def _summary_said(self, row: int, vec: np.ndarray, cosine: float, terms: set[str]) -> reviews.Passage | None:
        """The reviewer's summary closest to the query, where it says the query better than the abstract
        does: why a paper the reviewers' words lifted is in the list (one seek into the reviews part)."""
        i, best = self.rankers.summaries.closest(row, vec)
        if i < 0 or best <= cosine:
            return None
        review = self.rankers.summaries.review_of(row, i, self.reviews.of(row)["reviews"])
        return reviews.Passage(row, review.get("reviewer", ""), "summary",
                               reviews.best_paragraph(review["summary"], terms), best)

    def _order(self, rows: list[int], scores, sort: str, k: int,
               floor: float = COSINE_FLOOR) -> tuple[list[int], list[int]]:
        """The first k rows under the sort, and the rows it kept and re-ordered: by relevance none (all rows
        stand as ranked); sorted, those whose score (`scores(rows)`: cosines unless said) is above the floor."""
        if sort == "relevance":
            return rows[:k], []
        kept = above_floor(rows, scores(rows), floor)
        return ordered(kept, self.papers, sort)[:k], kept

    def similar(self, ids: list[str], k: int = 10, filters: Filters = NO_FILTERS, mode: str = "hybrid") -> Result:
        """The papers nearest to the given ones together, never one of them.

        Several ids rank by a per-list SVM (mode "svm"). For one paper, hybrid (the default, measured best
        for same-area neighbours) fuses the vector ranking with BM25 using the papers' own text as the
        query; semantic uses the vectors alone.
        """
        rows = self.catalog.rows(ids)
        mode = "svm" if len(rows) > 1 else mode
        setup = self._setup(filters, k, mode, exclude=rows)
        if setup.answer:
            return setup.answer
        sort, unsorted, mask, k, n = setup.sort, setup.notice, setup.mask, setup.k, setup.take
        rk = self.rankers
        if rk.embedded is not None:  # the words stage: a paper without its vector has no neighbours yet
            rows = [r for r in rows if rk.embedded[r]]
            if not rows:
                whose = "this paper's abstract is" if len(ids) == 1 else "these papers' abstracts are"
                return Result(notices=[notice("waiting", what="Similar papers", whose=whose)], mode=mode,
                              waiting=True)
        vec = unit(rk.vectors[rows].mean(axis=0, keepdims=True))
        if mode == "svm":
            svm = np.where(mask, rk.svm_scores(rows), -np.inf)
            found = top_rows(svm, n).tolist()
            score_of, score_name = {r: float(svm[r]) for r in found}, "SVM"
        elif mode == "hybrid":
            lex = rk.lexical.scores(" ".join(self.papers[r].text for r in rows), question=False)
            fused, scores = rrf_ranked([rk.dense(vec, max(POOL, n), mask),
                                        rk.lexical_rows(lex, max(POOL, n), mask)])
            found = fused[:n].tolist()
            score_of, score_name = dict(zip(found, scores[:n].tolist())), "match"
        else:
            found = rk.dense(vec, n, mask).tolist()
            score_of, score_name = None, "cosine"
        found, kept = self._order(found, lambda r: rk.cosines(r, vec), sort, k)
        return Result(self._hits(found, score_of, rk.cosines(found, vec).tolist()), [n for n in [unsorted] if n],
                      mode=mode,
                      score_name=score_name, sort=sort, matched=len(kept))

    def like_texts(self, texts: list[str], k: int = 10, filters: Filters = NO_FILTERS) -> Result:
        """Papers like some texts (uploaded abstracts or titles). One text is a query: ranked as the same text
        pasted in the search box (100 unindexed abstracts, precision@10 by area 0.438 and by keyword 0.188,
        against 0.430 and 0.154 for an SVM trained on the one text: benchmarks/results/like_one.md); several,
        by the per-list SVM with the texts as positives."""
        texts = [t.strip()[:MAX_QUERY_CHARS] for t in texts if t and t.strip()]
        if not texts:
            return Result(notices=[notice("no text")], mode="svm")
        if len(texts) == 1:
            result = self.search(texts[0], k, DEFAULT_MODE, filters)
            told = any(n.kind.startswith("nothing close") for n in result.notices)
            if len(fusion.content_words(texts[0])) < UPLOAD_WORDS and result.hits and not told:  # no abstract nor title
                best = max((h.cosine for h in result.hits if h.cosine is not None), default=0.0)
                result.notices.append(nothing_close_upload(texts, np.array([best])))
            return result
        setup = self._setup(filters, k, "svm")
        if setup.answer:
            return setup.answer
        sort, unsorted, mask, k, n = setup.sort, setup.notice, setup.mask, setup.k, setup.take
        rk = self.rankers
        if self._by_words(mask):
            return Result(notices=[notice("waiting", what="Papers like these texts", whose="the abstracts are")],
                          mode="svm", waiting=True)
        extra = self.model.encode(texts)
        scores = rk.svm_scores([], extra)
        found = top_rows(scores if mask is None else np.where(mask, scores, -np.inf), n).tolist()
        centre = unit(extra.mean(axis=0))
        found, kept = self._order(found, lambda r: rk.cosines(r, centre), sort, k)
        hits = self._hits(found, {r: float(scores[r]) for r in found}, rk.cosines(found, centre).tolist())
        # each text's own closest paper: a list of far texts is far even when their centre happens not to be
        with_vectors = rk.vectors if rk.embedded is None else rk.vectors[rk.embedded]
        best = (with_vectors @ extra.T).max(axis=0) if len(with_vectors) else np.zeros(len(texts))
        told = [n for n in (unsorted, nothing_close_upload(texts, best)) if n]
        return Result(hits, told, mode="svm", score_name="SVM", sort=sort, matched=len(kept))

    def review_record(self, pid: str) -> dict:
        """A paper's decision, meta-review and every review with its scores and texts, read from the index's
        reviews part ({"id", "reviews": []} on an index without reviews); UnknownPaper for an unknown id."""
        row = self.catalog.row(pid)
        if row is None:
            raise UnknownPaper([pid])
        p = self.papers[row]
        record = self.reviews.of(row) if self.reviews else {"id": p.id, "reviews": []}
        return {"id": p.id, "title": p.title, "decision": p.decision, "venue": p.venue, "tldr": p.tldr,
                "url": p.url, "summary": review_summary(p), **record}

    def changes(self, since: str | None = None) -> history.Changes:
        """What changed since the previous fetch (or the last fetch on or before `since`, an ISO date): read
        from the index's history, not at load; HistoryError where `since` names no fetch."""
        if since not in self._changes:  # read once a build: 19,630 papers' histories take a second to read
            self.data.verified(*history.FILES)
            self._changes[since] = history.changes(history.load(self.data.path), self.papers, since)
        return self._changes[since]

    def rating_history(self, pid: str) -> list[history.Point]:
        """A paper's ratings over time: each review as posted and edited, and each fetch's ([] without)."""
        record = self.review_record(pid)
        self.data.verified(*history.FILES)
        fetches = history.load_fetches(self.data.path)
        return history.timeline(history.paper_entry(self.data.path, record["id"]), fetches, record["reviews"])

    def search_reviews(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> Result:
        """Papers ranked by what their reviews say, each with the review paragraph that matched and its
        reviewer (BM25 over the reviews' text fields: reviews.py)."""
        query = (query or "").strip()
        if not query:
            return Result(notices=[notice("empty review query")], mode="reviews")
        if not (self.reviews and self.reviews.searchable):
            if self.reviews and "review search" in self.manifest.pending:
                return Result(notices=[notice("reviews coming")], mode="reviews")
            why = ("this index holds no reviews" if not self.reviews else
                   "this index was built with --no-review-search")
            return Result(notices=[notice("no reviews", why=why)], mode="reviews")
        mask = self.catalog.mask(filters)
        if mask is not None and not mask.any():
            return Result(notices=[notice("no paper", other="")], mode="reviews")
        found = self.reviews.search(query[:MAX_QUERY_CHARS], mask, clamp(k, len(self.papers)))
        hits = [Hit(self.papers[x.row], x.score, i + 1, passage=x) for i, x in enumerate(found)]
        return Result(hits, [] if hits else [notice("no review word")], mode="reviews", score_name="BM25",
                      terms=set(lexical.tokenize(query)))

    def fared(self, query: str = "", pid: str = "", texts: list[str] = (), k: int = 50) -> Fared:
        """How the k submissions nearest to a query, a paper (never itself) or some texts fared: their
        decisions and ratings, beside the whole venue's and the primary area's. It describes; it does
        not predict (benchmarks/results/fared.md: how little the neighbours' share tells). Before the paper
        (or, for a query, any paper) is embedded, ValueError: ask `has_vector` first."""
        if not self.has_vector(pid or None):
            raise ValueError("how similar submissions fared needs the abstracts' vectors, still being embedded")
        exclude: list[int] = []
        area = ""
        if pid:
            row = self.catalog.row(pid)
            if row is None:
                raise UnknownPaper([pid])
            vec, exclude, area = self.rankers.vectors[row:row + 1], [row], self.papers[row].primary_area
        elif query.strip():
            vec, _ = self.queries.english(query.strip()[:MAX_QUERY_CHARS])
        else:
            texts = [t.strip()[:MAX_QUERY_CHARS] for t in texts if t and t.strip()]
            if not texts:
                raise ValueError("fared needs a query, a paper or a text")
            vec = unit(self.model.encode(texts).mean(axis=0, keepdims=True))
        mask = None
        if exclude:
            mask = np.ones(len(self.papers), dtype=bool)
            mask[exclude] = False
        rows = self.rankers.dense(vec, clamp(k, len(self.papers) - len(exclude)), mask).tolist()
        neighbours = [self.papers[r] for r in rows]
        if not area:  # the area most of the neighbours are in
            areas = [p.primary_area for p in neighbours if p.primary_area]
            area = max(set(areas), key=areas.count) if areas else ""
        return Fared(neighbours=tally(neighbours, self.rejections_known), ids=[p.id for p in neighbours],
                     venue=self.fate(None), area=area, area_fate=self.fate(area) if area else None,
                     places=places(neighbours, self.place_fate),
                     whole="the whole venue" if len(self.venue_years()) <= 1 else
                     f"every venue of the index ({len(self.venue_years())} venue-years)")

    def fate(self, area: str | None = None):
        """The venue's (None) or an area's fate, tallied once: 19,630 papers take some 20 ms."""
        if area not in self._fates:
            self._fates[area] = tally((p for p in self.papers if area is None or p.primary_area == area),
                                      self.rejections_known)
        return self._fates[area]

    def venue_years(self) -> list[tuple[str, int | None]]:
        """Every (conference, year) the index holds papers of; papers whose record names no venue (the seed
        lists beside a fetched venue) are none: they make no second venue of a one-venue index."""
        self.place_fate("", None)
        return [place for place in self._places if place[0]]

    def rejections_known(self, p: Paper) -> bool:
        """Whether the paper's venue-year's record holds its rejections (else its list has accepted papers only,
        and no rate is made from it)."""
        self.place_fate("", None)
        return place_of(p) in self._known

    def author(self, name: str):
        """An author's page (people.Author): their papers by venue and year, co-authors, affiliations; None where
        no paper of the index names them (an anonymous record names nobody)."""
        from . import people

        return people.author(self.papers, name, self.catalog.columns["authors"])

    def authors_like(self, part: str, n: int = 10) -> list[str]:
        """Authors whose names contain `part`, most papers first (for a name that is no author's whole name)."""
        from . import people

        return people.names_like(self.papers, part, n)

    def place_fate(self, conference: str, year: int | None):
        """A venue-year's every paper, tallied (for where work like this appears): every venue-year in one pass
        over the papers, once an engine."""
        if self._places is None:
            groups: dict = {}
            for p in self.papers:
                groups.setdefault(place_of(p), []).append(p)
            self._places = {key: tally(ps) for key, ps in groups.items()}
            self._known = {key for key, fate in self._places.items() if rejections_known(fate)}
        return self._places.get((conference, year)) or tally([])

    def shared(self, pid: str, other: str) -> tuple[list[str], tuple[str, str, float]]:
        """What two papers share: common keywords and their closest pair of sentences."""
        a, b = self.catalog.row(pid), self.catalog.row(other)
        if a is None or b is None:
            raise UnknownPaper([i for i, r in ((pid, a), (other, b)) if r is None])
        evidence = self.rankers.evidence
        pair = evidence.closest_pair(a, b) if evidence is not None else ("", "", 0.0)
        return shared_keywords(self.papers[a], self.papers[b]), pair


class Parts(Mapping):
    """The later parts of the index the engine holds (parts.registry.PARTS), None where the index has none: each
    through its typed accessor (`explore`, `sentences`, `multilingual`, `summaries`), or by name. Their manifest
    entries are checked at once (ManifestError -> IndexLoadError); each part's files are verified against their
    checksums and read at its first use (`loaded` names those read so far)."""

    def __init__(self, data: IndexData):
        self.data, self.loaded = data, {}
        self.entries = {}
        for part in registry.PARTS:
            if part.load is None:
                continue
            try:
                self.entries[part.name] = part, data.manifest.entry(part.entry, part.kind)
            except ManifestError as e:
                raise IndexLoadError(f"{data.path / MANIFEST} is not a format-{FORMAT} manifest ({e}); {REBUILD}") from None

    def __getitem__(self, name: str):
        if name not in self.loaded:
            part, entry = self.entries[name]
            self.loaded[name] = _load_part(self.data, part, entry) if entry else None
        return self.loaded[name]

    def __iter__(self):
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def explore(self) -> tuple[list, list[dict]] | None:
        """The topics and the map's points (parts.explore.load)."""
        return self[explore.PART.name]

    @property
    def sentences(self) -> evidence.Evidence | None:
        return self[evidence.PART.name]

    @property
    def multilingual(self) -> MultilingualSpace | None:
        return self[ml_part.PART.name]

    @property
    def summaries(self) -> summaries.Summaries | None:
        return self[summaries.PART.name]


def _load_part(data: IndexData, part: Part, entry):
    """A part's files checked and loaded as its declaration says; IndexLoadError names one that cannot be read."""
    try:
        data.verified(*part.files)
        return part.load(data, entry)
    except (OSError, ValueError) as e:
        raise IndexLoadError(f"{data.path}: its {part.what} cannot be read ({e}); {REBUILD}") from None


def _explored(data: IndexData, parts: Parts) -> tuple:
    """The topics and map points (parts.explore.load), when the build made them; a map that lacks a paper is
    refused."""
    topics, points = parts.explore or ([], [])
    if points and {p.id for p in data.papers} - {point["id"] for point in points}:
        raise IndexLoadError(f"{data.path / MAP} lacks some papers; {REBUILD}")
    return topics, points


def _bm25(data: IndexData) -> lexical.Lexical:
    try:
        data.verified(lexical.BM25_DIR + "/")
        return lexical.Lexical(data.path, len(data.papers))
    except (OSError, ValueError, KeyError) as e:
        raise IndexLoadError(f"{data.path}: its BM25 index cannot be read ({e}); {REBUILD}") from None


def _query_encoder(path: Path, manifest: Manifest):
    """The ONNX query encoder of the index at `path`, its files checked; refused where its vectors are not the
    index's width."""
    entry = manifest.query_encoder
    verify_files(path, {f: meta for f, meta in manifest.files.items() if f in (entry.file, entry.tokenizer)})
    encoder = load_encoder(path, manifest)
    if encoder.get_embedding_dimension() != manifest.dimension:
        raise IndexLoadError(f"the index at {path} has {manifest.dimension}-d vectors but the query "
                             f"model makes {encoder.get_embedding_dimension()}-d ones; {REBUILD}")
    return encoder


def load_query_model(name: str):
    """The sentence-transformers model of that name as a query encoder: for an index without its ONNX export
    (a server loads it once and hands it to open_engine as `fallback`)."""
    return as_encoder(load_model(name))


def open_engine(index_dir: Path, model=None, fingerprint: str | None = None, fallback=load_model,
                prefetch: bool = False, **options) -> Engine:
    """Load an index and answer queries over it, encoded by its ONNX export (no torch), else by `model`, else
    by `fallback(name)` of the model the index names (a loader that shares one model, as the page's does).
    prefetch: load the query encoder in a thread while the papers are read (for a command that encodes a query)."""
    path = resolve(index_dir)
    encoder = None
    if model is None:
        try:
            manifest = read_manifest(path)
        except IndexLoadError:
            manifest = None  # load_index says what is wrong
        if manifest is not None and manifest.query_encoder:
            encoder = LazyEncoder(manifest, lambda: _query_encoder(path, manifest))
            if prefetch:
                encoder.prefetch()
    data = load_index(path if path.exists() else index_dir)
    if model is None:
        model = encoder if encoder and data.manifest.query_encoder else fallback(data.manifest.model.name)
    return Engine(data, model, fingerprint, **{"lazy": True, **options})
