"""The conference at a glance: per primary area and per topic, papers, orals, decisions and review ratings."""
from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

from .corpus import Paper
from .fared import place_name, place_of, places_with_rejections
from .filters import DECISION_GROUPS, MIN_DECIDED, decision_group, fold, in_programme, is_oral, spread


@dataclass
class GroupStats:
    name: str
    papers: int
    orals: int
    rated: int                       # papers with a mean rating
    mean: float | None = None        # of the papers' mean ratings
    median: float | None = None
    q1: float | None = None
    q3: float | None = None
    best: list[str] = field(default_factory=list)   # ids, best-rated first
    ratings: list[float] = field(default_factory=list)  # every rated paper's mean rating, for charts
    id: int | None = None            # the topic's id, for a group that is a topic
    # where the index holds decisions: papers per decision group (accepted, rejected, withdrawn, undecided)
    decisions: dict[str, int] = field(default_factory=dict)

    # accepted papers from lists of accepted papers only (a venue-year whose record holds no rejection): not
    # among the decisions, where they would make a rate of 100%
    listed_only: int = 0
    # papers known to be in the programme (accepted by decision, or an Oral/Poster/Spotlight venue): where
    # none is, the share of orals is not known, not 0% (an area without decisions; the seed lists)
    programme: int = 0

    @property
    def oral_share(self) -> float | None:
        return self.orals / self.papers if self.papers and self.programme else None

    @property
    def decided(self) -> int:
        """Papers accepted or rejected."""
        return self.decisions.get("accepted", 0) + self.decisions.get("rejected", 0)

    @property
    def acceptance(self) -> float | None:
        """Accepted of the decided (accepted or rejected); None where fewer than MIN_DECIDED are decided."""
        return self.decisions.get("accepted", 0) / self.decided if self.decided >= MIN_DECIDED else None

    def acceptance_words(self) -> str:
        """"31.2% (143 of 458 decided)", or why there is no rate: "- (1 of 378 decided)"."""
        counts = f"({self.decisions.get('accepted', 0):,} of {self.decided:,} decided)"
        if self.listed_only and not self.decided:
            return f"- (a list of {self.listed_only:,} accepted papers only: no rate)"
        more = (f"; {self.listed_only:,} more from lists of accepted papers only, not counted)"
                if self.listed_only else ")")
        counts = counts[:-1] + more
        return f"{self.acceptance:.1%} {counts}" if self.acceptance is not None else f"- {counts}"

    def to_dict(self, ratings: bool = False) -> dict:
        d = asdict(self)
        d["oral_share"] = None if self.oral_share is None else round(self.oral_share, 4)
        d["acceptance_rate"] = None if self.acceptance is None else round(self.acceptance, 4)
        d["decided"] = self.decided
        if not ratings:
            d.pop("ratings")
        return d


def summarise(name: str, papers: list[Paper], best: int = 3, known: set | None = None) -> GroupStats:
    """A group's papers, orals, ratings and decisions; `known`: the (conference, year) whose records hold
    rejections (fared.places_with_rejections): the decisions of the others' papers are not counted (their
    accepted ones are `listed_only`), so no rate comes from a list of accepted papers only."""
    rated = sorted((p for p in papers if p.avg_rating is not None), key=lambda p: -p.avg_rating)
    values = sorted(p.avg_rating for p in rated)
    decisions: dict[str, int] = {}
    listed_only = 0
    for p in papers:
        group = decision_group(p.decision)
        if group and known is not None and place_of(p) not in known:
            listed_only += group == "accepted"
        elif group:
            decisions[group] = decisions.get(group, 0) + 1
    programme = sum(map(in_programme, papers))
    out = GroupStats(name, len(papers), sum(map(is_oral, papers)), len(rated),
                     best=[p.id for p in rated[:best]], ratings=values, decisions=decisions, programme=programme,
                     listed_only=listed_only)
    if values:
        out.mean, out.median = round(statistics.fmean(values), 3), round(statistics.median(values), 3)
        if len(values) > 1:
            q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
            out.q1, out.q3 = round(q1, 3), round(q3, 3)
        else:
            out.q1 = out.q3 = values[0]
    return out


