"""The query encoder the page and CLI use: the build's model exported to ONNX, run by onnxruntime.

A query is one short text; torch and sentence-transformers cost seconds to import and milliseconds of
Python overhead per call, while the same network in onnxruntime answers in a fraction of that
(benchmarks/experiments/bench_backends.py). The build exports the model once (cached by model fingerprint) and
ships the file and its tokenizer beside the vectors, so serving needs neither torch nor the model
package. The pooling and normalisation of all-MiniLM-L6-v2 (mean over tokens, L2) are part of the graph.
"""
from __future__ import annotations

import threading

import os
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..manifest import EncoderEntry, Manifest

ONNX = "query_encoder.onnx"
TOKENIZER = "tokenizer.json"
BACKENDS = ("onnx", "onnx-int8", "openvino", "openvino-int8")


def aside(path: Path, suffix: str) -> Path:
    """A private name beside `path` to write to before renaming: two builds sharing a cache may export
    at once, and each renames only its own file into place."""
    return path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(3).hex()}{suffix}")


def trace(module, inputs: dict, output: str, path: Path, output_axes: dict | None = None) -> None:
    """Write `module` as ONNX at `path`, every input's first two axes (batch, tokens) dynamic."""
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    axes = {name: {0: "batch", 1: "tokens"} for name in inputs} | {output: output_axes or {0: "batch"}}
    with torch.no_grad(), warnings.catch_warnings():
        # the tracer warns of shape checks it fixes as constants; they hold for every input here
        # (tests compare the exports with torch on short and truncated texts)
        warnings.simplefilter("ignore")
        # the TorchScript exporter: the newer one needs onnxscript, one more dependency for no gain here
        torch.onnx.export(module, tuple(inputs.values()), str(path), input_names=list(inputs), output_names=[output],
                          dynamic_axes=axes, opset_version=17, dynamo=False)


def export(model, out: Path, quantize: bool = False) -> Path:
    """Write `model` (a SentenceTransformer with mean pooling) as ONNX at `out`, int8 weights if asked."""
    import torch

    transformer = model[0].auto_model.eval()

    class Pooled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask):
            hidden = self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    sample = model.tokenizer(["a query", "a longer query text"], padding=True, return_tensors="pt")
    plain = aside(out, ".fp32.tmp" if quantize else ".tmp")
    trace(Pooled(transformer), {"input_ids": sample["input_ids"], "attention_mask": sample["attention_mask"]},
          "embedding", plain)
    if quantize:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp = aside(out, ".tmp")
        quantize_dynamic(str(plain), str(tmp), weight_type=QuantType.QInt8)
        plain.unlink()
        plain = tmp
    os.replace(plain, out)
    return out


def export_path(fingerprint: str, cache_dir: Path, quantize: bool) -> Path:
    return cache_dir / fingerprint[:24] / ("query_encoder-int8.onnx" if quantize else "query_encoder.onnx")


def cached(path: Path) -> Path | None:
    """An export made before, with its tokenizer beside it (what runs without the model loaded), or None."""
    return path if path.is_file() and (path.parent / TOKENIZER).is_file() else None


def exported(model, fingerprint: str, cache_dir: Path, quantize: bool) -> Path:
    """The model's ONNX file from the cache, exported on the first call for this model fingerprint.

    Its tokenizer is saved beside it, so the file can be run on its own (`OnnxEncoder`)."""
    path = export_path(fingerprint, cache_dir, quantize)
    if not path.is_file():
        export(model, path, quantize)
    if not (path.parent / TOKENIZER).is_file():
        save_tokenizer(model, path.parent / TOKENIZER)
    return path


def save_tokenizer(model, path: Path) -> None:
    """The model's fast tokenizer as one JSON file, written aside and renamed."""
    tmp = aside(path, ".tmp")
    model.tokenizer.backend_tokenizer.save(str(tmp))
    os.replace(tmp, path)


def exportable(model) -> bool:
    """The graph above reproduces models of a transformer, mean pooling and normalisation only."""
    names = [type(m).__name__ for m in model]
    mode = getattr(model[1], "pooling_mode", None) if len(names) > 1 else None
    return names == ["Transformer", "Pooling", "Normalize"] and mode in ("mean", ["mean"], ("mean",))


class Network:
    """An ONNX file compiled by onnxruntime or OpenVINO: `run(feed)` gives its first output."""

    def __init__(self, onnx_path: Path, runtime: str = "onnxruntime", threads: int | None = None,
                 precision: str | None = None):
        self.runtime = runtime
        if runtime == "onnxruntime":
            import onnxruntime as ort

            opts = ort.SessionOptions()
            # idle workers that spin take the 2nd core from the FAISS search that follows each encode
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if threads:
                opts.intra_op_num_threads = threads
            self._session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
            self._output = self._session.get_outputs()[0].name
            self.precision = "f32"
        elif runtime == "openvino":
            import openvino as ov

            config = {"INFERENCE_NUM_THREADS": threads} if threads else {}
            if precision:  # f32 or bf16; unset, OpenVINO picks bf16 itself where the CPU has it
                config["INFERENCE_PRECISION_HINT"] = precision
            compiled = ov.Core().compile_model(str(onnx_path), "CPU", config)
            self._request, self._output = compiled.create_infer_request(), compiled.outputs[0]
            self.precision = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        else:
            raise ValueError(f"unknown runtime {runtime!r}")

    def run(self, feed: dict) -> np.ndarray:
        if self.runtime == "onnxruntime":
            return self._session.run([self._output], feed)[0]
        return self._request.infer(feed)[self._output].copy()


