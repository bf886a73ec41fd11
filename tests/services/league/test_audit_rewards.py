"""``league audit URL`` checks the rewards of witnessed tables (docs/operations.md "The tables
service", L-29): a served league whose clerk's table paid its marks passes, and the report
says how many rewards it paired with the treasury's payments and their marks."""

from __future__ import annotations

import asyncio
from pathlib import Path

from apiclient.league import LeagueClient
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from tests.harness.audit import audit, published
from tests.harness.ports import free_port
from tests.harness.rewards import play_to
from tests.harness.served import Served, init_league
from tests.harness.tables import Player


async def sizes(url: str) -> dict[str, int]:
    async with LeagueClient(url) as client:
        return {
            service: len((await client.events(-1, 1000, service=service)).events)
            for service in ("mint", "treasury", "tables")
        }


def test_league_audit_pairs_each_reward_with_its_payment(tmp_path: Path, database_url: str) -> None:
    """# IV.1, L-28, L-29: the table opened with the manifest's table work (a policy set at
    `league init`) pays 10 marks; `league audit` replays it and pairs its payment."""
    env = init_league(tmp_path / "league", database_url, "table_work_per_mark=2")
    served = Served(env, "--port", str(free_port()))
    try:
        manifest = LeagueManifest.from_wire(
            (Path(env["LEAGUE_HOME"]) / "manifest.json").read_text(encoding="utf-8")
        )
        assert manifest.policies.table_work_per_mark == 2
        player = Player(SigningKey.generate(), manifest, served.url)
        view = asyncio.run(play_to(player, "clerk-1", ("win", "balance")))
        assert view["closing"]["reward"]["status"] == "paid"
        for service, size in asyncio.run(sizes(served.url)).items():
            asyncio.run(published(served.url, service, size))
        audited = audit(env, served.url, tmp_path / "audit")
    finally:
        served.stop()
    assert audited.returncode == 0, audited.stderr
    assert "1 rewards paid, each its due (10 marks)" in audited.stdout
