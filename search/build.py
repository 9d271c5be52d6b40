"""The offline build: read the corpus, embed it (through the cache), write and publish the index."""
from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import evidence, lexical
from . import index as ix
from . import layout
from . import query_encoder as qe
from . import topics as tp
import numpy as np

from .corpus import input_files, load_corpus
from .embed import (DEFAULT_BACKEND, DEFAULT_MODEL, EmbeddingCache, cpu_description, encode_cached,
                    load_model, model_dimension, model_fingerprint, start_pool, vectors_fingerprint)
from .multilingual import NAME as ML_NAME
from .multilingual import SENTENCE_VECTORS as MULTI_SENTENCES
from .multilingual import TITLE_VECTORS as MULTI_TITLES
from .multilingual import VECTORS as MULTI_VECTORS
from .multilingual import MultilingualEncoder
from .progress import Progress


@dataclass
class BuildReport:
    path: Path
    count: int
    embedded: int                      # abstracts that were not in the cache
    seconds: float
    embedded_sentences: int = 0        # sentences (for "why this result") not in the cache
    timings: dict = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    explore_reused: bool = False       # topics and map copied from the previous build


def explore_key(papers: list, corpus_fingerprint: str, model_fingerprint: str) -> str:
    """Topics and map depend on the corpus (keywords too, for labels), the model and the methods only."""
    keywords = sorted(f"{p.id}\t{'; '.join(p.keywords)}" for p in papers if p.keywords)
    text = "\n".join([corpus_fingerprint, model_fingerprint, tp.METHOD, layout.METHOD, *keywords])
    return hashlib.sha256(text.encode()).hexdigest()


def previous_explore(out: Path, key: str) -> Path | None:
    """The published build whose topics and map can be reused as they are, if any."""
    if not out.exists():
        return None
    try:
        old = ix.resolve(out)
        manifest = ix.read_manifest(old)
        ix.verify_files(old, {"files": {n: m for n, m in manifest["files"].items()
                                        if n in (tp.TOPICS, layout.MAP)}})
    except (ix.IndexLoadError, OSError, KeyError):
        return None
    ok = (manifest.get("explore") or {}).get("key") == key
    return old if ok and (old / tp.TOPICS).is_file() and (old / layout.MAP).is_file() else None


def inputs_digest(inputs: list[Path]) -> str:
    """sha256 over the input files' names and bytes, in any order: equal digests, equal index inputs."""
    parts = sorted(f"{f.name}\t{ix.file_digest(f)}" for f in input_files(inputs))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _announce(progress: Progress | None, stage: str) -> None:
    """A stage without a count starts (topics, map, writing): the bar names it instead of sitting full."""
    if progress:
        progress(stage, 0, 1)


def default_cache_dir(out: Path) -> Path:
    return out.parent / ".embedding_cache"


