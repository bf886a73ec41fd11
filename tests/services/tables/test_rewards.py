"""Rewards paid for real (Book IV.1–IV.6, V.5; ``ledger.rewards``; docs/rulings.md L-25…L-28):
the mint, the treasury and the tables service composed over real HTTP and PostgreSQL. A clerk's
table settled pays its marks as notes of the reserve to the player's key, once; a loss and a
table opened without its proof of work pay nothing; a Chair's first clearing pays its bundle's
three prints stamped inside their runs; the same reward order again pays nothing more, and
another order for a paid table is refused."""

from __future__ import annotations

import time
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from game.window.rewards import table_work
from ledger.api.mint import Stamped
from ledger.api.rewards import RewardAnswer, RewardDue, RewardOrder, reward_stream
from ledger.events import NoteIssued, RewardPaid
from ledger.keys import SigningKey
from ledger.rewards import TableRewarded
from ledger.tables import TableOpen
from ledger.work import challenge, meets
from services.eventlog import EventStore
from services.kernel.founding import load_manifest
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.tables.app import REWARDS, TABLES_LOG
from services.tables.app import SERVICE as TABLES
from services.tables.rewards import Rewards
from services.treasury.app import SERVICE as TREASURY
from services.treasury.app import TREASURY_LOG
from tests.harness.rewards import play_to, record_close
from tests.harness.serving import composed
from tests.harness.tables import Player, played_out


async def rewarded(store: EventStore, table: str) -> TableRewarded | None:
    """The tables log's record of ``table``'s reward, if any."""
    events = await store.read_stream(reward_stream(table))
    assert len(events) <= 1
    return TableRewarded.from_wire(events[0].body) if events else None


async def paid_in_treasury(store: EventStore, table: str) -> tuple[list[RewardPaid], int]:
    """The treasury's reward-paid events of ``table`` and the marks it issued in its name."""
    paid = [RewardPaid.from_wire(e.body) for e in await store.read_stream(reward_stream(table))]
    rows = await store.fetch(
        "SELECT body::text FROM treasury.events WHERE type = 'note-issued' "
        "AND body->>'request_id' = $1",
        table,
    )
    issued = [NoteIssued.from_wire(row[0]) for row in rows]
    assert all(n.reason == "reward" for n in issued)
    return paid, sum(n.certificate.denomination for n in issued)


async def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.post(url, json=body) as answer:
        return answer.status, await answer.json(content_type=None)


def player_of(settings: LeagueSettings, server: TestServer) -> Player:
    return Player(SigningKey.generate(), load_manifest(settings), str(server.make_url("")))


async def test_a_clerk_table_settled_pays_its_marks_as_notes_once(
    settings: LeagueSettings,
) -> None:
    """# IV.1, V.5, L-25: a clerk's table won or balanced pays 10 marks as notes of the reserve
    made out to the player's key, recorded in both logs and paired by the treasury's seq; the
    same order again answers the same notes (replayed) and issues nothing; another order for
    the table is a 409."""
    async with composed(settings, [MINT, TREASURY, TABLES]) as server:
        player = player_of(settings, server)
        view = await play_to(player, "clerk-1", ("win", "balance"))
        reward = view["closing"]["reward"]
        assert reward["status"] == "paid"
        assert sum(n["denomination"] for n in reward["notes"]) == 10
        tables_log, treasury_log = server.app[TABLES_LOG], server.app[TREASURY_LOG]
        record = await rewarded(tables_log, player.table)
        assert record is not None
        assert record.due == RewardDue(marks=10)
        assert record.player == player.key.public.to_text()
        paid, marks = await paid_in_treasury(treasury_log, player.table)
        assert len(paid) == 1
        assert marks == 10
        assert record.paid == (await treasury_log.read_stream(reward_stream(player.table)))[0].seq
        assert {n.issued_to for n in paid[0].notes} == {player.key.public.to_text()}

        key = read_key(settings.keys_dir, "tables", None)
        order = paid[0].order
        url = str(server.make_url("/treasury/rewards"))
        status, body = await post(url, order.to_wire())
        assert status == 200, body
        again = RewardAnswer.model_validate(body)
        assert again.replayed
        assert again.notes == list(paid[0].notes)
        greedy = RewardOrder.sign(
            key,
            **{**order.body(), "due": RewardDue(marks=100).to_wire()},
        )
        status, body = await post(url, greedy.to_wire())
        assert status == 409, body
        assert body["type"].endswith("request-id-reused")
        assert (await paid_in_treasury(treasury_log, player.table))[1] == 10
        # Reading the table shows the same payment (the treasury's answer kept).
        shown = await player.get(f"/tables/table/{player.table}")
        assert shown.body["closing"]["reward"] == reward
        # The service settling the table again finds it settled: nothing more.
        settled = await server.app[REWARDS].settle(player.table)
        assert settled is not None
        assert settled.answer is None
        assert (await paid_in_treasury(treasury_log, player.table))[1] == 10


async def test_a_loss_and_a_table_without_work_pay_nothing(settings: LeagueSettings) -> None:
    """# IV.1, L-28: a loss is settled with nothing due; a table opened without its venue's
    proof of work is played and recorded, and pays nothing whatever its verdict."""
    async with composed(settings, [MINT, TREASURY, TABLES]) as server:
        player = player_of(settings, server)
        await play_to(player, "clerk-2", ("loss",))
        tables_log, treasury_log = server.app[TABLES_LOG], server.app[TREASURY_LOG]
        record = await rewarded(tables_log, player.table)
        assert record is not None
        assert record.due.nothing
        assert record.paid is None
        assert await paid_in_treasury(treasury_log, player.table) == ([], 0)

        await player.open("clerk-3")  # no work
        closed = await played_out(player)
        assert closed["closing"]["reward"]["status"] == "nothing"
        record = await rewarded(tables_log, player.table)
        assert record is not None
        assert record.due.nothing
        assert record.paid is None
        assert await paid_in_treasury(treasury_log, player.table) == ([], 0)


