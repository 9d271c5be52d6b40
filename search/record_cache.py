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
    """A digest of the reading code: the modules whose change can change a record."""
    from . import corpus, latex, text, venuelists

    h = hashlib.sha256()
    for module in (corpus, latex, text, venuelists):
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()[:16]


def _names(cache_dir: Path, path: Path, digest: str) -> tuple[Path, str]:
    where = hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:16]
    what = hashlib.sha256(f"{digest}\x1f{reader_version()}".encode()).hexdigest()[:16]
    return cache_dir / FOLDER, f"{where}-{what}.jsonl"


def cached_read(path: Path, digest: str, cache_dir: Path | None, skip_bad: bool, skipped: list[str],
                notes: list[str], read: Callable[[list[str], list[str]], list]) -> list:
    """`read(skipped, notes)`'s records of one file, from the cache where it holds this file as it is now; else
    read, and kept. A cache that cannot be read or written is read past: the file is read as without one."""
    import msgspec

    from .corpus import Record

    if cache_dir is None:
        return read(skipped, notes)
    folder, name = _names(cache_dir, path, digest)
    entry = folder / name
    try:
        head, *rows = entry.read_bytes().split(b"\n", 1)
        said = msgspec.json.decode(head, type=dict[str, list[str]])
        # a file with bad lines, kept as read past them, is read again where they are to stop the build
        if skip_bad or not said["skipped"]:
            records = msgspec.json.Decoder(type=Record).decode_lines(rows[0] if rows else b"")
            skipped.extend(said["skipped"])
            notes.extend(said["notes"])
            return records
    except (OSError, msgspec.DecodeError, KeyError):
        pass
    mine_skipped, mine_notes = [], []
    records = read(mine_skipped, mine_notes)
    skipped.extend(mine_skipped)
    notes.extend(mine_notes)
    try:
        if file_digest(path) != digest:  # replaced while it was read (a re-fetch): these records are not its
            return records
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.{os.getpid()}"
        encoder = msgspec.json.Encoder()
        tmp.write_bytes(encoder.encode({"skipped": mine_skipped, "notes": mine_notes}) + b"\n"
                        + encoder.encode_lines(records))
        os.replace(tmp, entry)
        for older in folder.glob(f"{name.split('-')[0]}-*.jsonl"):  # this path's earlier versions
            if older != entry:
                older.unlink(missing_ok=True)
    except OSError:
        pass
    return records
