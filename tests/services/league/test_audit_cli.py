"""`league audit URL` over a real served league (docs/operations.md "Auditing a running league")."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from apiclient.league import LeagueClient, LeagueProblem, NotaryConflict
from auditor import AuditorError, audit_url
from ledger.api.treasury import buy_request
from ledger.certificates import NoteCertificate
from ledger.checkpoint import Checkpoint
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey, SigningKey
from services.kernel.database import embedded_tool
from tests.harness.audit import T0, audit, front, published, stamp
from tests.harness.ports import free_port
from tests.harness.served import Served, claim_notes, league, one_line_failure, without_server


@pytest.fixture
def env(tmp_path: Path, database_url: str) -> dict[str, str]:
    """A fresh LEAGUE_HOME whose league costs no proof of work and checkpoints often."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LEAGUE_")}
    env = {**clean, "LEAGUE_HOME": str(tmp_path / "home"), "DATABASE_URL": database_url}
    made = league(env, "init", "--policy", "stamp_work=1", "--policy", "checkpoint_interval_ms=50")
    assert made.returncode == 0, made.stderr
    return env


def serve(env: dict[str, str], port: int | None = None) -> Served:
    """`league serve` on a known free port, so the notary follows the mint at its address."""
    return Served(env, "--port", str(port or free_port()))


def kept_state(state: Path) -> dict[str, Any]:
    """The auditor's state file: the pin per URL, the checkpoints per root."""
    (kept,) = state.iterdir()
    data: dict[str, Any] = json.loads(kept.read_text(encoding="utf-8"))
    return data


async def cosigned(url: str, service: str, size: int) -> None:
    """Wait (bounded) until ``service`` serves a checkpoint of ``size`` carrying a witness's
    cosignature line besides its own signature."""
    async with LeagueClient(url) as client:
        for _ in range(200):
            note = await client.checkpoint(service=service)
            signatures = [line for line in note.splitlines() if line.startswith("\u2014 ")]
            if Checkpoint.from_note(note).size >= size and len(signatures) > 1:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"{service} never served a cosigned checkpoint of size {size}")


async def trade(url: str) -> None:
    """Two prints stamped; one traded a→b→c at the notary, and a's second signature of it
    (to d) refused with a fraud proof."""
    a, b, c, d = (SigningKey.generate() for _ in range(4))
    stamped = await stamp(url, a, "Model-A")
    await stamp(url, b, "Faithful")
    to_b = endorse(stamped, a, b.public, T0)
    to_c = endorse(to_b, b, c.public, T0 + 1)
    async with LeagueClient(url) as client:
        assert (await client.notarize([to_c])).recorded == 2
        with pytest.raises(NotaryConflict):
            await client.notarize([endorse(stamped, a, d.public, T0 + 2)])
    await published(url, "mint", 2)
    await published(url, "notary", 3)


def test_a_clean_league_passes_twice(env: dict[str, str], tmp_path: Path) -> None:
    """A league with stamps, a trade and a refused conflict passes; the root
    is pinned and the checkpoints kept; the second run checks them and passes again."""
    server = serve(env)
    try:
        asyncio.run(trade(server.url))
        asyncio.run(cosigned(server.url, "mint", 2))
        asyncio.run(cosigned(server.url, "notary", 3))
        state = tmp_path / "audit"
        first = audit(env, server.url, state)
        assert first.returncode == 0, first.stderr
        assert "pinned now (first use)" in first.stdout
        assert "mint: 2 events verified" in first.stdout
        assert "notary: 3 events verified" in first.stdout
        assert "2 prints" in first.stdout
        assert "2 hops on valid chains, 1 conflicts" in first.stdout
        assert "holders: all 1 in the notary's projection equal" in first.stdout
        assert "mint: 2 events verified" in first.stdout
        assert "cosigned by notary at size 2" in first.stdout  # the witnesses' cosignatures
        assert "cosigned by mint at size 3" in first.stdout
        assert "evidence: none kept by mint, notary" in first.stdout  # (, treasury once served)
        saved = kept_state(state)
        root = saved["urls"][server.url]
        assert set(saved["leagues"][root]["checkpoints"]) == {"mint", "treasury", "notary"}
        again = audit(env, server.url, state)
        assert again.returncode == 0, again.stderr
        assert "as pinned" in again.stdout
    finally:
        server.stop()


