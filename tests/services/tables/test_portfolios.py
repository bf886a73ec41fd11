"""A Registrar's portfolio table at the league (Book IV.3, IV.5; docs/rulings.md L-38, L-39),
over real HTTP with the mint, the notary and the tables composed on one port: the player brings
eight stamped prints it holds, the table is dealt from them exactly as the offline convening of
the deal seed with that portfolio, played to its close, and audited; every portfolio the table
cannot take is refused with its problem type and nothing recorded; a print traded away before
the open is refused, one traded away while its table is open leaves the table to play on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from game.window.campaign import convene, registrar
from game.window.registrars import HOUSE_TITLES, set_titles
from game.window.tables import Holding
from game.window.witnessed import WitnessMismatch, replay_table
from ledger.audit import AuditFailure
from ledger.catalog import BY_NAME, CardSet
from ledger.certificates import PrintCertificate
from ledger.encoding import decode_b64url
from ledger.endorsements import Chain
from ledger.events import body_as
from ledger.keys import SigningKey
from ledger.tables import MovePlayed, TableDealt, TableOpened, table_stream
from services.kernel.founding import load_manifest
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.tables.app import SERVICE as TABLES_SERVICE
from services.tables.app import TABLES, TABLES_LOG
from services.treasury.app import SERVICE as TREASURY
from tests.harness.founding import TEST_POLICIES
from tests.harness.portfolios import EIGHT, Holder, holder_at
from tests.harness.ports import free_port
from tests.harness.serving import closing, composed
from tests.harness.tables import played_out, played_out_from, serve
from tests.harness.tables_audit import audited, edited, tables_feed
from tests.harness.treasury import checked_faucet
from tests.harness.upgrading import RICH, paid, to_mint, upgrade


async def test_a_registrar_table_of_eight_held_prints_is_played_to_its_close_and_audited(
    settings: LeagueSettings, league_server: TestServer
) -> None:
    """IV.3, IV.5: the open records the eight prints; the deal is the offline convening of
    the revealed seed at the Registrar's with that portfolio; the log replays and passes the
    audit; an edited portfolio fails it, and a portfolio swapped under the same table deals
    another table than the one recorded (L-39)."""
    player = holder_at(settings, league_server)
    # Spares of another Archive set: no house title the Registrar could bring as its eighth
    # in a swapped-out title's place, pooling the same sixteen (M-12).
    stamped = await player.stamp([*EIGHT, *set_titles(CardSet.LETTERED)[:2]])
    portfolio, spares = stamped[:8], stamped[8:]
    spare = spares[0]
    opened = await player.open_with("registrar-counted", portfolio)
    assert opened.status == 200, opened
    dealt = await player.seed()
    assert dealt.status == 200, dealt
    assert dealt.body["deal"]["table"] == "portfolio"
    first_move = await player.move(dealt.body["ply"], dealt.body["legal"][0])
    assert first_move.status == 200, first_move
    # As after a restart, or at another worker: the table replayed from its log, portfolio
    # and all, before its next move.
    league_server.app[TABLES].live.clear()
    view = await played_out_from(player, first_move.body)

    seed = view["closing"]["seed"]
    offline = convene(registrar(CardSet.COUNTED), seed, [Holding(c.title) for c in portfolio])
    deal = view["deal"]
    assert [list(h) for h in offline.hands] == deal["hands"]
    assert list(offline.market) == deal["market"]
    dealt_titles = {t for hand in deal["hands"] for t in hand} | set(deal["market"])
    counted = {c.name for c in BY_NAME.values() if c.card_set is CardSet.COUNTED}
    assert dealt_titles & set(EIGHT)
    assert dealt_titles & counted

    events = await league_server.app[TABLES_LOG].read_stream(table_stream(player.table))
    first = body_as(events[0], TableOpened)
    assert first.request.portfolio == tuple(portfolio)
    secret = decode_b64url(view["closing"]["secret"], length=32)
    moves = [(body_as(e, MovePlayed), e.recorded_at) for e in events if e.type == "move-played"]
    dealt_event = body_as(events[1], TableDealt)
    assert replay_table(first, dealt_event, events[1].recorded_at, moves, secret).closed

    def dealt_from(brought: list[PrintCertificate]) -> tuple[Any, ...]:
        table = convene(registrar(CardSet.COUNTED), seed, [Holding(c.title) for c in brought])
        return table.hands, table.market

    # A print or two swapped for others the player holds: a swap that changes what is dealt
    # (most do; one whose titles all fall aside deals the same table).
    swaps = [[*portfolio[:i], s, *portfolio[i + 1 :]] for i in range(8) for s in spares]
    swaps += [[*portfolio[:i], *spares, *portfolio[i + 2 :]] for i in range(7)]
    changed = next(b for b in swaps if dealt_from(b) != dealt_from(portfolio))
    swapped = TableOpened(
        table=first.table,
        request=player.open_request("registrar-counted", changed),
        commitment=first.commitment,
    )
    with pytest.raises(WitnessMismatch, match="recorded deal is not the deal"):
        replay_table(swapped, dealt_event, events[1].recorded_at, moves, secret)

    # L-39: the auditor re-checks the certificates and deals from them.
    text, feed = await tables_feed(player.url)
    report = audited(player.manifest, text, feed)
    assert (report.tables, report.replayed) == (1, 1)
    key = read_key(settings.keys_dir, "tables", None)
    at, event = next((i, e) for i, e in enumerate(feed) if e.type == "table-opened")
    wire = event.body["request"]["portfolio"]
    other = {**event.body["request"], "portfolio": [spare.to_wire(), *wire[1:]]}
    unstamped = PrintCertificate.sign(player.key, **portfolio[0].body())
    forged = player.open_request("registrar-counted", [unstamped, *portfolio[1:]])
    cases = [
        ({**event.body, "request": other}, None, True, "signature does not verify"),
        ({**event.body, "request": other}, key, False, "signature"),
        (
            {**event.body, "table": forged.table_id(), "request": forged.to_wire()},
            key,
            False,
            "no signature of league",
        ),
    ]
    for body, signer, with_checkpoint, reason in cases:
        with pytest.raises(AuditFailure, match=reason):
            audited(
                player.manifest,
                text if with_checkpoint else None,
                [*feed[:at], edited(event, body, signer), *feed[at + 1 :]],
            )


async def test_a_portfolio_the_table_cannot_take_is_refused_and_nothing_recorded(
    settings: LeagueSettings,
    league_server: TestServer,
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """Seven prints, nine, a title twice, a portfolio at a clerk's or none at a Registrar's
    (bad-portfolio); a print not signed by the mint (not-stamped); another league's print
    (wrong-league); another key's print (not-holder): each refused, no table opened (IV.3)."""
    player = holder_at(settings, league_server)
    stamped = await player.stamp([*EIGHT, HOUSE_TITLES[8], EIGHT[0]])
    portfolio, ninth, twin = stamped[:8], stamped[8], stamped[9]
    other = holder_at(settings, league_server)
    (theirs,) = await other.stamp([EIGHT[1]])
    elsewhere = make_settings()
    foreign_mint = read_key(elsewhere.keys_dir, "mint", None)
    foreign = PrintCertificate.sign(
        foreign_mint, **{**portfolio[2].body(), "manifest": load_manifest(elsewhere).hash_text()}
    )
    unstamped = PrintCertificate.sign(player.key, **portfolio[3].body())
    # IV.3: "eight distinct certificates they own"; L-39: stamped prints only.
    cases: list[tuple[str, list[PrintCertificate] | None, int, str]] = [
        ("registrar-lettered", portfolio[:7], 422, "bad-portfolio"),  # IV.3: eight
        ("registrar-lettered", [*portfolio, ninth], 422, "bad-portfolio"),
        ("registrar-lettered", [*portfolio[:7], twin], 422, "bad-portfolio"),
        ("registrar-lettered", None, 422, "bad-portfolio"),
        ("clerk-1", portfolio, 422, "bad-portfolio"),
        ("registrar-lettered", [*portfolio[:3], unstamped, *portfolio[4:]], 422, "not-stamped"),
        ("registrar-lettered", [*portfolio[:2], foreign, *portfolio[3:]], 422, "wrong-league"),
        ("registrar-lettered", [portfolio[0], theirs, *portfolio[2:]], 409, "not-holder"),
    ]
    store = league_server.app[TABLES_LOG]
    for venue, brought, status, problem in cases:
        request = player.open_request(venue, brought)
        answer = await player.send_open(request)
        assert (answer.status, answer.problem) == (status, problem), (venue, answer)
        assert answer.body["detail"]
        assert await store.stream_version(table_stream(request.table_id())) == 0
    assert (await player.open_with("registrar-lettered", portfolio)).status == 200


