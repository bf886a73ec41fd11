"""``cz league set URL``, ``cz stamp``, ``cz provenance SERIAL``: the wallet and a league
(Book V.4 stamping, V.8 "/provenance/SERIAL (one certificate's whole life)")."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from typing import Any

from apiclient.league import MAX_RETRIES, LeagueClient, LeagueProblem, verify_stamped
from clients.cz_session import (
    JSON_FLAG,
    Opened,
    Progress,
    emit,
    league_of,
    opened_wallet,
    pinned,
    root_changed,
)
from clients.wallet import LeaguePin, StampCredit, Wallet, WalletError
from ledger.address import address_of
from ledger.api.logs import FeedEvent
from ledger.api.mint import StampAnswer, Stamped
from ledger.api.notary import Provenance
from ledger.api.provenance import check_provenance
from ledger.api.tables import TableView
from ledger.certificates import NoteCertificate
from ledger.errors import BadSignatureError, LedgerError, VerificationError
from ledger.events import PrintStamped, body_as
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from ledger.print_runs import MISPRINT_SERIAL
from ledger.requests import StampRequest
from ledger.tables import wins_misprint
from ledger.words import plural

# -- league set ----------------------------------------------------------------------------


async def _pin(wallet: Wallet, url: str) -> tuple[LeaguePin, bool]:
    """The pin after contacting ``url``: new on first use, else the same root (refused
    loudly otherwise) at this URL."""
    old = wallet.league
    async with LeagueClient(url, retries=MAX_RETRIES) as client:
        try:
            manifest = await client.manifest(old.root if old else None)
        except BadSignatureError:
            assert old is not None
            raise root_changed(client.shown_url, old.root, await client.manifest()) from None
    if old is not None and manifest.hash_text() != old.manifest.hash_text():
        raise VerificationError(
            f"REFUSED: {url} serves another manifest than the one this wallet pinned, under "
            "the same root key; the pin is unchanged"
        )
    return LeaguePin(url, PublicKey.from_text(manifest.root), manifest), old is None


class NotALeagueURL(LedgerError):
    """A ``cz league set`` URL that names no HTTP server."""


#: The schemes a league is served under (``league serve`` serves plain http).
SCHEMES = ("http", "https")


def league_url(text: str) -> tuple[str, bool]:
    """The league URL ``text`` names, and whether ``http://`` was put before it: a URL
    without a scheme (``127.0.0.1:8080``, as ``league serve`` prints its address) is taken
    as ``http://``; one that names no http(s) host and port is refused in one line."""
    from yarl import URL

    given = text.strip()
    assumed = "://" not in given
    url = (f"http://{given}" if assumed else given).rstrip("/")
    refused = NotALeagueURL(
        f"{text!r} is not a league's URL: give http://HOST:PORT (e.g. http://127.0.0.1:8080)"
    )
    try:
        parsed = URL(url)
    except ValueError:
        raise refused from None
    if parsed.scheme not in SCHEMES or not parsed.host or " " in parsed.host:
        raise refused
    return url, assumed


def league_set(args: argparse.Namespace) -> int:
    """Pin the league at URL (its root key on first use)."""
    url, assumed = league_url(args.url)  # any refusal below names the URL taken
    with opened_wallet() as opened:
        pin, first = asyncio.run(_pin(opened.wallet, url))
        opened.wallet.league = pin
        opened.save()
    manifest = pin.manifest
    how = "pinned now (first use)" if first else "as pinned"
    taken = f" ({args.url.strip()} has no scheme: taken as http://)" if assumed else ""
    emit(
        args,
        {
            "url": url,
            "league": manifest.league,
            "name": manifest.name,
            "root": address_of(pin.root),
            "root_key": pin.root.to_text(),
            "first_use": first,
        },
        f"league {manifest.name!r} ({manifest.league}) at {url}{taken}: root key "
        f"{address_of(pin.root)} {how}",
    )
    return 0


# -- stamp ---------------------------------------------------------------------------------


