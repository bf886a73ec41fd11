"""The tables service in the whole league (``league serve``): its log witnessed by the other
services and theirs by it, each cosignature verifiable with the witness's key from the
manifest (docs/operations.md "Witnesses")."""

from __future__ import annotations

from apiclient.league import LeagueClient
from ledger.checkpoint import CosignatureVerifier, log_verifier
from ledger.keys import PublicKey, SigningKey
from services.kernel.settings import LeagueSettings
from services.league.registry import SERVICES
from tests.harness.serving import composed
from tests.harness.tables import Player
from tests.harness.witness import cosigned


async def test_the_tables_log_is_witnessed_and_witnesses(settings: LeagueSettings) -> None:
    """With the four services composed, the tables' served checkpoint carries the mint's and
    the notary's cosignatures and the mint's carries the tables'."""
    async with composed(settings, list(SERVICES.values())) as server:
        url = str(server.make_url(""))
        async with LeagueClient(url) as league:
            manifest = await league.manifest()
            assert manifest.tables is not None
            player = Player(SigningKey.generate(), manifest, url)
            await player.open("clerk-3")
            for service, witness in (("tables", "mint"), ("tables", "notary"), ("mint", "tables")):
                checkpoint = await cosigned(
                    league, service, witness, 1 if service == "tables" else 0
                )
                cosigner = CosignatureVerifier(
                    f"{manifest.league}/{witness}", PublicKey.from_text(getattr(manifest, witness))
                )
                log_key = PublicKey.from_text(getattr(manifest, service))
                assert cosigner in checkpoint.verify(
                    [log_verifier(checkpoint.origin, log_key), cosigner]
                )
