"""Why a result matched: sentence vectors made at build time, the closest sentences, shared keywords. `PART`
declares the sentences as a part of the index (parts.part.Part)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..corpus import Paper
from ..encoding import packed
from ..encoding.embed import vectors_fingerprint
from ..sentences import split_sentences
from ..text import clean_for_model
from .part import Context, Part, embed, misses

SENTENCES = "sentences.jsonl"        # one JSON list of display sentences per paper, in index order
SENTENCE_VECTORS = "sentences.npy"   # float16 rows, all papers' sentences one after another
SENTENCE_OFFSETS = "sentence_offsets.npy"


def paper_sentences(papers: list[Paper]) -> list[list[str]]:
    return [split_sentences(p.abstract) or [p.abstract] for p in papers]


def write(out_dir: Path, sentences: list[list[str]], vectors: np.ndarray) -> int:
    """Write each paper's sentences and their vectors into a build; returns the manifest entry (the count)."""
    with open(out_dir / SENTENCES, "w", encoding="utf-8") as f:
        for s in sentences:
            f.write(json.dumps(s, ensure_ascii=False) + "\n")
    offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in sentences])
    # float16 halves the file; cosine ranking of a paper's few sentences is unchanged at this precision
    np.save(out_dir / SENTENCE_VECTORS, vectors.astype(np.float16))
    np.save(out_dir / SENTENCE_OFFSETS, offsets)
    return int(vectors.shape[0])


def flat_texts(sentences: list[list[str]]) -> list[str]:
    """What the model embeds for each sentence: the sentence without markup."""
    return [clean_for_model(s) for group in sentences for s in group]


@dataclass
class Evidence:
    sentences: list[list[str]]
    vectors: np.ndarray
    offsets: np.ndarray

    @classmethod
    def load(cls, index_dir: Path) -> "Evidence":
        with open(index_dir / SENTENCES, encoding="utf-8") as f:
            sentences = [json.loads(line) for line in f]
        vectors = np.load(index_dir / SENTENCE_VECTORS, allow_pickle=False).astype(np.float32)
        offsets = np.load(index_dir / SENTENCE_OFFSETS, allow_pickle=False)
        return cls(sentences, vectors, offsets)

    def _rows(self, row: int) -> np.ndarray:
        return self.vectors[self.offsets[row]:self.offsets[row + 1]]

    def best(self, row: int, query_vec: np.ndarray, n: int = 2) -> list[tuple[str, float]]:
        """The n sentences of a paper closest to the query, in abstract order."""
        scores = self._rows(row) @ query_vec.ravel()
        top = sorted(np.argsort(-scores)[:n])
        return [(self.sentences[row][i], float(scores[i])) for i in top]

    def closest_pair(self, a: int, b: int) -> tuple[str, str, float]:
        """The pair of sentences, one from each paper, that say the most alike thing."""
        sim = self._rows(a) @ self._rows(b).T
        i, j = np.unravel_index(int(np.argmax(sim)), sim.shape)
        return self.sentences[a][i], self.sentences[b][j], float(sim[i, j])


def shared_keywords(a: Paper, b: Paper) -> list[str]:
    theirs = {k.casefold() for k in b.keywords}
    return [k for k in a.keywords if k.casefold() in theirs]


# ---------------------------------------------------------------- the part, as the build and the engine see it

def sentence_groups(ctx: Context) -> list[list[str]]:
    """Each abstract's sentences, split once a build: the sentences' part and the multilingual space embed them."""
    return ctx.derived("sentences", lambda: paper_sentences(ctx.papers))


@dataclass
class State:
    """What the sentences' stage holds in one build."""
    vectors: np.ndarray | None = None
    embedded: int = 0                  # sentences the cache lacked


def cache_key(ctx: Context) -> str:
    # packed sentences agree with unpacked ones to a cosine of 0.99997, not bit for bit: their own key
    return vectors_fingerprint(ctx.fingerprint, ctx.sentence_encoder.backend)


def _compute(ctx: Context, state: State) -> None:
    state.vectors, state.embedded = embed(ctx, "sentences", ctx.sentence_encoder, flat_texts(sentence_groups(ctx)),
                                          cache_key(ctx), chunk=packed.CHUNK if ctx.packed_file else None)


PART = Part(
    "sentences", enabled=lambda o, r: o.sentences, costs=lambda o: {"sentences": 81.0}, compute=_compute,
    write=lambda ctx, state, build_dir: write(build_dir, sentence_groups(ctx), state.vectors), state=State,
    has_work=lambda ctx, state: misses(ctx.cache(cache_key(ctx)), flat_texts(sentence_groups(ctx))),
    files=(SENTENCES, SENTENCE_VECTORS, SENTENCE_OFFSETS), key=lambda ctx, state: [cache_key(ctx)],
    load=lambda data, entry: Evidence.load(data.path),
    report=lambda state, reused: {"embedded_sentences": state.embedded})
