"""The repository explains itself (docs/architecture.md §2): no tracked file cites the team's
design page or the issue tracker, neither of which a reader of the repository has, and every
citation of docs/architecture.md names a section that page has.

Reading the code, a reader meets "docs/architecture.md §4" or "docs/operations.md, Witnesses",
never a document or a tracker entry they cannot open. Certificate issues ("issue 2 of a note",
"stale-issue") are protocol words, not tracker references: only issue numbers past the protocol's
(4 and up) or with an item or a section after them count as the tracker's.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: This file: its examples of what the scan finds are not references.
SELF = "tests/docs/test_references.py"

#: Text files the scan reads, by suffix.
TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".json",
    ".toml",
    ".yml",
    ".yaml",
    ".txt",
    ".cfg",
    ".ini",
    ".html",
    ".conf",
    ".j2",
}

#: The team's design page, by name or by section ("DESIGN" then "§", "DESIGN.md", "DESIGN's").
DESIGN = re.compile(r"\bDESIGN(?:\.md\b|\s*§|'s\b)")
#: The tracker: "issue 9", "issues 10", "issue 2 item 3", "issue 9 §4" (not "stale-issue 13").
TRACKER = re.compile(
    r"(?<![\w-])[Ii]ssues? (?:(?:[4-9]|[1-9][0-9]+)\b|[0-9]+,? (?:items? |§ ?)[0-9])"
)
#: A citation of this repository's architecture page and the sections it names.
ARCHITECTURE_CITATION = re.compile(
    r"docs/architecture\.md,? (§ ?[0-9]+(?:(?: ?(?:,|and|to|-|–) ?)§? ?[0-9]+)*)"
)


def _tracked() -> list[str]:
    """The repository's tracked text files, relative to its root."""
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    names = [name for name in out.decode().split("\0") if name]
    return [name for name in names if Path(name).suffix in TEXT_SUFFIXES]


def _text(name: str) -> str | None:
    path = ROOT / name
    if not path.is_file():  # deleted in the working tree, not yet committed
        return None
    return path.read_text(encoding="utf-8", errors="replace")


def outside_references(names: list[str]) -> list[str]:
    """Every line of ``names`` citing the design page or the
    tracker, as ``path:line: text``."""
    found = []
    for name in names:
        if name == SELF:
            continue
        text = _text(name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if DESIGN.search(line) or TRACKER.search(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    return found


def architecture_sections() -> set[int]:
    """The numbers of docs/architecture.md's sections (its ``## n Title`` headings)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    return {int(n) for n in re.findall(r"^## ([0-9]+) ", text, re.M)}


def missing_sections(names: list[str], sections: set[int]) -> list[str]:
    """Every citation of docs/architecture.md in ``names`` naming a section it does not have."""
    found = []
    for name in names:
        text = _text(name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for cited in ARCHITECTURE_CITATION.findall(line):
                absent = sorted({int(n) for n in re.findall(r"[0-9]+", cited)} - sections)
                if absent:
                    found.append(f"{name}:{number}: §{absent} in {line.strip()[:100]}")
    return found


def test_no_file_cites_the_design_page_or_the_tracker() -> None:
    """Outside the paths still being cleared, no tracked file cites DESIGN or an issue."""
    names = _tracked()
    assert "ledger/address.py" in names, "the scan found too little"
    assert outside_references(names) == []


def test_the_scan_knows_a_reference_from_a_protocol_word() -> None:
    """What counts as a reference: the design page by section or name, the tracker by a number
    past the protocol's or an item; a certificate's issue is no reference."""
    for line in (
        "DESIGN §4",
        "see DESIGN.md",
        "DESIGN's wording",
        "issue 10 item 3",
        "(issue 9 §4)",
        "Issue 14 asks",
        "issue 2 item 1",
        "issue 11's buy",
    ):
        assert DESIGN.search(line) or TRACKER.search(line), line
    for line in (
        "its issue 2 chain",
        "issued again under issue n+1",
        "stale-issue 13",
        "as issue 1, but",
        "a print's DESIGNATION",
    ):
        assert DESIGN.search(line) is None, line
        assert TRACKER.search(line) is None, line


def test_every_architecture_citation_names_a_section_it_has() -> None:
    """docs/architecture.md has sections 1 to 7, and every "docs/architecture.md §n" in a tracked
    file (the excluded paths included) names one of them."""
    sections = architecture_sections()
    assert sections == set(range(1, 8))
    names = _tracked()
    assert missing_sections(names, sections) == []
    assert missing_sections([SELF], {1}) != [], "the scan saw nothing"
