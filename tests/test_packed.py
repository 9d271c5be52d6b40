"""Sentences packed several to a row come out as each would alone."""
from __future__ import annotations

import numpy as np
import pytest

from search.index import load_index
from search.encoding.packed import PackedEncoder, exported_packed, pack


def test_pack_fills_rows_longest_first_without_splitting_a_text():
    lengths = [50, 120, 30, 70, 200, 60, 10]
    rows = pack(lengths, 128)
    assert sorted(i for row in rows for i in row) == list(range(len(lengths)))  # each text once
    assert rows[0] == [4]                                                    # longer than a row: alone
    assert all(sum(lengths[i] for i in row) <= 128 for row in rows[1:])
    assert rows[1:] == [[1], [3, 0], [5, 2, 6]]                                # first fit, longest first
    assert pack([], 128) == []


def test_pack_of_many_short_texts_leaves_little_room():
    lengths = list(np.random.default_rng(0).integers(8, 70, size=2000))
    rows = pack(lengths, 128)
    assert sum(lengths) / (128 * len(rows)) > 0.95


@pytest.fixture(scope="module")
def packed_encoder(tmp_path_factory, model, fingerprint):
    return PackedEncoder(exported_packed(model, fingerprint, tmp_path_factory.mktemp("packed")), 256, fingerprint)


def test_packed_vectors_match_torch_one_text_at_a_time(packed_encoder, model):
    texts = ["We propose a sparse attention kernel.", "Diffusion models for video editing.", "GRPO",
             "A sentence " + "that goes on and on " * 20,        # about 125 tokens: shares a row with little
             "transformers for graphs " * 120]                   # past the model's 256 tokens: cut, as torch cuts
    ours = packed_encoder.encode(texts)
    theirs = model.encode(texts, normalize_embeddings=True)
    assert ours.shape == theirs.shape and np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)
    assert np.sum(ours * theirs, axis=1).min() > 0.9995
    # the same text beside others in a row as alone: attention never crosses into a neighbour
    alone = packed_encoder.encode(texts[:1])
    assert float(alone[0] @ ours[0]) > 0.9999
    assert packed_encoder.count_tokens(texts[-1]) > 256 and packed_encoder.backend.endswith("packed 128")
    assert packed_encoder.encode([]).shape == (0, 384)


def test_build_embeds_sentences_packed_and_says_so(seed_index, model):
    from search.parts.evidence import Evidence, flat_texts

    data, evidence = load_index(seed_index), Evidence.load(seed_index)
    assert data.manifest.embedding["sentences_backend"].endswith(", packed 128")
    theirs = model.encode(flat_texts(evidence.sentences), normalize_embeddings=True)
    assert len(theirs) == data.manifest.sentences > 66
    # stored as float16: a cosine within 1e-3 of torch's own
    assert np.sum(evidence.vectors.astype(np.float32) * theirs, axis=1).min() > 0.999
