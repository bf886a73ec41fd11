"""The pages run the ``cz`` commands themselves (clients/web/calls.py): a refusal is cz's own
line and status, and cz's progress bar (the proof of work of a stamp or a claim), which cz
draws only on a terminal, is drawn into the stream a waiting page reads."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from clients.cz_session import Progress
from clients.web.calls import Watched, call


def test_cz_progress_is_drawn_for_the_page() -> None:
    watched = Watched()
    with contextlib.redirect_stderr(watched):
        progress = Progress("proof of work", 4)
        progress.at(2)
    assert watched.progress == "proof of work [" + "#" * 15 + "." * 15 + "] 2/4"
    progress.close()
    assert watched.getvalue() == "\n"


def test_a_refusal_is_cz_s_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No wallet: cz's one-line refusal and status 2; a locked wallet is never asked for a
    passphrase on the terminal (the call returns)."""
    monkeypatch.setenv("CZ_HOME", str(tmp_path / "home"))
    answer = call(["stamp"])
    assert answer.status == 2
    assert "no wallet" in answer.refusal
    monkeypatch.setenv("CZ_KDF", "minimum")
    strike = call(["key", "strike", "--json"], passphrase="pw")
    assert strike.ok, strike.err
    locked = call(["save", "--json"])  # the passphrase not handed: locked
    assert locked.status == 2
    assert locked.refusal == "the wallet is locked: unlock it with its passphrase first"
