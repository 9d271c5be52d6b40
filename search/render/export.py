"""Exporting a reading list: BibTeX, CSV and Markdown, from the page and the CLI alike."""
from __future__ import annotations

import csv
import io
import re

import bibtexparser
from bibtexparser import model as bib

from ..corpus import Paper
from ..filters import decision_group, in_programme
from ..fared import place_of
from .display import inline_markdown
from ..latex import to_unicode
from ..text import clean_for_model

FORMATS = ("bibtex", "csv", "md")
# a record that names no venue (the seed lists) is taken as the project's own conference, ICLR 2026
DEFAULT_CONFERENCE, DEFAULT_YEAR = "ICLR", 2026
# each conference's proceedings as its BibTeX entries name them, by its short name as the records give it
# (case ignored; Paper Copilot's "nips" is NeurIPS); another name stands as it is given
PROCEEDINGS = {
    "iclr": ("ICLR", "International Conference on Learning Representations"),
    "neurips": ("NeurIPS", "Advances in Neural Information Processing Systems"),
    "nips": ("NeurIPS", "Advances in Neural Information Processing Systems"),
    "icml": ("ICML", "International Conference on Machine Learning"),
    "colm": ("COLM", "Conference on Language Modeling"),
    "corl": ("CoRL", "Conference on Robot Learning"),
    "aistats": ("AISTATS", "International Conference on Artificial Intelligence and Statistics"),
    "colt": ("COLT", "Conference on Learning Theory"),
    "alt": ("ALT", "International Conference on Algorithmic Learning Theory"),
    "uai": ("UAI", "Conference on Uncertainty in Artificial Intelligence"),
    "acml": ("ACML", "Asian Conference on Machine Learning"),
    "automl": ("AutoML", "International Conference on Automated Machine Learning"),
    "acl": ("ACL", "Annual Meeting of the Association for Computational Linguistics"),
    "naacl": ("NAACL", "Conference of the North American Chapter of the Association for Computational Linguistics"),
    "coling": ("COLING", "International Conference on Computational Linguistics"),
    "cvpr": ("CVPR", "IEEE/CVF Conference on Computer Vision and Pattern Recognition"),
    "iccv": ("ICCV", "IEEE/CVF International Conference on Computer Vision"),
    "eccv": ("ECCV", "European Conference on Computer Vision"),
    "wacv": ("WACV", "IEEE/CVF Winter Conference on Applications of Computer Vision"),
    "aaai": ("AAAI", "AAAI Conference on Artificial Intelligence"),
    "ijcai": ("IJCAI", "International Joint Conference on Artificial Intelligence"),
    "kdd": ("KDD", "ACM SIGKDD Conference on Knowledge Discovery and Data Mining"),
    "www": ("WWW", "The ACM Web Conference"),
}
# ICLR numbers its meetings (2013 the first): its own proceedings say "The Fourteenth ..." for 2026
_ORDINALS = ("First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth",
             "Eleventh", "Twelfth", "Thirteenth", "Fourteenth", "Fifteenth", "Sixteenth", "Seventeenth",
             "Eighteenth", "Nineteenth", "Twentieth")
# what a submission that is not (or not yet) in the programme is, in a reference's note
STANDING = {"rejected": "rejected", "withdrawn": "withdrawn", "undecided": "under review"}
CSV_COLUMNS = ("id", "title", "authors", "url", "pdf", "topic", "primary_area", "venue", "avg_rating",
               "avg_confidence", "n_ratings", "sources")

# LaTeX's special characters outside math; braces go too, since BibTeX counts even escaped ones
_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "{": "", "}": "", "%": r"\%", "&": r"\&", "#": r"\#",
                  "_": r"\_", "$": r"\$", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}"}
_LATEX_SPECIAL = re.compile(r"[\\{}%&#_$^~]")


def latex_escape(text: str) -> str:
    """Plain text that compiles in a BibTeX field: markup removed, LaTeX specials escaped."""
    return _LATEX_SPECIAL.sub(lambda m: _LATEX_ESCAPES[m.group()], clean_for_model(text))


def booktitle(p: Paper) -> tuple[str, str]:
    """(booktitle, year) of a paper's BibTeX entry, from its conference and year: "Conference on Language
    Modeling (COLM 2025)", "2025"; an ACL-family paper of the Findings track, "Findings of the Association for
    Computational Linguistics: ACL 2022". A paper whose record names no conference is ICLR 2026's (the seed
    lists); one without a year has none ("")."""
    conference, year = place_of(p)
    if not conference:
        conference, year = DEFAULT_CONFERENCE, year or DEFAULT_YEAR
    short, name = PROCEEDINGS.get(conference.lower(), (conference, conference))
    year_text = str(year) if year else ""
    if "findings" in p.track.lower() and short in ("ACL", "NAACL", "EMNLP", "EACL", "AACL"):
        return f"Findings of the Association for Computational Linguistics: {short} {year_text}".strip(), year_text
    if short == "ICLR" and year and 0 < year - 2012 <= len(_ORDINALS):
        name = f"The {_ORDINALS[year - 2013]} {name}"
    label = f"{short} {year_text}".strip()
    return (f"{name} ({label})" if name != short else label), year_text


