"""Witnessing (docs/operations.md "Witnesses"): the league's services cosign each other's
checkpoints under C2SP tlog-witness over real HTTP, and keep the evidence of a log that forks.

The mint and the notary are composed in one server on a known port, each submitting its
checkpoints to the other's witness at the server's own address. The witness's answers are
driven with checkpoints of the treasury's origin (a league service that does not run yet,
so nothing else submits them) signed with the treasury's key from the league's key files.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from ledger.checkpoint import (
    Checkpoint,
    CosignatureVerifier,
    log_verifier,
    sign_checkpoint,
)
from ledger.errors import ProofError, RetryLater
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import NewEvent
from ledger.manifest import LeagueManifest
from ledger.merkle import EMPTY_ROOT, consistency_proof, leaf_hash
from services.eventlog import PostgresEventStore
from services.kernel.checkpoints import Checkpointer
from services.kernel.compose import compose
from services.kernel.founding import load_manifest
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from services.kernel.witness_client import WITNESSES, Witnessing
from services.kernel.witness_server import TLOG_SIZE, Cosigned, Witness
from services.league.registry import SERVICES
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from tests.harness.founding import make_settings
from tests.harness.mint import league
from tests.harness.ports import free_port
from tests.harness.trading import Trade, server, settings, trade
from tests.harness.witness import Treasury, body, cosigned, evidence, post, treasury, tree

#: Fixtures: the mint and the notary served.
__all__ = ["league", "make_settings", "server", "settings", "trade", "treasury"]


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_service_the_league_runs_is_a_witness(name: str) -> None:
    """Every service of the registry serves a witness (and is asked for cosignatures)."""
    assert name in WITNESSES
    paths = {(e.method, e.path) for e in SERVICES[name].endpoints}
    assert ("POST", f"/{name}/witness/add-checkpoint") in paths
    assert ("GET", f"/{name}/evidence") in paths


async def test_the_services_cosign_each_other_s_checkpoints(
    trade: Trade, league: LeagueClient
) -> None:
    """The mint's served checkpoint carries the notary's cosignature and the notary's the
    mint's, each verifiable with the witness's key from the manifest (type 0x04, name = its
    origin); the log's own signature and the cosignature by one key never share a key id."""
    await trade.stamp(SigningKey.generate())
    manifest = trade.manifest
    for service, witness in (("mint", "notary"), ("notary", "mint")):
        checkpoint = await cosigned(league, service, witness, 1 if service == "mint" else 0)
        log_key = PublicKey.from_text(getattr(manifest, service))
        witness_key = PublicKey.from_text(getattr(manifest, witness))
        cosigner = CosignatureVerifier(f"{manifest.league}/{witness}", witness_key)
        verified = checkpoint.verify([log_verifier(checkpoint.origin, log_key), cosigner])
        assert cosigner in verified
        line = next(s for s in checkpoint.note.signatures if cosigner.matches(s))
        assert cosigner.timestamp(checkpoint.text, line) > 1_700_000_000
        same_key_as_log = log_verifier(f"{manifest.league}/{witness}", witness_key)
        assert not same_key_as_log.matches(line)


