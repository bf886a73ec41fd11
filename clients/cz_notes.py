"""``cz notes``, ``cz notes claim [MARKS]``, ``cz buy TITLE`` and ``cz buy --upgrade SERIAL
--finish gilt|holofoil``: the wallet and the league's treasury (Book V.5: unstamped marks
become notes at the faucet; notes buy singles, and finish upgrades against a standard print
handed back to the mint, L-20).

Each request is kept in the wallet before it is sent, like ``cz stamp``'s: an answer lost on
the way is had by sending the same request again (the treasury answers a replayed claim id or
purchase id the same and issues nothing twice). What an answer gives is credited whole, in
the same save that drops the kept request: the marks leave the collection, the paid notes
leave the wallet, only with the answer that took them. An upgrade's returned print leaves the
collection when the request is written (endorsed to the mint's key, it is no longer this
wallet's to trade, V.6) and comes back only on a refund: issued again by the mint under its
next issue (L-20), or as it was if the treasury refused the purchase whole.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from apiclient.league import LeagueClient, LeagueProblem, check_certificate, new_request_id
from clients.cz_session import (
    JSON_FLAG,
    Opened,
    Progress,
    emit,
    league_of,
    opened_wallet,
    pinned,
    read_only,
)
from clients.wallet import Wallet, WalletError
from ledger.api.treasury import (
    MAX_CLAIM_MARKS,
    MAX_PAYMENT_NOTES,
    UPGRADE_PRICES,
    BuyAnswer,
    BuyRequest,
    ClaimAnswer,
    ClaimRequest,
    FaucetDay,
    Upgrade,
    buy_request,
    claim_request,
    purchase_price,
)
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.endorsements import Chain, endorse
from ledger.errors import UnknownTitle, VerificationError
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from ledger.words import plural

#: The answer a pending request waits for.
Answered = TypeVar("Answered")

#: ``--json`` of ``cz notes claim``: given after ``notes`` or after ``claim`` (a subcommand's
#: default would otherwise reset the one given before it).
_JSON_AFTER = argparse.ArgumentParser(add_help=False)
_JSON_AFTER.add_argument(
    "--json",
    action="store_true",
    default=argparse.SUPPRESS,
    help="print the result as one JSON document (for scripts)",
)

#: Answers that leave a request kept, to be sent again: the league is busy, not refusing.
RETRY_LATER = (429, 503)
#: A 429 that refuses for good: the day's faucet is used up, and the request, signed with
#: today's time, would be stale by the time it opens again.
REFUSED_FOR_THE_DAY = "allowance-exhausted"
#: What the treasury last said of this home's key's faucet day (its ``FaucetDay``), beside the
#: wallet: a new claim is refused here, before its proof of work, while the day it says is
#: used up lasts. Only a shortcut: the treasury decides (another device's claims included).
FAUCET_FILE = "faucet.json"


def _kept(exc: LeagueProblem) -> bool:
    """Whether ``exc`` leaves the request kept in the wallet, to be sent again."""
    return exc.status in RETRY_LATER and exc.slug != REFUSED_FOR_THE_DAY


def _note(chain: Chain) -> NoteCertificate:
    certificate = chain.certificate
    assert isinstance(certificate, NoteCertificate)
    return certificate


def _note_items(notes: list[NoteCertificate]) -> list[dict[str, Any]]:
    return [{"serial": n.serial, "denomination": n.denomination} for n in notes]


def _check_notes(notes: list[NoteCertificate], manifest: LeagueManifest, owner: PublicKey) -> None:
    """Every note treasury-signed and issued to ``owner``."""
    for note in notes:
        note.verify(manifest.issuer_key(note))
        if PublicKey.from_text(note.issued_to) != owner:
            raise VerificationError(f"{note.serial} is issued to another key")


def _hold(wallet: Wallet, notes: list[NoteCertificate]) -> None:
    wallet.admit(Chain(certificate=n, endorsements=()) for n in notes)


def _kept_line(opened: Opened, exc: LeagueProblem | None, what: str) -> str:
    """Why a kept request stays kept: the line printed when it is not answered now."""
    opened.save()
    why = f"the league is busy ({exc})" if exc is not None else "no answer"
    return f"{why}; the {what} is kept in your wallet: run the same command again to finish it"


# -- notes claim ---------------------------------------------------------------------------


def _faucet_of(opened: Opened) -> tuple[Path, str]:
    """The faucet file, and who its day is of: a digest of the league and the key (the
    key's address is not written in clear beside the sealed wallet)."""
    league = pinned(opened.wallet).manifest.league
    who = hashlib.sha256(f"{league}\n{opened.wallet.public.to_text()}".encode()).hexdigest()
    return opened.home.directory / FAUCET_FILE, who


def _remember_day(opened: Opened, day: FaucetDay) -> None:
    """Keep what the treasury said of today's faucet (written whole, or not at all)."""
    path, who = _faucet_of(opened)
    temporary = path.with_name(f".{FAUCET_FILE}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps({"who": who, **day.model_dump()}), encoding="utf-8")
    temporary.replace(path)


def _refused_for_the_day(per_day: int) -> FaucetDay:
    """The day the treasury just refused for the day: used up until the next UTC midnight."""
    now = datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    return FaucetDay(
        per_day=per_day,
        claimed_today=per_day,
        left_today=0,
        day=now.date().isoformat(),
        resets_at=int(midnight.timestamp()),
    )


def _check_day_left(opened: Opened, now: float) -> None:
    """Refuse a new claim at once when the treasury's last word on this key's day is that
    nothing is left of it, and the day is not over (nothing sent, no work done)."""
    path, who = _faucet_of(opened)
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        day = FaucetDay.model_validate({k: v for k, v in kept.items() if k != "who"})
    except (OSError, ValueError):
        return  # none kept, or unreadable: the treasury will say
    if kept.get("who") != who or day.left_today > 0 or now >= day.resets_at:
        return
    wait = int(day.resets_at - now)
    raise WalletError(
        f"today's faucet is used up (left today: M0 of M{day.per_day}, {day.day} UTC): it "
        f"opens again at midnight UTC, in {wait // 3600}h{wait % 3600 // 60:02d}m; nothing "
        "was sent"
    )


def _credit_claim(
    wallet: Wallet, answer: ClaimAnswer, request: ClaimRequest, manifest: LeagueManifest
) -> None:
    """The notes held and their marks out of the collection, all of it or (a check failing)
    none of it."""
    if answer.request_id != request.request_id or answer.marks > request.marks:
        raise VerificationError("the treasury answered another claim than the one sent")
    _check_notes(answer.notes, manifest, wallet.public)
    if answer.marks > wallet.collection.marks:
        raise WalletError(f"the treasury converted M{answer.marks}, more than the wallet holds")
    wallet.check_new(Chain(certificate=n, endorsements=()) for n in answer.notes)
    wallet.give(marks=-answer.marks)
    _hold(wallet, answer.notes)


async def _send_pending(
    opened: Opened,
    sent: Awaitable[Answered],
    what: str,
    settle: Callable[[], None],
    refused: Callable[[LeagueProblem], None],
    credit: Callable[[Answered], None],
) -> Answered:
    """The answer to the wallet's pending request, credited (``credit``). Unanswered for now
    (busy, unavailable), the request stays kept for the next run; refused whole, or answered,
    it is settled (``settle``: no longer pending), ``refused`` first putting back what it had
    set aside. The wallet is saved either way."""
    try:
        answer = await sent
    except LeagueProblem as exc:
        if _kept(exc):
            raise WalletError(_kept_line(opened, exc, what)) from None
        settle()
        refused(exc)
        opened.save()
        raise
    settle()
    try:
        credit(answer)
        return answer
    finally:
        opened.save()


async def _send_claim(
    opened: Opened, client: LeagueClient, manifest: LeagueManifest
) -> ClaimAnswer:
    wallet = opened.wallet
    request = wallet.pending_claim
    assert request is not None

    def settle() -> None:
        wallet.pending_claim = None

    def refused(exc: LeagueProblem) -> None:
        # Refused whole, so nothing was converted: the treasury answers a request id it has
        # granted with that grant before any refusal, copies decided at once included
        # (services/treasury/claiming.py), so a refusal of a claim sent again is never a
        # grant whose answer was lost.
        if exc.slug == REFUSED_FOR_THE_DAY:
            _remember_day(opened, _refused_for_the_day(manifest.policies.faucet_marks_per_day))

    def credit(answer: ClaimAnswer) -> None:
        try:
            _credit_claim(wallet, answer, request, manifest)
        finally:
            _remember_day(opened, answer.faucet)

    return await _send_pending(opened, client.claim(request), "claim", settle, refused, credit)


async def _claim(opened: Opened, marks: int | None) -> tuple[ClaimAnswer, bool]:
    """The answer credited, and whether it finished a claim kept from an earlier run."""
    wallet = opened.wallet
    if wallet.pending_claim is None:
        if wallet.collection.marks == 0:
            raise WalletError("this wallet holds no unstamped marks: play tables to earn some")
        _check_day_left(opened, time.time())  # before asking the league, and any work
    async with league_of(pinned(wallet)) as (client, manifest):
        if wallet.pending_claim is not None:
            return await _send_claim(opened, client, manifest), True
        held = wallet.collection.marks
        if marks is None:
            marks = min(held, manifest.policies.faucet_marks_per_day, MAX_CLAIM_MARKS)
        elif marks > held:
            raise WalletError(f"this wallet holds M{held} unstamped marks, not M{marks}")
        if marks == 0:
            raise WalletError("the league's faucet converts no marks (faucet_marks_per_day 0)")
        progress = Progress("proof of work", 1)
        try:
            request = await asyncio.to_thread(
                claim_request,
                wallet.key,
                manifest,
                marks,
                request_id=new_request_id(),
                at=int(time.time()),
            )
            progress.at(1)
        finally:
            progress.close()
        wallet.pending_claim = request  # kept before it is sent: replayed if lost
        opened.save()
        return await _send_claim(opened, client, manifest), False


def notes_claim(args: argparse.Namespace) -> int:
    """Convert unstamped marks to notes at the treasury's faucet (V.5)."""
    with opened_wallet() as opened:
        answer, resumed = asyncio.run(_claim(opened, args.marks))
    day = answer.faucet
    notes = _note_items(answer.notes)
    lines = [
        ("finished the claim kept from last time: " if resumed else "")
        + f"M{answer.marks} of unstamped marks became {plural(len(notes), 'note')}:",
        *(f"  M{n['denomination']} {n['serial']}" for n in notes),
        f"left today: M{day.left_today} of M{day.per_day} (the faucet resets at midnight UTC)",
    ]
    emit(
        args,
        {
            "requested": answer.requested,
            "marks": answer.marks,
            "notes": notes,
            "resumed": resumed,
            "left_today": day.left_today,
            "per_day": day.per_day,
        },
        "\n".join(lines),
    )
    return 0


def notes_list(args: argparse.Namespace) -> int:
    """The notes this wallet holds (from the public summary: no passphrase)."""
    notes, bound = read_only(
        lambda summary: (summary["collection"]["note_list"], summary["collection"]["bound_notes"]),
        lambda wallet: (
            _note_items([_note(c) for c in wallet.notes.values()]),
            _note_items([_note(c) for c in wallet.bound.values()]),
        ),
    )
    notes, bound = _by_value(notes), _by_value(bound)
    total = sum(n["denomination"] for n in notes)
    lines = [
        f"{plural(len(notes), 'note')}, M{total} in all:",
        *(f"  M{n['denomination']} {n['serial']}" for n in notes),
    ]
    if bound:  # L-21
        lines += [
            f"{plural(len(bound), 'note')} bound to the treasury (a rejected purchase signed "
            "their hop there): cz buy pays them first",
            *(f"  M{n['denomination']} {n['serial']}" for n in bound),
        ]
    emit(args, {"notes": notes, "marks": total, "bound": bound}, "\n".join(lines))
    return 0


def _by_value(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Notes as listed: the largest first, then by serial."""
    return sorted(
        ({"serial": n["serial"], "denomination": n["denomination"]} for n in items),
        key=lambda n: (-n["denomination"], n["serial"]),
    )


# -- buy -----------------------------------------------------------------------------------


def choose_notes(notes: list[NoteCertificate], price: int) -> list[NoteCertificate]:
    """Fewest notes covering ``price`` (then as little change as a greedy pass finds): the
    fewest is the smallest k whose k largest notes cover it; each of the k is then the
    smallest note that, with the largest ones left, still covers what remains."""
    if sum(n.denomination for n in notes) < price:
        raise WalletError(
            f"the price is M{price} and this wallet's notes make M"
            f"{sum(n.denomination for n in notes)}: claim notes first (cz notes claim)"
        )
    pool = sorted(notes, key=lambda n: (-n.denomination, n.serial))
    k = next(i for i in range(1, len(pool) + 1) if sum(n.denomination for n in pool[:i]) >= price)
    if k > MAX_PAYMENT_NOTES:
        raise WalletError(
            f"M{price} takes {k} of your notes; a purchase pays with at most {MAX_PAYMENT_NOTES}"
        )
    chosen: list[NoteCertificate] = []
    remaining = price
    for slot in range(k):
        after = k - slot - 1
        top = sum(n.denomination for n in pool[:after])  # the largest the others can be
        spare = pool[after].denomination if after < len(pool) else 0
        for at in range(len(pool) - 1, -1, -1):  # smallest first
            candidate = pool[at]
            others = top if at >= after else top - candidate.denomination + spare
            if candidate.denomination + others >= remaining:
                break
        chosen.append(candidate)
        pool.remove(candidate)
        remaining -= candidate.denomination
    return chosen


def _credit_buy(
    wallet: Wallet, answer: BuyAnswer, request: BuyRequest, manifest: LeagueManifest
) -> None:
    """The print and the change (or the refund) held, all of it or none of it."""
    if answer.purchase_id != request.purchase_id:
        raise VerificationError("the treasury answered another purchase than the one sent")
    paid = sum(_note(c).denomination for c in request.payment)
    if answer.paid != paid:
        raise VerificationError(f"the treasury counts M{answer.paid} paid, not M{paid}")
    upgrade = request.upgrade
    finish = "standard" if upgrade is None else upgrade.finish
    if answer.outcome == "delivered":
        if answer.stamped is None or (answer.stamped.title, answer.stamped.finish) != (
            request.title,
            finish,
        ):
            raise VerificationError(f"the treasury delivered no {finish} {request.title}")
        if sum(n.denomination for n in answer.change) != paid - answer.price:
            raise VerificationError("the change is not what was paid less the price")
        check_certificate(answer.stamped, manifest, wallet.public)
    _check_notes([*answer.change, *answer.refund], manifest, wallet.public)
    gained = [*answer.change, *answer.refund]
    chains = [Chain(certificate=n, endorsements=()) for n in gained]
    if answer.stamped is not None:
        chains.append(Chain(certificate=answer.stamped, endorsements=()))
    if answer.returned is not None:  # a refused upgrade: the print back, issued again
        returned = upgrade.returned if upgrade is not None else None
        if returned is None or (answer.returned.serial, answer.returned.issue) != (
            returned.serial,
            returned.issue + 1,
        ):
            raise VerificationError("the treasury handed back another print than the one sent")
        check_certificate(answer.returned, manifest, wallet.public)
        chains.append(Chain(certificate=answer.returned, endorsements=()))
    wallet.check_new(chains)
    wallet.admit(chains)
    convicted = {proof.first.serial for proof in answer.proofs}
    for chain in request.payment:  # the hops to the treasury: never signed again
        wallet.seen.admit(chain)
        wallet.bound.pop(chain.serial, None)
        if answer.outcome == "rejected" and chain.serial not in convicted:
            # The notary recorded nothing: the note is still this wallet's, its hop to the
            # treasury signed; it pays the treasury again, as this chain (L-21).
            wallet.bound[chain.serial] = chain
    if upgrade is not None:  # the hop to the mint, too
        returned = upgrade.returned
        wallet.seen.admit(returned)
        wallet.bound_prints.pop(returned.serial, None)
        if answer.outcome == "rejected" and returned.serial not in convicted:
            # The notary recorded nothing: the print is still this wallet's, its hop to the
            # mint signed (and in the treasury's log): bound to the mint (L-21).
            wallet.bound_prints[returned.serial] = returned
    wallet.keep(answer.proofs)


async def _send_buy(opened: Opened, client: LeagueClient, manifest: LeagueManifest) -> BuyAnswer:
    wallet = opened.wallet
    request = wallet.pending_buy
    assert request is not None

    def settle() -> None:
        wallet.pending_buy = None

    def refused(exc: LeagueProblem) -> None:
        # Refused whole, nothing recorded: the notes (and an upgrade's print) are this
        # wallet's again, as they were; what was bound stays bound (L-21).
        given = [c for c in request.payment if c.serial not in wallet.bound]
        if request.upgrade and request.upgrade.returned.serial not in wallet.bound_prints:
            given.append(request.upgrade.returned)
        wallet.admit(
            Chain(certificate=c.certificate, endorsements=c.endorsements[:-1]) for c in given
        )

    def credit(answer: BuyAnswer) -> None:
        _credit_buy(wallet, answer, request, manifest)

    return await _send_pending(opened, client.buy(request), "purchase", settle, refused, credit)


def _title(manifest: LeagueManifest, typed: str) -> str:
    run = manifest.print_runs.by_serial_title.get(typed.upper())
    if run is None:
        raise UnknownTitle(f"the league prints no title {typed!r}")
    return run.title


def _upgraded(wallet: Wallet, serial: str, typed: str | None) -> PrintCertificate:
    """The standard print ``serial`` this wallet holds (or holds bound to the mint, L-21), to
    return for an upgrade (L-20)."""
    held = wallet.prints.get(serial.upper()) or wallet.bound_prints.get(serial.upper())
    if held is None:
        raise WalletError(
            f"this wallet holds no stamped print {serial}: an upgrade returns "
            f"a standard print you hold (cz collection lists them)"
        )
    certificate = held.certificate
    assert isinstance(certificate, PrintCertificate)
    if certificate.finish != "standard":
        raise WalletError(
            f"{certificate.serial} is a {certificate.finish} print: an upgrade "
            f"returns a standard one"
        )
    if typed is not None and typed.casefold() != certificate.title.casefold():
        raise WalletError(f"{certificate.serial} is a {certificate.title}, not a {typed}")
    return certificate


async def _buy(
    opened: Opened, typed: str | None, returning: str | None = None, finish: str = "gilt"
) -> tuple[list[BuyAnswer], list[BuyRequest]]:
    """The answers credited (a purchase kept from last time first) and their requests: a
    single of ``typed``, or with ``returning`` (a standard print's serial) its upgrade to
    ``finish``."""
    wallet = opened.wallet
    answers: list[BuyAnswer] = []
    requests: list[BuyRequest] = []
    async with league_of(pinned(wallet)) as (client, manifest):
        kept = wallet.pending_buy
        if kept is not None:
            answers.append(await _send_buy(opened, client, manifest))
            requests.append(kept)
            again = (kept.upgrade.returned.serial if kept.upgrade else None) == (
                returning.upper() if returning else None
            )
            if again and (returning is not None or kept.title == _title(manifest, typed or "")):
                return answers, requests  # the purchase asked for again: finished, not redone
        upgrade_of = _upgraded(wallet, returning, typed) if returning is not None else None
        title = upgrade_of.title if upgrade_of is not None else _title(manifest, typed or "")
        now = int(time.time())
        upgrade = None
        if upgrade_of is not None:
            mint = PublicKey.from_text(manifest.mint)
            bound_print = wallet.bound_prints.get(upgrade_of.serial)
            upgrade = Upgrade(
                finish=finish,  # type: ignore[arg-type]  # argparse's choices
                # A print bound to the mint goes back as the very chain signed (L-21).
                returned=bound_print
                or endorse(wallet.prints[upgrade_of.serial], wallet.key, mint, now),
            )
        price = purchase_price(manifest, title, upgrade)
        # Notes bound to the treasury pay first, as the very chains signed (L-21).
        bound = list(wallet.bound.values())
        owed = price - sum(_note(c).denomination for c in bound)
        notes = choose_notes([_note(c) for c in wallet.notes.values()], owed) if owed > 0 else []
        if len(bound) + len(notes) > MAX_PAYMENT_NOTES:
            raise WalletError(
                f"M{price} takes {plural(len(bound) + len(notes), 'note')} with the "
                f"{len(bound)} bound to the treasury; a purchase pays with at "
                f"most {MAX_PAYMENT_NOTES}"
            )
        treasury = PublicKey.from_text(manifest.treasury)
        payment = bound + [
            endorse(wallet.notes[n.serial], wallet.key, treasury, now) for n in notes
        ]
        request = buy_request(
            wallet.key,
            manifest,
            title,
            payment,
            purchase_id=new_request_id(),
            at=now,
            upgrade=upgrade,
        )
        # Endorsed away, the notes (and a print returned, V.6, L-20) leave with the request
        # kept, in one save; a bound print is not among the prints held, so stays bound.
        wallet.release([n.serial for n in notes] + ([upgrade_of.serial] if upgrade_of else []))
        wallet.pending_buy = request
        opened.save()
        answers.append(await _send_buy(opened, client, manifest))
        requests.append(request)
    return answers, requests


def _bought(answer: BuyAnswer, request: BuyRequest) -> tuple[dict[str, Any], list[str]]:
    paid = sorted(_note(c).denomination for c in request.payment)
    upgrade = request.upgrade
    data = {
        "purchase_id": answer.purchase_id,
        "title": request.title,
        "outcome": answer.outcome,
        "finish": upgrade.finish if upgrade else "standard",
        "price": answer.price,
        "paid": answer.paid,
        "paid_notes": [c.serial for c in request.payment],
        "returned_print": upgrade.returned.serial if upgrade else None,
        "serial": answer.stamped.serial if answer.stamped else None,
        "change": _note_items(answer.change),
        "refund": _note_items(answer.refund),
        "print_back": (
            {"serial": answer.returned.serial, "issue": answer.returned.issue}
            if answer.returned
            else None
        ),
        "reason": answer.reason,
    }
    what = f"{request.title} {upgrade.finish} upgrade" if upgrade else request.title
    lines = [
        f"{what}: {answer.outcome}, price M{answer.price}, paid M{answer.paid} "
        f"with {plural(len(paid), 'note')} ({' + '.join(f'M{d}' for d in paid)})"
        + (f" and {upgrade.returned.serial} returned to the mint" if upgrade else "")
    ]
    if answer.stamped is not None:
        lines.append(
            f"  ✓ {answer.stamped.title} ({answer.stamped.finish}) "
            f"{answer.stamped.serial}, stamped to you"
        )
    lines += [f"  change M{n.denomination} {n.serial}" for n in answer.change]
    lines += [f"  refund M{n.denomination} {n.serial}" for n in answer.refund]
    if answer.returned is not None:
        lines.append(
            f"  ↩ {answer.returned.serial} back in your collection (issue "
            f"{answer.returned.issue}, issued again by the mint)"
        )
    if answer.reason:
        lines.append(f"  reason: {answer.reason}")
    return data, lines


def buy(args: argparse.Namespace) -> int:
    """Buy a single, or a finish upgrade, with notes (V.5, L-20)."""
    if args.upgrade is None and args.title is None:
        raise WalletError(
            "name the single to buy (cz buy TITLE) or the standard print to "
            "upgrade (cz buy --upgrade SERIAL --finish gilt)"
        )
    if args.upgrade is None and args.finish is not None:
        raise WalletError("--finish goes with --upgrade SERIAL: singles are sold standard")
    with opened_wallet() as opened:
        answers, requests = asyncio.run(
            _buy(opened, args.title, args.upgrade, args.finish or "gilt")
        )
    last = answers[-1]
    if last.outcome == "rejected":  # credited and saved (the fraud proofs kept): refused
        raise WalletError(
            f"the purchase {last.purchase_id} was rejected: "
            f"{last.reason}; its fraud proofs are kept in your wallet"
        )
    # A purchase kept from last time and rejected is shown beside the one asked for now.
    shown = [_bought(a, r) for a, r in zip(answers, requests, strict=True)]
    emit(
        args,
        {"purchases": [d for d, _ in shown]},
        "\n".join(line for _, lines in shown for line in lines),
    )
    return 0


def add_notes(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz notes`` (and ``cz notes claim``) and ``cz buy``."""
    notes = commands.add_parser(
        "notes",
        parents=[JSON_FLAG],
        help="list your notes; claim notes for unstamped marks",
        description=(
            "Notes are the league's currency (V.5): signed by its treasury, issued from a "
            "fixed set of 1,500,000 marks, traded like prints and spent on singles (cz buy). "
            "Alone, cz notes lists the notes your wallet holds."
        ),
    )
    notes.set_defaults(handler=notes_list)
    sub = notes.add_subparsers(dest="notes_command", metavar="COMMAND")
    claim = sub.add_parser(
        "claim",
        parents=[_JSON_AFTER],
        help="convert unstamped marks to notes (the faucet)",
        description=(
            "Present MARKS of your unstamped marks to the pinned league's treasury and get "
            "notes for them, paying the published proof of work (a bar on a terminal). The "
            "faucet converts at most faucet_marks_per_day marks per key per UTC day; "
            "without MARKS, as many as that (at most the marks you hold), and the treasury "
            "converts what is left of your day. The marks leave your collection only when "
            "the notes are credited; a claim whose answer was lost is kept in your wallet "
            "and sent again by the next cz notes claim, never paid twice."
        ),
    )
    claim.add_argument(
        "marks",
        metavar="MARKS",
        nargs="?",
        type=_marks,
        help="how many unstamped marks to convert (default: the day's cap)",
    )
    claim.set_defaults(handler=notes_claim)

    prices = ", ".join(f"{finish} M{price}" for finish, price in UPGRADE_PRICES.items())
    buy_parser = commands.add_parser(
        "buy",
        parents=[JSON_FLAG],
        help="buy a single, or a finish upgrade of a print you hold, with notes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Buy a standard single of TITLE from the pinned league (V.5: M30 common, M60\n"
            "uncommon, M120 rare, M240 sealed), or, with --upgrade SERIAL --finish FINISH,\n"
            f"a finish upgrade ({prices}): a print of the same title in\n"
            "that finish, against the standard print SERIAL, which goes back to the mint\n"
            "(L-20).\n\n"
            "The fewest of your notes that cover the price are endorsed to the treasury's\n"
            "key (and the returned print to the mint's); the treasury has the mint stamp\n"
            "the print to you and issues the exact change. The returned print leaves your\n"
            "collection when the request is written. The purchase is kept in your wallet\n"
            "before it is sent: if its answer is lost, the same command again finishes it\n"
            "(the same purchase id; nothing is paid twice). If the run is exhausted, your\n"
            "notes come back as a refund, and an upgrade's print comes back too (issued\n"
            "again by the mint under its next issue): exit status 0, nothing lost. If a\n"
            "note paid was signed away first, the purchase is rejected (exit status 2),\n"
            "the fraud proof kept; your other notes of it stay yours, bound to the\n"
            "treasury, and the next purchase pays with them first (an upgrade's print\n"
            "stays yours too, bound to the mint: cz buy --upgrade SERIAL again) (L-21)."
        ),
        epilog=(
            "examples:\n"
            "  cz buy Tally                                    a common single, M30\n"
            "  cz buy --upgrade CZ-TALLY-0001 --finish gilt    a gilt Tally for M80 and\n"
            "                                                  your standard CZ-TALLY-0001\n"
            "  cz buy --upgrade CZ-TALLY-0001 --finish holofoil --json"
        ),
    )
    buy_parser.add_argument(
        "title",
        metavar="TITLE",
        nargs="?",
        help="the single's title, e.g. Tally (with --upgrade: optional, the print's own)",
    )
    buy_parser.add_argument(
        "--upgrade",
        metavar="SERIAL",
        help="a standard print you hold, returned to the mint for the same title in --finish",
    )
    buy_parser.add_argument(
        "--finish",
        choices=sorted(UPGRADE_PRICES),
        help="the finish an upgrade buys (default: gilt)",
    )
    buy_parser.set_defaults(handler=buy)


def _marks(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_CLAIM_MARKS:
        raise argparse.ArgumentTypeError(f"MARKS is from 1 to {MAX_CLAIM_MARKS}")
    return value