def test_a_league_that_moves_host_keeps_its_history(env: dict[str, str], tmp_path: Path) -> None:
    """The audit's state is keyed by the league's root key: the same league
    served from another address is pinned there too and its kept checkpoints still checked."""
    state = tmp_path / "audit"
    server = serve(env)
    try:
        asyncio.run(stamp(server.url, SigningKey.generate(), "Tally"))
        asyncio.run(published(server.url, "mint", 1))
        assert audit(env, server.url, state).returncode == 0
        old_url = server.url
    finally:
        server.stop()
    server = serve(env)
    try:
        moved = audit(env, server.url, state)
        assert moved.returncode == 0, moved.stderr
        assert f"audited before at {old_url}" in moved.stdout
        saved = kept_state(state)
        (root,) = saved["leagues"]
        assert saved["urls"] == {old_url: root, server.url: root}
        assert "2 checkpoints matched" in moved.stdout  # the kept one and the served one
    finally:
        server.stop()


def test_an_edited_row_is_named(env: dict[str, str], tmp_path: Path, database_url: str) -> None:
    """An edited row in the mint's log fails the audit on one line naming
    the service and the seq (the served event's leaf no longer matches), in this process or
    in a pool of worker processes alike."""
    server = serve(env)
    try:
        for title in ("Wellformed", "Faithful"):
            asyncio.run(stamp(server.url, SigningKey.generate(), title))
        asyncio.run(published(server.url, "mint", 2))

        async def tamper() -> None:
            conn = await asyncpg.connect(database_url)
            try:
                await conn.execute(
                    "UPDATE mint.events SET body = jsonb_set(body, '{request_id}', "
                    "'\"forged-1\"') WHERE seq = 1"
                )
            finally:
                await conn.close()

        asyncio.run(tamper())
        line = one_line_failure(audit(env, server.url, tmp_path / "audit", "--workers", "0"))
        assert "mint seq 1" in line
        assert "leaf hash" in line
        pooled = one_line_failure(audit(env, server.url, tmp_path / "audit", "--workers", "2"))
        assert pooled == line
    finally:
        server.stop()


def test_a_saved_league_audits_offline(env: dict[str, str], tmp_path: Path) -> None:
    """`league audit URL --save DIR` keeps every answer as plain files;
    `league audit --offline DIR` audits them with the same checks (passes, with its own state
    or the one that pinned the league); one saved event edited fails naming service and seq."""
    saved, state = tmp_path / "saved", tmp_path / "audit"
    server = serve(env)
    try:
        asyncio.run(trade(server.url))
        first = audit(env, server.url, state, "--save", str(saved))
        assert first.returncode == 0, first.stderr
        assert f"league audit --offline {saved}" in first.stdout
    finally:
        server.stop()
    assert (saved / "manifest.json").is_file()
    assert (saved / "mint" / "checkpoint").is_file()
    assert (saved / "notary" / "holders" / "000000.json").is_file()
    for state_dir in (state, tmp_path / "elsewhere"):
        offline = league(env, "audit", "--offline", str(saved), "--state", str(state_dir))
        assert offline.returncode == 0, offline.stderr
        assert "mint: 2 events verified" in offline.stdout
        assert "notary: 3 events verified" in offline.stdout
        assert f"(saved from {server.url})" in offline.stdout
    # An auditor's install, without the server's dependencies, audits the same (README
    # "Auditing a league"); a server command there says which extra it needs.
    bare = without_server(env, tmp_path / "bare")
    offline = league(bare, "audit", "--offline", str(saved), "--state", str(state))
    assert offline.returncode == 0, offline.stderr
    assert "mint: 2 events verified" in offline.stdout
    assert "pip install 'the-window-league[server]'" in one_line_failure(league(bare, "serve"))
    page = saved / "mint" / "events" / "000000.json"
    feed = json.loads(page.read_text(encoding="utf-8"))
    feed["events"][1]["body"]["request_id"] = "forged-1"
    page.write_text(json.dumps(feed), encoding="utf-8")
    line = one_line_failure(league(env, "audit", "--offline", str(saved), "--state", str(state)))
    assert "mint seq 1" in line
    assert "leaf hash" in line
    assert "--offline" in league(env, "audit", "--help").stdout


