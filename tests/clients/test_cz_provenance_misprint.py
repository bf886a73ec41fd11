"""``cz provenance CZ-TALLY-000``: the Misprint's award, every proof checked (Book IV.6, V.8,
docs/rulings.md L-24) — before any award, that it has not been awarded yet; after, the mint's
certificate and its ``print-stamped`` event (signed, in the mint's signed checkpoint), the
table the event names and the player it went to, the table shown a Balance at Chair VI or
above by that player."""

from __future__ import annotations

import asyncio
from pathlib import Path

from apiclient.league import LeagueClient
from clients.wallet import WalletHome
from ledger.print_runs import MISPRINT_SERIAL
from tests.clients.conftest import PASSPHRASE, Player
from tests.harness.league import InProcessLeague
from tests.harness.rewards import settling_balance_recorded


def test_the_misprint_before_and_after_its_award(
    served: InProcessLeague, league_env: dict[str, str], players: dict[str, Player]
) -> None:
    """# L-24, L-41. Not awarded: one line saying so, exit 0. Then a player's table closes with
    a settling Balance at chair-VII (its witnessed campaign recorded to Chair VII open, every
    table with its work, as the tables log records them) and is read, which asks the mint for
    the award: ``cz provenance`` shows the certificate, its mint event, the table
    and the player, each checked; the account names the player the holder."""
    you, other = players["A"], players["B"]
    address = you.strike(served.url)
    other.strike(served.url)
    before = other.json("provenance", MISPRINT_SERIAL)
    assert before["awarded"] is False
    assert "not been awarded yet" in before["remark"]
    assert "not awarded yet" in other.ok("provenance", MISPRINT_SERIAL)

    key = WalletHome(you.home).read(PASSPHRASE).key
    table = asyncio.run(
        settling_balance_recorded(
            league_env["DATABASE_URL"], Path(league_env["LEAGUE_HOME"]), key, "chair-VII"
        )
    )

    async def read() -> str:
        async with LeagueClient(served.url) as client:
            view = await client.table(table)
        assert view.closing is not None
        assert view.closing.misprint is not None
        return view.closing.misprint.status

    assert asyncio.run(read()) == "awarded"
    after = other.json("provenance", MISPRINT_SERIAL)
    assert after["awarded"] is True
    assert (after["table"], after["venue"]) == (table, "chair-VII")
    assert after["awarded_to"] == after["holder"] == address
    assert (after["title"], after["finish"]) == ("Tally", "misprint")
    assert after["verified"] is True
    text = other.ok("provenance", MISPRINT_SERIAL)
    assert f"for table {table}: a Balance at chair-VII" in text
    assert "every signature and proof verified here" in text
