"""The tables service asks the mint for the Misprint for a Balance at Chair VI or above
(Book IV.6), over real HTTP with the mint composed beside it: the first table's award is the
certificate, another table's is told it is gone, a Balance below Chair VI or another verdict
asks nothing (docs/formats.md, "Witnessed tables")."""

from __future__ import annotations

import secrets
from typing import Any

from ledger.api.tables import Closing, TableView
from ledger.keys import PublicKey, SigningKey
from ledger.print_runs import MISPRINT_SERIAL
from ledger.wire import hash_text
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.tables.app import MISPRINTS
from services.tables.app import SERVICE as TABLES
from tests.harness.serving import composed


def closed(venue: str, verdict: Any, player: SigningKey) -> TableView:
    """A closed table's view as the service answers it (the closing as its log records)."""
    closing = Closing(
        secret=hash_text(secrets.token_bytes(32)),
        seed=1,
        verdict=verdict,
        columns=[[1, 1, 1], [1, 1, 1]],
    )
    return TableView(
        table=secrets.token_hex(16),
        venue=venue,
        player=player.public.to_text(),
        commitment=hash_text(secrets.token_bytes(32)),
        waiting="closed",
        ply=40,
        closing=closing,
    )


async def test_the_first_balance_at_chair_six_wins_the_misprint(settings: LeagueSettings) -> None:
    """Chair V's Balance and Chair XII's win ask nothing; Chair VI's first Balance gets the
    mint-signed CZ-TALLY-000 for its player; a later Balance at Chair IX is told it is gone."""
    manifest = load_manifest(settings)
    first, second = SigningKey.generate(), SigningKey.generate()
    async with composed(settings, [MINT, TABLES]) as server:
        misprints = server.app[MISPRINTS]
        assert await misprints.outcome(closed("chair-V", "balance", first)) is None
        assert await misprints.outcome(closed("chair-XII", "win", first)) is None
        won = await misprints.outcome(closed("chair-VI", "balance", first))
        assert won is not None
        assert won.status == "awarded", won
        assert won.certificate is not None
        won.certificate.verify(PublicKey.from_text(manifest.mint))
        assert won.certificate.serial == MISPRINT_SERIAL
        assert won.certificate.issued_to == first.public.to_text()
        late = await misprints.outcome(closed("chair-IX", "balance", second))
        assert late is not None
        assert late.status == "gone", late
        assert MISPRINT_SERIAL in late.detail
