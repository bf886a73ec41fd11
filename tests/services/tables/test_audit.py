"""The tables' audit (``ledger.audit.tables`` with the game's referee): a witnessed table read
from the service's feed over HTTP passes, its close replayed with the engine; the same table
with one move edited fails, whether the edit is left unsigned, re-signed by the operator's own
tables key (the replay parts from the log), or made to the player's signed request (docs/formats.md,
"Witnessed tables")."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from ledger.audit import AuditFailure
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from tests.harness.mint import checkpoint_covering
from tests.harness.tables import played_out, player_at
from tests.harness.tables_audit import audited, edited


async def test_a_witnessed_table_passes_the_audit_and_an_edited_move_fails(
    settings: LeagueSettings, server: TestServer
) -> None:
    """The table passes, replayed to its verdict; each edit of one move fails at that move."""
    player = player_at(settings, server)
    await player.open("clerk-4")
    view = await played_out(player)
    async with LeagueClient(player.url) as league:
        size = len((await league.events(-1, 1000, service="tables")).events)
        text = await checkpoint_covering(league, size, service="tables")
        feed = (await league.events(-1, 1000, service="tables")).events
    manifest = player.manifest
    report = audited(manifest, text, feed)
    assert (report.tables, report.replayed) == (1, 1)
    assert report.verdicts == {view["closing"]["verdict"]: 1}

    key = read_key(settings.keys_dir, "tables", None)
    at, move = next((i, e) for i, e in enumerate(feed) if e.type == "move-played")
    actions = move.body["actions"]
    other = "collect" if actions[-1] != "collect" else "accelerate"
    replies = {**move.body, "actions": [*actions[:-1], other]}
    request = {**move.body, "request": {**move.body["request"], "action": other}}
    cases = [
        (edited(move, replies, None), True, "signature does not verify"),
        (edited(move, replies, key), False, "the log records"),
        (edited(move, request, key), False, "signature"),
    ]
    for forged, with_checkpoint, reason in cases:
        with pytest.raises(AuditFailure, match=reason) as failed:
            audited(
                manifest, text if with_checkpoint else None, [*feed[:at], forged, *feed[at + 1 :]]
            )
        assert failed.value.service == "tables"
