"""The tables service served over real HTTP in this process, and a player at one of its tables:
each request signed by the player's key, sent as JSON, answered as the service answers."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from game.window.rewards import table_open
from game.window.witnessed import WitnessedTable
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.tables import (
    Deal,
    TableClosed,
    TableDealt,
    TableJoin,
    TableMove,
    TableOpen,
    TableOpened,
    TableSeed,
    commitment,
    deal_seed,
    seed_bytes,
)
from ledger.wire import hash_text
from services.eventlog.store import PostgresEventStore
from services.kernel.founding import load_manifest
from services.kernel.keyring import key_path, read_key
from services.kernel.settings import LeagueSettings
from services.tables.app import create_app
from services.tables.projection import PROJECTION, TablesChanges
from tests.harness.ports import free_port
from tests.harness.serving import closing


async def serve(settings: LeagueSettings) -> TestServer:
    """The tables service alone on a real port (the caller closes it)."""
    server = TestServer(create_app(settings), host="127.0.0.1", port=settings.port)
    await server.start_server()
    return server


@pytest.fixture
def settings(make_settings: Callable[..., LeagueSettings]) -> LeagueSettings:
    """A league whose server listens on a known free port."""
    return make_settings().model_copy(update={"port": free_port()})


@pytest.fixture
async def server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    async with closing(await serve(settings)) as server:
        yield server


@dataclass
class Answer:
    """One answer: its status and JSON body."""

    status: int
    body: dict[str, Any]

    @property
    def problem(self) -> str:
        slug: str = self.body["type"].removeprefix("/problems/")
        return slug


@dataclass
class Player:
    """A key at the tables service at ``url``."""

    key: SigningKey
    manifest: LeagueManifest
    url: str
    table: str = ""
    commitment: str = ""
    #: A duel's join code, as the open answered it to its opener.
    code: str = ""

    async def post(self, path: str, body: dict[str, Any]) -> Answer:
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.url + path, json=body) as response,
        ):
            return Answer(response.status, await response.json(content_type=None))

    async def get(self, path: str) -> Answer:
        async with aiohttp.ClientSession() as session, session.get(self.url + path) as response:
            return Answer(response.status, await response.json(content_type=None))

    def signed(self, model: type[Any], key: SigningKey | None = None, **fields: Any) -> Any:
        return model.sign(
            key or self.key,
            league=self.manifest.league,
            manifest=self.manifest.hash_text(),
            time=int(time.time()),
            player=self.key.public.to_text(),
            **fields,
        )

    async def open(self, venue: str = "clerk-1") -> Answer:
        request = self.signed(TableOpen, request_id=secrets.token_hex(8), venue=venue)
        answer = await self.post("/tables/open", request.to_wire())
        assert answer.status == 200, answer
        self.table, self.commitment = answer.body["table"], answer.body["commitment"]
        self.code = answer.body.get("code") or ""
        return answer

    def join_request(self, code: str) -> TableJoin:
        request: TableJoin = self.signed(TableJoin, code=code)
        return request

    async def join(self, code: str) -> Answer:
        """Take a duel's second seat with ``code`` (the table and commitment kept)."""
        answer = await self.post("/tables/join", self.join_request(code).to_wire())
        if answer.status == 200:
            self.table, self.commitment = answer.body["table"], answer.body["commitment"]
        return answer

    async def seed(self) -> Answer:
        request = self.signed(
            TableSeed,
            table=self.table,
            commitment=self.commitment,
            seed=hash_text(secrets.token_bytes(32)),
        )
        return await self.post("/tables/seed", request.to_wire())

    def move_request(self, ply: int, action: str, key: SigningKey | None = None) -> TableMove:
        request: TableMove = self.signed(TableMove, key, table=self.table, ply=ply, action=action)
        return request

    async def move(self, ply: int, action: str) -> Answer:
        return await self.post("/tables/move", self.move_request(ply, action).to_wire())


def player_at(settings: LeagueSettings, server: TestServer) -> Player:
    return Player(SigningKey.generate(), load_manifest(settings), str(server.make_url("")))


def unenrolled(home: Path) -> LeagueManifest:
    """The league in ``home`` as one founded before the tables service: its manifest signed
    again by its root without the tables key (its id unchanged), the tables key file gone."""
    manifest_path = home / "manifest.json"
    manifest = LeagueManifest.from_wire(manifest_path.read_text(encoding="utf-8"))
    root = read_key(home / "keys", "root")
    fields = {k: v for k, v in manifest.body().items() if k not in ("kind", "tables")}
    older = LeagueManifest.sign(root, **fields)
    assert older.tables is None
    assert older.hash_text() == manifest.hash_text()
    manifest_path.write_text(json.dumps(older.to_wire(), indent=2) + "\n", encoding="utf-8")
    key_path(home / "keys", "tables").unlink()
    return older


