"""``cz provenance CZ-TALLY-000``: the Misprint's award, every proof checked (Book IV.6, V.8,
docs/rulings.md L-24, L-41) — before any award, that it has not been awarded yet; after, the
mint's certificate and its ``print-stamped`` event (signed, in the mint's signed checkpoint),
the table the event names and the player it went to, the table shown a Balance at Chair VI or
above by that player that won it; an award to a table that settles nothing is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from apiclient.league import LeagueClient
from clients.wallet import WalletHome
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.print_runs import MISPRINT_SERIAL
from ledger.tables import MisprintAward
from services.kernel.keyring import read_key
from tests.clients.conftest import PASSPHRASE, Player, one_line_failure
from tests.harness.league import InProcessLeague
from tests.harness.rewards import settling_balance_recorded
from tests.harness.tables import balance_recorded


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


def test_a_misprint_awarded_to_a_table_that_settles_nothing_is_refused(
    served: InProcessLeague, league_env: dict[str, str], players: dict[str, Player]
) -> None:
    """# L-41. A league whose tables key had the mint award the Misprint to a throwaway key's
    Balance at chair-VI, a Chair its witnessed campaign never opened (as the tables service
    did before L-41): ``cz provenance`` checks the award with the tables service, which shows
    that table no Misprint, and refuses it in one line instead of calling it the first
    Balance."""
    other = players["B"]
    other.strike(served.url)
    home = Path(league_env["LEAGUE_HOME"])
    throwaway = SigningKey.generate()
    table = asyncio.run(balance_recorded(league_env["DATABASE_URL"], home, throwaway, "chair-VI"))
    manifest = LeagueManifest.from_wire((home / "manifest.json").read_text("utf-8"))
    award = MisprintAward.sign(
        read_key(home / "keys", "tables"),
        league=manifest.league,
        manifest=manifest.hash_text(),
        table=table,
        player=throwaway.public.to_text(),
        venue="chair-VI",
    )

    async def post() -> int:
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{served.url}/mint/misprint", json=award.to_wire()) as answer,
        ):
            return answer.status

    assert asyncio.run(post()) == 200
    line = one_line_failure(other.run("provenance", MISPRINT_SERIAL))
    assert "could not win it" in line
    assert "settles nothing" in line
