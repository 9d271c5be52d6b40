"""The index folder's parts beyond the papers and their vectors (index.py), one module each: BM25 over the
abstracts (lexical.py), the sentences of "why this result" (evidence.py), topics and the map (explore.py), the
reviews and search within them (reviews.py), the reviewers' summaries (summaries.py), the record's history
across fetches (history.py). Each writes its files, returns its manifest entry and loads them. A later part
declares itself in its module (`PART`, a part.Part: when a build makes it, how, and how the engine loads it),
and registry.py lists them; the multilingual space's declaration is multilingual.py, its encoder
encoding/multilingual.py."""
