"""A reward's prints outlive a mint that does not answer (``services.treasury.rewarding``):
the treasury records the payment (its notes and its signed mint orders) in one commit, the
mint is away, the reward stays pending; once the mint answers, the same order is answered
with the same notes and the recorded orders stamped, each print once."""

from __future__ import annotations

from ledger.api.mint import Stamped
from ledger.api.rewards import reward_stream
from ledger.events import RewardPaid
from ledger.keys import SigningKey
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.tables.app import REWARDS, TABLES_LOG
from services.tables.app import SERVICE as TABLES
from services.treasury.app import SERVICE as TREASURY
from services.treasury.app import TREASURY_LOG
from tests.harness.rewards import record_close
from tests.harness.serving import composed


async def test_a_rewards_prints_wait_for_the_mint_and_are_stamped_once(
    settings: LeagueSettings,
) -> None:
    """# IV.6, L-26, L-27: Chair II's bundle is paid once: pending while the mint is away (the
    payment recorded, its tables record not), then stamped from the orders recorded."""
    manifest = load_manifest(settings)
    key = SigningKey.generate()
    async with composed(settings, [TREASURY, TABLES]) as server:  # no mint here
        store, rewards = server.app[TABLES_LOG], server.app[REWARDS]
        for venue in ("clerk-1", "clerk-2", "clerk-3", "assessor", "chair-I", "chair-II"):
            table = await record_close(store, manifest, key, venue, "win")
            outcome = await rewards.outcome(table)
        assert outcome.status == "pending"
        assert await store.read_stream(reward_stream(table)) == []
        paid = await server.app[TREASURY_LOG].read_stream(reward_stream(table))
        assert len(paid) == 1  # the notes and the orders, committed before the mint was asked
        orders = RewardPaid.from_wire(paid[0].body).orders
        assert len(orders) == 3

    async with composed(settings, [MINT, TREASURY, TABLES]) as server:
        rewards, treasury = server.app[REWARDS], server.app[TREASURY_LOG]
        outcome = await rewards.outcome(table)
        assert outcome.status == "paid", outcome
        assert outcome.paid == paid[0].seq
        stamped = [answer.item for answer in outcome.prints]
        assert all(isinstance(item, Stamped) for item in stamped)
        assert [a.order_id for a in outcome.prints] == [o.order_id for o in orders]
        assert len(await treasury.read_stream(reward_stream(table))) == 1
        rows = await treasury.fetch(
            "SELECT count(*) FROM mint.events WHERE type = 'print-stamped' "
            "AND body->>'request_id' LIKE $1",
            f"reward.{table}.%",
        )
        assert rows[0][0] == 3
        # Asked again (a read of the table in another process): nothing more is stamped.
        await rewards.settle(table)
        again = await treasury.fetch(
            "SELECT count(*) FROM mint.events WHERE body->>'request_id' LIKE $1",
            f"reward.{table}.%",
        )
        assert again[0][0] == 3