async def test_a_chair_first_clearing_pays_its_bundle_as_stamped_prints(
    settings: LeagueSettings,
) -> None:
    """# IV.6, V.5, L-25, L-26: Chair II's table before Chair I is cleared settles nothing (the
    chair is locked); once the clerks' seal is broken, the Assessor settled and Chair I won,
    Chair II's first clearing (the second) pays its marks and a sealed bundle: three prints
    stamped by the mint to the player inside their runs, each print-stamped event naming the
    table by its order id."""
    async with composed(settings, [MINT, TREASURY, TABLES]) as server:
        manifest = load_manifest(settings)
        store, rewards = server.app[TABLES_LOG], server.app[REWARDS]
        key = SigningKey.generate()

        async def close(venue: str, verdict: str) -> TableRewarded:
            table = await record_close(store, manifest, key, venue, verdict)
            settled = await rewards.settle(table)
            assert settled is not None
            return settled.record

        early = await close("chair-II", "win")
        assert early.due.nothing  # L-25: locked
        for venue in ("clerk-1", "clerk-2", "clerk-4", "assessor", "chair-I"):
            assert (await close(venue, "win")).due.marks > 0
        table = await record_close(store, manifest, key, "chair-II", "win")
        settled = await rewards.settle(table)
        assert settled is not None
        assert settled.answer is not None
        due = settled.record.due
        assert (due.marks, due.bundles, len(due.prints)) == (30, 1, 3)
        # Folded from the player's first close (a fresh process), the due is the same.
        fresh = await Rewards(manifest, rewards.key, store, None).due(table)
        assert fresh is not None
        assert fresh[3] == due
        stamped = [answer.item for answer in settled.answer.prints]
        certificates = [item.certificate for item in stamped if isinstance(item, Stamped)]
        assert len(certificates) == 3, stamped
        assert {c.issued_to for c in certificates} == {key.public.to_text()}
        assert [(c.title, c.finish) for c in certificates] == [
            (p.title, p.finish) for p in due.prints
        ]
        mint_rows = await store.fetch(
            "SELECT body->>'request_id' FROM mint.events WHERE type = 'print-stamped' "
            "AND body->>'request_id' LIKE $1",
            f"reward.{table}.%",
        )
        assert sorted(r[0] for r in mint_rows) == [f"reward.{table}.{k}" for k in range(3)]


async def test_an_open_with_too_little_work_is_refused(settings: LeagueSettings) -> None:
    """# L-28: a table-open whose nonce is not worth its venue's price is 422
    insufficient-work, before a table is opened (none without work is refused: it pays
    nothing)."""
    manifest = load_manifest(settings)
    async with composed(settings, [TABLES]) as server:
        player = player_of(settings, server)
        key = player.key
        fields: dict[str, Any] = {
            "league": manifest.league,
            "manifest": manifest.hash_text(),
            "request_id": "too-little-work",
            "time": int(time.time()),
            "player": key.public.to_text(),
            "venue": "chair-XII",
        }
        bound = challenge(TableOpen.sign(key, **fields).to_wire())
        price = table_work(manifest.policies, "chair-XII")
        nonce = next(n for n in range(1000) if not meets(bound, 0, n, price))
        request = TableOpen.sign(key, **fields, work=nonce)
        answer = await player.post("/tables/open", request.to_wire())
        assert answer.status == 422, answer
        assert answer.problem == "insufficient-work"
        assert not await server.app[TABLES_LOG].read(-1, 10)


async def test_a_registrars_first_settlement_strikes_its_seven_prints_and_a_repeat_a_bundle(
    settings: LeagueSettings,
) -> None:
    """# IV.5, V.5, L-25, L-26: a Registrar's table before the Assessor is settled pays nothing
    (locked); once opened, the first Balance pays 150 marks and strikes the set's seven prints,
    stamped by the mint to the player inside their runs, one of them holofoil; a repeat win
    pays 30 marks and a sealed bundle's three prints."""
    async with composed(settings, [MINT, TREASURY, TABLES]) as server:
        manifest = load_manifest(settings)
        store, rewards = server.app[TABLES_LOG], server.app[REWARDS]
        key = SigningKey.generate()

        async def close(venue: str, verdict: str) -> tuple[RewardDue, list[Stamped]]:
            table = await record_close(store, manifest, key, venue, verdict)
            settled = await rewards.settle(table)
            assert settled is not None
            answers = settled.answer.prints if settled.answer is not None else []
            stamped = [a.item for a in answers if isinstance(a.item, Stamped)]
            return settled.record.due, stamped

        assert (await close("registrar-lettered", "balance"))[0].nothing  # L-25: locked
        for venue in ("clerk-1", "clerk-2", "clerk-4", "assessor"):
            assert (await close(venue, "win"))[0].marks > 0
        due, stamped = await close("registrar-lettered", "balance")
        assert (due.marks, due.bundles, len(due.prints)) == (150, 0, 7)
        assert [(s.certificate.title, s.certificate.finish) for s in stamped] == [
            (p.title, p.finish) for p in due.prints
        ]
        assert [s.certificate.finish for s in stamped].count("holofoil") == 1
        assert {s.certificate.issued_to for s in stamped} == {key.public.to_text()}
        due, stamped = await close("registrar-lettered", "win")
        assert (due.marks, due.bundles, len(stamped)) == (30, 1, 3)
