"""Command line: python -m search query|similar ... (the same functions the page calls)."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from . import guard, venues
from .guard import UsageError
from .openreview.fetch import DEFAULT_VENUE, Partway, default_out, fetch_venues, partial_paths
from .openreview.api import API_ENV, DEFAULT_API, Api, FetchError, Policy, default_api
from .render.export import FORMATS, export
from .filters import FILTERS, Filters, fold, sort_named
from .parts.history import move, moved
from .engine import DEFAULT_FUSION, DEFAULT_MODE, MODES, Engine, Result, UnknownPaper, open_engine
from .fusion import DEFAULT_WEIGHTS, KINDS, Weights

# the query commands' own failures, beside those every script expects (guard.EXPECTED_ERRORS)
QUERY_ERRORS = (FetchError, UnknownPaper)


def run_guarded(main: Callable[[], int]) -> int:
    """Run a query command under guard.run_guarded with the query commands' own failures."""
    return guard.run_guarded(main, QUERY_ERRORS)


def default_index() -> Path:
    return Path(os.environ.get("SEARCH_INDEX") or "index")


def _read_lines(path: str) -> list[str]:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise UsageError(f"{path}: cannot read ({e.strerror})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    return [line for line in text.splitlines() if line.strip()]


SCORE_NAMES = {"match": "match score (meaning and words blended, 0 to 1)", "cosine": "cosine similarity",
               "BM25": "BM25 score", "SVM": "SVM score"}


def _table(header: str, result: Result, message: str) -> str:
    width = shutil.get_terminal_size((100, 20)).columns
    out = [header + ("  [searched across languages]" if result.space == "multilingual" else "")
           + (f"  [{result.order}]" if result.order else "")]
    if message:
        out.append(f"  ({message})")
    if result.left_out:
        out.append(f"  ({result.left_out} --decision accepted,undecided shows them.)")
    decided = any(h.paper.decision for h in result.hits)
    moves = any(moved(h.paper) for h in result.hits)
    # which venue and year, where the hits come from more than one: "Poster" alone could be any of them
    places = {h.paper.id: " ".join(str(x) for x in (h.paper.conference, h.paper.year) if x) for h in result.hits}
    places = places if len(set(places.values())) > 1 else {}
    place_width = max(map(len, places.values()), default=0)
    sort = sort_named(result.sort, [result.sort])
    value = sort.shows or (lambda p: p.avg_rating)  # what the list is sorted by, where it is not the mean
    for h in result.hits:
        mark = "*" if h.paper.title_derived else " "
        title = textwrap.shorten(h.paper.title, max(20, width - 38), placeholder="…")
        shown = value(h.paper)
        rating = "    -" if shown is None else f"{shown:5d}" if isinstance(shown, int) else f"{shown:5.2f}"
        if moves:
            m = move(h.paper)
            rating += f" {m:+5.2f}" if m is not None and moved(h.paper) else "      "
        fate = f"{h.paper.decision[:12]:<12} " if decided else ""
        place = f"{places[h.paper.id] or '-':<{place_width}} " if places else ""
        out.append(f"{h.rank:>3}. {h.score:6.3f} {rating} {fate}{place}{h.paper.id:<12} {mark}{title}")
        if h.passage:
            said = textwrap.shorten(h.passage.text, max(40, width - 12), placeholder="…")
            out.append(f"       {h.passage.reviewer}, {h.passage.field}: {said}")
    if any(h.paper.title_derived for h in result.hits):
        out.append("  * title derived from the abstract")
    if result.hits:
        score = SCORE_NAMES.get(result.score_name, result.score_name)
        # a sorted list is in the sort's order, not the score's (the score says how well each answers the query)
        said = f"{score}: the list's order, {sort.shows_name} (- none), " if sort.key is None else \
            f"{score}, {sort.shows_name} (- none; the list is {sort.words}), "
        out.append("  columns: rank, " + said + ("its move since the previous fetch, " if moves else "")
                   + ("decision, " if decided else "") + ("venue and year (- none), " if places else "") + "id, title")
    return "\n".join(out)


def _coming(index: Path) -> dict | None:
    """The build's status file while a build of this index runs (the page's or index_build.py's), else None:
    a stopped build's estimate would be a promise nobody keeps."""
    from .background import build_running, status

    return status(index) if build_running(index) else None


def _emit(results: Iterable[tuple[str, str, Result]], as_json: bool, status: dict | None = None) -> None:
    """Each result as a table or a JSON line; a list ranked by words (the abstracts not all embedded yet)
    says when ranking by meaning comes, from the running build's status."""
    from .progress import meaning_eta, with_build_notes

    for key, value, result in results:
        message = with_build_notes(result, lambda: status)
        if as_json:
            obj = {key: value, "score": result.score_name, "hits": [h.to_dict() for h in result.hits]}
            if result.space == "multilingual":
                obj["language"], obj["space"] = result.language, result.space
            if message:
                obj["message"], obj["notices"] = message, [n.to_dict() for n in result.notices]
            if result.order:
                obj["sort"], obj["matched"] = result.sort, result.matched
            if result.undecided:
                obj["undecided_left_out"] = result.undecided
            if result.by_words or result.waiting or result.unembedded:
                obj["ranked_by"] = "words" if result.by_words else "meaning and words"
                obj["not_embedded"] = result.unembedded
                eta = meaning_eta(status)
                obj["meaning_in_seconds"] = None if eta is None else round(eta)
            print(json.dumps(obj, ensure_ascii=False), flush=True)
        else:
            print(_table(f"{key}: {value}", result, message) + "\n", flush=True)


def cmd_query(engine: Engine, args: argparse.Namespace) -> int:
    if args.file:
        queries = _read_lines(args.file)
    else:
        queries = [" ".join(args.text)]
    if not any(q.strip() for q in queries):
        raise UsageError("empty query: give TEXT or --file FILE")
    filters = _filters(engine, args)
    if args.mode == "reviews":
        _emit((("query", q, engine.search_reviews(q, args.k, filters)) for q in queries), args.json,
              _coming(args.index or default_index()))
    else:
        _emit((("query", q, engine.search(q, args.k, args.mode, filters)) for q in queries), args.json,
              _coming(args.index or default_index()))
    return 0


def _filters(engine: Engine, args: argparse.Namespace) -> Filters:
    """The flags as Filters, read as the page reads its address; what does not parse, or what this index
    cannot apply (an area it lacks, a rating on an index without ratings), is refused with what it has."""
    params: dict[str, list[str]] = {}
    for f in FILTERS:
        params.update(f.from_flag(getattr(args, f.field)))
    asked, ignored = Filters.from_address(params)
    if ignored:  # the address's words ("min_rating=12 (...)") as the flag's ("--min-rating 12 (...)")
        raise UsageError("; ".join(_as_flag(word) for word in ignored))
    catalog = engine.catalog
    filters = catalog.known(asked)
    if filters.unknown:
        has = [f"--{f.flag}: {'; '.join(f.offers(catalog.facts))}" for f in FILTERS
               if getattr(filters, f.field) != getattr(asked, f.field) and f.offers(catalog.facts)]
        raise UsageError("this index cannot apply " + "; ".join(filters.unknown)
                         + (f" (it has {'; '.join(has)})" if has else ""))
    return filters


def _as_flag(word: str) -> str:
    key, _, rest = word.partition("=")
    f = next((f for f in FILTERS if key == f.key or key.startswith(f.key)), None)
    if f is None:
        return word
    return f"--{f.flag} {key[len(f.key):] + '=' if f.key != key else ''}{rest}"


def cmd_similar(engine: Engine, args: argparse.Namespace) -> int:
    requests = [line.split() for line in _read_lines(args.file)] if args.file else [args.ids]
    if not any(requests):
        raise UsageError("give one or more paper ids, or --file FILE")
    bad = 0
    filters = _filters(engine, args)
    for ids in requests:
        try:
            _emit([("paper", " ".join(ids), engine.similar(ids, args.k, filters))], args.json,
                  _coming(args.index or default_index()))
        except UnknownPaper as e:
            bad += 1
            print(f"error: {e}", file=sys.stderr)
    return 2 if bad else 0


def cmd_export(engine: Engine, args: argparse.Namespace) -> int:
    ids = [i for line in _read_lines(args.file) for i in line.split()] if args.file else args.ids
    known, unknown = engine.catalog.split_ids(ids)
    if unknown:
        raise UnknownPaper(unknown)
    if not known:
        raise UsageError("nothing to export: give paper ids or --file FILE")
    papers = [engine.catalog.paper(pid) for pid in known]
    sys.stdout.write(export(papers, args.format, engine.catalog.topic_labels(papers)))
    return 0


def _explore_missing(engine: Engine, args: argparse.Namespace) -> bool:
    """Whether the index lacks topics and the map, said in words: still to come from the build running now (with
    its time left; exit 0, as `fared` waiting), left by a build that stopped before them, or never built (an older
    version's index, or one built for evaluation: only then is rebuilding the answer)."""
    from .progress import part_note

    if engine.catalog.topics:
        return False
    if not {"abstracts", "topics and map"} & set(engine.manifest.pending):
        raise UsageError(f"the index at {engine.data.path} has no topics or map (built with an older "
                         "version or for evaluation); run `python index_build.py` to rebuild it")
    status = _coming(args.index or default_index())
    said = f"The topics and the map of this index are not built yet. {part_note('topics and map', status)}"
    if status is None:
        raise UsageError(said)
    print(json.dumps({"waiting": True, "message": said}) if args.json else said)
    return True


def cmd_topics(engine: Engine, args: argparse.Namespace) -> int:
    if _explore_missing(engine, args):
        return 0
    for t in engine.catalog.topics.values():
        if args.json:
            print(json.dumps({"topic": t.id, "label": t.label, "size": t.size, "papers": t.papers},
                             ensure_ascii=False))
        else:
            print(f"{t.id:>4} {t.size:>5}  {t.label}")
    return 0


def cmd_map(engine: Engine, args: argparse.Namespace) -> int:
    if _explore_missing(engine, args):
        return 0
    for p, (x, y) in zip(engine.papers, engine.catalog.map_xy.tolist()):
        if args.json:
            print(json.dumps({"id": p.id, "x": round(x, 6), "y": round(y, 6), "topic": p.topic}))
        else:
            print(f"{p.id}\t{x:.4f}\t{y:.4f}\t{p.topic}")
    return 0


def cmd_venues(engine: Engine, args: argparse.Namespace) -> int:
    rows = venues.venue_years(engine.papers)
    if args.json:
        for v in rows:
            print(json.dumps(v.to_dict(), ensure_ascii=False))
    else:
        print(venues.table(rows))
    return 0


STATS_TITLES = {"all": "", "venue": "venue and year", "area": "primary area", "affiliation": "affiliation",
                "topic": "topic"}


def cmd_stats(engine: Engine, args: argparse.Namespace) -> int:
    from .stats import CONTROVERSIAL, controversial, groups, table, undecided_note

    for group, rows in groups(engine.papers, engine.catalog.topics):
        if args.json:
            for r in rows:
                print(json.dumps({"group": group, **r.to_dict()}, ensure_ascii=False))
        else:
            print(table(rows, STATS_TITLES[group]) + "\n")
    said = undecided_note(engine.catalog.undecided)
    if said and args.json:
        print(json.dumps({"group": "undecided", "papers": sum(engine.catalog.undecided.values()),
                          "areas": engine.catalog.undecided}, ensure_ascii=False))
    elif said:
        print(said + "\n")
    for fate, papers in controversial(engine.papers).items():
        if args.json and papers:
            print(json.dumps({"group": f"most controversial {fate}", "papers": [
                {"id": p.id, "title": p.title, "ratings": p.ratings} for p in papers]}, ensure_ascii=False))
        elif papers:
            print(f"most controversial {CONTROVERSIAL[fate]} (widest spread of ratings):")
            for p in papers:
                print(f"  {p.id:<12} {' '.join(f'{r:g}' for r in p.ratings):<14} {p.title}")
            print()
    return 0


def cmd_reviews(engine: Engine, args: argparse.Namespace) -> int:
    from .parts.reviews import scores_of, texts_of

    record = engine.review_record(args.id)
    if args.json:
        print(json.dumps(record, ensure_ascii=False))
        return 0
    summary = record["summary"]
    print(f"{record['title']}\n{record['url']}")
    print(f"decision: {record['decision'] or 'not known'}" + (f" ({record['decision_text']})"
                                                             if record.get("decision_text") else ""))
    if record.get("meta_review"):
        print("\nmeta-review:")
        for name, text in record["meta_review"].items():
            print(textwrap.indent(f"{name}: {text}", "  "))
    if not record["reviews"]:
        print("no public reviews in this index")
        return 0
    print(f"\n{summary['count']} reviews; ratings {' '.join(f'{r:g}' for r in summary['ratings'])}")
    names = list(dict.fromkeys(k for r in record["reviews"] for k in scores_of(r)))
    print("  " + "reviewer".ljust(16) + "".join(n[:12].rjust(13) for n in names))
    for r in record["reviews"]:
        scores = scores_of(r)
        print("  " + r.get("reviewer", "")[:16].ljust(16) +
              "".join((f"{scores[n]:g}" if n in scores else "-").rjust(13) for n in names))
    for r in record["reviews"]:
        edits = [v.get("rating") for v in r.get("versions") or ()] + [r.get("rating")]
        moved = (f"; rating {' → '.join(f'{x:g}' for x in edits if x is not None)}, edited {r['modified'][:10]}"
                 if r.get("versions") and r.get("modified") else "")
        print(f"\n── {r.get('reviewer', '')} ({r.get('date', '')}{moved})")
        for name, text in texts_of(r):
            print(f"{name}:\n{textwrap.indent(text, '  ')}")
    return 0


def _nearest(engine: Engine, args: argparse.Namespace, what: str):
    """The fared tally of the neighbours of a query, --paper or --file; None (having said why) while the
    abstracts are still being embedded."""
    texts = [] if not args.file else ["\n".join(_read_lines(args.file))]
    query = " ".join(args.text)
    if sum(map(bool, (query.strip(), args.paper, texts))) != 1:
        raise UsageError("give one of: QUERY, --paper ID or --file ABSTRACT.txt")
    if args.k < 1:
        raise UsageError("-k must be at least 1")
    if not engine.has_vector(args.paper or None):
        from .progress import meaning_note

        said = (f"{what} needs the abstracts' vectors, not all embedded yet. "
                + meaning_note(_coming(args.index or default_index()))).strip()
        print(json.dumps({"waiting": True, "message": said}) if args.json else said)
        return None
    return engine.fared(query=query, pid=args.paper or "", texts=texts, k=args.k)


def cmd_fared(engine: Engine, args: argparse.Namespace) -> int:
    fared = _nearest(engine, args, "How similar submissions fared")
    if fared is None:
        return 0
    if args.json:
        print(json.dumps(fared.to_dict(), ensure_ascii=False))
        return 0
    if not fared.has_decisions:
        print("this index holds no decisions: fetch the whole venue (python -m search fetch) and build its index")
    print(fared.text())
    print("\nThis describes how similar submissions fared; it does not predict a decision.")
    return 0


WHERE_NOTE = ("This describes where similar papers appear and, where a venue's record holds its rejections, how "
              "they fared there; it does not predict where a paper would be accepted.")


def cmd_where(engine: Engine, args: argparse.Namespace) -> int:
    """Where work like this appears: the venues and years of the nearest papers."""
    fared = _nearest(engine, args, "Where work like this appears")
    if fared is None:
        return 0
    if args.json:
        print(json.dumps({"k": fared.neighbours.papers, "places": [x.to_dict() for x in fared.places],
                          "ids": fared.ids, "note": WHERE_NOTE}, ensure_ascii=False))
        return 0
    print(f"Where the {fared.neighbours.papers} nearest papers appear (venue and year, most papers first):")
    print(textwrap.indent(fared.where_text(), "  "))
    print("\n" + WHERE_NOTE)
    return 0


def cmd_author(engine: Engine, args: argparse.Namespace) -> int:
    """An author's papers by venue and year, with co-authors and affiliations, where the records name them."""
    name = " ".join(args.name).strip()
    if not name:
        raise UsageError("give an author's name, e.g. python -m search author 'Ada Lovelace'")
    if not engine.catalog.has_authors:
        raise UsageError("this index has no authors' names (OpenReview hides a submission's authors until it "
                         "makes them public; Paper Copilot's lists name them)")
    found = engine.author(name)
    if found is None:
        like = engine.authors_like(name, 5)
        raise UsageError(f"no author named {name!r} in this index" + (
            f"; names that contain it: {', '.join(like)}" if like else ""))
    if args.json:
        print(json.dumps(found.to_dict(), ensure_ascii=False))
        return 0
    affs = "; ".join(f"{n} ({c})" for n, c in found.affiliations)
    print(f"{found.name}: {len(found.papers):,} paper{'s' if len(found.papers) != 1 else ''}"
          + (f" · affiliations as their papers give them: {affs}" if affs else ""))
    for place, papers in found.by_place():
        print(f"\n{place}")
        for p in papers:
            others = [a for a in p.authors if fold(a) != fold(found.name)]
            print(f"  {p.id}  {p.title}" + (f"  [{p.decision}]" if p.decision else "")
                  + (f"\n      with {', '.join(others)}" if others else ""))
    if found.coauthors:
        print("\nCo-authors (papers together): " + ", ".join(f"{n} ({c})" for n, c in found.coauthors))
    return 0


def _moves_table(title: str, items: list[dict], line, n: int) -> list[str]:
    shown = f", the first {n}" if len(items) > n else ""
    return [f"{title} ({len(items):,}{shown}):", *(f"  {line(i)}" for i in items[:n])] if items else []


def cmd_changes(engine: Engine, args: argparse.Namespace) -> int:
    """What changed since the previous fetch: new submissions, new reviews, rating moves, decisions."""
    from .parts.history import HistoryError

    if not engine.manifest.history:
        print("This index has no fetch history: it was built from no fetched venue (seed lists only), or "
              "before histories were kept. Fetch a venue and build it; a second fetch shows what changed.")
        return 0
    try:
        c = engine.changes(args.since)
    except HistoryError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps(c.to_dict(), ensure_ascii=False))
        return 0
    if c.first_posted:
        print(f"One fetch so far ({c.until}): nothing to compare with yet. Ratings moved by reviews edited "
              f"since they were first posted: {len(c.moved):,} papers.")
    else:
        print(f"Changes from the fetch of {c.since} to that of {c.until} ({c.fetches} fetches in this index's "
              "history):")
        if c.empty:
            print("  nothing changed")
    n = args.k
    title = lambda i: textwrap.shorten(i["title"], 70, placeholder="…")  # noqa: E731
    moved = lambda i: f"{i['from']:.2f} → {i['to']:.2f} ({i['move']:+.2f}) {i['id']:<12} {title(i)}"  # noqa: E731
    kinds = [("new submissions", c.new, lambda i: f"{i['id']:<12} {title(i)}"),
             ("rating moved up", c.up, moved), ("rating moved down", c.down, moved),
             ("decisions", c.decisions, lambda i: f"{i['from']} → {i['to']}  {i['id']:<12} {title(i)}"),
             ("withdrawn", c.withdrawn, lambda i: f"{i['id']:<12} {title(i)} (was {i['from']})"),
             ("new reviews", c.new_reviews, lambda i: f"+{i['reviews']} ({i['from']} → {i['to']}) {i['id']:<12} {title(i)}"),
             ("no longer listed", c.removed, lambda i: f"{i['id']:<12} {title(i)}")]
    lines = [line for name, items, show in kinds for line in _moves_table(name, items, show, n)]
    print("\n".join(lines))
    if any(len(x) > n for x in (c.new, c.up, c.down, c.decisions, c.withdrawn, c.new_reviews, c.removed)):
        print(f"(the first {n} of each; -k N shows more, --json all)")
    return 0