def citation_key(p: Paper) -> str:
    """Stable key: the title's first real word, the year and the start of the id (ids never change)."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", clean_for_model(p.title))
             if w.lower() not in {"a", "an", "the", "on", "of", "towards", "toward"}]
    first = (words[0] if words else "paper").lower()[:20]
    return f"{first}{booktitle(p)[1]}{re.sub(r'[^A-Za-z0-9]', '', p.id)[:8]}"


def conference(p: Paper) -> tuple[str, str, str]:
    """(short name with its year, booktitle, year) of the conference a paper was submitted to: "COLM 2025"."""
    title, year = booktitle(p)
    name = place_of(p)[0] or DEFAULT_CONFERENCE
    short = PROCEEDINGS.get(name.lower(), (name, name))[0]
    return f"{short} {year}".strip(), title, year


def published(p: Paper) -> tuple[str, list[tuple[str, str]], str]:
    """The entry type, its venue fields and the note on its standing. Only a paper in the programme is
    @inproceedings: a rejected, withdrawn or undecided submission cited with a booktitle would read as
    published, so it is @misc with its OpenReview page as `howpublished` and "Submitted to ICLR 2026;
    rejected" as the note; a paper whose venue the records do not give (a seed list) claims none."""
    name, booktitle, year = conference(p)
    if in_programme(p):
        return "inproceedings", [("booktitle", latex_escape(booktitle))] + ([("year", year)] if year else []), ""
    url = p.url.replace("{", "").replace("}", "")
    where = [("howpublished", f"\\url{{{url}}}")] if url else []
    group = decision_group(p.decision)
    if group in STANDING:
        standing = {"Desk rejected": "desk rejected", "Workshop track": "invited to the workshop track"}.get(
            p.decision, STANDING[group])
        return "misc", [*where] + ([("year", year)] if year else []), f"Submitted to {name}; {standing}"
    return "misc", where, "Venue and decision not given in the records this entry was made from"


def to_bibtex(papers: list[Paper], topics: dict[str, str] | None = None) -> str:
    entries = []
    seen: set[str] = set()
    for p in papers:
        key = citation_key(p)
        while key in seen:  # two ids with the same first characters: keep both keys distinct
            key += "x"
        seen.add(key)
        fields = [("title", "{" + latex_escape(p.title) + "}")]  # inner braces keep capitals
        if p.authors:
            fields.append(("author", " and ".join(latex_escape(a) for a in p.authors)))
        kind, venue, standing = published(p)
        fields += [*venue, ("abstract", latex_escape(p.abstract))]
        if p.url:
            fields.append(("url", p.url.replace("{", "").replace("}", "")))
        if p.keywords:
            fields.append(("keywords", latex_escape(", ".join(p.keywords))))
        if p.avg_rating is not None:  # non-standard fields: BibTeX ignores them, reference managers keep them
            fields += [("rating", f"{p.avg_rating:g}"), ("reviews", str(p.n_ratings or ""))]
            if p.avg_confidence is not None:
                fields.append(("confidence", f"{p.avg_confidence:g}"))
        notes = [standing] if standing else []
        if p.title_derived:
            notes.append("Title derived from the abstract by paper search; the source gives none")
        if not p.authors:  # a reference manager would otherwise show an empty author as if it were known
            notes.append("Authors not given in the record this entry was made from (OpenReview hides a submission's "
                         "authors until it makes them public)" + ("; see the url" if p.url else ""))
        if notes:
            fields.append(("note", ". ".join(notes)))
        entries.append(bib.Entry(kind, key, [bib.Field(k, v) for k, v in fields]))
    return bibtexparser.write_string(bibtexparser.Library(entries))


def to_csv(papers: list[Paper], topics: dict[str, str] | None = None) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for p in papers:
        writer.writerow([p.id, p.title, "; ".join(p.authors), p.url, p.pdf, (topics or {}).get(p.id, ""),
                         p.primary_area, p.venue, *("" if v is None else v
                                                     for v in (p.avg_rating, p.avg_confidence, p.n_ratings)),
                         "; ".join(p.sources)])
    return out.getvalue()


def to_md(papers: list[Paper], topics: dict[str, str] | None = None) -> str:
    lines = ["# Reading list", ""]
    for p in papers:
        title = inline_markdown(to_unicode(p.title)) + (" *(title derived from the abstract)*" if p.title_derived else "")
        link = f"[{title}](<{p.url}>)" if p.url.startswith(("https://", "http://")) else title
        meta = [m for m in ((topics or {}).get(p.id, ""), p.primary_area, p.venue, review_line(p)) if m]
        lines.append(f"- {link}" + (f" — {inline_markdown(' · '.join(meta))}" if meta else "")
                     + f" (`{p.id}`)")
        if p.authors:
            lines.append(f"  {inline_markdown(author_line(p.authors, 50))}")
    return "\n".join(lines) + "\n"


def author_line(authors: list[str], limit: int = 6) -> str:
    """"A, B and C"; past `limit` names, the first ones and how many more."""
    if len(authors) > limit:
        return ", ".join(authors[:limit]) + f" and {len(authors) - limit} more"
    return authors[0] if len(authors) == 1 else ", ".join(authors[:-1]) + " and " + authors[-1]


def review_line(p: Paper) -> str:
    """"rating 6.50 · confidence 3.5 · 4 reviews", or "no reviews" for a paper without public scores."""
    if p.avg_rating is None:
        return "no reviews"
    bits = [f"rating {p.avg_rating:.2f}"]
    if p.avg_confidence is not None:
        bits.append(f"confidence {p.avg_confidence:.2f}")
    if p.n_ratings is not None:
        bits.append(f"{p.n_ratings} review{'s' if p.n_ratings != 1 else ''}")
    return " · ".join(bits)


def export(papers: list[Paper], fmt: str, topics: dict[str, str] | None = None) -> str:
    """The papers in one of FORMATS; topics maps paper id to its topic label."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return {"bibtex": to_bibtex, "csv": to_csv, "md": to_md}[fmt](papers, topics)
