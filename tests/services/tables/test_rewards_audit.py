"""The audit of witnessed tables' rewards (``ledger.audit.rewards``): a league whose clerk's
table paid its marks passes the treasury's audit and the tables' (each closed table replayed by
the player's witnessed campaign and paired with the treasury's payment); a payment edited in
the treasury's log fails it, a reward left unrecorded fails it (unpaid), and a payment the
tables key signed for a table that earned nothing fails it (overpaid)."""

from __future__ import annotations

import time

import aiohttp
import pytest

from apiclient.league import LeagueClient
from game.window.rewards import WitnessedCampaigns
from game.window.witnessed import referee
from ledger.api.logs import FeedEvent
from ledger.api.rewards import RewardDue, RewardOrder, reward_order_id
from ledger.api.treasury import mint_order
from ledger.audit import AuditFailure, Auditor
from ledger.audit.report import AuditReport
from ledger.audit.reward_facts import PaidReward
from ledger.audit.tables import TablesChecker, TablesReport
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from services.kernel.founding import load_manifest
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.tables.app import REWARDS, TABLES_LOG
from services.tables.app import SERVICE as TABLES
from services.treasury.app import SERVICE as TREASURY
from tests.harness.rewards import play_to, record_close
from tests.harness.serving import composed
from tests.harness.tables import Player
from tests.harness.tables_audit import edited


async def feeds(url: str) -> dict[str, list[FeedEvent]]:
    async with LeagueClient(url) as league:
        return {
            service: (await league.events(-1, 1000, service=service)).events
            for service in ("mint", "treasury", "tables")
        }


def audit_logs(
    manifest: LeagueManifest, mint: list[FeedEvent], treasury: list[FeedEvent]
) -> AuditReport:
    auditor = Auditor(manifest)
    auditor.add("mint", mint)
    auditor.add("treasury", treasury)
    return auditor.report()


def audit_tables(
    manifest: LeagueManifest,
    tables: list[FeedEvent],
    paid: dict[str, PaidReward],
    paid_upto: int | None = None,
) -> TablesReport:
    campaigns = WitnessedCampaigns(manifest.policies)
    checker = TablesChecker(manifest, referee, campaigns, paid, paid_upto)
    checker.add(tables)
    return checker.report()