async def test_a_print_endorsed_away_before_the_open_is_refused(
    settings: LeagueSettings, league_server: TestServer
) -> None:
    """L-38: the notary's record at the open is the authority: a print its player endorsed to
    another key (notarized) is no longer theirs to bring, and its new holder's to bring."""
    player = holder_at(settings, league_server)
    portfolio = await player.stamp()
    receiver = holder_at(settings, league_server)
    await player.give(portfolio[5], receiver.key)  # L-38: the notary's record at the open
    refused = await player.open_with("registrar-sealed", portfolio)
    assert (refused.status, refused.problem) == (409, "not-holder")
    assert portfolio[5].serial in refused.body["detail"]

    others = await receiver.stamp([t for t in EIGHT if t != EIGHT[5]])
    theirs = [*others[:5], portfolio[5], *others[5:]]
    assert (await receiver.open_with("registrar-sealed", theirs)).status == 200


async def test_a_print_traded_away_while_its_table_is_open_leaves_the_table_to_play_on(
    settings: LeagueSettings, league_server: TestServer
) -> None:
    """L-38: the table holds inscription, never ownership. A print endorsed away after the
    open (the notary records the hop: it is a witness, never a warden, L-10) changes nothing
    at the table, which plays to its close from the portfolio it was opened with; the same
    open request again answers the same table; the print's new holder may bring it to a
    table of its own while the first is still open."""
    player = holder_at(settings, league_server)
    portfolio = await player.stamp()
    request = player.open_request("registrar-begotten", portfolio)
    assert (await player.send_open(request)).status == 200
    table = player.table
    receiver = holder_at(settings, league_server)
    await player.give(portfolio[0], receiver.key)  # L-38: traded while the table is open

    again = await player.send_open(request)
    assert (again.status, again.body["table"]) == (200, table)
    others = await receiver.stamp(EIGHT[1:])
    theirs = await receiver.open_with("registrar-begotten", [portfolio[0], *others])
    assert theirs.status == 200

    view = await played_out(player)
    assert view["table"] == table
    assert view["closing"]["verdict"] in ("win", "loss", "balance")
    assert (await player.open_with("registrar-begotten", portfolio)).problem == "not-holder"