def _check_answer(
    answer: StampAnswer, request: StampRequest, manifest: LeagueManifest, wallet: Wallet
) -> None:
    """Every certificate mint-signed, in the runs, issued to me, and what I presented."""
    if answer.request_id != request.request_id or len(answer.items) != len(request.prints):
        raise VerificationError("the mint answered another request than the one presented")
    verify_stamped(answer, manifest, wallet.public)
    for item, order in zip(answer.items, request.prints, strict=True):
        if (item.title, item.finish) != (order.title, order.finish):
            raise VerificationError("the mint's answer does not follow the prints presented")
        if isinstance(item, Stamped) and (item.certificate.title, item.certificate.finish) != (
            order.title,
            order.finish,
        ):
            raise VerificationError(f"{item.certificate.serial} is not the print presented")


async def _send(
    opened: Opened, client: LeagueClient, manifest: LeagueManifest, request: StampRequest
) -> StampCredit | None:
    """Send a kept request and credit its answer; None if the mint found it stale unsent.

    The request stays kept while no answer came (the league unreachable, or what came is not
    the mint's answer); a refusal of the whole request is an answer too, and ends it, as does
    an answer that fails its checks (sent again, it would be answered the same)."""
    wallet = opened.wallet
    try:
        answer = await client.stamp(request)
    except LeagueProblem as exc:
        wallet.pending = None
        opened.save()
        if exc.slug != "stale-request":
            raise
        return None  # never recorded, and too old to be now: dropped
    wallet.pending = None
    try:
        _check_answer(answer, request, manifest, wallet)
        return wallet.credit(answer)
    finally:
        opened.save()


@dataclass
class StampRun:
    stamped: list[dict[str, Any]]
    refused: list[dict[str, Any]]

    def add(self, credit: StampCredit | None) -> None:
        if credit is None:
            return
        self.stamped += [
            {"serial": c.serial, "title": c.title, "finish": c.finish} for c in credit.stamped
        ]
        self.refused += [{"title": t, "finish": f, "reason": r} for t, f, r in credit.refused]


async def _stamp(opened: Opened) -> StampRun:
    wallet = opened.wallet
    run = StampRun([], [])
    async with league_of(pinned(wallet)) as (client, manifest):
        if wallet.pending is not None:  # an answer lost last time: the mint replays it
            run.add(await _send(opened, client, manifest, wallet.pending))
        orders = wallet.unstamped()
        if not orders and not run.stamped:
            raise WalletError("there is no unstamped print to present")
        batch = manifest.policies.stamp_batch_limit
        progress = Progress("proof of work", len(orders))
        try:
            for start in range(0, len(orders), batch):
                chunk = orders[start : start + batch]

                def solved(n: int, done: int = start) -> None:
                    progress.at(done + n)

                request = await client.stamp_order(wallet.key, manifest, chunk, solved)
                wallet.pending = request  # kept before it is sent: replayed if lost
                opened.save()
                credit = await _send(opened, client, manifest, request)
                run.add(credit)
                if credit is not None and not credit.stamped:
                    break  # every print of the batch refused (allowance, runs): stop here
        finally:
            progress.close()
    return run


def stamp(args: argparse.Namespace) -> int:
    """Present every unstamped print to the pinned league's mint (V.4)."""
    with opened_wallet() as opened:
        run = asyncio.run(_stamp(opened))
    lines = [f"stamped {plural(len(run.stamped), 'print')}:"] + [
        f"  ✓ {s['title']} ({s['finish']}) {s['serial']}" for s in run.stamped
    ]
    if run.refused:
        lines.append(f"refused {len(run.refused)} (they stay unstamped ⧗ in your collection):")
        lines += [f"  ⧗ {r['title']} ({r['finish']}): {r['reason']}" for r in run.refused]
    emit(args, {"stamped": run.stamped, "refused": run.refused}, "\n".join(lines))
    return 0


# -- provenance ----------------------------------------------------------------------------