def by(papers: Iterable[Paper], key: Callable[[Paper], str], best: int = 3,
       known: set | None = None) -> list[GroupStats]:
    """One summary per value of key (papers without one left out), largest group first."""
    groups: dict[str, list[Paper]] = {}
    for p in papers:
        name = key(p)
        if name:
            groups.setdefault(name, []).append(p)
    return sorted((summarise(n, g, best, known) for n, g in groups.items()), key=lambda s: (-s.papers, s.name))


def institutions(p: Paper) -> set[str]:
    """The paper's institutions, folded, once each ("A + B": an author of two)."""
    return {fold(a) for aff in p.affiliations for a in aff.split("+") if a.strip()}


def top_affiliations(papers: list[Paper], n: int = 20, known: set | None = None) -> list[GroupStats]:
    """The n institutions with most papers (a paper counts once for each institution its authors give),
    named as most of their papers spell them."""
    members: dict[str, list[Paper]] = {}
    spellings: dict[str, Counter] = {}
    for p in papers:
        for aff in p.affiliations:
            for a in aff.split("+"):
                if a.strip():
                    spellings.setdefault(fold(a), Counter())[a.strip()] += 1
        for key in institutions(p):
            members.setdefault(key, []).append(p)
    largest = sorted(members, key=lambda k: (-len(members[k]), k))[:n]
    return [summarise(max(spellings[k], key=lambda s: (spellings[k][s], s)), members[k], known=known)
            for k in largest]


def groups(papers: list[Paper], topics: dict) -> list[tuple[str, list[GroupStats]]]:
    """("all" | "venue" | "area" | "topic" | "affiliation", summaries): what `python -m search stats` and the
    page's view show. Venue-years where the index holds more than one; institutions where it names any."""
    known = places_with_rejections(papers)
    out = [("all", [summarise("all papers", papers, known=known)])]
    venues = by(papers, lambda p: place_name(*place_of(p)), known=known)
    if len({pl for p in papers if (pl := place_of(p))[0]}) > 1:  # the seed lists beside one venue make no second
        out.append(("venue", sorted(venues, key=lambda s: s.name)))
    out.append(("area", by(papers, lambda p: p.primary_area, known=known)))
    if any(p.affiliations for p in papers):
        out.append(("affiliation", top_affiliations(papers, known=known)))
    if topics:
        rows = by(papers, lambda p: "" if p.topic is None else str(p.topic), known=known)
        for r in rows:  # grouped by id: two topics could share a label
            r.id, r.name = int(r.name), topics[int(r.name)].label
        out.append(("topic", rows))
    return out


def controversial(papers: Iterable[Paper], n: int = 5) -> dict[str, list[Paper]]:
    """The papers whose reviewers disagreed most (widest spread of ratings), by what is known of them: the
    accepted and the rejected ones once decisions are out; before any ("submissions"), every submission not
    withdrawn, so the review season has its list too."""
    papers = [p for p in papers if spread(p) is not None]
    decided = any(decision_group(p.decision) in ("accepted", "rejected") for p in papers)
    if decided:
        out = {g: [p for p in papers if decision_group(p.decision) == g] for g in ("accepted", "rejected")}
    else:
        out = {"submissions": [p for p in papers if decision_group(p.decision) != "withdrawn"]}
    return {g: sorted(ps, key=lambda p: (-spread(p), p.id))[:n] for g, ps in out.items()}


# a list of `controversial`'s, named: "Most controversial accepted papers"
CONTROVERSIAL = {"accepted": "accepted papers", "rejected": "rejected papers", "submissions": "submissions"}
# the groups of `ratings_by_decision`, in the order their charts draw them, with their names there
RATED_GROUPS = {"accepted": "accepted", "rejected": "rejected", "withdrawn": "withdrawn",
                "undecided": "no decision yet"}


def ratings_by_decision(papers: Iterable[Paper]) -> dict[str, list[float]]:
    """Mean ratings of the accepted, rejected, withdrawn and undecided papers (empty where the index has no
    decisions): in the review season the undecided beside the withdrawn, not the withdrawn alone."""
    out: dict[str, list[float]] = {}
    for p in papers:
        group = decision_group(p.decision)
        if group in RATED_GROUPS and p.avg_rating is not None:
            out.setdefault(group, []).append(p.avg_rating)
    return {g: out[g] for g in RATED_GROUPS if g in out}