def cmd_saved(engine: Engine, args: argparse.Namespace) -> int:
    """Save, remove or list saved searches; each listed with what is new for it since the previous fetch."""
    from . import saved

    path = saved.saved_file(args.index or default_index())
    try:
        if args.add:
            before = len(saved.load(path))
            searches = saved.add(path, " ".join(args.add), args.mode, _filters(engine, args))
            print(f"saved {searches[-1].words_of_search()} in {path}" if len(searches) > before else
                  "already saved")
        elif args.remove:
            before = len(saved.load(path))
            left = saved.remove(path, " ".join(args.remove))
            print(f"removed {before - len(left)} saved search{'es' if before - len(left) > 1 else ''}")
        searches = saved.load(path)
    except saved.SavedError as e:
        raise UsageError(str(e)) from None
    if not searches:
        print("No saved searches. Save one: python -m search saved --add 'kv cache compression' [filters]")
        return 0
    since = engine.manifest.history.baseline if engine.manifest.history else ""
    for s in searches:
        news = saved.news(engine, s)
        if args.json:
            print(json.dumps({**news.to_dict(), "since": since}, ensure_ascii=False), flush=True)
            continue
        if news.problem:  # one line, and the way out; the other searches still listed
            fix = f"python -m search saved --remove {shlex.quote(s.query)}" if s.query else f"edit {path}"
            print(f"{news.words()}; remove it: {fix}")
            continue
        print(f"{news.words()} (of {news.matched} matches; since {since or 'no earlier fetch'})  {s.link()}")
        for h in news.new:
            print(f"  new    {h.paper.id:<12} {textwrap.shorten(h.paper.title, 80, placeholder='…')}")
        for h in news.moved:
            p = h.paper
            what = f"{p.rating_from:.2f} → {p.avg_rating:.2f}" if p.rating_from is not None and p.avg_rating \
                is not None and p.rating_from != p.avg_rating else f"{p.decision_from} → {p.decision}"
            print(f"  moved  {p.id:<12} {what}  {textwrap.shorten(p.title, 70, placeholder='…')}")
    return 0


def nearest_arguments(p: argparse.ArgumentParser) -> None:
    """What `fared` and `where` read: a query, a paper or an abstract, and how many neighbours."""
    p.add_argument("text", nargs="*")
    p.add_argument("--paper", metavar="ID", help="a paper of the index (left out of its own neighbours)")
    p.add_argument("--file", help="an abstract in a text file; - for stdin")
    p.add_argument("-k", type=int, default=50, help="neighbours (default 50)")
    p.add_argument("--index", type=Path, default=None, help="index directory (default: $SEARCH_INDEX, else index/)")
    p.add_argument("--json", action="store_true", help="one JSON object")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m search", description="Search paper abstracts by meaning.")
    sub = ap.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("-k", type=int, default=10, help="number of hits (default 10)")
        for f in FILTERS:  # each filter's flag, declared with it (filters.FILTERS)
            f.add_flag(p)
        p.add_argument("--index", type=Path, default=None,
                       help="index directory (default: $SEARCH_INDEX, else index/)")
        p.add_argument("--json", action="store_true", help="one JSON object per line")

    q = sub.add_parser("query", help="papers closest to a text")
    q.add_argument("text", nargs="*")
    q.add_argument("--file", help="one query per line; - for stdin")
    q.add_argument("--mode", choices=(*MODES, "reviews"), default=DEFAULT_MODE,
                   help=f"ranking (default {DEFAULT_MODE}); reviews searches what the papers' reviews say")
    common(q)
    s = sub.add_parser("similar", help="papers closest to one or more papers")
    s.add_argument("ids", nargs="*")
    s.add_argument("--file", help="one request per line, ids separated by spaces; - for stdin")
    common(s)
    x = sub.add_parser("export", help="papers as BibTeX, CSV or Markdown on stdout")
    x.add_argument("ids", nargs="*")
    x.add_argument("--file", help="ids separated by spaces or lines; - for stdin")
    x.add_argument("--format", choices=FORMATS, default="bibtex")
    x.add_argument("--index", type=Path, default=None,
                   help="index directory (default: $SEARCH_INDEX, else index/)")
    for name, helptext in (("topics", "the topics with their labels and sizes"),
                           ("map", "the 2D map: id, x, y and topic of every paper"),
                           ("stats", "papers, orals and review ratings per primary area and per topic"),
                           ("venues", "each venue and year: its papers, the decisions its record holds (accepted, "
                                      "rejected, withdrawn) and what it carries (abstracts, reviews, authors, "
                                      "affiliations, citations)")):
        t = sub.add_parser(name, help=helptext)
        t.add_argument("--index", type=Path, default=None,
                       help="index directory (default: $SEARCH_INDEX, else index/)")
        t.add_argument("--json", action="store_true", help="one JSON object per line")
    r = sub.add_parser("reviews", help="a paper's decision, meta-review and every review with its scores and texts")
    r.add_argument("id")
    r.add_argument("--index", type=Path, default=None,
                   help="index directory (default: $SEARCH_INDEX, else index/)")
    r.add_argument("--json", action="store_true", help="one JSON object")
    ch = sub.add_parser("changes", help="what changed since the previous fetch: new submissions and reviews, "
                                        "rating moves, decisions, withdrawals")
    ch.add_argument("--since", metavar="DATE", help="compare with the last fetch on or before DATE (YYYY-MM-DD) "
                                                    "instead of the previous one")
    ch.add_argument("-k", type=int, default=10, help="papers shown of each kind (default 10; --json gives all)")
    ch.add_argument("--index", type=Path, default=None,
                    help="index directory (default: $SEARCH_INDEX, else index/)")
    ch.add_argument("--json", action="store_true", help="one JSON object")
    sv = sub.add_parser("saved", help="saved searches, each with the papers new or moved since the previous fetch")
    sv.add_argument("--add", nargs="+", metavar="QUERY", help="save this query with the filters given")
    sv.add_argument("--remove", nargs="+", metavar="QUERY", help="remove the saved searches of this query")
    sv.add_argument("--mode", choices=(*MODES, "reviews"), default=DEFAULT_MODE,
                    help=f"the saved search's ranking (default {DEFAULT_MODE})")
    common(sv)
    fd = sub.add_parser("fared", help="how the submissions nearest to a query, a paper or an abstract fared "
                                      "(decisions and ratings, beside the venue and the area)")
    nearest_arguments(fd)
    wh = sub.add_parser("where", help="where work like a query, a paper or an abstract appears: the venues and "
                                      "years of its nearest papers, and how they fared where rejections are known")
    nearest_arguments(wh)
    au = sub.add_parser("author", help="an author's papers by venue and year, with co-authors and affiliations "
                                       "(where the records name authors)")
    au.add_argument("name", nargs="+", help="the author's whole name (case and accents ignored)")
    au.add_argument("--index", type=Path, default=None,
                    help="index directory (default: $SEARCH_INDEX, else index/)")
    au.add_argument("--json", action="store_true", help="one JSON object")
    f = sub.add_parser("fetch", help="download one or more venues from OpenReview (every submission, its "
                                     "reviews and decision) as JSONL for the build",
                       description="Download venues from OpenReview's API v2 as JSONL for the build, one file "
                                   "a venue, each read with its own group's names (rating and confidence "
                                   "fields, decisions). An interrupted download resumes where it stopped; each "
                                   "file appears whole or not at all.")
    f.add_argument("venues", nargs="*", metavar="venue", default=[DEFAULT_VENUE],
                   help=f"OpenReview venue ids (default {DEFAULT_VENUE}; e.g. NeurIPS.cc/2025/Conference "
                        "colmweb.org/COLM/2025/Conference)")
    f.add_argument("--out", type=Path, default=None,
                   help="JSONL file to write, for one venue (default: data/<venue id>.jsonl)")
    f.add_argument("--out-dir", type=Path, default=None, metavar="DIR",
                   help="folder of the venues' files, each <venue id>.jsonl (default: data/)")
    f.add_argument("--accepted-only", action="store_true",
                   help="only the accepted papers, with their mean scores and no reviews (the short record)")
    f.add_argument("--api", default=None, metavar="URL",
                   help=f"OpenReview API v2 address, for a mirror or proxy (default ${API_ENV}, else {DEFAULT_API})")
    f.add_argument("--login", action="store_true",
                   help="log in with $OPENREVIEW_USERNAME and $OPENREVIEW_PASSWORD (default: anonymous, "
                        "which sees every public paper); only to OpenReview's own https address unless "
                        "--trust-host")
    f.add_argument("--trust-host", action="store_true",
                   help="let --login send the password to the --api address although it is not OpenReview's "
                        f"own ({DEFAULT_API}): a mirror you run, a local test server")
    policy = Policy()
    f.add_argument("--timeout", type=float, default=policy.read_timeout, metavar="S",
                   help=f"seconds to wait for an answer to go on before trying again (default {policy.read_timeout:g})")
    f.add_argument("--tries", type=int, default=policy.tries, metavar="N",
                   help=f"most tries of each request, a backstop: --retry-budget is what ends a rate limit or "
                        f"an outage (default {policy.tries})")
    f.add_argument("--wait", type=float, default=policy.first_wait, metavar="S",
                   help="first wait before trying again where OpenReview names no time (no Retry-After), "
                        f"doubled for each such wait (default {policy.first_wait:g})")
    f.add_argument("--max-wait", type=float, default=policy.max_wait, metavar="S",
                   help="longest wait; when OpenReview asks for a longer one the fetch stops and says when to "
                        f"run again (default {policy.max_wait:g})")
    f.add_argument("--retry-budget", type=float, default=policy.budget, metavar="SECONDS",
                   help="longest time one request may spend on failed tries and the waits between them before "
                        f"the fetch gives up (default {policy.budget:g})")
    e = sub.add_parser("evaluate", help="nDCG@10, MRR@10, Recall@10/100 per mode on BEIR-layout datasets")
    e.add_argument("datasets", nargs="+", type=Path, help="folders with corpus.jsonl, queries.jsonl, qrels/")
    e.add_argument("--split", default="test")
    e.add_argument("--model", default=None, help="embedding model (default: all-MiniLM-L6-v2)")
    e.add_argument("--mode", action="append", choices=MODES, help="modes to score (default: all)")
    e.add_argument("--fusion", choices=("rrf", "blend"), default=DEFAULT_FUSION)
    e.add_argument("--alpha", type=float, default=None,
                   help="one dense weight of the blend for every kind of query (default: the shipped weights, "
                        "which adapt to the query)")
    e.add_argument("--cache", type=Path, default=None,
                   help="embedding cache (default: beside each dataset); share one to embed a corpus once")
    e.add_argument("--json", action="store_true", help="one JSON object per dataset")
    return ap