async def verified_provenance(
    client: LeagueClient, manifest: LeagueManifest, serial: str
) -> tuple[Provenance, PublicKey | None]:
    """The league's account of ``serial`` (a print or a note) with every proof in it checked
    here (V.8): the issuer's events it names are read from the issuer's own feed (the mint's
    stamp, a print's issues again and its returns, or each of a note's issues and returns in
    the treasury's log) and held against it."""
    life = await client.provenance(serial)
    issuer = "mint" if life.stamp is not None else "treasury"
    named = [("mint", life.stamp.index)] if life.stamp is not None else []
    named += [(issuer, issued.index) for issued in life.issues]
    named += [(issuer, returned.index) for returned in life.returns]
    events: list[FeedEvent] = []
    for service, index in named:
        events += (await client.events(index - 1, 1, service=service)).events
    return life, check_provenance(life, manifest, serial, events)


def _addr(key: str) -> str:
    return address_of(PublicKey.from_text(key))


def provenance(args: argparse.Namespace) -> int:
    """One print's whole life as the league tells it, every proof checked here."""
    serial = args.serial.strip().upper()
    with opened_wallet() as opened:
        pin = pinned(opened.wallet)

    async def ask() -> tuple[Provenance, PublicKey | None]:
        async with league_of(pin) as (client, manifest):
            return await verified_provenance(client, manifest, serial)

    if serial == MISPRINT_SERIAL:
        return _misprint_life(args, pin)
    life, holder = asyncio.run(ask())
    if life.stamp is None and life.issues:
        return _note_life(args, life, holder)
    if life.stamp is None:
        emit(
            args,
            {"serial": serial, "standing": life.standing, "remark": life.remark, "verified": True},
            f"{serial}: {life.remark}",
        )
        return 0
    c = life.stamp.certificate
    hops = _hops(life)
    conflicts = [
        {
            "hop": x.hop,
            "notary_event": x.index,
            "convicted": address_of(x.proof.verify()),
            "says": x.proof.describe(),
        }
        for x in life.conflicts
    ]
    assert holder is not None
    data = {
        "serial": serial,
        "title": c.title,
        "set": c.set,
        "finish": c.finish,
        "stamped_to": _addr(c.issued_to),
        "mint_event": life.stamp.index,
        "hops": hops,
        "conflicts": conflicts,
        "holder": address_of(holder),
        "verified": True,
    }
    lines = [
        f"{serial}: a {c.finish} {c.title} of the {c.set} set",
        f"  stamped to {_addr(c.issued_to)} at mint event {life.stamp.index} ✓ (signed, in "
        "the mint's signed checkpoint)",
    ]
    lines += [
        f"  hop {h['hop']}: {h['from']} → {h['to']} (notary event {h['notary_event']}) ✓ receipt"
        for h in hops
    ]
    lines += [
        f"  conflict at hop {x['hop']} refused (notary event {x['notary_event']}): {x['says']}; "
        f"the fraud proof convicts {x['convicted']} ✓"
        for x in conflicts
    ]
    returns = [
        {"issue": r.issue, "mint_event": r.index, "purchase_id": r.purchase_id}
        for r in life.returns
    ]
    issues = [
        {"issue": i.certificate.issue, "to": _addr(i.certificate.issued_to), "mint_event": i.index}
        for i in life.issues
    ]
    data |= {"returns": returns, "issues": issues}
    lines += [
        f"  issue {r['issue']} returned to the mint at event {r['mint_event']} (purchase "
        f"{r['purchase_id']}, an upgrade) ✓ (signed by the mint, on the notarized hop)"
        for r in returns
    ]
    lines += [
        f"  issued again to {i['to']} as issue {i['issue']} at mint event {i['mint_event']} ✓ "
        "(signed, in the mint's signed checkpoint)"
        for i in issues
    ]
    lines.append(f"  holder: {address_of(holder)}")
    lines.append("every signature and proof verified here")
    emit(args, data, "\n".join(lines))
    return 0


@dataclass(frozen=True)
class Award:
    """The Misprint's award, every proof checked: the account, the mint's event naming the
    table, and the table as the tables service shows it."""

    life: Provenance
    table: str
    view: TableView


