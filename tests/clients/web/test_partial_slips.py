"""A slip a crash left half-written (``cz send --out`` syncs it under a temporary name, saves
the wallet without its items, then renames it): the Exchange page puts in place one whose
items the saved wallet no longer holds (it was sent: without it the items would be lost), and
removes one whose items the wallet still holds (it was never sent; its endorsements must never
reach anyone, or the items, sent again, would carry two signatures at one hop: V.6)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from clients.web.booths import _finish_partial_slips, _slips
from ledger.slips import Slip
from tests.ledger.factories import chain_of, key, make_league


def slip_of(serial: str) -> str:
    """A slip sending the print ``serial`` from one key to another, armored."""
    league = make_league()
    certificate = league.print_certificate(key(10), serial)
    return Slip(chains=(chain_of(certificate, key(10), key(11)),)).to_armor()


def test_a_sent_slip_is_put_in_place_and_an_unsent_one_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CZ_HOME", str(tmp_path / "home"))
    folder = _slips()
    gone = dead_pid()  # the writer a crash ended
    sent = folder / f".slip-20261204T050000Z-0000abcd.slip.{gone}.tmp"
    unsent = folder / f".slip-20261204T050100Z-0000beef.slip.{gone}.tmp"
    sent.write_text(slip_of("CZ-MODEL-A-0001"), encoding="ascii")
    unsent.write_text(slip_of("CZ-MODEL-A-0002"), encoding="ascii")
    torn = folder / f".slip-20261204T050200Z-0000cafe.slip.{gone}.tmp"
    torn.write_text("-----BEGIN CZ SLIP-----\n", encoding="ascii")
    # A send under way in this process: its slip is written, its wallet not yet saved.
    writing = folder / f".slip-20261204T050300Z-0000f00d.slip.{os.getpid()}.tmp"
    writing.write_text(slip_of("CZ-MODEL-A-0002"), encoding="ascii")

    _finish_partial_slips(None)  # no collection: nothing decided
    assert {p.name for p in folder.iterdir()} == {sent.name, unsent.name, torn.name, writing.name}

    held = {"prints": [{"serial": "CZ-MODEL-A-0002", "stamped": True}], "note_list": []}
    _finish_partial_slips(held)
    assert sorted(p.name for p in folder.iterdir()) == [
        writing.name,  # left to its writer
        "slip-20261204T050000Z-0000abcd.slip",
    ]


def dead_pid() -> int:
    """The pid of a process that has ended."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid
