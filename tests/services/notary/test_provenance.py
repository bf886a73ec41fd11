"""GET /provenance/{serial}: one print's whole life (Book V.8 "/provenance/SERIAL (one
certificate's whole life)"), and the notary's projection rebuilt."""

from __future__ import annotations

import asyncpg
import pytest

from apiclient.league import LeagueClient, LeagueProblem, NotaryConflict
from ledger.checkpoint import Checkpoint, log_verifier
from ledger.encoding import decode_b64
from ledger.keys import SigningKey
from ledger.merkle import verify_inclusion
from ledger.print_runs import MISPRINT_SERIAL
from services.eventlog import PostgresEventStore
from services.kernel.founding import load_service_key
from services.kernel.projections import rebuild
from services.kernel.settings import LeagueSettings
from services.notary.app import SERVICE as NOTARY
from services.notary.projection import PROJECTION
from tests.harness.mint import serve
from tests.harness.serving import composed
from tests.harness.trading import T0, Trade, hop


async def test_a_print_stamped_traded_twice_and_conflicted_once(trade: Trade) -> None:
    """Stamped to A, A→B, B→C, then B signs it to D as well (refused): the provenance shows
    the stamp with the mint's inclusion proof against a mint checkpoint, both hops with
    receipts that check offline, the one conflict with a proof convicting B, and C holding
    it (V.6, V.7, V.8)."""
    a, b, c, d = (SigningKey.generate() for _ in range(4))
    stamped = await trade.stamp(a)
    to_b = hop(stamped, a, b)
    to_c = hop(to_b, b, c, T0 + 1)
    await trade.league.notarize([to_b])
    await trade.league.notarize([to_c])
    with pytest.raises(NotaryConflict):
        await trade.league.notarize([hop(to_b, b, d, T0 + 2)])

    life = await trade.league.provenance(stamped.serial)
    assert life.standing == "stamped"
    assert life.stamp is not None
    assert life.stamp.certificate == stamped.certificate
    checkpoint = Checkpoint.from_note(life.stamp.checkpoint)
    checkpoint.verify([log_verifier(f"{trade.manifest.league}/mint", trade.mint_key)])
    verify_inclusion(
        life.stamp.index,
        checkpoint.size,
        decode_b64(life.stamp.leaf_hash),
        [decode_b64(h) for h in life.stamp.proof],
        checkpoint.root,
    )
    assert [h.endorsement for h in life.hops] == list(to_c.endorsements)
    for record in life.hops:
        record.receipt.check(trade.notary_key, record.endorsement)
    (conflict,) = life.conflicts
    assert conflict.hop == 2
    assert conflict.proof.verify() == b.public
    assert conflict.proof.first == to_c.endorsements[1]
    assert life.holder == c.public.to_text()


async def test_unknown_serials_and_the_misprint(trade: Trade) -> None:
    """A serial in the runs but never stamped, or outside them, is 404 unknown-serial; the
    Misprint answers that it stands outside the mint's runs (V.8: "deliberately absent from
    the mint ledger")."""
    for serial in ("CZ-MODEL-A-0003", "CZ-MODEL-A-9999", "CZ-NOTHING-0001", "model-a"):
        with pytest.raises(LeagueProblem) as missing:
            await trade.league.provenance(serial)
        assert (missing.value.status, missing.value.slug) == (404, "unknown-serial")
    misprint = await trade.league.provenance(MISPRINT_SERIAL)
    assert misprint.standing == "outside-runs"
    assert misprint.stamp is None
    assert misprint.hops == []
    assert misprint.holder is None
    assert "outside the mint's runs" in misprint.remark


async def test_a_stamped_print_never_traded_is_held_by_its_owner(trade: Trade) -> None:
    """Provenance right after stamping: the stamp, no hop, the owner holding it (V.8)."""
    a = SigningKey.generate()
    stamped = await trade.stamp(a)
    life = await trade.league.provenance(stamped.serial)
    assert life.hops == []
    assert life.conflicts == []
    assert life.holder == a.public.to_text()


async def test_the_projection_is_what_the_log_folds_to(
    trade: Trade, settings: LeagueSettings
) -> None:
    """`league rebuild --check` over the notary: hops, holders and conflicts rebuilt from the
    notary's log alone equal the tables written live (docs/architecture.md §4)."""
    a, b, c = (SigningKey.generate() for _ in range(3))
    stamped = await trade.stamp(a)
    chain = hop(hop(stamped, a, b), b, c, T0 + 1)
    await trade.league.notarize([chain])
    with pytest.raises(NotaryConflict):
        await trade.league.notarize([hop(stamped, a, c)])
    key = load_service_key(settings, trade.manifest, "notary", None)
    async with asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool:
        store = PostgresEventStore(
            pool, schema="notary", origin=f"{trade.manifest.league}/notary", key=key
        )
        report = await rebuild(store, PROJECTION, commit=False)
    assert report.events == 3
    assert report.agrees, [d.describe() for d in report.differences]


async def test_a_followed_print_is_told_with_the_mint_down(settings: LeagueSettings) -> None:
    """A read only reads: once the notary has followed a print (its first provenance follows
    the mint through it), the print's provenance is told from the notary's tables and the
    mint's tree as the notary kept it, with no call to the mint: the mint stopped, it still
    answers, the stamp's inclusion proof checking against the signed mint checkpoint it
    quotes (Book V.8)."""
    owner = SigningKey.generate()
    mint = await serve(settings)
    try:
        async with LeagueClient(str(mint.make_url(""))) as at_mint:
            trade = Trade(at_mint, await at_mint.manifest())
            stamped = await trade.stamp(owner)
        apart = settings.model_copy(update={"mint_url": str(mint.make_url("")).rstrip("/")})
        async with (
            composed(apart, [NOTARY]) as notary,
            LeagueClient(str(notary.make_url(""))) as at_notary,
        ):
            assert (await at_notary.provenance(stamped.serial)).holder == owner.public.to_text()
            await mint.close()
            life = await at_notary.provenance(stamped.serial)
    finally:
        await mint.close()
    assert life.stamp is not None
    assert life.stamp.certificate == stamped.certificate
    assert life.holder == owner.public.to_text()
    checkpoint = Checkpoint.from_note(life.stamp.checkpoint)
    checkpoint.verify([log_verifier(f"{trade.manifest.league}/mint", trade.mint_key)])
    verify_inclusion(
        life.stamp.index,
        checkpoint.size,
        decode_b64(life.stamp.leaf_hash),
        [decode_b64(h) for h in life.stamp.proof],
        checkpoint.root,
    )
