"""The multilingual space as a part of the index (`PART`): the abstracts, their sentences and the titles embedded
by the multilingual encoder, so that a query in another language ranks the papers. The encoder, the space's
files and its loading are encoding/multilingual.py's; this declares when a build makes it and how."""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..encoding import multilingual as ml
from ..encoding.embed import encode_cached
from .evidence import flat_texts, sentence_groups
from .part import Context, Part, misses


@dataclass
class State:
    """What the multilingual stage holds in one build: the abstracts', sentences' and titles' vectors and the
    encoder's fingerprint."""
    computed: tuple | None = None


def _texts(ctx: Context) -> dict[str, list[str]]:
    return {"abstracts": [p.text for p in ctx.papers],
            "sentences": flat_texts(sentence_groups(ctx)) if ctx.options.sentences else [],
            "titles": [p.title for p in ctx.papers]}


def _compute(ctx: Context, state: State) -> None:
    o = ctx.options
    encoder = ml.MultilingualEncoder(processes=o.ml_processes)
    try:
        cache = ctx.cache(encoder.fingerprint)
        t = time.perf_counter()
        done = [encode_cached(encoder, batch, cache, o.batch_size, ctx.progress, desc=f"multilingual {name}")
                for name, batch in _texts(ctx).items()]
        vectors = [v for v, _ in done]
        ctx.embedding["seconds"]["multilingual"] = round(time.perf_counter() - t, 3)
        ctx.embedding["embedded"]["multilingual"] = sum(n for _, n in done)
    finally:
        encoder.close()
    state.computed = (*vectors, encoder.fingerprint)


def _has_work(ctx: Context, state: State) -> bool:
    return any(misses(ctx.cache(ml.fingerprint()), texts) for texts in _texts(ctx).values())


PART = Part(
    "multilingual", enabled=lambda o, r: o.multilingual,
    costs=lambda o: {"multilingual abstracts": 30.0, **({"multilingual sentences": 32.0} if o.sentences else {}),
                     "multilingual titles": 7.0},
    compute=_compute,
    write=lambda ctx, state, build_dir: ml.write_space(build_dir, *state.computed, ctx.options.ml_processes),
    state=State, has_work=_has_work, files=(ml.VECTORS, ml.SENTENCE_VECTORS, ml.TITLE_VECTORS),
    key=lambda ctx, state: [ml.fingerprint(), str(ctx.options.sentences)],
    load=lambda data, entry: ml.load_space(data.path, entry, len(data.papers)), what="multilingual space")
