"""What the page draws, from what the library computed: cards (cards.py), safe text and maths (display.py),
charts (figures.py) and a reading list's files (export.py). The page reaches the library through the engine and
these; the names below are what it uses."""
from .cards import Card, card, cards_html, result_cards, review_folds, review_table, similar_card
from .display import fields_html, plain_markdown, plain_title
from .export import FORMATS, export
from .figures import (COLOUR_WORDS, box_figure, decision_figure, fared_figure, histogram_figure, map_colours, map_figure,
                      rating_figure, where_figure)

__all__ = ["Card", "card", "cards_html", "result_cards", "review_folds", "review_table", "similar_card",
           "fields_html", "plain_markdown", "plain_title", "FORMATS", "export", "COLOUR_WORDS", "box_figure", "decision_figure",
           "fared_figure", "histogram_figure", "map_colours", "map_figure", "rating_figure", "where_figure"]
