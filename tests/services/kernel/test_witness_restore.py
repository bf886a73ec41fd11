"""The mint's database restored from an older dump is caught by its witness
(the notary) at the mint's next checkpoints, and the evidence is served and convicts the
mint's key offline.

The mint and the notary are served together (the notary conftest's league on a known port);
the mint's schema alone is dumped, the mint grows, the server stops, the old dump is
restored over the mint's schema and the mint's own kept checkpoint removed (the operator's
mistake its witnesses are there to catch), and the server starts again on the same port.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from ledger.api.witness import Evidence
from ledger.keys import PublicKey, SigningKey
from services.kernel.compose import compose
from services.kernel.database import embedded_tool
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from tests.harness.founding import make_settings
from tests.harness.mint import checkpoint_covering
from tests.harness.trading import Trade, settings
from tests.harness.witness import cosigned, evidence

__all__ = ["make_settings", "settings"]  # a league on a known free port


async def serve(settings: LeagueSettings) -> TestServer:
    server = TestServer(compose(settings, [MINT, NOTARY]), host="127.0.0.1", port=settings.port)
    await server.start_server()
    return server


async def kept_evidence(league: LeagueClient, count: int) -> list[Evidence]:
    """The notary's evidence once it holds ``count`` records (the mint submits in the
    background, and the witness may still be looking closer). A bounded wait: a guard."""
    for _ in range(1500):
        found = (await evidence(league)).evidence
        if len(found) >= count:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"the notary never kept {count} convicting evidence records")


def pg(tool: str, *args: str) -> None:
    subprocess.run([str(embedded_tool(tool)), *args], capture_output=True, text=True, check=True)


async def test_a_mint_restored_from_an_older_dump_is_caught_by_its_witness(
    settings: LeagueSettings, database_url: str, tmp_path: Path
) -> None:
    """The mint dumped at 2 stamps and grown to 4, which the notary cosigns; the dump
    restored. The restored mint at 3 is not submitted (the notary holds 4); at 4, another
    root at one size: a same-size record. At 5, its consistency proof from 4 (a power of two)
    cannot show the root at 4, so the notary asks the mint for the inclusion proof of leaf
    3 in the tree of 5, which shows the forked root: a fork record. Both convict the mint's
    key offline; no later checkpoint of the mint is cosigned by the notary."""
    dump = tmp_path / "mint.dump"
    server = await serve(settings)
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            trade = Trade(league, await league.manifest())
            for title in ("Model-A", "Faithful"):
                await trade.stamp(SigningKey.generate(), title)
            await cosigned(league, "mint", "notary", 2)
            pg("pg_dump", "--schema=mint", "--format=custom", "--file", str(dump), database_url)
            for title in ("Tally", "Pairing"):
                await trade.stamp(SigningKey.generate(), title)
            honest = await cosigned(league, "mint", "notary", 4)
    finally:
        await server.close()
    assert honest.size == 4
    pg(
        "pg_restore",
        "--clean",
        "--if-exists",
        "--no-owner",
        "--schema=mint",
        "--dbname",
        database_url,
        str(dump),
    )
    settings.checkpoint_path("mint").unlink()

    server = await serve(settings)
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            trade = Trade(league, await league.manifest())
            mint_key = PublicKey.from_text(trade.manifest.mint)
            await trade.stamp(SigningKey.generate(), "Reflection")
            await checkpoint_covering(league, 3)
            assert (await evidence(league)).evidence == []
            await trade.stamp(SigningKey.generate(), "Wellformed")
            (split,) = await kept_evidence(league, 1)
            await trade.stamp(SigningKey.generate(), "Model-A")
            first, fork = await kept_evidence(league, 2)
            served = await league.signed_checkpoint(service="mint")
    finally:
        await server.close()

    assert first == split
    assert split.kind == "same-size"
    assert split.origin == honest.origin
    cosigned_before, rewritten = split.checkpoints()
    assert (cosigned_before.size, cosigned_before.root) == (honest.size, honest.root)
    assert rewritten.size == 4
    assert rewritten.root != honest.root
    assert fork.kind == "fork"
    assert fork.checkpoints()[1].size == 5
    assert fork.inclusion_proof  # shown by the mint's own inclusion proof
    for record in (split, fork):  # parsed back from JSON, checked with the manifest's key
        assert Evidence.model_validate_json(record.model_dump_json()).convicts(mint_key)
    assert served.size == 5
    assert not any(s.name.endswith("/notary") for s in served.note.signatures)