def table(rows: list[GroupStats], title: str) -> str:
    """A plain-text table for the terminal (and for anyone who cannot see the charts)."""
    width = max([len(title)] + [len(r.name) for r in rows])
    decided = any(r.decisions or r.listed_only for r in rows)
    out = [f"{title:<{width}}  papers  orals  rated   mean  median  q1-q3" + ("        accepted" if decided else "")]
    for r in rows:
        spread_ = f"{r.q1:.2f}-{r.q3:.2f}" if r.q1 is not None else "-"
        mean = f"{r.mean:.2f}" if r.mean is not None else "-"
        median = f"{r.median:.2f}" if r.median is not None else "-"
        orals = f"{r.oral_share:>5.0%}" if r.oral_share is not None else "    -"
        line = (f"{r.name:<{width}}  {r.papers:>6}  {orals}  {r.rated:>5}  {mean:>5}  "
                f"{median:>6}  {spread_:<11}")
        if decided:
            line += f"  {r.acceptance_words()}"
        out.append(line.rstrip())
    if decided:
        out.append("accepted: accepted of the decided (accepted or rejected); withdrawn and undecided papers "
                   f"are left out; no rate from fewer than {MIN_DECIDED} decided papers, nor from a list of "
                   "accepted papers only")
    return "\n".join(out)


def undecided_note(undecided: dict[str, int]) -> str:
    """How many papers have no decision yet and in which areas ("" when every paper has one)."""
    total = sum(undecided.values())
    if not total:
        return ""
    areas = sorted(((n, a) for a, n in undecided.items() if a), reverse=True)
    where = "; ".join(f"{a} ({n:,})" for n, a in areas)
    return (f"{total:,} submissions have no decision yet" + (f", in {len(areas)} primary areas: {where}" if areas
                                                             else "") + ".")


# what a count of a decision filter's papers is called ("17,279 submissions not withdrawn")
COUNTED = {"accepted": "accepted papers", "all": "submissions", "rejected": "rejected submissions",
           "withdrawn": "withdrawn submissions", "undecided": "submissions with no decision yet", "oral": "orals",
           "spotlight": "spotlights", "poster": "posters", "active": "submissions not withdrawn"}


def submissions(papers: Iterable[Paper]) -> int:
    """The venue's submissions: the papers its records give a decision (under review included). A seed
    paper that is not in the venue (InterFormer, MergeMix beside ICLR 2026's 19,630) is none of them."""
    return sum(1 for p in papers if decision_group(p.decision))


def scope_words(searched: int, decisions: tuple[str, ...], venue: int, papers: int) -> str:
    """What the empty search page offers to search, in Markdown: "**17,279 submissions not withdrawn** (of
    19,630 submissions)", "**19,630 submissions** and 2 papers of the seed lists"; "**66 papers**" where the
    index holds no decisions. `venue`: its submissions (`submissions`), `papers`: every paper of the index."""
    noun = COUNTED.get(",".join(decisions))
    if not (venue and decisions and noun):
        return f"**{searched:,} papers**"
    if searched > venue:  # every paper: the venue's and the seed lists' others
        return papers_words(venue, papers, "**")
    return f"**{searched:,} {noun}**" + (f" (of {venue:,} submissions)" if searched < venue else "")


def papers_words(venue: int, papers: int, bold: str = "") -> str:
    """An index's papers counted: "19,630 submissions and 2 papers of the seed lists" (the venue's submissions
    apart from the seed papers not in it), "66 papers" where it holds no venue's decisions."""
    if not venue:
        return f"{bold}{papers:,} papers{bold}"
    others = papers - venue
    return f"{bold}{venue:,} submissions{bold}" + (f" and {others:,} paper{'s' if others != 1 else ''} of the seed "
                                                   "lists" if others else "")


def active_note(decisions: Iterable[str]) -> str:
    """What the list of every submission not withdrawn holds, true for the decisions the index carries: before
    any decision "No decision is out yet"; once some are out, which kinds it holds."""
    groups = {decision_group(d) for d in decisions}
    out = [g for g in ("accepted", "rejected") if g in groups]
    if not out:
        return "No decision is out yet: searching every submission not withdrawn."
    held = " and ".join(out) + (" submissions and those still under review" if "undecided" in groups
                                else " submissions")
    return f"Searching every submission not withdrawn: the {held}."