def build_index(inputs: list[Path], out: Path, model_name: str = DEFAULT_MODEL, batch_size: int = 32,
                cache_dir: Path | None = None, device: str | None = None, skip_bad: bool = False,
                model=None, progress: Progress | None = None, sentences: bool = True,
                multilingual: bool = False, explore: bool = True, query_encoder: bool = True,
                index_spec: str = ix.AUTO, processes: int = 0, backend: str = DEFAULT_BACKEND,
                ml_processes: int = min(os.cpu_count() or 1, 4)) -> BuildReport:
    """Build an index from input files and publish it at `out`; the old index stays until then.

    `backend` embeds the papers: the model's ONNX export in OpenVINO or onnxruntime, or torch (always
    torch on another device or in a pool of processes, and for a model the export cannot reproduce);
    the multilingual space is embedded in `ml_processes` worker processes."""
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    with ix.build_lock(out):
        papers, skipped = load_corpus(inputs, skip_bad=skip_bad)
        timings["read"] = time.perf_counter() - t0

        t = time.perf_counter()
        model = model if model is not None else load_model(model_name, device)
        fingerprint = model_fingerprint(model)
        ix.check_spec(index_spec, model_dimension(model))
        timings["model"] = time.perf_counter() - t

        if device not in (None, "cpu") or processes > 1 or not qe.exportable(model):
            backend = "torch"
        onnx_file = None
        if (query_encoder or backend != "torch") and qe.exportable(model):
            # the same file serves queries (no torch when serving) and, in `backend`, the build
            t = time.perf_counter()
            onnx_file = qe.exported(model, fingerprint, cache_dir or default_cache_dir(out), quantize=False)
            timings["export"] = time.perf_counter() - t

        t = time.perf_counter()
        encoder = model if backend == "torch" else qe.document_encoder(onnx_file, model, fingerprint, backend)
        embedding = {"backend": getattr(encoder, "backend", "torch"), "batch_size": batch_size,
                     "cpu": cpu_description()}
        _announce(progress, f"embedding with {embedding['backend']} on {embedding['cpu']['name']} "
                            f"({', '.join(embedding['cpu']['flags']) or 'no AVX2'})")
        vectors_key = vectors_fingerprint(fingerprint, embedding["backend"])
        cache = EmbeddingCache(cache_dir or default_cache_dir(out), vectors_key)
        # sentence vectors serve "why this result" only; an evaluation run can skip them
        sentence_groups = evidence.paper_sentences(papers) if sentences else []
        with start_pool(model, processes if backend == "torch" else 0, device) as pool:
            t_abstracts = time.perf_counter()
            vectors, embedded = encode_cached(encoder, [p.text for p in papers], cache, batch_size, progress,
                                              desc="abstracts", pool=pool)
            t_sentences = time.perf_counter()
            sentence_vectors, embedded_sentences = encode_cached(
                encoder, evidence.flat_texts(sentence_groups), cache, batch_size, progress, desc="sentences",
                pool=pool)
        timings["embed"] = time.perf_counter() - t
        embedding["seconds"] = {"abstracts": round(t_sentences - t_abstracts, 3),
                                "sentences": round(time.perf_counter() - t_sentences, 3)}
        embedding["embedded"] = {"abstracts": embedded, "sentences": embedded_sentences}
        if multilingual:
            t = time.perf_counter()
            ml = MultilingualEncoder(processes=ml_processes)
            try:
                ml_cache = EmbeddingCache(cache_dir or default_cache_dir(out), ml.fingerprint)
                ml_vectors, _ = encode_cached(ml, [p.text for p in papers], ml_cache, batch_size, progress,
                                              desc="multilingual abstracts")
                ml_sentences, _ = encode_cached(ml, evidence.flat_texts(sentence_groups), ml_cache, batch_size,
                                                progress, desc="multilingual sentences")
                ml_titles, _ = encode_cached(ml, [p.title for p in papers], ml_cache, batch_size, progress,
                                             desc="multilingual titles")
            finally:
                ml.close()
            timings["multilingual"] = time.perf_counter() - t

        corpus_fp = ix.corpus_fingerprint(papers)
        reused_from = None
        if explore:  # topics and the map; an evaluation run can skip them
            t = time.perf_counter()
            key = explore_key(papers, corpus_fp, vectors_key)
            reused_from = previous_explore(out, key)
            if reused_from is not None:
                topics = tp.read_topics(reused_from / tp.TOPICS)
            else:
                _announce(progress, "topics")
                topics = tp.compute_topics(papers, vectors)
                _announce(progress, "map")
                xy = layout.layout(vectors)
            topic_of = tp.assignments(topics)
            for p in papers:
                p.topic = topic_of.get(p.id)
            timings["topics_map"] = time.perf_counter() - t

        t = time.perf_counter()
        _announce(progress, "writing the index")
        build_dir = ix.new_build_dir(out)
        ix.write_papers(build_dir / ix.PAPERS, papers)
        t_vec = time.perf_counter()
        index_meta = ix.write_vectors(build_dir / ix.VECTORS, vectors, index_spec)
        timings["faiss"] = time.perf_counter() - t_vec
        if sentences:
            evidence.write(build_dir, sentence_groups, sentence_vectors)
        lexical.build([p.text for p in papers], build_dir / lexical.BM25_DIR)
        encoder_meta = qe.write_encoder(build_dir, onnx_file, model) if onnx_file and query_encoder else None
        if explore and reused_from is not None:
            for name in (tp.TOPICS, layout.MAP):
                shutil.copyfile(reused_from / name, build_dir / name)
        elif explore:
            tp.write_topics(build_dir / tp.TOPICS, topics)
            layout.write_map(build_dir / layout.MAP, [p.id for p in papers], xy, topic_of)
        if multilingual:
            ix.write_vectors(build_dir / MULTI_VECTORS, ml_vectors)
            np.save(build_dir / MULTI_SENTENCES, ml_sentences.astype(np.float16))
            np.save(build_dir / MULTI_TITLES, ml_titles.astype(np.float32))
        manifest = {
            "format": ix.FORMAT,
            "model": {"name": model_name, "fingerprint": fingerprint,
                      "max_seq_length": int(model.max_seq_length)},
            "dimension": model_dimension(model),
            "count": len(papers),
            "metric": "cosine (inner product of L2-normalised vectors)",
            "embedding": embedding,
            "index_type": index_meta["class"],
            "index": index_meta,
            "lexical": "BM25 (bm25s, Lucene variant, k1=1.5, b=0.75) over cleaned title + abstract, "
                       "English stop words, Snowball stems",
            "sentences": int(sentence_vectors.shape[0]),
            "corpus_fingerprint": corpus_fp,
            "explore": {"key": key, "topics": len(topics), "topics_method": tp.METHOD,
                        "map_method": layout.METHOD, "reused": reused_from is not None} if explore else None,
            "query_encoder": encoder_meta,
            "inputs": [str(p) for p in inputs],
            "inputs_digest": inputs_digest(inputs),
            "multilingual": {"model": ML_NAME, "fingerprint": ml.fingerprint, "dimension": 512,
                             "sentences": int(ml_sentences.shape[0]), "processes": ml_processes,
                             "tokenizer": "sentencepiece"} if multilingual else None,
            "skipped_lines": len(skipped),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "library_versions": ix.library_versions(),
        }
        timings["write"] = time.perf_counter() - t - timings["faiss"]
        manifest["build_seconds"] = round(time.perf_counter() - t0, 3)
        manifest["stage_seconds"] = {k: round(v, 3) for k, v in timings.items()}
        ix.write_manifest(build_dir, manifest)
        final = ix.publish(build_dir, out)
        if progress:
            progress("published", 1, 1)
    return BuildReport(path=final, count=len(papers), embedded=embedded,
                       embedded_sentences=embedded_sentences,
                       seconds=time.perf_counter() - t0, timings=timings, skipped=skipped,
                       explore_reused=reused_from is not None)