async def verified_award(client: LeagueClient, manifest: LeagueManifest) -> Award | Provenance:
    """The Misprint's account (V.8, L-24) with its proofs checked as any print's are (the
    mint's ``print-stamped`` event, signed and in the mint's signed checkpoint, the
    certificate mint-signed to its holder); its event names the table, whose view must be a
    Balance at Chair VI or above closed by that player, and one the tables service says won
    it (the first settling such Balance of its log, L-41: a table that settles nothing shows
    no Misprint, a later one shows it gone). Not awarded yet: the account alone."""
    life, _ = await verified_provenance(client, manifest, MISPRINT_SERIAL)
    if life.stamp is None:
        return life
    page = await client.events(life.stamp.index - 1, 1, service="mint")
    event = page.events[0].verified(PublicKey.from_text(manifest.mint))
    table = body_as(event, PrintStamped).request_id
    view = await client.table(table)
    certificate = life.stamp.certificate
    verdict = view.closing.verdict if view.closing is not None else view.waiting
    if view.player != certificate.issued_to or not wins_misprint(view.venue, verdict):
        raise VerificationError(
            f"the mint awarded {MISPRINT_SERIAL} for table {table}, which the tables service "
            f"shows as {verdict} at {view.venue} by another player or not a Balance at Chair VI "
            "or above"
        )
    said = view.closing.misprint if view.closing is not None else None
    if said is None or said.status == "gone":
        why = (
            "its Balance settles nothing (a Chair its player's witnessed campaign had not "
            "opened, or no proof of work: docs/rulings.md L-41)"
            if said is None
            else f"the Misprint went to another table ({said.detail})"
        )
        raise VerificationError(
            f"the mint awarded {MISPRINT_SERIAL} for table {table}, which the tables service "
            f"says could not win it: {why}"
        )
    if said.status == "awarded" and said.certificate != certificate:
        raise VerificationError(
            f"the tables service shows table {table} another {MISPRINT_SERIAL} certificate "
            "than the mint's"
        )
    return Award(life, table, view)


def _misprint_life(args: argparse.Namespace, pin: LeaguePin) -> int:
    """``cz provenance CZ-TALLY-000``: its award, or that it has not been awarded yet."""

    async def ask() -> Award | Provenance:
        async with league_of(pin) as (client, manifest):
            return await verified_award(client, manifest)

    found = asyncio.run(ask())
    if isinstance(found, Provenance):
        emit(
            args,
            {
                "serial": MISPRINT_SERIAL,
                "standing": found.standing,
                "awarded": False,
                "remark": found.remark,
                "verified": True,
            },
            f"{MISPRINT_SERIAL}: not awarded yet. {found.remark}",
        )
        return 0
    stamp = found.life.stamp
    assert stamp is not None
    c = stamp.certificate
    to = _addr(c.issued_to)
    data = {
        "serial": MISPRINT_SERIAL,
        "standing": found.life.standing,
        "awarded": True,
        "title": c.title,
        "set": c.set,
        "finish": c.finish,
        "awarded_to": to,
        "mint_event": stamp.index,
        "table": found.table,
        "venue": found.view.venue,
        "holder": to,
        "verified": True,
    }
    lines = [
        f"{MISPRINT_SERIAL}: the Misprint, a {c.title} of the {c.set} set in the finish "
        f"{c.finish}; it exists exactly once, outside the runs (V.8)",
        f"  awarded to {to} at mint event {stamp.index} ✓ (the mint's certificate and its "
        "print-stamped event, signed, in the mint's signed checkpoint)",
        f"  for table {found.table}: a Balance at {found.view.venue}, the first settling one at "
        "Chair VI or above (IV.6, docs/rulings.md L-24, L-41) ✓ (the event names it; the "
        "tables service shows it closed so, by that player, and its award; `league audit` "
        "checks it against the whole tables log)",
        f"  holder: {to} (the notary records no hop of it)",
        "every signature and proof verified here",
    ]
    emit(args, data, "\n".join(lines))
    return 0


def _hops(life: Provenance) -> list[dict[str, Any]]:
    """The notarized hops of a print's or a note's life, as ``cz provenance`` shows them."""
    return [
        {
            "issue": h.receipt.issue,
            "hop": h.endorsement.hop,
            "from": _addr(h.endorsement.from_),
            "to": _addr(h.endorsement.to),
            "notary_event": h.receipt.index,
        }
        for h in life.hops
    ]


