"""Texts to vectors: the model and its embedding cache (embed.py), its ONNX export for queries and builds
(query_encoder.py), the export that embeds sentences several to a row (packed.py), and the multilingual space
with its encoder and the query-language detector (multilingual.py)."""