def test_an_edited_holder_is_named(env: dict[str, str], tmp_path: Path, database_url: str) -> None:
    """A row of the notary's holders projection edited in the database (its
    log untouched) fails the audit naming the serial."""
    server = serve(env)
    try:
        asyncio.run(trade(server.url))

        async def tamper() -> str:
            conn = await asyncpg.connect(database_url)
            try:
                serial: str = await conn.fetchval(
                    "UPDATE notary.holders SET holder = $1 RETURNING serial",
                    SigningKey.generate().public.to_text(),
                )
                return serial
            finally:
                await conn.close()

        serial = asyncio.run(tamper())
        line = one_line_failure(audit(env, server.url, tmp_path / "audit"))
        assert "notary seq 1" in line  # the hop that makes the true holder
        assert f"the notary's projection says {serial} is held by" in line
    finally:
        server.stop()


def test_a_database_restored_from_an_older_dump_is_caught(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The mint's database restored from an older dump (and the league's
    own kept checkpoint removed, so it serves it) forks the log: the checkpoint the auditor
    kept from its previous run is inconsistent with it."""
    state, old = tmp_path / "audit", tmp_path / "old.dump"
    port = free_port()  # one URL throughout: the auditor keeps its state per URL
    server = serve(env, port)
    try:
        asyncio.run(stamp(server.url, SigningKey.generate(), "Tally"))
        asyncio.run(published(server.url, "mint", 1))
    finally:
        server.stop()
    assert league(env, "db", "dump", str(old)).returncode == 0
    server = serve(env, port)
    try:
        asyncio.run(stamp(server.url, SigningKey.generate(), "Pairing"))
        asyncio.run(published(server.url, "mint", 2))
        passed = audit(env, server.url, state)
        assert passed.returncode == 0, passed.stderr
    finally:
        server.stop()
    subprocess.run(
        [
            str(embedded_tool("pg_restore")),
            "--clean",
            "--if-exists",
            "--no-owner",
            "--dbname",
            env["DATABASE_URL"],
            str(old),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    (Path(env["LEAGUE_HOME"]) / "checkpoints" / "mint.checkpoint").unlink()
    server = serve(env, port)
    try:
        line = one_line_failure(audit(env, server.url, state))  # shorter than what was kept
        assert "mint seq 1" in line
        assert "kept from the previous audit" in line
        asyncio.run(stamp(server.url, SigningKey.generate(), "Reflection"))
        asyncio.run(published(server.url, "mint", 2))
        line = one_line_failure(audit(env, server.url, state))  # as long, other leaves
        assert "mint seq 1" in line
        assert "do not hash to the root of the checkpoint kept from the previous audit" in line
    finally:
        server.stop()


def test_another_root_key_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    """The root key is pinned on first use; a league at the same URL under
    another root is refused on one line."""
    state = tmp_path / "audit"
    server = serve(env)
    try:
        assert audit(env, server.url, state).returncode == 0
        (kept,) = state.iterdir()
        saved = json.loads(kept.read_text(encoding="utf-8"))
        saved["urls"][server.url] = SigningKey.generate().public.to_text()
        kept.write_text(json.dumps(saved), encoding="utf-8")
        line = one_line_failure(audit(env, server.url, state))
        assert line.startswith("league: REFUSED: ")
        assert f"pinned for {server.url}" in line
        other = SigningKey.generate().public.to_text()
        assert "given with --root" in one_line_failure(
            audit(env, server.url, tmp_path / "fresh", f"--root={other}")  # may start with -
        )
    finally:
        server.stop()


async def buy_with_change(url: str, buyer: SigningKey, notes: list[NoteCertificate]) -> int:
    """Buy a Tally (M30) with ``notes`` endorsed to the treasury, notarized by the treasury
    itself (L-18); the treasury's log size once the purchase closed."""
    async with LeagueClient(url) as client:
        for note in notes:  # bounded: the notary follows the treasury's feed in the background
            for _ in range(200):
                try:
                    await client.provenance(note.serial)
                    break
                except LeagueProblem:
                    await asyncio.sleep(0.05)
        manifest = await client.manifest()
        treasury = PublicKey.from_text(manifest.treasury)
        payment = [
            endorse(Chain(certificate=note, endorsements=()), buyer, treasury, T0) for note in notes
        ]
        request = buy_request(
            buyer, manifest, "Tally", payment, purchase_id="buy-0000001", at=int(time.time())
        )
        answer = await client.buy(request)
        assert (answer.outcome, answer.price, answer.paid) == ("delivered", 30, 50), answer.reason
        size = 0
        while len(page := (await client.events(size - 1, 1000, service="treasury")).events):
            size = page[-1].seq + 1
        return size


