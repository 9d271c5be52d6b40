"""The later parts of the index, each declared once in its own module (parts.part.Part), in the order a build
makes them: the one list the build (build.py) and the engine (engine.py) both read. Neither the build nor the
engine names a part to run or load it; the engine's typed accessors (engine.Parts) name the parts it uses."""
from __future__ import annotations

from . import evidence, explore, multilingual, review_search, summaries
from .part import Part

# Cheapest first, so that what is quick is there soon: topics and the map (about a minute at 19,630 papers),
# search within reviews (40 s), the sentences of "why this result" (about 6 minutes), the multilingual space
# (about 5), the reviewers' summaries (four texts a paper, the longest).
PARTS: tuple[Part, ...] = (explore.PART, review_search.PART, evidence.PART, multilingual.PART, summaries.PART)
STAGES = tuple(p.name for p in PARTS)