def _note_life(args: argparse.Namespace, life: Provenance, holder: PublicKey | None) -> int:
    """A note's life: each issue, the hops of each, each return to the treasury, the holder."""
    first = life.issues[0].certificate
    if not isinstance(first, NoteCertificate):
        raise VerificationError(f"the league shows {life.serial} as a note without a note")
    issues = [
        {
            "issue": i.certificate.issue,
            "to": _addr(i.certificate.issued_to),
            "treasury_event": i.index,
        }
        for i in life.issues
    ]
    returns = [
        {"issue": r.issue, "treasury_event": r.index, "purchase_id": r.purchase_id}
        for r in life.returns
    ]
    hops = _hops(life)
    shown = None if holder is None else address_of(holder)
    data = {
        "serial": life.serial,
        "denomination": first.denomination,
        "standing": life.standing,
        "issues": issues,
        "returns": returns,
        "hops": hops,
        "conflicts": [{"hop": x.hop, "notary_event": x.index} for x in life.conflicts],
        "holder": shown,
        "verified": True,
    }
    lines = [f"{life.serial}: a note of M{first.denomination}"]
    lines += [
        f"  issue {i['issue']} to {i['to']} at treasury event {i['treasury_event']} ✓ (signed, "
        "in the treasury's signed checkpoint)"
        for i in issues
    ]
    lines += [
        f"  issue {h['issue']} hop {h['hop']}: {h['from']} → {h['to']} (notary event "
        f"{h['notary_event']}) ✓ receipt"
        for h in hops
    ]
    lines += [
        f"  issue {r['issue']} paid back to the treasury at event {r['treasury_event']} "
        f"(purchase {r['purchase_id']}) ✓ (signed by the treasury, on the notarized hop)"
        for r in returns
    ]
    lines.append(f"  holder: {shown}" if shown else "  holder: the treasury's reserve")
    lines.append("every signature and proof verified here")
    emit(args, data, "\n".join(lines))
    return 0


def add_league(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz league set``, ``cz stamp`` and ``cz provenance``."""
    group = commands.add_parser(
        "league",
        help="pin the league your wallet trusts",
        description="The league server your wallet stamps, notarizes and looks things up at.",
    )
    sub = group.add_subparsers(dest="league_command", required=True, metavar="COMMAND")
    set_parser = sub.add_parser(
        "set",
        parents=[JSON_FLAG],
        help="pin the league at URL (its root key on first use)",
        description=(
            "Fetch the league's manifest from URL, check its root signature, and pin the root "
            "key on first use. Ever after, a league (at this URL or another) signed by any "
            "other root key is refused loudly: a league's root never changes."
        ),
    )
    set_parser.add_argument(
        "url", metavar="URL", help="e.g. http://127.0.0.1:8080 (without a scheme: http://)"
    )
    set_parser.set_defaults(handler=league_set)

    stamp_parser = commands.add_parser(
        "stamp",
        parents=[JSON_FLAG],
        help="present every unstamped print to the league's mint",
        description=(
            "Every unstamped ⧗ print you hold is presented to the pinned league's mint "
            "(V.4), paying the published proof of work per print (a progress bar on a "
            "terminal). The mint allocates true serials from the fixed runs and signs each "
            "to your key; each certificate is checked and credited (✓). A print the mint "
            "refuses (run exhausted, daily allowance used) stays unstamped, with the reason."
        ),
    )
    stamp_parser.set_defaults(handler=stamp)

    prov = commands.add_parser(
        "provenance",
        parents=[JSON_FLAG],
        help="a print's whole life, every proof checked",
        description=(
            "Ask the pinned league for SERIAL's whole life (V.8): its stamp, every recorded "
            "hop and every refused conflict. Nothing is taken on trust: the mint's event and "
            "checkpoint, the chain, each notary receipt and each fraud proof are verified here."
        ),
    )
    prov.add_argument("serial", metavar="SERIAL", help="e.g. CZ-MODEL-A-0042")
    prov.set_defaults(handler=provenance)
