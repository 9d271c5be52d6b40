"""Build the search index from abstract files: python index_build.py [INPUT ...] [--out DIR]."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from search.background import job_lock, status_file, stoppable
from search.build import BuildOptions, build_index, stage_costs
from search.corpus import carries_reviews, input_files
from search.guard import run_guarded
from search.index import BuildBusy, Superseded
from search.encoding.embed import BACKENDS, DEFAULT_BACKEND, DEFAULT_MODEL
from search.progress import ProgressLog


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Embed abstracts into a FAISS index directory.")
    ap.add_argument("inputs", nargs="*", type=Path, default=[Path("seeds")],
                    help="seed .txt lists, .jsonl or .csv exports (a fetch's), Paper Copilot's venue lists "
                         "(<venue><year>.json or .json.gz), or directories of them, in any mix (default: seeds/)")
    ap.add_argument("--out", type=Path, default=Path("index"), help="index directory (default: index/)")
    ap.add_argument("--model", default=DEFAULT_MODEL,
                    help="sentence-transformers model name or local path (default: all-MiniLM-L6-v2, offline)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default=None, help="cpu, cuda or mps (default: cpu)")
    ap.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                    help="what embeds the papers on the CPU: the model's ONNX export in OpenVINO (default, "
                         "the fastest measured) or onnxruntime, or torch (always torch with --device or "
                         "--processes)")
    ap.add_argument("--processes", type=int, default=0,
                    help="embed in this many worker processes (sentence-transformers' pool; default: one)")
    ap.add_argument("--index-type", default="auto",
                    help="FAISS factory string, search parameters after a colon: Flat, "
                         "IVF4096,SQfp16:nprobe=32, HNSW32,SQ8:efSearch=128 (default: auto = exact "
                         "up to 50,000 papers, IVF with fp16 codes above)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="embedding cache directory (default: .embedding_cache/ beside the index)")
    ap.add_argument("--multilingual", action=argparse.BooleanOptionalAction, default=True,
                    help="a second, multilingual vector space, so queries in Chinese, French, ... find these "
                         "papers (default: on; --no-multilingual saves about a quarter of the build time)")
    ap.add_argument("--review-search", action=argparse.BooleanOptionalAction, default=True,
                    help="index the reviews' texts for search within reviews, where the inputs carry reviews "
                         "(default: on; see docs/performance.md for its cost)")
    ap.add_argument("--summaries", action=argparse.BooleanOptionalAction, default=True,
                    help="embed the reviewers' summaries, where the inputs carry reviews, so that a search ranks "
                         "by what reviewers wrote a paper does too (default: on; the build's last stage, some "
                         "4 texts a paper: docs/performance.md)")
    ap.add_argument("--skip-bad-lines", action="store_true",
                    help="skip malformed lines with a warning each instead of stopping at the first")
    args = ap.parse_args(argv)
    if args.batch_size < 1:
        ap.error("--batch-size must be at least 1")
    if args.processes < 0:
        ap.error("--processes must be 0 or more")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # on a terminal tqdm draws the bars; to a log file or a pipe, a line every 10 s per stage
    options = BuildOptions(model_name=args.model, batch_size=args.batch_size, cache_dir=args.cache,
                           device=args.device, skip_bad=args.skip_bad_lines, multilingual=args.multilingual,
                           index_spec=args.index_type, processes=args.processes, backend=args.backend,
                           review_search=args.review_search, summaries=args.summaries)
    # the status file beside the index: the page and `python -m search query` read the time left from it
    progress = ProgressLog(status_file=status_file(args.out),
                           costs=stage_costs(options, carries_reviews(args.inputs)))
    input_files(args.inputs)  # a path that is not there stops here, before a running build is replaced for it
    # a build of this index running now (the page's, or another index_build.py) is replaced by this one, which
    # takes every vector it embedded from the cache: after a re-fetch the fresh data comes soonest that way
    with stoppable(progress, args.out), job_lock(args.out, replace=True) as held:
        if held.superseded:
            print(f"stopped: {held.why}", file=sys.stderr)
            return 1
        if not held:
            raise BuildBusy(held.why)
        try:
            if held.replaced:
                print(held.replaced, file=sys.stderr)
            progress.update(state="running", replaced=held.replaced, message="")
            report = build_index(args.inputs, args.out, options, progress=progress)
        except Superseded as e:
            progress.update(state="superseded" if e.replaced else "stopped", message=str(e))
            print(f"stopped: {e}", file=sys.stderr)
            return 1
        progress.update(state="done")
    for line in report.notes:
        print(f"note: {line}", file=sys.stderr)
    for line in report.skipped:
        print(f"warning: skipped {line}", file=sys.stderr)
    if report.skipped:
        print(f"warning: {len(report.skipped)} malformed line(s) skipped; they are not in the index",
              file=sys.stderr)
    print(f"indexed {report.count} papers ({report.embedded} embedded, {report.count - report.embedded} "
          f"from cache) in {report.seconds:.1f}s -> {args.out} ({report.path.name})")
    if report.history is not None and report.history.fetches > 1:
        print(f"what changed since the fetch of {report.history.baseline[:10]}: python -m search changes"
              + (f" --index {args.out}" if str(args.out) != "index" else ""))
    return 0


def run(argv: list[str] | None = None) -> int:
    """The script as a shell runs it: the exit code, failures as one line on stderr."""
    return run_guarded(lambda: main(argv))


if __name__ == "__main__":
    sys.exit(run())