def mint_signed(settings: LeagueSettings, player: Holder) -> list[PrintCertificate]:
    """Eight certificates signed to ``player`` by the league's mint key, as the mint signs
    them (no mint served: the tables service alone)."""
    mint = read_key(settings.keys_dir, "mint", None)
    return [
        PrintCertificate.sign(
            mint,
            serial=f"CZ-{title.upper()}-0001",
            title=title,
            set=BY_NAME[title].card_set.value,
            finish="standard",
            issued_to=player.key.public.to_text(),
            issue=1,
            event=n,
            manifest=player.manifest.hash_text(),
        )
        for n, title in enumerate(EIGHT)
    ]


async def test_a_notary_that_does_not_answer_refuses_the_open_for_now(
    settings: LeagueSettings, server: TestServer
) -> None:
    """The tables service alone (no notary at its address): eight prints signed by the
    league's mint cannot be checked, so the open is 503 retry-later and records nothing."""
    player = Holder(SigningKey.generate(), load_manifest(settings), str(server.make_url("")))
    request = player.open_request("registrar-lettered", mint_signed(settings, player))
    answer = await player.send_open(request)
    assert (answer.status, answer.problem) == (503, "retry-later")
    store = server.app[TABLES_LOG]
    assert await store.stream_version(table_stream(request.table_id())) == 0