def fixed_alpha(alpha: float | None) -> Weights:
    """The shipped weights, or one dense weight for every kind of query."""
    if alpha is None:
        return DEFAULT_WEIGHTS
    return replace(DEFAULT_WEIGHTS, **{kind: alpha for kind in KINDS})


def cmd_evaluate(args: argparse.Namespace) -> int:
    from .encoding.embed import DEFAULT_MODEL, load_model
    from .evaluate import load_queries, prepare, ranx_evaluate, read_qrels, table
    from .evaluate import evaluate as run

    ranx_evaluate()  # without ranx: one line naming its pip install, before a model loads or an index builds
    name = args.model or DEFAULT_MODEL
    model = load_model(name)
    for dataset in args.datasets:
        queries, qrels = load_queries(dataset), read_qrels(dataset, args.split)
        engine = open_engine(prepare(dataset, name, model, args.cache, sentences=True), model=model,
                             fusion=args.fusion, weights=fixed_alpha(args.alpha))
        results = run(engine, queries, qrels, args.mode or list(MODES))
        if args.json:
            print(json.dumps({"dataset": str(dataset), "model": name, "fusion": args.fusion,
                              "alpha": args.alpha, "results": results}), flush=True)
        else:
            print(table(f"{dataset} ({name}, fusion {args.fusion})", results) + "\n", flush=True)
    return 0


