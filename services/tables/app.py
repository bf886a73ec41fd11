"""The tables service's aiohttp app: routes and thin handlers over ``playing``."""

from __future__ import annotations

from aiohttp import web

from game.window.rewards import check_work
from ledger.api.logs import FeedEvent
from ledger.api.tables import TableEvents, TableView
from ledger.errors import (
    BadPortfolio,
    BadSignatureError,
    IllegalMove,
    InsufficientWork,
    KeyFormatError,
    MoveReplayed,
    NotHolder,
    NotStamped,
    OutOfTurn,
    RateLimited,
    RetryLater,
    StaleIssueError,
    StaleRequest,
    TimedOut,
    UnknownKindError,
    UnknownTable,
    VerificationError,
    WrongLeague,
)
from ledger.limits import MAX_REQUEST_BODY_BYTES
from ledger.portfolios import check_portfolio
from ledger.tables import TableJoin, TableMove, TableOpen, TableSeed, is_duel, table_stream
from services.eventlog import EventStore
from services.http.endpoints import Endpoint
from services.kernel.compose import compose
from services.kernel.host import Running, ServiceSpec, Shell
from services.kernel.ratelimit import SourceBuckets, source_buckets, source_of
from services.kernel.settings import LeagueSettings
from services.tables.clock import Sweeper
from services.tables.misprint import Misprints
from services.tables.playing import Tables, Writer, arrival_now, verify
from services.tables.portfolios import Holdings, dealable, joining
from services.tables.projection import read_rows
from services.tables.reading import READS_BURST, READS_PER_MINUTE
from services.tables.rewards import Rewards, with_reward

TABLES = web.AppKey("tables", Tables)
TABLES_LOG = web.AppKey("tables_log", EventStore)
WRITER = web.AppKey("tables_writer", Writer)
SOURCES = web.AppKey("table_sources", SourceBuckets)
SWEEPER = web.AppKey("tables_sweeper", Sweeper)
READS = web.AppKey("table_reads", SourceBuckets)
MISPRINTS = web.AppKey("misprints", Misprints)
REWARDS = web.AppKey("rewards", Rewards)
HOLDINGS = web.AppKey("holdings", Holdings)

#: What every signed table request may be refused for.
SIGNED = (
    BadSignatureError,
    KeyFormatError,
    UnknownKindError,
    VerificationError,
    WrongLeague,
    StaleRequest,
)


async def open_table(request: web.Request, body: TableOpen) -> TableView:
    # The source's bucket first: every table costs the service its opponent's thinking.
    source = source_of(request.remote)
    await request.app[SOURCES].spend(source, 1)
    tables = request.app[TABLES]
    if is_duel(body.venue) and body.work is not None:
        raise InsufficientWork(f"a duel pays nothing (L-33): a table at {body.venue} takes no work")
    check_work(tables.manifest.policies, body)  # one hash (L-28)
    check_portfolio(tables.manifest, body.venue, body.portfolio)
    if body.portfolio is not None:
        # A Registrar's table: its player holds each print now, as the notary records it
        # (L-38), asked once the request is known to be the player's and not yet opened.
        verify(body)
        dealable(body)
        if body.table_id() not in await read_rows(tables.store, [body.table_id()]):
            await request.app[HOLDINGS].check(body)
    return await request.app[WRITER].submit(body, source)


async def join_table(request: web.Request, body: TableJoin) -> TableView:
    # A join costs the source as an open does: a code is not found by trying codes.
    source = source_of(request.remote)
    await request.app[SOURCES].spend(source, 1)
    # A portfolio duel's joiner holds each print it brings, as the notary records it (L-38).
    await joining(request.app[TABLES], request.app[HOLDINGS], body)
    return await request.app[WRITER].submit(body, source)


async def seed_table(request: web.Request, body: TableSeed) -> TableView:
    return await request.app[WRITER].submit(body)


async def move(request: web.Request, body: TableMove) -> TableView:
    arrived = arrival_now()  # first: the clock and a drill are judged on it
    source = source_of(request.remote)
    view = await request.app[WRITER].submit(body, source, arrived)
    return await with_misprint(request, await with_reward(request.app[REWARDS], view))


async def read_table(request: web.Request) -> TableView:
    source = source_of(request.remote)
    await request.app[READS].spend(source, 1)
    view = await request.app[WRITER].read(request.match_info["table"])
    return await with_misprint(request, await with_reward(request.app[REWARDS], view))


async def table_events(request: web.Request) -> TableEvents:
    await request.app[READS].spend(source_of(request.remote), 1)
    tables = request.app[TABLES]
    table = (await tables.row(request.match_info["table"])).table_id
    events = await tables.store.read_stream(table_stream(table))
    return TableEvents(table=table, events=[FeedEvent.of(event) for event in events])


