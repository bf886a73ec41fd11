"""The mint's signed feed, checkpoints and proofs, verified offline with the manifest's key."""

from __future__ import annotations

from collections.abc import Callable

import asyncpg
import pytest

from apiclient.league import LeagueClient, LeagueProblem, stamp_request
from ledger.certificates import PrintCertificate
from ledger.checkpoint import Checkpoint, log_verifier
from ledger.encoding import decode_b64, decode_b64url
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import event_leaf, parse_time
from ledger.merkle import leaf_hash, verify_consistency, verify_inclusion
from services.kernel.settings import LeagueSettings
from tests.harness.founding import TEST_POLICIES
from tests.harness.mint import checkpoint_covering, serve


async def test_feed_events_verify_offline(league: LeagueClient) -> None:
    """Every feed event's leaf recomputes to its hash and carries the mint's signature; its
    body holds the certificate that was answered, which parses strictly and verifies."""
    manifest = await league.manifest()
    mint_key = PublicKey.from_text(manifest.mint)
    answer = await league.stamp(
        stamp_request(SigningKey.generate(), manifest, [("Keeping", "standard")] * 2)
    )
    feed = await league.events()
    assert [e.seq for e in feed.events] == [0, 1]
    assert feed.next_after == 1
    for event, item in zip(feed.events, answer.items, strict=True):
        leaf = event_leaf(
            seq=event.seq,
            stream=event.stream,
            stream_version=event.stream_version,
            type=event.type,
            body=event.body,
            recorded_at=parse_time(event.recorded_at),
        )
        assert leaf_hash(leaf) == decode_b64(event.leaf_hash)
        mint_key.verify_raw(leaf, decode_b64url(event.signature))
        assert event.body["certificate"] == item.certificate.to_wire()  # type: ignore[union-attr]
        logged = PrintCertificate.from_wire(event.body["certificate"])
        logged.verify(mint_key)
        manifest.check_certificate(logged)
    assert (await league.events(after=1)).events == []
    page = await league.events(after=-1, limit=1)
    assert [e.seq for e in page.events] == [0]


async def test_checkpoints_and_proofs_verify(league: LeagueClient) -> None:
    """Checkpoints are signed by the mint key under the league's origin; an inclusion proof
    places each event under a checkpoint root; consistency links two checkpoints."""
    manifest = await league.manifest()
    verifier = log_verifier(f"{manifest.league}/mint", PublicKey.from_text(manifest.mint))
    owner = SigningKey.generate()
    await league.stamp(stamp_request(owner, manifest, [("Trace", "standard")] * 3))
    old = Checkpoint.from_note(await checkpoint_covering(league, 3))
    old.verify([verifier])
    assert old.size == 3
    await league.stamp(stamp_request(owner, manifest, [("Trace", "gilt")] * 2))
    new = Checkpoint.from_note(await checkpoint_covering(league, 5))
    new.verify([verifier])
    assert new.size == 5
    census_checkpoint = Checkpoint.from_note((await league.census()).checkpoint)
    assert census_checkpoint.size == 5
    for index in range(5):
        proof = await league.inclusion_proof(index, new.size)
        verify_inclusion(
            index,
            new.size,
            decode_b64(proof.leaf_hash),
            [decode_b64(h) for h in proof.proof],
            new.root,
        )
    consistency = await league.consistency_proof(old.size, new.size)
    verify_consistency(
        old.size, new.size, old.root, new.root, [decode_b64(h) for h in consistency.proof]
    )


async def test_proof_beyond_the_log_is_refused(league: LeagueClient) -> None:
    """A proof for a tree larger than the log is refused (bad-proof), as is a bad query."""
    with pytest.raises(LeagueProblem) as inclusion:
        await league.inclusion_proof(0, 10)
    assert (inclusion.value.status, inclusion.value.slug) == (422, "bad-proof")
    with pytest.raises(LeagueProblem) as consistency:
        await league.consistency_proof(1, 10)
    assert consistency.value.slug == "bad-proof"
    with pytest.raises(LeagueProblem) as feed:
        await league.events(after=-5)
    assert (feed.value.status, feed.value.slug) == (422, "invalid-object")


async def test_reading_a_checkpoint_never_signs_one(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """With a checkpoint interval of a minute, a read after stamping serves the checkpoint
    signed at start-up (size 0), and reads of /mint/checkpoint and /ledger write nothing."""
    settings = make_settings(
        policies=TEST_POLICIES.model_copy(update={"checkpoint_interval_ms": 60_000})
    )
    server = await serve(settings)
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            manifest = await league.manifest()
            await league.stamp(stamp_request(SigningKey.generate(), manifest, [("Gram", "gilt")]))
            for _ in range(3):
                assert Checkpoint.from_note(await league.checkpoint()).size == 0
                assert Checkpoint.from_note((await league.census()).checkpoint).size == 0
        conn = await asyncpg.connect(settings.database)
        try:
            assert await conn.fetchval("SELECT count(*) FROM mint.checkpoints") == 1
        finally:
            await conn.close()
    finally:
        await server.close()