def fetch_outputs(venues: list[str], out: Path | None, out_dir: Path | None) -> list[tuple[str, Path]]:
    """Each venue id (once, in the order given) with the file it is written to."""
    venues = list(dict.fromkeys(venues))
    if out is not None and (len(venues) > 1 or out_dir is not None):
        raise UsageError("--out names one venue's file; with several venues use --out-dir DIR (each venue's "
                         "file is DIR/<venue id>.jsonl)")
    if out is not None:
        return [(venues[0], out)]
    outs = [(v, default_out(v) if out_dir is None else out_dir / default_out(v).name) for v in venues]
    clash = [v for v, path in outs if [p for _, p in outs].count(path) > 1]
    if clash:
        raise UsageError(f"venues {', '.join(clash)} would share the file {dict(outs)[clash[0]]}")
    return outs


def cmd_fetch(args: argparse.Namespace) -> int:
    """Download each venue into a partial file beside its output, then publish it whole."""
    from .progress import ProgressLog

    if args.tries < 1 or args.timeout <= 0 or args.wait < 0 or args.max_wait < 0 or args.retry_budget < 0:
        raise UsageError("--tries must be at least 1, --timeout above 0, --wait, --max-wait and --retry-budget "
                         "0 or more")
    outs = fetch_outputs(args.venues, args.out, args.out_dir)
    policy = Policy(tries=args.tries, first_wait=args.wait, max_wait=args.max_wait,
                    connect_timeout=min(10.0, args.timeout), read_timeout=args.timeout,
                    budget=args.retry_budget)
    kind = "accepted papers" if args.accepted_only else "submissions"
    try:
        api = Api(args.api or default_api(), policy, login=args.login, trust_host=args.trust_host)
        got = fetch_venues(api, outs, accepted_only=args.accepted_only,
                           progress=ProgressLog(job="fetch", interval=2.0, lines=True))
    except (FetchError, KeyboardInterrupt) as e:
        return _fetch_failed(e, outs, kind)
    for one in got:
        print(_fetched_line(one, kind))
    print(f"build their index with: python index_build.py seeds {' '.join(str(one.out) for one in got)}")
    from .background import build_running

    if build_running(default_index()):  # said, so that the user does not wait an hour for it to end first
        print(f"a build of {default_index()} is running now: that command stops it and builds this fetch instead, "
              "taking every vector it has embedded from the cache (the index it published is served meanwhile)")
    return 0