async def test_paid_rewards_pass_the_audit_and_edited_unpaid_or_overpaid_ones_fail(
    settings: LeagueSettings,
) -> None:
    """# IV.1, L-29: the clerk's table's 10 marks pass both audits, paired; the treasury's
    payment edited to fewer notes fails the treasury's audit; the table's record dropped (the
    reward unpaid) or rewritten to nothing fails the tables' audit; a reward the tables key
    ordered for a lost table (nothing due) fails it as paid in that table's name. Audited while
    the league plays, a payment whose record is not appended yet, or a record naming a
    payment past the treasury's log as read, is not a failure."""
    manifest = load_manifest(settings)
    async with composed(settings, [MINT, TREASURY, TABLES]) as server:
        url = str(server.make_url(""))
        player = Player(SigningKey.generate(), manifest, url)
        await play_to(player, "clerk-1", ("win", "balance"))
        won = player.table
        logs = await feeds(url)
        report = audit_logs(manifest, logs["mint"], logs["treasury"])
        assert report.rewards[won].due == RewardDue(marks=10)
        tables = audit_tables(manifest, logs["tables"], report.rewards)
        assert (tables.rewarded, tables.marks) == (1, 10)

        # The treasury's payment edited: one note fewer, re-signed by the treasury's key.
        treasury_key = read_key(settings.keys_dir, "treasury", None)
        at, paid = next((i, e) for i, e in enumerate(logs["treasury"]) if e.type == "reward-paid")
        fewer = {**paid.body, "notes": paid.body["notes"][:-1]}
        forged = [
            *logs["treasury"][:at],
            edited(paid, fewer, treasury_key),
            *logs["treasury"][at + 1 :],
        ]
        with pytest.raises(AuditFailure, match="its due is 10 marks") as failed:
            audit_logs(manifest, logs["mint"], forged)
        assert failed.value.service == "treasury"

        # Unpaid: the table's record is the log's last event; without it, nothing settles it.
        assert logs["tables"][-1].type == "table-rewarded"
        with pytest.raises(AuditFailure, match="is unpaid"):
            audit_tables(manifest, logs["tables"][:-1], {})
        # A league audited while it plays: the treasury paid the due, the record is on its
        # way; or the record names a payment past the treasury's log as it was read.
        assert audit_tables(manifest, logs["tables"][:-1], report.rewards).marks == 10
        assert audit_tables(manifest, logs["tables"], {}, paid_upto=report.rewards[won].seq)
        # ... or it is rewritten to say nothing was due.
        tables_key = read_key(settings.keys_dir, "tables", None)
        record = logs["tables"][-1]
        nothing = {**record.body, "due": RewardDue().to_wire(), "paid": None}
        rewritten = [*logs["tables"][:-1], edited(record, nothing, tables_key)]
        with pytest.raises(AuditFailure, match="replayed pays 10 marks"):
            audit_tables(manifest, rewritten, {})

        # Overpaid: the tables key orders 100 marks for a lost table; the treasury pays what
        # that key signs, and the tables' audit finds a payment the table never earned.
        await play_to(player, "clerk-2", ("loss",))
        order = RewardOrder.sign(
            tables_key,
            league=manifest.league,
            manifest=manifest.hash_text(),
            table=player.table,
            player=player.key.public.to_text(),
            venue="clerk-2",
            verdict="loss",
            due=RewardDue(marks=100),
        )
        async with (
            aiohttp.ClientSession() as session,
            session.post(url + "/treasury/rewards", json=order.to_wire()) as answer,
        ):
            assert answer.status == 200, await answer.text()
        logs = await feeds(url)
        report = audit_logs(manifest, logs["mint"], logs["treasury"])
        with pytest.raises(AuditFailure, match="paid 100 marks in table"):
            audit_tables(manifest, logs["tables"], report.rewards)


async def test_reward_prints_pass_the_audit_and_a_print_in_a_tables_name_unordered_fails(
    settings: LeagueSettings,
) -> None:
    """# IV.6, L-26, L-29: Chair II's first clearing paid three stamped prints: the mint's and
    the treasury's audit pass, each print matched with the treasury's order; a fourth print
    the treasury's key ordered straight from the mint under that table's reward order ids
    (no reward-paid ordered it) fails the audit as paid in the table's name."""
    manifest = load_manifest(settings)
    async with composed(settings, [MINT, TREASURY, TABLES]) as server:
        url = str(server.make_url(""))
        store, rewards = server.app[TABLES_LOG], server.app[REWARDS]
        key = SigningKey.generate()
        for venue in ("clerk-1", "clerk-2", "clerk-3", "assessor", "chair-I", "chair-II"):
            table = await record_close(store, manifest, key, venue, "win")
            assert await rewards.settle(table) is not None
        logs = await feeds(url)
        report = audit_logs(manifest, logs["mint"], logs["treasury"])
        assert len(report.rewards[table].due.prints) == 3

        treasury_key = read_key(settings.keys_dir, "treasury", None)
        extra = mint_order(
            treasury_key,
            manifest,
            order_id=reward_order_id(table, 3),
            owner=key.public.to_text(),
            title=report.rewards[table].due.prints[0].title,
            finish="standard",
            at=int(time.time()),
        )
        async with (
            aiohttp.ClientSession() as session,
            session.post(url + "/mint/orders", json=extra.to_wire()) as answer,
        ):
            assert answer.status == 200, await answer.text()
        logs = await feeds(url)
        with pytest.raises(
            AuditFailure, match="no reward-paid of the treasury ordered it"
        ) as failed:
            audit_logs(manifest, logs["mint"], logs["treasury"])
        assert failed.value.service == "mint"
