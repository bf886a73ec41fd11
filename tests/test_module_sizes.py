"""Small modules with names that say what they hold (docs/architecture.md §2): no tracked Python
module, code or test, runs past 800 lines. A module that grows past it is two ideas in one
file: split it where they part (as services/league/cli.py became cli, database_commands and
log_commands), never by moving lines to dodge the count."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The most lines a module may have.
MAX_LINES = 800


def long_modules(root: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """The tracked ``.py`` files under ``root`` longer than ``limit`` lines, with their lengths."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"], cwd=root, capture_output=True, check=True
    ).stdout
    found = {}
    for name in filter(None, out.decode().split("\0")):
        path = root / name
        if path.is_file():
            lines = path.read_bytes().count(b"\n")
            if lines > limit:
                found[name] = lines
    return found


def test_no_module_is_over_800_lines() -> None:
    assert long_modules(ROOT) == {}


def test_the_count_sees_a_long_module() -> None:
    """The scan reads the tracked files: with a lower limit, the longest modules show."""
    assert "services/league/cli.py" in long_modules(ROOT, limit=200)