async def with_misprint(request: web.Request, view: TableView) -> TableView:
    """``view`` with the Misprint's award when it closed with a settling Balance at Chair VI or
    above (IV.6, L-41; asked of the mint after the close is recorded)."""
    outcome = await request.app[MISPRINTS].outcome(view)
    if outcome is None or view.closing is None:
        return view
    closing = view.closing.model_copy(update={"misprint": outcome})
    return view.model_copy(update={"closing": closing})


ENDPOINTS = (
    Endpoint(
        "POST",
        "/tables/open",
        "Open a witnessed table at a venue: the service commits to its half of the deal",
        open_table,
        TableView,
        body=TableOpen,
        problems=(
            *SIGNED,
            RateLimited,
            InsufficientWork,
            BadPortfolio,
            NotStamped,
            StaleIssueError,
            NotHolder,
            RetryLater,
        ),
        max_body=MAX_REQUEST_BODY_BYTES,
        description=(
            "Takes a table-open request signed by the player's ledger key (docs/formats.md, "
            "\"Witnessed tables\"). The table's id is 16 bytes of the request's hash; the "
            "table-opened event publishes the service's commitment to its secret before the "
            "player brings its seed. The same request again answers the same table. At a "
            "duel's venue (duel-base, duel-market) the answer carries the join code for the "
            "second key, in this answer only (the same request again answers the table "
            "without it: the request is public in the feed). Tables opened (and duels "
            "joined) per source (an IPv4 /24 or IPv6 /56) are limited as stamps are, at the "
            "manifest's source_prints_per_minute in bursts of source_prints_burst (429 "
            "rate-limited with Retry-After). At a Registrar's venue (registrar-lettered, "
            "-begotten, -counted, -sealed) the request brings the player's portfolio (Book "
            "IV.3): eight mint-signed print certificates of distinct titles of this league "
            "(422 bad-portfolio, not-stamped, wrong-league otherwise), each the print's current "
            "issue (409 stale-issue) held by the player as the notary records it at the open "
            "(409 not-holder; 503 retry-later when the notary does not answer); a portfolio at "
            "any other venue is 422 bad-portfolio. The table is dealt from it, and the prints "
            "stay their holder's (docs/rulings.md L-38). A table pays its reward "
            "(docs/economy.md) only when its request carries work: a nonce bound to it worth "
            "the manifest's table_work_per_mark per mark its venue pays at most; less is 422 "
            "insufficient-work, none is a table that pays nothing."
        ),
    ),
    Endpoint(
        "POST",
        "/tables/join",
        "Take a duel's second seat with its join code",
        join_table,
        TableView,
        body=TableJoin,
        problems=(
            *SIGNED,
            RateLimited,
            UnknownTable,
            OutOfTurn,
            TimedOut,
            BadPortfolio,
            NotStamped,
            StaleIssueError,
            NotHolder,
            RetryLater,
        ),
        max_body=MAX_REQUEST_BODY_BYTES,
        description=(
            "Takes a table-join request signed by the second key, naming the join code the "
            'opener was given (docs/formats.md, "Duels"). The answer shows the duel, its '
            "commitment and that it waits for both seeds. No duel waiting for the code is 404 "
            "unknown-table; the opener's own key 409 out-of-turn; the same join again answers "
            "the same duel. Joins cost the source's bucket as opens do. At a portfolio duel "
            "(duel-portfolio) the join brings the joiner's portfolio, checked as the open's "
            "is (422 bad-portfolio, not-stamped, wrong-league; 409 stale-issue, not-holder; 503 "
            "retry-later), and the two portfolios must pool thirteen distinct titles (M-10)."
        ),
    ),
    Endpoint(
        "POST",
        "/tables/seed",
        "Bring the player's half of the deal: the table is dealt",
        seed_table,
        TableView,
        body=TableSeed,
        problems=(*SIGNED, UnknownTable, OutOfTurn, TimedOut),
        max_body=MAX_REQUEST_BODY_BYTES,
        description=(
            "Takes a table-seed request naming the commitment the player saw and 32 bytes of "
            "its own. The deal is convened from the seed both halves make (neither side chose "
            "it) and recorded in the table-dealt event; the answer shows the deal and the "
            "player's legal actions (the player sits first). At a duel each player sends one "
            "(the first is recorded in table-seeded; the deal comes from the secret and both)."
        ),
    ),
    Endpoint(
        "POST",
        "/tables/move",
        "Play the player's move; the answer carries the opponent's replies",
        move,
        TableView,
        body=TableMove,
        problems=(
            *SIGNED,
            UnknownTable,
            OutOfTurn,
            MoveReplayed,
            TimedOut,
            IllegalMove,
            RateLimited,
        ),
        max_body=MAX_REQUEST_BODY_BYTES,
        description=(
            "Takes a table-move request at the table's next ply, signed by the key of the seat "
            "that decides (at a duel, as the answer's turn says). The move is applied with the "
            "engine; the opponent's replies (the same seeded search as an offline table; none "
            "at a duel) follow until a human decides again; all of it is one move-played "
            "event, with the request's arrival time (the move clock and a drill are judged on "
            "it), and the "
            "close's table-closed event reveals the secret with the verdict and the columns "
            "(and a settling Balance at Chair VI or above asks the mint for the Misprint, "
            "which it awards once, to the log's first: closing.misprint). "
            "A ply already played is 409 move-replayed, any other ply, the other seat's move or "
            "a closed table 409 out-of-turn, a move after the move clock ran out 409 "
            "timed-out, a move the rules forbid 422 illegal-move. The opponent's thinking "
            "takes one of the service's few thinking slots, shared round-robin between "
            "sources when all are busy; a source with too many moves already waiting for one "
            "is 429 rate-limited."
        ),
    ),
    Endpoint(
        "GET",
        "/tables/table/{table}",
        "One witnessed table: its deal, every action, what it waits for",
        read_table,
        TableView,
        problems=(UnknownTable, RateLimited),
        description=(
            "The table as its log holds it, what it waits for, whose turn and when its move "
            "clock runs out; at a pending drill, the pattern (the drill's time runs from the "
            "event that started it); never a duel's join code. A closed table is read from "
            "its events; a table in play that this process does not hold is replayed once, in "
            "one of the service's thinking slots. Reads per source are limited to "
            f"{READS_PER_MINUTE} a minute in bursts of {READS_BURST} (429 rate-limited with "
            "Retry-After)."
        ),
    ),
    Endpoint(
        "GET",
        "/tables/table/{table}/events",
        "One witnessed table's events, signed: to check the reveal and replay the table",
        table_events,
        TableEvents,
        problems=(UnknownTable, RateLimited),
        description=(
            "The table's stream of the tables log (table-opened, table-dealt, each "
            "move-played, table-closed), each event as the feed serves it: its leaf hash and "
            "the tables key's signature. A table's stream is bounded by its actions "
            "(MAX_TABLE_ACTIONS). With them the player checks the revealed secret against the "
            "commitment and replays the whole table, drills judged on the log's own times "
            "(game.window.witnessed.replay_table), as cz play --league does at the close. "
            "Counted against the source's reads of tables, as GET /tables/table/{table} is."
        ),
    ),
)


