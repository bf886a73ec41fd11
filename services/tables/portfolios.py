"""A portfolio table opens only with eight prints its player holds (Book IV.3, docs/rulings.md
L-38): the tables service asks the notary, the league's record of who holds a print.

Before a ``table-open`` at a Registrar's venue or a portfolio duel, or a portfolio duel's
``table-join`` (:func:`joining`), waits for the writer (its signature and its portfolio checked
as far as the request tells, ``ledger.portfolios.check_portfolio``, and as one the engine can
deal, :func:`dealable`), the service reads each print's record from the notary over HTTP, the
eight at once
(``GET /provenance/{serial}``, as a wallet reads it before it signs, L-23): the certificate
brought must be the print's current issue (an older one is history: ``stale-issue``), and the
notary's holder must be the player (``not-holder``). A serial the notary knows no stamp of is
``not-stamped``; a notary that does not answer refuses the open for now (``retry-later``),
nothing recorded. The same open request again answers the table it opened, unasked: ownership
was checked at the open, and only then (L-38).

The reads are bounded: eight per open, after the source's table bucket is spent, on one
connection pool with a timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import aiohttp

from apiclient.league import LeagueClient, LeagueProblem, LeagueUnreachable
from game.window.errors import DealError
from game.window.witnessed import WitnessedTable
from ledger.api.notary import IssueRecord
from ledger.certificates import PrintCertificate
from ledger.errors import (
    BadPortfolio,
    LedgerError,
    NotHolder,
    NotStamped,
    RetryLater,
    StaleIssueError,
)
from ledger.events import body_as
from ledger.portfolios import check_portfolio
from ledger.print_runs import MISPRINT_SERIAL
from ledger.tables import TableJoin, TableOpen, TableOpened, is_duel, table_stream
from services.tables.playing import Tables, verify
from services.tables.projection import read_rows

#: How long the notary may take to answer one print's record (seconds).
NOTARY_TIMEOUT = 10.0
#: What a refused open asks the player to wait when the notary did not answer (seconds).
NOTARY_RETRY = 5


def dealable(request: TableOpen) -> None:
    """Refuse a portfolio the table could never deal (:class:`BadPortfolio`): a title the
    Registrar brings too is pooled once (M-10), and a pool of fewer than thirteen distinct
    titles cannot deal five, five and three. The engine's own convening says so (the pool's
    size does not depend on the seed)."""
    portfolio = request.portfolio or ()
    if not portfolio or is_duel(request.venue):  # a duel's pool is known at its join
        return
    try:
        WitnessedTable.convene(request.venue, 0, portfolio)
    except DealError as exc:
        raise BadPortfolio(
            f"a table at {request.venue} cannot be dealt from this portfolio: {exc.diagnostics()}"
        ) from None


async def joining(tables: Tables, holdings: Holdings, request: TableJoin) -> None:
    """A join bringing its portfolio to a portfolio duel: checked as the open's is (its
    signature, the request alone, the two portfolios dealable together, the prints held by
    the joiner as the notary records it) before it waits for the writer, which checks the
    request alone again under the lock. A code no duel waits for is left to the writer to
    refuse; the joiner's same join again is answered unasked."""
    if request.portfolio is None:
        return
    verify(request)
    found = await tables.store.fetchrow(
        "SELECT table_id FROM tables.duel_codes WHERE code = $1", request.code
    )
    row = (await read_rows(tables.store, [found[0]])).get(found[0]) if found else None
    if row is None or row.status != "opened":
        return
    check_portfolio(tables.manifest, row.venue, request.portfolio)
    opened = body_as((await tables.store.read_stream(table_stream(row.table_id)))[0], TableOpened)
    try:
        WitnessedTable.convene(row.venue, 0, opened.request.portfolio or (), request.portfolio)
    except DealError as exc:
        raise BadPortfolio(
            f"duel {row.table_id} cannot be dealt from the two portfolios: {exc.diagnostics()}"
        ) from None
    await holdings.check(request)


class Holdings:
    """The notary's word on who holds the prints of a portfolio, asked over HTTP."""

    def __init__(self, notary_url: str | None) -> None:
        self.notary_url = notary_url
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def check(self, request: TableOpen | TableJoin) -> None:
        """Refuse ``request`` unless its player holds each print of its portfolio now."""
        portfolio = request.portfolio or ()
        if not portfolio:
            return
        if self.notary_url is None:
            raise RetryLater("the notary's address is not known: no portfolio can be checked", 60)
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=NOTARY_TIMEOUT)
            )
        notary = LeagueClient(self.notary_url, session=self._session, timeout=NOTARY_TIMEOUT)
        outcomes = await asyncio.gather(
            *(held(notary, c, request.player) for c in portfolio), return_exceptions=True
        )
        refusals = [o for o in outcomes if isinstance(o, BaseException)]
        if refusals:  # the first print's refusal, in the portfolio's order
            raise refusals[0]


async def held(notary: LeagueClient, certificate: PrintCertificate, player: str) -> None:
    """Refuse unless the notary records ``certificate`` as its print's current issue, held by
    ``player``."""
    serial = certificate.serial
    if serial == MISPRINT_SERIAL:
        # The Misprint never moves through the notary (L-08, L-24): the one certificate the
        # mint signed names its holder (its mint signature is checked with the portfolio's).
        holder = certificate.issued_to
    else:
        try:
            record = await notary.provenance(serial)
        except LeagueProblem as exc:
            if exc.slug == "unknown-serial":
                raise NotStamped(
                    f"the notary knows no stamp of {serial}: {exc.problem.detail}"
                ) from None
            raise RetryLater(
                f"the notary could not say who holds {serial} ({exc.slug}); open the table again",
                NOTARY_RETRY,
            ) from None
        except (LeagueUnreachable, LedgerError) as exc:
            raise RetryLater(
                f"the notary did not answer who holds {serial} ({exc.diagnostics()}); open the "
                f"table again",
                NOTARY_RETRY,
            ) from None
        current = current_issue(record.stamp.certificate if record.stamp else None, record.issues)
        if current is None or current.hash() != certificate.hash():
            now = f"issue {current.issue}" if current is not None else "no issue"
            raise StaleIssueError(
                f"{serial} is brought as its issue {certificate.issue}; the notary records "
                f"{now} as its current one: bring the print's current certificate"
            )
        holder = record.holder or ""
    if holder != player:
        shown = f"key {holder}" if holder else "nobody the notary knows"
        raise NotHolder(
            f"{serial} ({certificate.title}) is held by {shown} as the notary records it, not "
            f"by the player: a portfolio is eight certificates the player owns (Book IV.3, L-38)"
        )


def current_issue(
    stamp: PrintCertificate | None, issues: Sequence[IssueRecord]
) -> PrintCertificate | None:
    """The print's current certificate: its latest issue after the stamp (L-20), else the
    stamp's."""
    for issued in reversed(issues):
        if isinstance(issued.certificate, PrintCertificate):
            return issued.certificate
    return stamp