async def test_the_witness_answers_as_tlog_witness_says(
    server: TestServer, treasury: Treasury, league: LeagueClient, trade: Trade
) -> None:
    """404 unknown origin, 403 wrong key, 400 malformed or old beyond the checkpoint, 200
    from size 0, 409 text/x.tlog.size with the size it holds, 503 retry-later on a proof that
    fails and shows no root while the log cannot be asked for its own (the treasury is not
    served: nothing kept), 422 on a fork (kept as convicting), 200 with a consistency proof;
    the cosigned checkpoint is served for monitors by origin hash."""
    stranger = sign_checkpoint("other.example/log", 0, EMPTY_ROOT, SigningKey.generate())
    assert (await post(server, body(0, [], stranger)))[0] == 404
    forged = sign_checkpoint(treasury.origin, 0, EMPTY_ROOT, SigningKey.generate())
    assert (await post(server, body(0, [], forged)))[0] == 403
    assert (await post(server, "old 0\n"))[0] == 400
    assert (await post(server, b"\xff\xfe"))[0] == 400
    five = tree(5)
    at3, at5 = treasury.checkpoint(five, 3), treasury.checkpoint(five)
    assert (await post(server, body(4, [], at3)))[0] == 400

    status, content_type, text = await post(server, body(0, [], at3))
    assert (status, content_type) == (200, "text/plain"), text
    witness = CosignatureVerifier(f"{trade.manifest.league}/notary", trade.notary_key)
    cosigned_at3 = Checkpoint.from_note(str(at3) + text)
    assert witness in cosigned_at3.verify([witness, log_verifier(at3.origin, treasury.key.public)])

    assert await post(server, body(0, [], at5)) == (409, TLOG_SIZE, "3\n")
    forked = tree(5, salt=1)
    bad = consistency_proof(3, 5, forked)
    status, content_type, text = await post(server, body(3, bad, at5))
    assert (status, content_type) == (503, "application/problem+json"), text
    assert json.loads(text)["type"].endswith("/retry-later")
    status, _, text = await post(server, body(3, bad, treasury.checkpoint(forked)))
    assert status == 422, text
    status, _, text = await post(server, body(3, consistency_proof(3, 5, five), at5))
    assert status == 200, text
    assert await post(server, body(3, [], at5)) == (409, TLOG_SIZE, "5\n")
    status, _, _ = await post(server, body(5, [], at5))  # the same checkpoint again
    assert status == 200

    origin_hash = hashlib.sha256(treasury.origin.encode()).hexdigest()
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{league.base_url}/notary/witness/{origin_hash}/checkpoint") as r:
            served = Checkpoint.from_note(await r.text())
        assert (served.size, served.root) == (5, five.root())
        assert witness in served.verify([witness, log_verifier(at5.origin, treasury.key.public)])
        unknown = hashlib.sha256(b"other.example/log").hexdigest()
        async with session.get(f"{league.base_url}/notary/witness/{unknown}/checkpoint") as r:
            assert r.status == 404

    (fork,) = (await evidence(league)).evidence  # a proof that merely fails is no evidence
    assert fork.kind == "fork"  # a valid proof from another root at size 3
    assert fork.convicts(treasury.key.public)


async def test_a_second_root_at_one_size_is_kept_as_evidence(
    server: TestServer, treasury: Treasury, league: LeagueClient
) -> None:
    """Two roots signed at one size: 422, kept once however often submitted (even with a
    stale old size, which answers 409), and it convicts the log offline; the evidence of
    another key does not verify."""
    four, other = tree(4), tree(4, salt=2)
    assert (await post(server, body(0, [], treasury.checkpoint(four))))[0] == 200
    split = treasury.checkpoint(other)
    assert (await post(server, body(4, [], split)))[0] == 422
    assert (await post(server, body(4, [], split)))[0] == 422
    assert (await post(server, body(2, [], split)))[0] == 409
    kept = await evidence(league)
    (record,) = kept.evidence
    assert record.kind == "same-size"
    assert record.convicts(treasury.key.public)
    with pytest.raises(Exception, match="signature"):
        record.convicts(SigningKey.generate().public)
    again = await post(server, body(4, consistency_proof(4, 4, four), treasury.checkpoint(four)))
    assert again[0] == 200  # the witness still stands by the root it cosigned


async def test_racing_submissions_advance_the_witness_once(
    server: TestServer, treasury: Treasury
) -> None:
    """Twenty submissions from size 0 at once, each of another size of one tree: exactly one
    is cosigned, and every other answers 409 with the size it won with."""
    leaves = tree(21)
    answers = await asyncio.gather(
        *(post(server, body(0, [], treasury.checkpoint(leaves, n))) for n in range(1, 21))
    )
    won = [n for n, (status, _, _) in zip(range(1, 21), answers, strict=True) if status == 200]
    assert len(won) == 1
    lost = [answer for answer in answers if answer[0] != 200]
    assert lost == [(409, TLOG_SIZE, f"{won[0]}\n")] * 19


