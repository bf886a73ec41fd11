"""A portfolio duel (Book IV.3: "each player brings eight distinct certificates they own"), over
real HTTP with the mint, the notary and the tables composed on one port: the opener's eight
prints in its open, the joiner's in its join, each checked as a Registrar's table checks them
(docs/rulings.md L-38, L-39); the two pooled, one copy a title (M-10), dealt, played by the two
keys to the close, and audited; a join the duel cannot take is refused, nothing recorded."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestServer

from game.window.registrars import HOUSE_TITLES, set_titles
from game.window.tables import Holding, convene_portfolio
from ledger.audit import AuditFailure
from ledger.catalog import CardSet
from ledger.tables import table_stream
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from services.tables.app import TABLES_LOG
from tests.harness.portfolios import EIGHT, holder_at
from tests.harness.tables import duel_played_out
from tests.harness.tables_audit import audited, edited, tables_feed

#: The joiner's eight: the Assessor's other five and three Lettered titles (none the opener's).
OTHER_EIGHT = (*HOUSE_TITLES[8:], *set_titles(CardSet.LETTERED)[:3])


async def test_a_portfolio_duel_is_dealt_from_both_portfolios_played_and_audited(
    settings: LeagueSettings, league_server: TestServer
) -> None:
    """IV.3: sixteen titles pooled from the two portfolios, dealt as the offline convening of
    the duel's seed with them (the opener's first); the two keys play it to its close; the
    log passes the audit, and a join whose portfolio is edited fails it (L-39)."""
    opener, joiner = holder_at(settings, league_server), holder_at(settings, league_server)
    mine, theirs = await opener.stamp(), await joiner.stamp(OTHER_EIGHT)
    opened = await opener.open_with("duel-portfolio", mine)
    assert (opened.status, opened.body["waiting"]) == (200, "join"), opened
    assert (await joiner.join_with(opener.code, theirs)).status == 200
    assert (await opener.seed()).status == 200
    dealt = await joiner.seed()
    assert dealt.status == 200, dealt
    deal = dealt.body["deal"]
    assert deal["table"] == "portfolio"
    players = {p.key.public.to_text(): p for p in (opener, joiner)}
    view = await duel_played_out(players, dealt.body)

    offline = convene_portfolio(
        [Holding(c.title) for c in mine],
        [Holding(c.title) for c in theirs],
        view["closing"]["seed"],
    )
    assert [list(h) for h in offline.hands] == deal["hands"]
    assert list(offline.market) == deal["market"]

    text, feed = await tables_feed(opener.url)
    report = audited(opener.manifest, text, feed)
    assert (report.tables, report.replayed) == (1, 1)
    at, event = next((i, e) for i, e in enumerate(feed) if e.type == "table-joined")
    request = event.body["request"]
    other = {**request, "portfolio": [mine[0].to_wire(), *request["portfolio"][1:]]}
    key = read_key(settings.keys_dir, "tables", None)
    for signer, with_checkpoint in ((None, True), (key, False)):
        with pytest.raises(AuditFailure, match="signature"):
            audited(
                opener.manifest,
                text if with_checkpoint else None,
                [
                    *feed[:at],
                    edited(event, {**event.body, "request": other}, signer),
                    *feed[at + 1 :],
                ],
            )


async def test_a_join_the_portfolio_duel_cannot_take_is_refused_and_nothing_recorded(
    settings: LeagueSettings, league_server: TestServer
) -> None:
    """IV.3, M-10, L-38: a join without a portfolio, or with seven prints (bad-portfolio), a
    print the joiner does not hold (not-holder), four of the opener's titles so that the pool
    cannot deal five, five and three (bad-portfolio): each refused, the duel still waiting for
    its second key, which then joins with eight it holds."""
    opener, joiner = holder_at(settings, league_server), holder_at(settings, league_server)
    mine = await opener.stamp()
    theirs = await joiner.stamp(OTHER_EIGHT)
    shared = await joiner.stamp(EIGHT[:4])
    assert (await opener.open_with("duel-portfolio", mine)).status == 200
    cases = [
        (None, 422, "bad-portfolio"),
        (theirs[:7], 422, "bad-portfolio"),
        ([mine[0], *theirs[1:]], 409, "not-holder"),
        ([*shared, *theirs[4:]], 422, "bad-portfolio"),
    ]
    store = league_server.app[TABLES_LOG]
    for brought, status, problem in cases:
        answer = await joiner.join_with(opener.code, brought)
        assert (answer.status, answer.problem) == (status, problem), answer
        assert await store.stream_version(table_stream(opener.table)) == 1
    assert (await joiner.join_with(opener.code, theirs)).status == 200
    assert await store.stream_version(table_stream(opener.table)) == 2
