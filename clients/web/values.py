"""What a form may send, checked before any ``cz`` command sees it.

A form's values become a command's arguments (:mod:`clients.web.calls`), so each is checked
against what it must be: a serial's pattern, a title of the catalog, a finish of the fixed
set, a count as digits, a league's URL as http(s). Whatever passes cannot be read as an
option (a serial begins ``CZ-``, a title is a catalog word, a number is digits, a URL begins
``http``), and every command the pages build also puts ``--`` before its positional
arguments. A value that fails is :class:`BadValue`: its page says which and why, nothing run.
"""

from __future__ import annotations

import re

from ledger.limits import MAX_SERIAL_CHARS

#: A print's (CZ-TALLY-0001, the Misprint CZ-TALLY-000) or a note's (CZ-M25-000001) serial.
_SERIAL = re.compile(r"CZ-[A-Z0-9]+(?:-[A-Z0-9]+)*")
#: The finishes bought with notes or marks (V.5).
FINISHES = ("gilt", "holofoil")
#: The most digits a count may have (a count of marks, a print's number in the store).
_DIGITS = 9


class BadValue(ValueError):
    """A form's value that is not what it must be; nothing was run."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}; nothing was run")


def serial(text: str, what: str = "the serial") -> str:
    """A print's or a note's serial, upper-cased (``CZ-TALLY-0001``, ``CZ-M25-000001``)."""
    value = text.strip().upper()
    if len(value) > MAX_SERIAL_CHARS or not _SERIAL.fullmatch(value):
        raise BadValue(what, f"{_shown(text)} is not a serial (CZ-TITLE-NNNN or CZ-MNN-NNNNNN)")
    return value


def title(text: str) -> str:
    """A certificate's title of the catalog (``Tally``)."""
    from ledger.catalog import PLAYING

    value = text.strip()
    if value not in {c.name for c in PLAYING}:
        raise BadValue("the title", f"{_shown(text)} is not a title of the catalog")
    return value


def finish(text: str) -> str:
    """A finish an upgrade buys: gilt or holofoil."""
    value = text.strip()
    if value not in FINISHES:
        raise BadValue("the finish", f"{_shown(text)} is not one of {', '.join(FINISHES)}")
    return value


def count(text: str, what: str) -> str:
    """A whole number written in digits alone (no sign, no space inside)."""
    value = text.strip()
    if not (value.isascii() and value.isdigit() and len(value) <= _DIGITS):
        raise BadValue(what, f"{_shown(text)} is not a whole number")
    return value


def league_url(text: str) -> str:
    """A league's address: http:// or https://."""
    value = text.strip()
    if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
        raise BadValue("the league's URL", f"{_shown(text)} is not an http(s) URL")
    return value


def _shown(text: str) -> str:
    return repr(text[:40] + ("…" if len(text) > 40 else ""))