async def test_a_witness_that_is_down_is_retried_until_it_cosigns(
    settings: LeagueSettings, caplog: pytest.LogCaptureFixture
) -> None:
    """The mint's log grows and is checkpointed while the notary's witness does not answer
    (nothing serves its port yet): the submitter keeps failing and backing off, nothing
    waits for it; its first failure is said at INFO (one failed attempt is a witness
    restarting, or the league stopping under a submission in flight), the next ones at
    WARNING. Once the notary is served, the latest checkpoint gets its cosignature."""
    caplog.set_level(logging.INFO, logger="services.kernel.witness_client")
    manifest = load_manifest(settings)
    pool = await asyncpg.create_pool(settings.database, min_size=1, max_size=4)
    try:
        store = PostgresEventStore(
            pool,
            schema="mint",
            origin=f"{manifest.league}/mint",
            key=read_key(settings.keys_dir, "mint"),
        )
        checkpointer = Checkpointer(store, manifest.policies)
        urls = {"notary": str(settings.service_url("notary"))}
        submitter = Witnessing(store, checkpointer, manifest, urls, interval=0.02, max_backoff=0.1)
        (peer,) = submitter.peers
        async with checkpointer.running(), submitter.running():
            # The leader's work (services/kernel/leadership.py): this process leads alone.
            submitting = asyncio.create_task(submitter.run())
            await store.append_batch([NewEvent("s", i, "t", {"i": i}) for i in range(3)])
            for _ in range(500):  # a guard, not a timing assertion
                latest = checkpointer.latest
                if peer.failures >= 3 and latest is not None and latest.size == 3:
                    break
                await asyncio.sleep(0.02)
            assert peer.failures >= 3
            said = [
                (r.levelno, r.getMessage())
                for r in caplog.records
                if "no cosignature from" in r.getMessage()
            ]
            assert [level for level, _ in said[:2]] == [logging.INFO, logging.WARNING], said
            assert "(1 attempts)" in said[0][1]
            assert "did not answer: " in said[0][1]
            assert not said[0][1].endswith("did not answer: ")  # the reason is named
            assert (await submitter.served_checkpoint()).note.signatures == (
                (await store.served_checkpoint()).note.signatures
            )
            notary = TestServer(compose(settings, [NOTARY]), host="127.0.0.1", port=settings.port)
            await notary.start_server()
            try:
                for _ in range(500):
                    served = await submitter.served_checkpoint()
                    if len(served.note.signatures) == 2:
                        break
                    await asyncio.sleep(0.02)
            finally:
                await notary.close()
                submitting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await submitting
    finally:
        await pool.close()
    witness = CosignatureVerifier(f"{manifest.league}/notary", PublicKey.from_text(manifest.notary))
    assert served.size == 3
    assert witness in served.verify([witness, log_verifier(served.origin, store.public_key)])
    assert peer.failures == 0


async def test_a_failing_proof_is_looked_at_closer_with_the_log_s_inclusion_proof(
    settings: LeagueSettings,
) -> None:
    """The notary's witness over the mint served alone (nothing else submits to this
    witness). The mint's real checkpoints of 3 and 5 with a garbled proof (an outsider's, a
    replay's): the mint's inclusion proof of leaf 2 in its tree of 5 shows the cosigned root,
    so 422 and nothing kept. A checkpoint of 5 with a root the log does not have, signed by
    its key: its proof fails and the log's inclusion proof does not verify against that root,
    which proves nothing either: 422, nothing kept. The valid proof is then cosigned."""
    manifest = load_manifest(settings)
    mint_key = read_key(settings.keys_dir, "mint")
    async with mint_served_alone(settings) as (url, pool, mint_log):
        origin = mint_log.origin
        at3 = sign_checkpoint(origin, 3, await mint_log.root(3), mint_key)
        at5 = sign_checkpoint(origin, 5, await mint_log.root(5), mint_key)
        witness = notary_witness(pool, manifest, settings, url)
        await witness.add_checkpoint(body(0, [], at3).encode())
        garbled = [leaf_hash(b"garbled")] * 3
        with pytest.raises(ProofError) as refused:
            await witness.add_checkpoint(body(3, garbled, at5).encode())
        assert not isinstance(refused.value, RetryLater)
        assert (await witness.evidence(0, 10)).evidence == []
        fake = sign_checkpoint(origin, 5, leaf_hash(b"no such root"), mint_key)
        with pytest.raises(ProofError, match="inclusion proof of leaf 2 does not verify"):
            await witness.add_checkpoint(body(3, garbled, fake).encode())
        assert (await witness.evidence(0, 10)).evidence == []
        assert await witness.add_checkpoint(
            body(3, await mint_log.consistency_proof(3, 5), at5).encode()
        )


