"""Ctrl-C reaches ``cz`` as a process: a real subprocess on a pseudo-terminal (the in-process
runner cannot be interrupted, so these stay processes). Interrupted at a prompt, cz says so on
one line, exits with status 130 and has written nothing."""

from __future__ import annotations

from pathlib import Path

from tests.clients.conftest import PASSPHRASE, Player, on_terminal


def test_ctrl_c_at_the_passphrase_prompt_writes_no_wallet(tmp_path: Path) -> None:
    """``cz key strike`` interrupted while it asks for the passphrase (the second time): exit
    130, "interrupted" said, and no wallet in CZ_HOME."""
    player = Player(tmp_path / "home")
    typing = {k: v for k, v in player.env().items() if k != "CZ_PASSPHRASE"}
    status, shown = on_terminal(
        ["key", "strike"],
        typing,
        [("choose a passphrase: ", PASSPHRASE), ("the same passphrase again: ", None)],
    )
    assert status == 130, shown
    assert "cz: interrupted; nothing was written that was not whole" in shown
    assert "Traceback" not in shown
    assert not player.wallet_file.exists()
