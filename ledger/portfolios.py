"""A Registrar's portfolio table at the league: the eight stamped prints a player brings (Book
IV.3, IV.5; docs/formats.md, "Witnessed tables"; docs/rulings.md L-38, L-39).

"Beyond the Assessor, tables are convened from portfolios: each player brings eight distinct
certificates they own" (IV.3). At the tables service a player's ``table-open`` at a Registrar's
venue (``registrar-lettered``, ``registrar-begotten``, ``registrar-counted``,
``registrar-sealed``) carries its portfolio: eight mint-signed print certificates of eight
distinct titles, of this league. What can be checked from the request alone is checked here,
by the service before it opens the table and by the auditor when it replays it
(:func:`check_portfolio`); whether the player *holds* each print is the notary's record at the
moment of the open, which only the service asks (L-38, L-39).

Pure: no IO.
"""

from __future__ import annotations

from collections.abc import Sequence

from ledger.catalog import ARCHIVE_SETS
from ledger.certificates import PrintCertificate
from ledger.errors import (
    BadPortfolio,
    BadSignatureError,
    LedgerError,
    NotStamped,
    WrongLeague,
)
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest

#: Certificates in one portfolio (IV.3: "eight distinct certificates").
PORTFOLIO_SIZE = 8
#: Most certificates a ``table-open`` may list: more than :data:`PORTFOLIO_SIZE` parse (so the
#: refusal says how many a portfolio is), this many bound what a request makes the service read.
MAX_PORTFOLIO_ITEMS = 2 * PORTFOLIO_SIZE
#: The four Registrars' venues, one per Archive set (IV.5), in Book III's order.
REGISTRAR_VENUES = tuple(f"registrar-{card_set.value}" for card_set in ARCHIVE_SETS)
#: A portfolio duel: two keys, each bringing eight of its prints (IV.3: "each player brings
#: eight distinct certificates they own"), the opener's in its open, the other's in its join.
PORTFOLIO_DUEL = "duel-portfolio"
#: Where a table is convened from portfolios.
PORTFOLIO_VENUES = (*REGISTRAR_VENUES, PORTFOLIO_DUEL)


def takes_portfolio(venue: str) -> bool:
    """Whether a table at ``venue`` is convened from its players' portfolios (IV.3, IV.5)."""
    return venue in PORTFOLIO_VENUES


def check_portfolio(
    manifest: LeagueManifest, venue: str, portfolio: Sequence[PrintCertificate] | None
) -> tuple[PrintCertificate, ...]:
    """The portfolio a ``table-open`` (or a duel's ``table-join``) at ``venue`` brings, checked
    as far as the request alone tells: none at a table that deals from its own certificates;
    at a Registrar's or a portfolio duel, eight
    certificates (:class:`BadPortfolio` otherwise) of eight distinct titles
    (:class:`BadPortfolio`), each issued under this league's manifest (:class:`WrongLeague`)
    and signed by its mint (:class:`NotStamped`: an unstamped print is its holder's own claim,
    V.1)."""
    if not takes_portfolio(venue):
        if portfolio is not None:
            raise BadPortfolio(
                f"a table at {venue} deals from its own certificates: only a Registrar's table "
                f"or a portfolio duel takes a portfolio (Book IV.3)"
            )
        return ()
    if portfolio is None:
        raise BadPortfolio(
            f"a table at {venue} is convened from its players' portfolios (Book IV.3): each "
            f"player brings {PORTFOLIO_SIZE} stamped prints of distinct titles"
        )
    if len(portfolio) != PORTFOLIO_SIZE:
        raise BadPortfolio(
            f"a portfolio is {PORTFOLIO_SIZE} certificates (Book IV.3); this one brings "
            f"{len(portfolio)}"
        )
    seen: dict[str, str] = {}
    for certificate in portfolio:
        twin = seen.setdefault(certificate.title, certificate.serial)
        if twin != certificate.serial:
            raise BadPortfolio(
                f"a portfolio is {PORTFOLIO_SIZE} distinct certificates (Book IV.3); "
                f"{certificate.title} is brought twice ({twin}, {certificate.serial})"
            )
    mint = PublicKey.from_text(manifest.mint)
    for certificate in portfolio:
        if certificate.manifest != manifest.hash_text():
            raise WrongLeague(
                f"{certificate.serial} is a print of another league (issued under manifest "
                f"{certificate.manifest}); this table is at league {manifest.league} under "
                f"manifest {manifest.hash_text()}"
            )
        try:
            certificate.verify(mint)
        except BadSignatureError:
            raise NotStamped(
                f"{certificate.serial} carries no signature of league {manifest.league}'s "
                f"mint: an unstamped print is its holder's own claim (Book V.1) and does not "
                f"sit at a league's table"
            ) from None
        try:
            manifest.check_certificate(certificate)
        except LedgerError as exc:  # signed by the mint, yet outside this league's runs
            raise NotStamped(exc.diagnostics()) from None
    return tuple(portfolio)
