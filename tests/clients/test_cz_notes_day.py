"""``cz notes claim`` checks the day's allowance before working: once the treasury has said
this key's faucet day is used up (an answer's "left today: M0", or its refusal for the day),
a new claim that day is refused at once in one line saying when the faucet opens again, with
no proof of work and nothing sent (Book V.5's faucet, per key per UTC day)."""

from __future__ import annotations

from pathlib import Path

from tests.clients.conftest import Player, one_line_failure, wallet_with
from tests.harness.league import served_in_process as serving

USED_UP = "today's faucet is used up (left today: M0 of M50"


# V.5
def test_a_used_up_day_is_refused_before_any_work(
    league_env: dict[str, str], players: dict[str, Player], tmp_path: Path
) -> None:
    """A claims the day's M50 (its answer says M0 left); B2, the same key on a second device,
    is refused for the day by the treasury. With the league stopped, each one's next claim is
    refused from what its wallet was told (so nothing was sent and no work done), saying the
    faucet opens at midnight UTC; the marks stay."""
    a, b2 = players["A"], players["B2"]
    code = wallet_with(tmp_path / "a.code", [], marks=120)
    a.ok("load", str(code))
    b2.ok("load", str(code))
    with serving(league_env) as served:
        a.ok("league", "set", served.url)
        b2.ok("league", "set", served.url)
        assert a.json("notes", "claim")["left_today"] == 0
        assert "midnight" in one_line_failure(b2.run("notes", "claim"))
    for player in (a, b2):
        before = player.json("collection")["marks"]
        line = one_line_failure(player.run("notes", "claim"))
        assert USED_UP in line, line
        assert "opens again at midnight UTC, in " in line
        assert "nothing was sent" in line
        assert player.json("collection")["marks"] == before
