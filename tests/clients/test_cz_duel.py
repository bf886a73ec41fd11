"""``cz duel new`` and ``cz duel join CODE``: two players at one witnessed table of a served
league (docs/formats.md, "Duels"): the opener is told the join code once, the other joins
with it, both seeds are drawn, and each client plays its own seat, the other's moves arriving
from the league; at the close both check the reveal (the join code and the whole duel
replayed) and neither is paid (L-33)."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

from apiclient.league import LeagueClient
from clients.witnessed import KeptTable, check_reveal, kept_dir
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.manifest import LeagueManifest
from tests.clients.conftest import CZ, GUARD_SECONDS, Player, one_line_failure
from tests.harness.league import InProcessLeague

CODE = re.compile(r"your duel's join code: ([2-9A-HJ-NP-Z]{8})")


def kept_of(player: Player) -> KeptTable:
    (path,) = kept_dir(player.home).glob("*.json")
    return KeptTable.load(path)


def test_a_duel_between_two_players_is_played_to_its_close(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """# L-30. The opener (a real process, waiting for the join) prints the code; the second
    player joins with it; each client's Chair plays its own seat until the close, and each
    says the league dealt fairly, from its own seat (the opener first); the two verdicts are
    each other's, and the log holds every move signed by the deciding seat's key."""
    opener, joiner = players["A"], players["B"]
    opener.strike(served.url)
    joiner.strike(served.url)
    out = (tmp_path / "opener.out").open("w+")
    process = subprocess.Popen(
        [str(CZ), "duel", "new", "--auto", "VI"],
        env=opener.env(),
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        code = None
        for _ in range(GUARD_SECONDS * 10):  # a guard, not a timing assertion
            found = CODE.search((tmp_path / "opener.out").read_text())
            if found or process.poll() is not None:
                code = found.group(1) if found else None
                break
            asyncio.run(asyncio.sleep(0.1))
        assert code is not None, (tmp_path / "opener.out").read_text()
        joined = joiner.run("duel", "join", code.lower(), "--auto", "III")
        assert joined.returncode == 0, joined.stderr + joined.stdout
        assert process.wait(GUARD_SECONDS) == 0, (tmp_path / "opener.out").read_text()
    finally:
        if process.poll() is None:
            process.kill()
        out.close()
    shown = (tmp_path / "opener.out").read_text()
    for said in (shown, joined.stdout):
        assert "the league dealt fairly" in said
        assert "both players'" in said
        assert "a duel pays nothing" in said
    assert "you sit first, against your opponent" in shown
    assert "you sit second, against your opponent" in joined.stdout
    mine, theirs = kept_of(opener), kept_of(joiner)
    assert mine.table == theirs.table
    assert (mine.seat, theirs.seat) == (0, 1)
    assert (mine.checked, theirs.checked) == ("fair", "fair")
    assert mine.code == code

    async def events() -> tuple[LeagueManifest, list[Event]]:
        async with LeagueClient(served.url) as client:
            manifest = await client.manifest()
            served_events = await client.table_events(mine.table)
        assert manifest.tables is not None
        key = PublicKey.from_text(manifest.tables)
        return manifest, [e.verified(key) for e in served_events.events]

    manifest, logged = asyncio.run(events())
    policies = manifest.policies
    actions = [a for e in logged if e.type == "move-played" for a in e.body["actions"]]
    fair_a = check_reveal(mine, logged, actions, policies)
    fair_b = check_reveal(theirs, logged, actions, policies)
    assert fair_a.seed == fair_b.seed
    movers = {e.body["request"]["player"] for e in logged if e.type == "move-played"}
    assert movers <= {mine.player, theirs.player}
    verdicts = {
        "opener": [s for s in shown.splitlines() if s.startswith(f"table {mine.table}")],
        "joiner": [s for s in joined.stdout.splitlines() if s.startswith(f"table {mine.table}")],
    }
    assert all(len(v) == 1 for v in verdicts.values())
    if "you won" in verdicts["opener"][0]:
        assert "you lost" in verdicts["joiner"][0]


def test_a_wrong_code_joins_nothing(served: InProcessLeague, players: dict[str, Player]) -> None:
    """No duel waits for the code: one line (404 unknown-table), nothing kept (the next table
    is not held up resuming it); a code that is no code at all is refused before anything is
    sent."""
    you = players["A"]
    you.strike(served.url)
    assert "no duel waits for join code" in one_line_failure(you.run("duel", "join", "ABCDEFGH"))
    assert "no join code" in one_line_failure(you.run("duel", "join", "0000"))
    assert not list(kept_dir(you.home).glob("*.json"))  # nothing to resume: it joined nothing
    assert "the league dealt fairly" in you.ok("play", "--league", "clerk-1", "--auto")
