"""An abstract's sentences (for "why this result")."""
from __future__ import annotations

import re

_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[$\\*])")


def split_sentences(text: str) -> list[str]:
    """Split an abstract into sentences; abbreviations like 'e.g.' do not end one."""
    guarded = re.sub(r"\b(e\.g|i\.e|et al|etc|vs|cf|Fig|Eq|resp)\.", lambda m: m.group(0).replace(".", "\x00"),
                     text)
    return [s.replace("\x00", ".").strip() for s in _SENT_SPLIT.split(guarded) if s.strip()]
