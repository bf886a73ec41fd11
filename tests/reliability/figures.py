"""What each reliability test measured, kept so that ``docs/reliability.md`` states the figures
of the last run rather than figures someone typed.

A test calls :func:`record` with its name and a few numbers (cases run, steps taken, kill
points crossed, invariants checked). The figures of the run are written as JSON under
``test-artifacts/reliability/`` (ignored by git). The long form of the suite
(``RELIABILITY_LONG=1``) also rewrites the table between the ``figures`` markers of
``docs/reliability.md``, which the developer who ran it commits: the document then names the
run that produced it.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "reliability"
DOCUMENT = ROOT / "docs" / "reliability.md"
START = "<!-- figures:start -->"
END = "<!-- figures:end -->"


def long_form() -> bool:
    """True when the long form runs (by hand): ``RELIABILITY_LONG=1``."""
    return os.environ.get("RELIABILITY_LONG") == "1"


def record(test: str, figures: dict[str, int | str]) -> None:
    """Keep ``figures`` of ``test`` for this run (and, in the long form, the document)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    entry = {
        "test": test,
        "form": "long" if long_form() else "short",
        "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, Python {platform.python_version()}",
        "figures": figures,
    }
    (ARTIFACTS / f"{test}.json").write_text(json.dumps(entry, indent=2) + "\n")
    if long_form():
        _rewrite_document()


def _rewrite_document() -> None:
    """The table of every kept entry, between the markers of ``docs/reliability.md``."""
    if not DOCUMENT.exists():
        return
    text = DOCUMENT.read_text()
    if START not in text or END not in text:
        return
    rows = ["| test | form | finished | machine | figures |", "|---|---|---|---|---|"]
    for path in sorted(ARTIFACTS.glob("*.json")):
        entry = json.loads(path.read_text())
        figures = ", ".join(f"{k}: {v}" for k, v in entry["figures"].items())
        rows.append(
            f"| `{entry['test']}` | {entry['form']} | {entry['finished']} | "
            f"{entry['machine']} | {figures} |"
        )
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOCUMENT.write_text(head + START + "\n" + "\n".join(rows) + "\n" + END + tail)
