"""A portfolio duel (IV.3, docs/formats.md "Duels"): two keys, each bringing eight stamped
prints it holds (the opener in its open, the second key in its join), over real HTTP with the
mint, the notary and the tables composed: the two portfolios pooled into one table, played to
its close by both, replayed by the audit; a join whose portfolio the pool cannot deal, or a
join without one, is refused; prints not the joiner's are refused at the notary's word."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from game.window.registrars import HOUSE_TITLES
from game.window.tables import convene_portfolio
from game.window.witnessed import holdings, referee
from ledger.audit.tables import TablesChecker
from ledger.certificates import PrintCertificate
from ledger.tables import TableJoin
from services.kernel.settings import LeagueSettings
from tests.harness.portfolios import EIGHT, Holder, holder_at
from tests.harness.tables import Answer, duel_played_out

#: The second key's eight: three of the opener's titles and the other five of the thirteen,
#: so the pool holds exactly thirteen distinct titles (IV.3, M-10).
OTHER_EIGHT = HOUSE_TITLES[5:13]


async def join_with(joiner: Holder, code: str, portfolio: list[PrintCertificate] | None) -> Answer:
    fields: dict[str, Any] = {"code": code}
    if portfolio is not None:
        fields["portfolio"] = [c.to_wire() for c in portfolio]
    request = joiner.signed(TableJoin, **fields)
    answer = await joiner.post("/tables/join", request.to_wire())
    if answer.status == 200:
        joiner.table, joiner.commitment = answer.body["table"], answer.body["commitment"]
    return answer


async def test_a_portfolio_duel_pools_both_players_prints_and_is_played_to_its_close(
    settings: LeagueSettings, league_server: TestServer
) -> None:
    """The deal is the portfolio convening of the duel seed with the opener's eight first and
    the joiner's second; both play it out; the audit replays it from the log. A join without
    a portfolio, one of the opener's prints brought by the joiner, or a pool of twelve titles
    is refused first, recording no join."""
    opener, joiner = holder_at(settings, league_server), holder_at(settings, league_server)
    mine = await opener.stamp(EIGHT)
    theirs = await joiner.stamp(OTHER_EIGHT)
    narrow = await joiner.stamp(EIGHT)  # the opener's very titles: a pool of eight
    opened = await opener.open_with("duel-portfolio", mine)
    assert opened.status == 200, opened
    code = opened.body["code"]
    assert code

    bare = await join_with(joiner, code, None)
    assert (bare.status, bare.problem) == (422, "bad-portfolio")
    pooled_short = await join_with(joiner, code, narrow)
    assert (pooled_short.status, pooled_short.problem) == (422, "bad-portfolio")
    not_held = await join_with(joiner, code, mine)  # the opener's prints, not the joiner's
    assert (not_held.status, not_held.problem) == (409, "not-holder")
    shown = await opener.get(f"/tables/table/{opener.table}")
    assert shown.body["waiting"] == "join"

    joined = await join_with(joiner, code, theirs)
    assert joined.status == 200, joined
    assert (await opener.seed()).status == 200
    dealt = await joiner.seed()
    assert dealt.status == 200, dealt
    view = dealt.body
    assert view["deal"]["table"] == "portfolio"
    players = {p.key.public.to_text(): p for p in (opener, joiner)}
    closed = await duel_played_out(players, view)

    offline = convene_portfolio(holdings(mine), holdings(theirs), closed["closing"]["seed"])
    assert [list(h) for h in offline.hands] == closed["deal"]["hands"]
    assert list(offline.market) == closed["deal"]["market"]
    async with LeagueClient(opener.url) as league:
        feed = (await league.events(-1, 1000, service="tables")).events
    checker = TablesChecker(opener.manifest, referee)
    checker.add(feed)
    assert checker.report().replayed == 1