def load_tokenizer(tokenizer_path: Path, max_tokens: int | None):
    """The model's tokenizer with no padding, cutting texts at `max_tokens` (None: never)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path))
    tok.no_padding()
    if max_tokens is None:
        tok.no_truncation()
    else:
        tok.enable_truncation(max_length=max_tokens)
    return tok


class OnnxEncoder:
    """Encodes texts like the SentenceTransformer it was exported from, with onnxruntime or OpenVINO."""

    def __init__(self, onnx_path: Path, tokenizer_path: Path, max_tokens: int, fingerprint: str,
                 runtime: str = "onnxruntime", threads: int | None = None, precision: str | None = None):
        self.max_seq_length = max_tokens
        self.fingerprint = fingerprint     # of the model the file was exported from (the manifest's)
        self._count = load_tokenizer(tokenizer_path, None)
        self._tok = load_tokenizer(tokenizer_path, max_tokens)
        self._network = Network(onnx_path, runtime, threads, precision)
        self.dimension = int(self.encode(["dimension probe"]).shape[1])

    @property
    def backend(self) -> str:
        """The runtime and the precision it computes in: 'openvino bf16', 'onnxruntime f32'."""
        return f"{self._network.runtime} {self._network.precision}"

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def count_tokens(self, text: str) -> int:
        """Tokens with [CLS] and [SEP], before truncation."""
        return len(self._count.encode(text).ids)

    def feeds(self, texts: list[str], batch_size: int = 32):
        """The network's inputs for `texts`, a batch at a time, padded to the batch's longest text."""
        for start in range(0, len(texts), batch_size):
            encs = self._tok.encode_batch(texts[start:start + batch_size])
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), width), dtype=np.int64)
            mask = np.zeros((len(encs), width), dtype=np.int64)
            for i, e in enumerate(encs):
                ids[i, :len(e.ids)] = e.ids
                mask[i, :len(e.ids)] = 1
            yield {"input_ids": ids, "attention_mask": mask}

    def encode(self, texts: list[str], batch_size: int = 32, **_ignored) -> np.ndarray:
        """L2-normalised float32 vectors (keyword options of SentenceTransformer.encode are accepted)."""
        out = [self._network.run(feed) for feed in self.feeds(texts, batch_size)]
        return np.concatenate(out).astype(np.float32, copy=False)


def document_encoder(onnx_file: Path, max_seq_length: int, fingerprint: str, runtime: str) -> OnnxEncoder:
    """The build's encoder of abstracts and sentences: the cached export (see `exported`) in `runtime`."""
    return OnnxEncoder(onnx_file, onnx_file.parent / TOKENIZER, max_seq_length, fingerprint, runtime)


def write_encoder(build_dir: Path, onnx_file: Path) -> EncoderEntry:
    """Copy the ONNX file and the tokenizer saved beside it into a build; returns the manifest entry."""
    shutil.copyfile(onnx_file, build_dir / ONNX)
    shutil.copyfile(onnx_file.parent / TOKENIZER, build_dir / TOKENIZER)
    return EncoderEntry(ONNX, TOKENIZER, "onnxruntime", "int8" if "int8" in onnx_file.name else "float32")


def load_encoder(index_path: Path, manifest: Manifest, threads: int | None = None) -> OnnxEncoder | None:
    """The index's query encoder, or None when the build shipped none."""
    entry = manifest.query_encoder
    if entry is None:
        return None
    return OnnxEncoder(index_path / entry.file, index_path / entry.tokenizer, manifest.model.max_seq_length,
                       manifest.model.fingerprint, entry.runtime, threads)



class LazyEncoder:
    """The index's query encoder, loaded at its first use by `load` (which checks it against the index): a
    command that encodes no query (stats, topics, a paper's reviews, export) pays neither onnxruntime's import
    nor the model's compile (0.3 s of CPU at start: benchmarks/results/start.md). What the engine asks before
    a query (the model, its length and dimension) is the manifest's."""

    def __init__(self, manifest: Manifest, load: Callable[[], OnnxEncoder]):
        entry = manifest.query_encoder
        self.max_seq_length, self.fingerprint = manifest.model.max_seq_length, manifest.model.fingerprint
        self.dimension = manifest.dimension
        self.backend = f"{entry.runtime} f32" if entry.runtime == "onnxruntime" else entry.runtime
        self._load = load
        self._encoder: OnnxEncoder | None = None
        self._lock = threading.Lock()
        self._loading: threading.Thread | None = None

    def prefetch(self) -> None:
        """Start loading in a thread, for a command that will encode a query: hashing the model's file and reading
        it leave the interpreter's lock free, so they overlap the papers' reading (a cold `query` on an idle
        2-core machine: benchmarks/results/start.md). A load that fails there is tried again, and its error
        raised, at the first use."""
        def load() -> None:
            try:
                self.encoder
            except Exception:  # said at the first use, where the command can report it
                pass

        self._loading = threading.Thread(target=load, daemon=True, name="query-encoder")
        self._loading.start()

    def settle(self) -> None:
        """Wait for a prefetch to end (a process must not exit while onnxruntime is loading in a thread)."""
        if self._loading is not None:
            self._loading.join()

    @property
    def encoder(self) -> OnnxEncoder:
        with self._lock:
            if self._encoder is None:
                self._encoder = self._load()
            return self._encoder

    def get_embedding_dimension(self) -> int:
        return self.dimension if self._encoder is None else self._encoder.dimension

    def count_tokens(self, text: str) -> int:
        return self.encoder.count_tokens(text)

    def encode(self, texts: list[str], batch_size: int = 32, **options) -> np.ndarray:
        return self.encoder.encode(texts, batch_size, **options)