def test_the_treasury_is_audited(env: dict[str, str], tmp_path: Path, database_url: str) -> None:
    """A league with claims and a purchase with change passes, the
    treasury's figures reported (issues, returns, reserve per denomination, supply
    1,500,000, the purchase delivered, the notes' hops); an edited row of the treasury's log
    fails on one line naming the treasury and the seq."""
    server = serve(env)
    try:
        a, b = SigningKey.generate(), SigningKey.generate()
        assert len(asyncio.run(claim_notes(server.url, a, 37, "claim-a-1"))) == 5  # M25 2xM5 2xM1
        notes = asyncio.run(claim_notes(server.url, b, 100, "claim-b-1"))  # the cap: 2xM25
        size = asyncio.run(buy_with_change(server.url, b, notes))  # M20 change: 4xM5
        asyncio.run(published(server.url, "treasury", size))
        asyncio.run(published(server.url, "notary", 2))
        passed = audit(env, server.url, tmp_path / "audit")
        assert passed.returncode == 0, passed.stderr
        assert f"treasury: {size} events verified" in passed.stdout
        assert "treasury: 11 note issues (87 marks claimed" in passed.stdout
        assert "2 returns" in passed.stdout
        assert "supply 1,500,000 marks after every event" in passed.stdout
        assert "M25: 23999 in reserve, 1 out of 24000" in passed.stdout
        assert "M5: 39994 in reserve, 6 out of 40000" in passed.stdout
        assert "1 delivered, paid and changed or refunded exactly" in passed.stdout
        assert "2 hops of notes on valid chains" in passed.stdout

        async def tamper() -> None:
            conn = await asyncpg.connect(database_url)
            try:
                await conn.execute(
                    "UPDATE treasury.events SET body = jsonb_set(body, '{reason}', "
                    "'\"change\"') WHERE seq = 2"
                )
            finally:
                await conn.close()

        asyncio.run(tamper())
        line = one_line_failure(audit(env, server.url, tmp_path / "audit", "--workers", "0"))
        assert "treasury seq 2" in line
        assert "leaf hash" in line
    finally:
        server.stop()


def test_a_treasury_kept_or_named_must_serve_its_checkpoint(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A 404 for the treasury's checkpoint skips it only when nothing says it is served: after
    an audit kept its checkpoint (the league moved to a host that drops it), or with its URL
    named (--treasury), the audit fails on one line naming the treasury."""
    server = serve(env)
    try:
        state = tmp_path / "audit"
        first = audit(env, server.url, state)
        assert first.returncode == 0, first.stderr
        saved = kept_state(state)
        assert "treasury" in saved["leagues"][saved["urls"][server.url]]["checkpoints"]

        async def through_front() -> tuple[str, str, bool]:
            # a host that stopped serving the treasury
            async with front(server.url, lambda path: path.startswith("/treasury/")) as url:
                with pytest.raises(AuditorError) as kept:
                    await audit_url(url, state, workers=0)
                with pytest.raises(AuditorError) as named:
                    await audit_url(url, tmp_path / "named", workers=0, services={"treasury": url})
                unknown = await audit_url(url, tmp_path / "fresh", workers=0)
            return str(kept.value), str(named.value), unknown.report.treasury is None

        kept, named, skipped = asyncio.run(through_front())
        for line in (kept, named):
            assert "\n" not in line
            assert line.startswith("the treasury at http://127.0.0.1:")
            assert "does not serve its checkpoint (404)" in line
        assert "its checkpoint of size 0 was kept from a previous audit" in kept
        assert "its URL was named (--treasury)" in named
        assert skipped  # never audited, never named: a league without a treasury (yet)
    finally:
        server.stop()