async def test_a_source_out_of_tables_is_refused_before_the_notary_is_asked(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """A script with a thousand keys opening Registrar tables from one source makes the
    notary read eight records per table only while the source's table bucket lasts: past
    its burst, the open is 429 rate-limited before any read (with no notary at the tables
    service's address, a read would make it 503)."""
    policies = TEST_POLICIES.model_copy(
        update={"source_prints_per_minute": 1, "source_prints_burst": 1}
    )
    settings = make_settings(policies=policies).model_copy(update={"port": free_port()})
    async with closing(await serve(settings)) as server:
        url = str(server.make_url(""))
        first, second = (
            Holder(SigningKey.generate(), load_manifest(settings), url) for _ in range(2)
        )
        assert (await first.open_with("clerk-1", None)).status == 200
        answer = await second.open_with("registrar-lettered", mint_signed(settings, second))
        assert (answer.status, answer.problem) == (429, "rate-limited")


async def test_a_print_issued_again_is_brought_by_its_current_certificate(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """L-20, L-38: a print returned for an upgrade and handed back (its run out) is issued
    again; its first certificate is history, refused 409 stale-issue; its current one, still
    the player's, opens the table."""
    settings = make_settings(policies=RICH).model_copy(update={"port": free_port()})
    async with (
        composed(settings, [MINT, TREASURY, NOTARY, TABLES_SERVICE]) as server,
        checked_faucet(settings, server) as faucet,
    ):
        player = holder_at(settings, server)
        portfolio = await player.stamp()
        async with LeagueClient(player.url) as league:
            gilts = [(EIGHT[0], "gilt")] * 2  # the gilt run (two in these runs) taken
            await league.stamp(stamp_request(SigningKey.generate(), faucet.manifest, gilts))
            standard = Chain(certificate=portfolio[0], endorsements=())
            answer = await league.buy(
                upgrade(
                    faucet,
                    player.key,
                    EIGHT[0],
                    "gilt",
                    to_mint(faucet, standard, player.key),
                    await paid(faucet, player.key, 100),
                    "up-portfolio-01",
                )
            )
        again = answer.returned
        assert isinstance(again, PrintCertificate)
        assert (again.serial, again.issue) == (portfolio[0].serial, 2)
        stale = await player.open_with("registrar-sealed", portfolio)
        assert (stale.status, stale.problem) == (409, "stale-issue")
        assert (await player.open_with("registrar-sealed", [again, *portfolio[1:]])).status == 200


async def test_a_portfolio_sharing_four_of_the_registrars_titles_is_refused_at_the_open(
    settings: LeagueSettings, league_server: TestServer
) -> None:
    """M-10, IV.3: the Registrar brings its set's seven; a player bringing four of them pools
    only twelve distinct titles, which cannot deal five, five and three: refused at the open
    (422 bad-portfolio, nothing recorded), not opened as a table that could never be dealt.
    Three shared still deal."""
    player = holder_at(settings, league_server)
    taught = set_titles(CardSet.LETTERED)
    prints = await player.stamp([*taught[:4], *HOUSE_TITLES[:5]])
    four, three = prints[:8], [*prints[1:4], *prints[4:9]]
    request = player.open_request("registrar-lettered", four)
    refused = await player.send_open(request)
    assert (refused.status, refused.problem) == (422, "bad-portfolio")
    assert "12 distinct titles" in refused.body["detail"]
    store = league_server.app[TABLES_LOG]
    assert await store.stream_version(table_stream(request.table_id())) == 0
    assert (await player.open_with("registrar-lettered", three)).status == 200
    dealt = await player.seed()
    assert (dealt.status, dealt.body["deal"]["table"]) == (200, "portfolio")
