"""Embedding many short texts: several to a row of the network, each attending only to itself.

The sentences of "why this result" average 36 tokens. One to a row, the network's matrices are small
and the build read them at three quarters of the token rate of whole abstracts; packed into rows of
128 tokens, each sentence keeps its own positions (from 0) and its attention is masked to its own
tokens, so each comes out as it would alone (cosine 0.99997 to torch's vector of it, as unpacked
OpenVINO bf16 gives) at 1.3-1.4x the sentences a second (benchmarks/experiments/results/floor.md).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .query_encoder import TOKENIZER, OnnxEncoder, aside, save_tokenizer, trace

ONNX = "sentence_encoder.onnx"
WIDTH = 128  # tokens a packed row holds: wider rows spend more on attention that the mask throws away
ROWS = 32    # rows a call of the network computes
# texts handed over at once, and so between two progress reports: packing needs texts of many lengths to fill its
# rows, but 1,024 of the seeds' sentences fill them 98.4% against 4,096's 98.6% (0.2% more rows), and on an AVX2
# CPU in f32 (about 34 sentences/s) 4,096 left the progress at "0 of 12,130" for two minutes (a new user's run)
CHUNK = 1024


def pack(lengths: list[int], width: int) -> list[list[int]]:
    """Indexes of texts grouped into rows of at most `width` tokens: longest first, each into the first
    row with room (first-fit decreasing); a text longer than `width` has a row to itself."""
    rows: list[list[int]] = []
    room: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        row = next((r for r, free in enumerate(room) if free >= lengths[i]), None)
        if row is None:
            rows.append([i])
            room.append(width - lengths[i])
        else:
            rows[row].append(i)
            room[row] -= lengths[i]
    return rows


def export_packed(model, out: Path) -> Path:
    """Write `model`'s transformer as ONNX at `out`: token vectors of rows whose `segments` (1, 2, ...;
    0 for padding) say which tokens belong together; a token attends only to its own segment."""
    import torch

    class Packed(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, position_ids, segments):
            hidden = self.inner.embeddings(input_ids=input_ids, position_ids=position_ids)
            own = (segments[:, :, None] == segments[:, None, :]).unsqueeze(1)
            mask = torch.where(own, 0.0, torch.finfo(hidden.dtype).min).to(hidden.dtype)
            return self.inner.encoder(hidden, attention_mask=mask).last_hidden_state

    ids = torch.tensor([[101, 2023, 102, 101, 2003, 1037, 102, 0]])
    sample = {"input_ids": ids, "position_ids": torch.tensor([[0, 1, 2, 0, 1, 2, 3, 0]]),
              "segments": torch.tensor([[1, 1, 1, 2, 2, 2, 2, 0]])}
    tmp = aside(out, ".tmp")
    trace(Packed(model[0].auto_model.eval()), sample, "tokens", tmp, {0: "batch", 1: "tokens"})
    os.replace(tmp, out)
    return out


def packed_path(fingerprint: str, cache_dir: Path) -> Path:
    return cache_dir / fingerprint[:24] / ONNX


def exported_packed(model, fingerprint: str, cache_dir: Path) -> Path:
    """The packed export from the cache (beside the plain one), made on the first call for this model."""
    path = packed_path(fingerprint, cache_dir)
    if not path.is_file():
        export_packed(model, path)
    if not (path.parent / TOKENIZER).is_file():
        save_tokenizer(model, path.parent / TOKENIZER)
    return path


class PackedEncoder(OnnxEncoder):
    """An `Encoder` for short texts through `export_packed`'s file: mean of each text's own token vectors,
    L2-normalised, as the SentenceTransformer gives them one at a time."""

    def __init__(self, onnx_path: Path, max_tokens: int, fingerprint: str, runtime: str = "openvino",
                 width: int = WIDTH, rows: int = ROWS):
        self.width, self.rows = width, rows
        super().__init__(onnx_path, onnx_path.parent / TOKENIZER, max_tokens, fingerprint, runtime)

    @property
    def backend(self) -> str:
        """'openvino bf16, packed 128': vectors that agree with the unpacked backend's, not bit for bit."""
        return f"{super().backend}, packed {self.width}"

    def encode(self, texts: list[str], batch_size: int = 32, **_ignored) -> np.ndarray:
        """L2-normalised float32 rows, one per text (`batch_size` is not used: a call computes `rows` rows)."""
        if not texts:
            return np.zeros((0, self.dimension), np.float32)
        ids = [e.ids for e in self._tok.encode_batch(texts)]
        rows = pack([len(i) for i in ids], self.width)
        out = None
        for start in range(0, len(rows), self.rows):
            batch = rows[start:start + self.rows]
            width = max(sum(len(ids[i]) for i in row) for row in batch)
            feed = {name: np.zeros((len(batch), width), np.int64) for name in ("input_ids", "position_ids", "segments")}
            spans = []
            for r, row in enumerate(batch):
                at = 0
                for k, i in enumerate(row):
                    n = len(ids[i])
                    feed["input_ids"][r, at:at + n] = ids[i]
                    feed["position_ids"][r, at:at + n] = np.arange(n)
                    feed["segments"][r, at:at + n] = k + 1
                    spans.append((i, r, at, at + n))
                    at += n
            tokens = self._network.run(feed)
            if out is None:
                out = np.empty((len(texts), tokens.shape[2]), np.float32)
            for i, r, a, b in spans:
                out[i] = tokens[r, a:b].mean(0)
        return out / np.linalg.norm(out, axis=1, keepdims=True)
