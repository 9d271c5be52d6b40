"""What a build makes and how (`BuildOptions`): read by the build (build.py) and by each part of the index it
makes (parts/registry.py), which does not import the build."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import index as ix
from .encoding.embed import DEFAULT_BACKEND, DEFAULT_MODEL


@dataclass(frozen=True)
class BuildOptions:
    """What to build and how. index_build.py turns the multilingual space on; a library call leaves it off."""
    model_name: str = DEFAULT_MODEL
    batch_size: int = 32
    cache_dir: Path | None = None      # default: .embedding_cache/ beside the index
    device: str | None = None          # torch's device; anything but the CPU embeds with torch
    skip_bad: bool = False             # skip malformed lines (each reported) instead of stopping
    sentences: bool = True             # sentence vectors for "why this result"; an evaluation run can skip them
    multilingual: bool = False
    explore: bool = True               # topics and the map; an evaluation run can skip them
    query_encoder: bool = True         # ship the ONNX export, so queries need no torch
    index_spec: str = ix.AUTO
    processes: int = 0                 # torch worker processes (sentence-transformers' pool)
    backend: str = DEFAULT_BACKEND     # openvino, onnxruntime or torch
    ml_processes: int = min(os.cpu_count() or 1, 4)  # worker processes of the multilingual space
    review_search: bool = True         # BM25 over the reviews' texts (benchmarks/results/reviews.md: its cost)
    summaries: bool = True             # the reviewers' summaries embedded, a view of each paper (summaries.py)
    staged: bool = True                # publish the abstracts' index first, then each later stage as it lands
    # publish the abstracts' stage and stop, the rest left pending: the page's first build of the seeds
    # when a conference follows, whose build does the rest for both (the seeds' sentences and multilingual
    # space, 10 s, would delay the conference's first answer by as much)
    first_stage_only: bool = False
    # Abstracts missing from the cache at which the papers are published by words before they are embedded:
    # 200 abstracts embed in about 5 s on two cores (benchmarks/results/first_run_venue.md: 19,642 in 436 s),
    # about what a publish costs, so fewer are embedded before the first publish.
    words_first: int = 200
    # While the abstracts are embedded after a words stage, the papers are published again every this many
    # abstracts (and at least PUBLISH_SHARE of the time between publishes spent embedding): the embedded papers
    # ranked by meaning, the rest by words. Without AVX-512 BF16 OpenVINO computes in f32, and no backend, thread
    # count, batch size or order was faster on two AVX2 cores (benchmarks/results/embed_cpu_avx2.md; f32 ran at
    # 27.7 abstracts/s against bf16's 45.9 on the AVX-512 CPU of build.md), so meaning takes a venue's whole
    # abstracts' stage to come unless it comes in parts; 2,000 abstracts are a tenth of a venue of 19,630, above
    # engine.HYBRID_SHARE. 0: publish once, when every abstract is embedded.
    publish_every: int = 2000
