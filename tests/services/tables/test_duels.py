"""Duels (docs/formats.md "Duels"): two keys at one table over real HTTP and a real
PostgreSQL, joined by a short code; the deal from the service's secret and both players'
seeds; each move signed by the seat the engine says decides; the audit replays a duel and
fails on a move signed by the wrong seat."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from game.window.witnessed import referee
from ledger.audit import AuditFailure
from ledger.audit.tables import TablesChecker
from ledger.encoding import decode_b64url
from ledger.events import body_as
from ledger.tables import (
    CODE_ALPHABET,
    CODE_LENGTH,
    TableDealt,
    TableMove,
    TableOpen,
    TableSeeded,
    duel_code,
    duel_seed,
    seed_bytes,
    table_stream,
)
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from services.tables.app import TABLES_LOG
from tests.harness.mint import checkpoint_covering
from tests.harness.served import GUARD_SECONDS
from tests.harness.tables import (
    duel_dealt,
    duel_played_out,
    next_action,
    player_at,
)
from tests.harness.tables_audit import edited

ROOT = Path(__file__).resolve().parents[3]


async def test_a_duel_played_to_its_close_by_two_processes(
    settings: LeagueSettings, server: TestServer
) -> None:
    """The opener plays here, the second key in a process of its own (tests/harness/duelist.py);
    both play their turns over HTTP until the close, which both see alike and the audit
    replays: the deal from the secret and both seeds, every move by its seat."""
    opener = player_at(settings, server)
    opened = await opener.open("duel-market")
    code = opened.body["code"]
    assert len(code) == CODE_LENGTH
    assert set(code) <= set(CODE_ALPHABET)
    shown = await opener.get(f"/tables/table/{opener.table}")
    assert shown.body["waiting"] == "join"
    assert shown.body["code"] is None
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.harness.duelist",
        opener.url,
        str(settings.manifest_path),
        code,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        me = opener.key.public.to_text()
        view = (await opener.get(f"/tables/table/{opener.table}")).body
        while view["opponent"] is None:
            assert child.returncode is None, "the second player's process ended"
            await asyncio.sleep(0.05)
            view = (await opener.get(f"/tables/table/{opener.table}")).body
        seeded = await opener.seed()
        assert seeded.status == 200, seeded
        view = seeded.body
        while view["waiting"] != "closed":
            if view["turn"] == me and view["waiting"] in ("move", "drill"):
                answer = await opener.move(view["ply"], next_action(view))
                assert answer.status == 200, answer
                view = answer.body
            else:
                await asyncio.sleep(0.05)
                ended = child.returncode is not None  # read before the table, not after
                view = (await opener.get(f"/tables/table/{opener.table}")).body
                assert view["waiting"] == "closed" or not ended, "the second player ended"
        out, _ = await asyncio.wait_for(child.communicate(), GUARD_SECONDS)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    assert child.returncode == 0
    theirs = json.loads(out.decode().strip().splitlines()[-1])
    assert theirs["actions"] == view["actions"]
    assert theirs["closing"] == view["closing"]
    assert view["opponent"] not in (None, me)

    events = await server.app[TABLES_LOG].read_stream(table_stream(opener.table))
    types = [e.type for e in events]
    assert types[:4] == ["table-opened", "table-joined", "table-seeded", "table-dealt"]
    assert types[-1] == "table-closed"
    movers = {e.body["request"]["player"] for e in events if e.type == "move-played"}
    assert movers == {me, view["opponent"]}  # both seats moved
    # The deal seed: the secret and both seeds, the opener's first (none of the three chose it).
    secret = decode_b64url(view["closing"]["secret"], length=32)
    seeds = {
        r.player: seed_bytes(r)
        for r in (body_as(events[2], TableSeeded).request, body_as(events[3], TableDealt).request)
    }
    both = (seeds[me], seeds[view["opponent"]])
    assert view["closing"]["seed"] == duel_seed(opener.table, secret, both)
    assert view["closing"]["seed"] != duel_seed(opener.table, secret, both[::-1])
    assert events[1].body["request"]["code"] == duel_code(opener.table, secret) == code


async def test_what_a_duel_refuses(settings: LeagueSettings, server: TestServer) -> None:
    """A wrong code, the opener joining its own duel, a third key joining a full one, a seed
    twice, a forged move, a stranger's move, the other seat's move, a move out of turn and a
    replayed move are each refused with their problem type, recording nothing."""
    opener, joiner = player_at(settings, server), player_at(settings, server)
    stranger = player_at(settings, server)
    open_request = opener.signed(TableOpen, request_id="a-duel-of-two", venue="duel-base")
    opened = await opener.post("/tables/open", open_request.to_wire())
    assert opened.status == 200, opened
    code = opened.body["code"]
    opener.table, opener.commitment = opened.body["table"], opened.body["commitment"]
    reopened = await stranger.post("/tables/open", open_request.to_wire())  # public in the feed
    assert reopened.status == 200, reopened
    assert reopened.body["table"] == opener.table
    assert reopened.body["code"] is None  # L-34: the code is told once, to the open that opened
    wrong = next(c for c in CODE_ALPHABET if c != code[0]) + code[1:]
    answer = await stranger.join(wrong)
    assert (answer.status, answer.problem) == (404, "unknown-table")
    answer = await opener.join(code)
    assert (answer.status, answer.problem) == (409, "out-of-turn")
    request = joiner.join_request(code)
    answer = await joiner.post("/tables/join", request.to_wire())
    assert answer.status == 200, answer
    assert answer.body["turn"] is None
    again = await joiner.post("/tables/join", request.to_wire())  # the same join: the same seat
    assert again.status == 200
    assert again.body["opponent"] == joiner.key.public.to_text()
    answer = await stranger.join(code)
    assert (answer.status, answer.problem) == (404, "unknown-table")
    joiner.table, joiner.commitment = opener.table, opener.commitment

    early = await joiner.move(0, "collect")
    assert (early.status, early.problem) == (409, "out-of-turn")  # not dealt
    first = await opener.seed()
    assert first.status == 200, first
    twice = await opener.seed()
    assert (twice.status, twice.problem) == (409, "out-of-turn")
    view = (await joiner.seed()).body
    assert view["waiting"] == "move"
    assert view["turn"] == opener.key.public.to_text()
    legal = view["legal"][0]

    store = server.app[TABLES_LOG]
    version = await store.stream_version(table_stream(opener.table))
    forged = opener.move_request(0, legal, key=joiner.key)  # the opener's name, the joiner's key
    answer = await opener.post("/tables/move", forged.to_wire())
    assert (answer.status, answer.problem) == (422, "bad-signature")
    stranger.table = opener.table
    answer = await stranger.move(0, legal)  # signed by a key not at the table
    assert (answer.status, answer.problem) == (422, "bad-signature")
    answer = await joiner.move(0, legal)  # the other seat's move
    assert (answer.status, answer.problem) == (409, "out-of-turn")
    assert "waits for seat 0" in answer.body["detail"]
    answer = await opener.move(1, legal)  # a ply ahead
    assert (answer.status, answer.problem) == (409, "out-of-turn")
    assert await store.stream_version(table_stream(opener.table)) == version

    move = opener.move_request(0, legal)
    played = await opener.post("/tables/move", move.to_wire())
    assert played.status == 200, played
    assert played.body["played"] == [legal]  # no AI reply at a duel
    assert played.body["turn"] != opener.key.public.to_text()
    replayed = await opener.post("/tables/move", move.to_wire())
    assert (replayed.status, replayed.problem) == (409, "move-replayed")
    assert await store.stream_version(table_stream(opener.table)) == version + 1


async def test_the_audit_replays_a_duel_and_fails_on_a_move_by_the_wrong_seat(
    settings: LeagueSettings, server: TestServer
) -> None:
    """A duel played out passes the audit, replayed; the same log with one move's request made
    the other seat's (signed by that player's own key, the event by the tables key, as a
    dishonest operator would) fails at that move, as does one with an edited action."""
    opener, joiner = player_at(settings, server), player_at(settings, server)
    view = await duel_dealt(opener, joiner)
    players = {p.key.public.to_text(): p for p in (opener, joiner)}
    closed = await duel_played_out(players, view)
    # L-33: a duel pays nothing; its close settles at once as nothing due (the opener's
    # closes are folded from the log with the duel among them).
    assert closed["closing"]["reward"]["status"] == "nothing", closed["closing"]
    async with LeagueClient(opener.url) as league:
        feed = (await league.events(-1, 1000, service="tables")).events
        text = await checkpoint_covering(league, len(feed), service="tables")
    manifest = opener.manifest
    from ledger.checkpoint import Checkpoint

    checker = TablesChecker(manifest, referee)
    checker.checkpoint(Checkpoint.from_note(text))
    checker.add(feed)
    report = checker.report()
    assert (report.tables, report.replayed) == (1, 1)
    assert report.verdicts == {closed["closing"]["verdict"]: 1}

    key = read_key(settings.keys_dir, "tables", None)
    at, move = next((i, e) for i, e in enumerate(feed) if e.type == "move-played")
    request = TableMove.from_wire(move.body["request"])
    other = players[joiner.key.public.to_text()]
    theirs = TableMove.sign(other.key, **{**request.body(), "player": other.key.public.to_text()})
    wrong_seat = {**move.body, "request": theirs.to_wire()}
    actions = move.body["actions"]
    changed = "collect" if actions[0] != "collect" else "accelerate"
    edited_action = {**move.body, "actions": [changed]}
    for body, reason in ((wrong_seat, "waits for seat 0"), (edited_action, "the log records")):
        forged = edited(move, body, key)
        checking = TablesChecker(manifest, referee)
        with pytest.raises(AuditFailure, match=reason):
            checking.add([*feed[:at], forged, *feed[at + 1 :]])


def test_a_join_code_is_the_secrets_and_unguessable_without_it() -> None:
    """The code is 8 characters of the 32-character alphabet, the same for the same table
    and secret, another for another secret (docs/formats.md "Duels")."""
    table = "ab" * 16
    codes = {duel_code(table, bytes([n]) * 32) for n in range(64)}
    assert len(codes) == 64
    assert all(len(c) == CODE_LENGTH and set(c) <= set(CODE_ALPHABET) for c in codes)
    assert duel_code(table, b"\x01" * 32) == duel_code(table, b"\x01" * 32)
    assert len(set(CODE_ALPHABET)) == 32
    assert not set("01IO") & set(CODE_ALPHABET)