async def test_an_outsider_cannot_plant_evidence_while_the_log_is_out_of_reach(
    settings: LeagueSettings,
) -> None:
    """The attack: the mint out of the witness's reach (its URL answers nothing), an outsider
    submits the mint's own genuine newer checkpoint with a garbage proof. The witness cannot
    look closer: 503 retry-later, nothing kept, nothing cosigned; nothing after a restart of
    the witness either (then able to reach the mint: 422). The mint's own submission, its
    valid proof, is cosigned: the honest log converges."""
    manifest = load_manifest(settings)
    mint_key = read_key(settings.keys_dir, "mint")
    async with mint_served_alone(settings) as (url, pool, mint_log):
        origin = mint_log.origin
        at3 = sign_checkpoint(origin, 3, await mint_log.root(3), mint_key)
        at5 = sign_checkpoint(origin, 5, await mint_log.root(5), mint_key)
        nowhere = f"http://127.0.0.1:{free_port()}"
        cut_off = notary_witness(pool, manifest, settings, nowhere)
        await cut_off.add_checkpoint(body(0, [], at3).encode())
        garbage = body(3, [leaf_hash(b"garbage")] * 3, at5).encode()
        for _ in range(2):
            with pytest.raises(RetryLater, match="nothing is kept"):
                await cut_off.add_checkpoint(garbage)
        assert (await cut_off.evidence(0, 10)).evidence == []
        origin_hash = hashlib.sha256(origin.encode()).hexdigest()
        assert Checkpoint.from_note(await cut_off.cosigned(origin_hash)).size == 3

        restarted = notary_witness(pool, manifest, settings, url)
        assert (await restarted.evidence(0, 10)).evidence == []
        with pytest.raises(ProofError):
            await restarted.add_checkpoint(garbage)
        assert (await restarted.evidence(0, 10)).evidence == []
        honest = body(3, await mint_log.consistency_proof(3, 5), at5).encode()
        assert isinstance(await cut_off.add_checkpoint(honest), Cosigned)
        assert Checkpoint.from_note(await restarted.cosigned(origin_hash)).size == 5


@contextlib.asynccontextmanager
async def mint_served_alone(
    settings: LeagueSettings,
) -> AsyncIterator[tuple[str, asyncpg.Pool, PostgresEventStore]]:
    """The mint served alone on the league's port with five prints stamped: its URL, a pool
    and its log read directly (the notary is not served: nothing submits to its witness)."""
    manifest = load_manifest(settings)
    mint = TestServer(compose(settings, [MINT]), host="127.0.0.1", port=settings.port)
    await mint.start_server()
    pool = await asyncpg.create_pool(settings.database, min_size=1, max_size=4)
    try:
        url = str(mint.make_url("")).rstrip("/")
        async with LeagueClient(url) as league:
            trade = Trade(league, manifest)
            for title in ("Model-A", "Faithful", "Tally", "Pairing", "Reflection"):
                await trade.stamp(SigningKey.generate(), title)
        yield (
            url,
            pool,
            PostgresEventStore(
                pool,
                schema="mint",
                origin=f"{manifest.league}/mint",
                key=read_key(settings.keys_dir, "mint"),
            ),
        )
    finally:
        await pool.close()
        await mint.close()


def notary_witness(
    pool: asyncpg.Pool, manifest: LeagueManifest, settings: LeagueSettings, url: str
) -> Witness:
    """The notary's witness over its own schema, asking the mint at ``url``."""
    key = read_key(settings.keys_dir, "notary")
    notary_log = PostgresEventStore(
        pool, schema="notary", origin=f"{manifest.league}/notary", key=key
    )
    return Witness(notary_log, manifest, "notary", key, {"mint": url})