async def played_out(player: Player) -> dict[str, Any]:
    """The player's table dealt and played to its close, the first legal action each time."""
    answer = await player.seed()
    assert answer.status == 200, answer
    return await played_out_from(player, answer.body)


async def played_out_from(player: Player, view: dict[str, Any]) -> dict[str, Any]:
    """The player's table played from ``view`` to its close, the first legal action each
    time, and each No-Go drill of the player's answered with the pattern shown (IV.4)."""
    while view["waiting"] in ("move", "drill"):
        drill = view["waiting"] == "drill"
        action = view["drill"] if drill else view["legal"][0]
        answer = await player.move(view["ply"], action)
        assert answer.status == 200, answer
        # A drill is judged on the service's clock (its outcome replays from the log's times).
        expected = ("drill success", "drill failure") if drill else (action,)
        assert answer.body["played"][0] in expected
        view = answer.body
    assert view["waiting"] == "closed"
    return view


def next_action(view: dict[str, Any]) -> str:
    """The first legal action, or at a drill the pattern shown (answered at once)."""
    action: str = view["drill"] if view["waiting"] == "drill" else view["legal"][0]
    return action


async def duel_played_out(players: dict[str, Player], view: dict[str, Any]) -> dict[str, Any]:
    """A dealt duel played from ``view`` to its close, each move by the key whose turn the
    view names (``players`` by key), the first legal action each time."""
    while view["waiting"] in ("move", "drill"):
        answer = await players[view["turn"]].move(view["ply"], next_action(view))
        assert answer.status == 200, answer
        view = answer.body
    assert view["waiting"] == "closed", view
    return view


async def duel_dealt(opener: Player, joiner: Player, venue: str = "duel-base") -> dict[str, Any]:
    """A duel opened by ``opener``, joined by ``joiner`` with the code, both seeds in: the
    dealt view."""
    opened = await opener.open(venue)
    assert opened.body["waiting"] == "join", opened
    assert opener.code, opened
    joined = await joiner.join(opener.code)
    assert joined.status == 200, joined
    first = await opener.seed()
    assert first.status == 200, first
    assert first.body["waiting"] == "seed", first
    assert first.body["turn"] == joiner.key.public.to_text()
    dealt = await joiner.seed()
    assert dealt.status == 200, dealt
    return dealt.body


async def balance_recorded(
    database_url: str, league_home: Path, player: SigningKey, venue: str
) -> str:
    """A table of ``player``'s at ``venue`` recorded in the tables log of the league in
    ``league_home`` as the service records one that closed with the player's Balance (opened
    with its proof of work): its open, deal and close events (the secret revealed opens the
    commitment), its row; the table's id. A Balance is not played to on demand, so it is
    written as the log holds it."""
    manifest = LeagueManifest.from_wire((league_home / "manifest.json").read_text("utf-8"))
    key = read_key(league_home / "keys", "tables")
    request = table_open(
        player, manifest, venue=venue, request_id=secrets.token_hex(8), at=int(time.time())
    )
    table = request.table_id()
    secret = secrets.token_bytes(32)
    opened = TableOpened(
        table=table, request=request, commitment=hash_text(commitment(table, secret))
    )
    seed = TableSeed.sign(
        player,
        league=manifest.league,
        manifest=manifest.hash_text(),
        table=table,
        time=int(time.time()),
        player=player.public.to_text(),
        commitment=opened.commitment,
        seed=hash_text(secrets.token_bytes(32)),
    )
    dealt_table = WitnessedTable.convene(venue, deal_seed(table, secret, seed_bytes(seed)))
    kind, hands, market = dealt_table.deal()
    deal = Deal.from_wire({"table": kind, "hands": hands, "market": market})
    dealt = TableDealt(table=table, request=seed, deal=deal)
    closed = TableClosed(
        table=table, secret=hash_text(secret), verdict="balance", columns=((1, 1, 1), (1, 1, 1))
    )
    async with asyncpg.create_pool(database_url, min_size=1, max_size=1) as pool:
        store = PostgresEventStore(
            pool, schema="tables", origin=f"{manifest.league}/tables", key=key
        )
        async with store.transaction() as tx:
            await tx.lock()
            changes = TablesChanges()
            for body in (opened, dealt, closed):
                PROJECTION.apply(changes.rows, body, tx.now)
            await tx.append_batch([opened.new_event(0), dealt.new_event(1), closed.new_event(2)])
            await PROJECTION.write(tx, changes)
    return table