def _fetched_line(got, kind: str) -> str:
    left = f" ({got.no_abstract:,} without an abstract left out)" if got.no_abstract else ""
    return f"wrote {got.records:,} {kind} of {got.venue} ({got.reviewed:,} with review scores) to {got.out}{left}"


def _fetch_failed(e: BaseException, outs: list[tuple[str, Path]], kind: str) -> int:
    """One line naming what failed and what is kept; with several venues, which were written and the command
    that fetches the rest."""
    interrupted = isinstance(e, KeyboardInterrupt) or getattr(e, "interrupted", False)
    venue = e.venue if isinstance(e, Partway) else outs[0][0]
    done = e.done if isinstance(e, Partway) else []
    for one in done:
        print(_fetched_line(one, kind))
    out = dict(outs)[venue]
    partial, _ = partial_paths(out)
    kept = f"; what arrived is kept in {partial}: run the same command to resume" if partial.exists() else ""
    message = "interrupted" if interrupted else str(e)
    if len(outs) > 1 and isinstance(e, Partway):
        rest = [v for v, _ in outs[len(done):]]
        message = f"{venue}: {message}"
        if done:
            kept += f" (only the rest: python -m search fetch {' '.join(rest)} with the same options)"
    print(f"error: {message}{kept}", file=sys.stderr)
    return 130 if interrupted else 2


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "evaluate":
        return cmd_evaluate(args)
    if args.command == "fetch":
        return cmd_fetch(args)
    if getattr(args, "k", 1) < 1:
        raise UsageError("-k must be at least 1")
    # a command that encodes what it was given loads the query encoder while the papers are read
    encodes = args.command == "query" or args.command in ("where", "fared") and getattr(args, "text", None)
    engine = open_engine(args.index or default_index(), prefetch=bool(encodes))
    commands = {"query": cmd_query, "similar": cmd_similar, "export": cmd_export, "topics": cmd_topics,
                "map": cmd_map, "stats": cmd_stats, "venues": cmd_venues, "reviews": cmd_reviews, "fared": cmd_fared,
                "where": cmd_where, "author": cmd_author, "changes": cmd_changes, "saved": cmd_saved}
    try:
        return commands[args.command](engine, args)
    finally:
        getattr(engine.model, "settle", lambda: None)()
