"""The player's guide, docs/rules.md, answers every citation, and nothing points outside the clone.

Messages, code and docs cite the rulebook by its own section numbers ("Book V.2", "IV.1",
"I.7 CUT", "Book III"). Each such citation in clients/, game/, services/, docs/ or README.md must
name a heading of docs/rules.md, so a player can look it up in the repository. And no tracked
file may send its reader to a path outside the clone (the shared folder beside it, a seeds
folder): a fresh clone has neither.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from game.window import parse_record, replay
from game.window.scoring import Verdict

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "rules.md"
CITED_IN = ("clients", "game", "services", "docs")
# A section of the book: "Book V", "Book V.2", or a bare "IV.3".
CITATION = re.compile(r"(Book [IVX]+(?:\.[0-9]+)?|\b[IVX]+\.[0-9]+\b)")
# A card or an action named within its section: "Book III GRAM", "Book II TURN", "I.7 CUT".
NAMED = re.compile(r"\b(Book III?|I\.7) ([A-Z][A-Z-]*[A-Z])\b")
# A path outside the clone: the shared folder beside it, a seeds folder, or any absolute path
# on the team's machine ("/work/notes/…").
OUTSIDE = re.compile(r"\.\./shared\b|(?<![\w.~-])/work/|\bseeds/")
SKIP_DIRS = {"__pycache__", "node_modules"}


def _skipped(path: Path) -> bool:
    """Whether ``path`` lies in a tool's folder (.git, .venv, caches), not the project's."""
    parts = path.relative_to(ROOT).parts
    return any(part.startswith(".") or part in SKIP_DIRS for part in parts)


def _section(citation: str) -> str:
    """The section a citation names: "Book V.2" and "V.2" are one section; "Book V" is a book."""
    return citation.removeprefix("Book ") if "." in citation else citation


def _headings() -> set[str]:
    """Every section named by a heading of docs/rules.md."""
    found: set[str] = set()
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            found.update(_section(m) for m in CITATION.findall(line))
    return found


def _named_headings() -> set[str]:
    """Each card of Books II and III ("Book II TURN") and each action of I.7 ("I.7 CUT") that
    has its own heading in docs/rules.md."""
    found: set[str] = set()
    book = ""
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        if line.startswith("## Book "):
            book = line.split()[1] + " " + line.split()[2]
        elif line.startswith("#### "):
            name = line.removeprefix("#### ").split(" — ")[0]
            found.add(name if name.startswith("I.7 ") else f"{book} {name}")
    return found


def _sources() -> list[Path]:
    """The files whose citations the guide must answer (the guide itself aside)."""
    files = [ROOT / "README.md"]
    for top in CITED_IN:
        files += [p for p in (ROOT / top).rglob("*") if p.suffix in {".py", ".md", ".json"}]
    return [p for p in files if not _skipped(p) and p != GUIDE]


def _cited() -> dict[str, set[str]]:
    """Each cited section, with the files that cite it."""
    cited: dict[str, set[str]] = {}
    for path in _sources():
        for citation in CITATION.findall(path.read_text(encoding="utf-8")):
            cited.setdefault(_section(citation), set()).add(str(path.relative_to(ROOT)))
    return cited


def _tracked() -> list[Path]:
    """The repository's tracked files (every file outside tool folders when git is absent)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return [p for p in ROOT.rglob("*") if p.is_file() and not _skipped(p)]
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_every_cited_section_has_a_heading_in_the_guide() -> None:
    """Each book section cited in clients/, game/, services/, docs/ or README.md is a heading of
    docs/rules.md (one heading per section, carrying its number)."""
    assert GUIDE.is_file(), "docs/rules.md, the player's guide, is missing"
    cited = _cited()
    assert {"I.7", "V.2", "Book III"} <= cited.keys(), "the citation scan found too little"
    headings = _headings()
    missing = {s: sorted(files)[:3] for s, files in cited.items() if s not in headings}
    assert not missing, f"cited but no heading in docs/rules.md: {missing}"


def test_every_cited_card_and_action_has_its_heading() -> None:
    """A citation naming a card of Books II–III ("Book III GRAM") or an action of I.7 ("I.7 CUT")
    finds that card's or action's own heading in its book in docs/rules.md."""
    named = {
        f"{book} {name}": path.relative_to(ROOT)
        for path in _sources()
        for book, name in NAMED.findall(path.read_text(encoding="utf-8"))
    }
    assert {"I.7 CUT", "Book II TURN", "Book III GRAM"} <= named.keys()
    missing = {c: str(p) for c, p in named.items() if c not in _named_headings()}
    assert not missing, f"cited but no heading in docs/rules.md: {missing}"


def test_the_guide_covers_every_section_of_books_i_iv_v() -> None:
    """The rules of play are complete: every numbered section of Books I, IV and V, and each of
    the six books, has its heading, cited or not."""
    expected = {f"I.{n}" for n in range(1, 11)} | {f"IV.{n}" for n in range(1, 7)}
    expected |= {f"V.{n}" for n in range(1, 9)}
    expected |= {f"Book {b}" for b in ("I", "II", "III", "IV", "V", "VI")}
    assert expected <= _headings()


def test_no_tracked_file_points_outside_the_clone() -> None:
    """No tracked file sends its reader to the shared folder beside the clone, a seeds folder or
    any other file on the team's machine: the rules are docs/rules.md, the rest is in docs/."""
    this = Path(__file__).resolve()
    offenders = []
    for path in _tracked():
        if path.resolve() == this or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert not offenders, f"points outside the clone: {offenders}"


def test_the_worked_table_ends_as_the_guide_says() -> None:
    """The worked table of docs/rules.md replays legally to its close, with the columns and the
    verdict its reckoning states: 16/1/1 against 25/1/0, a Balance (I.9, I.10)."""
    text = GUIDE.read_text(encoding="utf-8")
    block = text.split("## A worked table", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    state = replay(parse_record(json.loads(block)))
    assert state.closed
    assert state.columns() == ((16, 1, 1), (25, 1, 0))
    assert (state.verdict(0), state.verdict(1)) == (Verdict.BALANCE, Verdict.BALANCE)
