"""docs/architecture.md is the map of the code: it cannot drift from what the code holds."""
import re
from dataclasses import fields

from conftest import ROOT
from search.manifest import Manifest

ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_module_of_the_library_is_on_the_map():
    modules = sorted(p.name for p in (ROOT / "search").glob("*.py") if not p.name.startswith("__"))
    listed = set(re.findall(r"`search/(\w+\.py)`", ARCHITECTURE))
    assert len(modules) > 30 and [m for m in modules if m not in listed] == []
    assert [m for m in listed if not (ROOT / "search" / m).is_file()] == []  # nor a module that is gone


def test_every_manifest_entry_is_in_the_index_layout():
    layout = ARCHITECTURE[ARCHITECTURE.index("## The index folder"):ARCHITECTURE.index("## Every module")]
    entries = [f.name for f in fields(Manifest)]
    assert "multilingual" in entries and [e for e in entries if f"`{e}`" not in layout] == []
