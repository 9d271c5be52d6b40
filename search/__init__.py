"""Semantic search over paper abstracts: corpus, embedding, index, engine."""
