"""A table in ``cz web`` by its buttons, over real HTTP: the Assessor's market table (seed 1:
the venue's AI is seeded, so the same table every time) played by the player's No-Go as soon
as one is open; the No-Go sets the drill of IV.4 on the page (the pattern's cells, the timer,
no action buttons meanwhile); the lit cells posted back are judged a success by
``game.window.drill.judge`` with the time measured by the server, a wrong pattern a failure,
and the drill's outcome is the move the engine takes (docs/rules.md IV.4, R-02). An action that
is not open is refused and changes nothing."""

from __future__ import annotations

import html
import re

import aiohttp

from clients.web.launch import Web
from clients.web.sitting import Sitting
from game.window.ai.roster import opponent_for
from game.window.campaign import Venue, convene
from tests.clients.web.conftest import base, same_origin

_ACTION = re.compile(r'<button name="action" value="(\d+)" class="action">([^<]*)</button>')


async def to_the_drill(launch: Web, http: aiohttp.ClientSession, seed: int) -> str:
    """The Assessor's table of ``seed``, played by clicks (No-Go first) to the player's drill;
    the drill's page."""
    venue = Venue("assessor")
    table = convene(venue, seed)
    sitting = Sitting(venue, seed, table, table.new_state(), opponent_for(venue, seed))
    sitting.advance()
    launch.sitting = sitting
    url, headers = base(launch.guard), same_origin(launch.guard)
    for _ in range(60):
        async with http.get(f"{url}/table", headers=headers) as response:
            page = await response.text()
        if 'id="drill-form"' in page:
            return page
        buttons = [(value, html.unescape(text)) for value, text in _ACTION.findall(page)]
        assert buttons, page
        value = next((v for v, text in buttons if text.startswith("nogo")), buttons[0][0])
        async with http.post(f"{url}/table/act", data={"action": value}, headers=headers) as r:
            assert r.status == 200  # the board again, after the 303
    raise AssertionError("no drill")


async def test_a_no_go_sets_the_drill_and_the_pattern_clicked_wins_it(
    launch: Web, http: aiohttp.ClientSession
) -> None:
    page = await to_the_drill(launch, http, 1)
    assert not _ACTION.search(page)  # no action while the drill waits
    assert 'class="timer"' in page
    lit = re.findall(r'<label class="cell lit" data-cell="(\d)">', page)
    assert len(lit) == 4
    url, headers = base(launch.guard), same_origin(launch.guard)
    # An action now is refused: nothing moves.
    sitting = launch.sitting
    assert sitting is not None
    moves = len(sitting.moves)
    async with http.post(f"{url}/table/act", data={"action": "0"}, headers=headers) as response:
        assert response.status == 409
    assert len(sitting.moves) == moves
    async with http.post(
        f"{url}/table/drill", data=[("cell", c) for c in lit], headers=headers
    ) as response:
        after = await response.text()
    assert sitting.actions[moves] == "drill success"
    assert re.search(r"<strong>the drill</strong>: success after \d+\.\d s", after)
    # Help at hand: a card's text, one click from the board.
    card = re.search(r'<a href="/[\w-]+/card\?name=([A-Za-z-]+)"', after)
    assert card is not None
    async with http.get(f"{url}/card?name={card[1]}", headers=headers) as response:
        text = await response.text()
    assert f"{card[1]}: cost " in html.unescape(text)


async def test_a_wrong_pattern_fails_the_drill(launch: Web, http: aiohttp.ClientSession) -> None:
    page = await to_the_drill(launch, http, 1)
    lit = re.findall(r'<label class="cell lit" data-cell="(\d)">', page)
    wrong = [c for c in "012345678" if c not in lit][:4]
    url, headers = base(launch.guard), same_origin(launch.guard)
    sitting = launch.sitting
    assert sitting is not None
    moves = len(sitting.moves)
    async with http.post(
        f"{url}/table/drill", data=[("cell", c) for c in wrong], headers=headers
    ) as response:
        assert response.status == 200
    assert sitting.actions[moves] == "drill failure"