async def open_tables(shell: Shell) -> Running:
    """The tables service and its writer."""
    tables = Tables(shell.manifest, shell.key, shell.store)
    shell.app[TABLES] = tables
    shell.app[WRITER] = writer = Writer(tables)
    shell.app[SWEEPER] = sweeper = Sweeper(tables, writer)
    shell.app[SOURCES] = shell.buckets("tables", what="tables")
    shell.app[READS] = source_buckets(
        shell.store,
        "table-reads",
        what="table reads",
        shared=shell.settings.workers > 1,
        per_minute=READS_PER_MINUTE,
        burst=READS_BURST,
    )
    shell.app[HOLDINGS] = holdings = Holdings(shell.settings.service_url("notary"))
    shell.app[REWARDS] = rewards = Rewards(
        shell.manifest, shell.key, shell.store, shell.settings.service_url("treasury")
    )
    shell.app[MISPRINTS] = Misprints(
        shell.manifest, shell.key, shell.store, shell.settings.service_url("mint"), rewards
    )
    return Running(leader=(rewards.run, sweeper.run), close=(writer.close, holdings.close))


SPEC = ServiceSpec(
    name="tables",
    title="THE WINDOW league: the tables",
    description=(
        "Witnessed play: a player's table against a venue's AI, dealt by commit-reveal, every "
        "move a signed request applied with the engine and answered with the opponent's reply. "
        "Every request, reply and close is an event in the tables' signed Merkle log."
    ),
    endpoints=ENDPOINTS,
    log_key=TABLES_LOG,
    open=open_tables,
    max_body=MAX_REQUEST_BODY_BYTES,
)
SERVICE = SPEC.service()


def create_app(settings: LeagueSettings) -> web.Application:
    """The tables service alone, over ``settings.database_url`` (migrated beforehand)."""
    return compose(settings, [SERVICE])
