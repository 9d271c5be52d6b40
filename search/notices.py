"""What a list says above it. The engine gives typed notices (a kind and its values); they are worded here
once, for the page, the CLI's table and its --json (which also gives them as data), so an answer's meaning
never hangs on an English sentence built inside the engine."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Each kind of notice and its words; {name} is one of the notice's values.
WORDS = {
    "empty query": "Type a question or a topic to search.",
    "empty review query": "Type what the reviews should say.",
    "no text": "No text to compare with.",
    "no paper": "No {other}paper matches these filters.",
    "no ratings": "This index has no review ratings (the seed lists carry none), so the list is by relevance.",
    "no citations": "This index has no citation counts (only venue lists carry them), so the list is by relevance.",
    "mixed scales": ("These papers' venues rate on different scales ({scales}): sorted or filtered by rating, "
                     "they compare unlike numbers. Choose one venue to compare within it."),
    "no multilingual": (
        "This query looks like another language ({language}), and this index was built without the "
        "multilingual space (--no-multilingual), so it can only match English. Rebuild it with "
        "`python index_build.py` (the multilingual space is on by default) to search across "
        "languages, or ask in English."),
    "multilingual coming": (
        "This query looks like another language ({language}). The index's multilingual space is not built "
        "yet, so for now it can only match English: ask in English, or again once it is there."),
    "searched as English": "It was searched as English.",
    "across short": ("Short queries in another language match less well: name the technique, or say in a "
                     "sentence what the paper does (or ask in English)."),
    "truncated": ("Your text is longer than the model's window of {tokens} tokens; only its beginning was "
                  "searched."),
    "no word": "No paper contains these words.",
    "no word, try meaning": "No paper contains these words. Try the semantic or hybrid mode.",
    "nothing close": ("Nothing in this index is close to this (the closest paper's similarity is {best:.2f}); "
                      "the list below is the least far. Try other words, or check what was searched."),
    "nothing close to texts": (
        "Nothing in this index is close to these texts: none reads like an abstract or a title (each has "
        "fewer than {words} words that carry meaning; the closest paper's similarity is {best:.2f}). The list "
        "below is the least far."),
    # the build's words stage (build.py): the page and the CLI add whether the build runs and its time left
    # (progress.with_build_notes, by PART_OF)
    "by words": "Ranked by words for now: the abstracts are not all embedded yet, and ranking by meaning follows.",
    "new by words": ("{n:,} of the papers searched are not embedded yet; until they are, they are found by their "
                     "words only."),
    "new left out": ("{n:,} of the papers searched are not embedded yet, and ranking by meaning alone leaves them "
                     "out until they are; the hybrid mode finds them by their words."),
    "waiting": "{what} come once {whose} embedded.",
    "reviews coming": ("Search within reviews is not built yet; the reviews themselves are on each paper's page "
                       "meanwhile."),
    "no reviews": ("Search within reviews needs an index with reviews; {why}. Fetch a venue "
                   "(`python -m search fetch`) and build its index."),
    "no review word": "No review uses these words. Try other words, or search the abstracts.",
}
# The notices of a part of the index a build has still to publish, and that part (a build stage): the page and the
# CLI add whether the build runs and when the part comes (progress.with_build_notes)
PART_OF = {"by words": "abstracts", "new by words": "abstracts", "new left out": "abstracts", "waiting": "abstracts",
           "reviews coming": "review search", "multilingual coming": "multilingual"}


@dataclass(frozen=True)
class Notice:
    """One thing a list says: its kind (a key of WORDS) and the values its words take."""
    kind: str
    values: tuple[tuple[str, object], ...] = ()

    @property
    def words(self) -> str:
        return WORDS[self.kind].format(**dict(self.values))

    def to_dict(self) -> dict:
        return {"kind": self.kind, **dict(self.values)}


def notice(kind: str, **values) -> Notice:
    if kind not in WORDS:
        raise KeyError(f"no words for the notice {kind!r}")
    return Notice(kind, tuple(sorted(values.items())))


def text(notices: Iterable[Notice | None]) -> str:
    """Notices in words, in order, as one paragraph ("" for none)."""
    return " ".join(n.words for n in notices if n)


def left_out(undecided: int, shown: int) -> str:
    """The undecided matches an accepted-only list leaves out ("" when none)."""
    if not undecided:
        return ""
    verb = "has" if undecided == 1 else "have"
    return (f"{undecided} of the {shown} best matches among accepted and undecided submissions {verb} no "
            "decision yet, and this list of accepted papers leaves them out.")


def order(matched: int, shown: int, sort_words: str) -> str:
    """What a sorted list holds ("12 papers that match, best rated first")."""
    first = f"the first {shown} of " if matched > shown else ""
    return f"{first}{matched} {'paper that matches' if matched == 1 else 'papers that match'}, {sort_words}"
