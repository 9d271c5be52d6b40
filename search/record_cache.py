"""Each input file's records as its last read left them, beside the embedding cache: a build reads again only
the files that changed.

Reading 70,130 papers' inputs took 30 s of a build's 51 s of reading (py-spy: parsing ICLR 2026's fetch with its
reviews, cleaning 150 venue lists' markup, a match key per abstract); a venue added to them, or a re-fetch of one
venue, changes one file of the 152. An entry is keyed by the file's path and bytes and by the reading code
itself (the source of the modules that read and clean), so a change to either reads the file again; it holds the
records, the skipped lines' messages and the notes the read gave, all JSON Lines a person can inspect. A file
read again replaces its older entry."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

FOLDER = "records"


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=1)
def reader_version() -> str:
    """A digest of the reading code: the modules whose change can change a record, and the versions of the
    packages its BM25 tokens come from (bm25s's stop words, PyStemmer's stems)."""
    from importlib.metadata import PackageNotFoundError, version

    from . import corpus, decoding, latex, text, venuelists
    from .parts import lexical

    h = hashlib.sha256()
    for module in (corpus, decoding, latex, lexical, text, venuelists):
        h.update(Path(module.__file__).read_bytes())
    for package in ("bm25s", "PyStemmer"):
        try:
            h.update(f"{package}={version(package)}".encode())
        except PackageNotFoundError:
            pass
    return h.hexdigest()[:16]


def _names(path: Path, digest: str) -> tuple[str, str]:
    """An entry's name: what the file holds (its bytes, the reading code), then where it is."""
    what = hashlib.sha256(f"{digest}\x1f{reader_version()}".encode()).hexdigest()[:16]
    where = hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:16]
    return what, where


def cached_read(path: Path, digest: str, cache_dir: Path | None, skip_bad: bool, skipped: list[str],
                notes: list[str], read: Callable[[list[str], list[str]], list]) -> list:
    """`read(skipped, notes)`'s records of one file, from the cache where it holds these bytes (read at this path
    or another: a venue list linked into a second folder is the same list); else read, and kept. A cache that
    cannot be read or written is read past: the file is read as without one."""
    if cache_dir is None:
        return read(skipped, notes)
    folder = cache_dir / FOLDER
    what, where = _names(path, digest)
    entry = folder / f"{what}-{where}.jsonl"
    found = _taken(entry if entry.is_file() else next(folder.glob(f"{what}-*.jsonl"), None), path, skip_bad)
    if found is not None:
        records, said_skipped, said_notes = found
        skipped.extend(said_skipped)
        notes.extend(said_notes)
        return records
    mine_skipped, mine_notes = [], []
    records = read(mine_skipped, mine_notes)
    skipped.extend(mine_skipped)
    notes.extend(mine_notes)
    _keep(entry, path, digest, records, mine_skipped, mine_notes)
    return records


def _taken(entry: Path | None, path: Path, skip_bad: bool) -> tuple[list, list[str], list[str]] | None:
    """An entry's records and messages, said of `path` where it was read at another; None where it cannot serve."""
    import msgspec

    from .corpus import Record

    if entry is None:
        return None
    try:
        head, *rows = entry.read_bytes().split(b"\n", 1)
        said = msgspec.json.decode(head)
        before, said_skipped, said_notes = said["path"], said["skipped"], said["notes"]
        # a file with bad lines, kept as read past them, is read again where they are to stop the build
        if said_skipped and not skip_bad:
            return None
        records = msgspec.json.Decoder(type=Record).decode_lines(rows[0] if rows else b"")
    except (OSError, msgspec.DecodeError, KeyError, TypeError):
        return None
    if before != str(path):  # the messages name the file where it is now
        old_name = Path(before).name
        for r in records:
            if r.where.startswith(before):
                r.where = str(path) + r.where[len(before):]
            if r.source == old_name:
                r.source = path.name
        said_skipped = [m.replace(before, str(path)) for m in said_skipped]
        said_notes = [m.replace(before, str(path)) for m in said_notes]
    return records, said_skipped, said_notes


def _keep(entry: Path, path: Path, digest: str, records: list, skipped: list[str], notes: list[str]) -> None:
    """Write the entry (atomically) and drop this path's earlier ones."""
    import msgspec

    try:
        if file_digest(path) != digest:  # replaced while it was read (a re-fetch): these records are not its
            return
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.parent / f".{entry.name}.{os.getpid()}"
        encoder = msgspec.json.Encoder()
        tmp.write_bytes(encoder.encode({"path": str(path), "skipped": skipped, "notes": notes}) + b"\n"
                        + encoder.encode_lines(records))
        os.replace(tmp, entry)
        where = entry.name.split("-")[1]
        for older in entry.parent.glob(f"*-{where}"):  # this path's earlier versions
            if older != entry:
                older.unlink(missing_ok=True)
    except OSError:
        pass
