"""The booths of Book V as pages: Topbar (Unlock, Save, Load, the league set and pinned),
Exchange (Strike the key, Copy my ledger card, Endorse & write the slip, Import), Vault (the
collection ✓/⧗, the offline Store, Present for stamping, Claim notes, Buy with notes, finish
upgrades, bundles) and Provenance.

Each button runs the ``cz`` command the terminal runs (:mod:`clients.web.calls`): the same
wallet code, the same league client, the same checks and refusals. A button that signs with
the key (stamp, claim, buy, send) never signs at once: its form only names what would be
signed and to whom (:class:`Confirm`), and the signing is a second POST, from the confirmation
page, of that confirmation's one-time id. Nothing is ever done by a GET.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from clients.web import values
from clients.web.calls import Answer, Watched, run
from clients.web.launch import Confirm, Done, Job, Web, see, show, state
from clients.web.security import Handler

routes = web.RouteTableDef()

#: Confirmations kept at once (older ones are dropped: shown and never clicked).
MAX_CONFIRMS = 32
#: The largest pasted text read (a slip, a card, a save code).
MAX_PASTE = 256 * 1024
#: Where the slips the pages write are kept (in the wallet's home, mode 0700; each 0600),
#: and where a dismissed one goes.
SLIPS_DIR = "slips"
DISMISSED = "dismissed"
_SLIP_NAME = re.compile(r"slip-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}\.slip")


@web.middleware
async def checked(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A form's value that is not what it must be (:mod:`clients.web.values`): its page says
    which, status 400, and nothing was run."""
    try:
        return await handler(request)
    except values.BadValue as exc:
        return show(request, "refused.html", status=400, title="Refused", refusal=str(exc))


async def cz(request: web.Request, *argv: str, stdin: str = "") -> Answer:
    """``cz ARGV`` with this launch's passphrase (none while locked)."""
    return await run(argv, passphrase=state(request).passphrase, stdin=stdin)


async def _form(request: web.Request) -> dict[str, str]:
    data = await request.post()
    return {k: v for k, v in data.items() if isinstance(v, str)}


def _text(form: dict[str, str], name: str) -> str:
    value = form.get(name, "")
    if len(value) > MAX_PASTE:
        raise web.HTTPRequestEntityTooLarge(max_size=MAX_PASTE, actual_size=len(value))
    return value.strip()


def _result(
    request: web.Request,
    title: str,
    answer: Answer,
    *,
    slip: str = "",
    back: str = "/",
) -> web.Response:
    """An action's outcome: what cz said (``slip``: the slip it wrote), or its refusal
    (status 409: nothing was done)."""
    return show(
        request,
        "result.html",
        status=200 if answer.ok else 409,
        title=title,
        answer=answer,
        slip=slip if answer.ok else "",
        back=back,
        proofs=[],
    )


def _slips() -> Path:
    """The folder of the slips the pages write, in the wallet's home (made 0700)."""
    from clients.wallet import WalletHome

    directory = WalletHome.default().directory / SLIPS_DIR
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    return directory


def _new_slip() -> Path:
    """A new slip file's name (written by ``cz send --out``: synced, 0600, before the
    wallet is saved without the items)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return _slips() / f"slip-{stamp}-{secrets.token_hex(4)}.slip"


#: A slip ``cz send --out`` synced and had not yet renamed into place (its temporary name).
_PARTIAL_SLIP = re.compile(r"\.(slip-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}\.slip)\.([0-9]+)\.tmp")


def _writing(pid: int) -> bool:
    """Whether the process ``pid`` that named a temporary slip may still be writing it: this
    process (a send under way here) or any other that is alive."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    return True


def _finish_partial_slips(collection: dict[str, Any] | None) -> None:
    """Slips a crash left under their temporary name (``cz send --out`` syncs the slip, saves
    the wallet without its items, then renames the slip): one whose items the saved wallet no
    longer holds was sent, and is put in place to be listed; one whose items it still holds
    was never sent, and goes (its endorsements must never reach anyone: the items may be sent
    again, and two signatures at one hop are fraud). Nothing is decided without the wallet's
    collection, nor while the process that named the file may still be writing it (a send
    under way here saves the wallet, then renames its slip: taking the slip meanwhile would
    lose the items)."""
    from ledger.errors import LedgerError
    from ledger.slips import Slip

    if collection is None:
        return
    held = {p["serial"] for p in collection.get("prints", []) if p.get("serial")}
    held |= {n["serial"] for n in collection.get("note_list", [])}
    for partial in _slips().glob(".slip-*.tmp"):
        named = _PARTIAL_SLIP.fullmatch(partial.name)
        if named is None or _writing(int(named[2])):
            continue
        try:
            slip = Slip.from_armor(partial.read_text(encoding="ascii"))
        except (OSError, UnicodeDecodeError, LedgerError):
            partial.unlink(missing_ok=True)  # torn before it was synced: it was never sent
            continue
        serials = {chain.serial for chain in slip.chains}
        if serials.isdisjoint(held):
            os.replace(partial, partial.with_name(named[1]))
        elif serials <= held:
            partial.unlink()


def _kept_slips(collection: dict[str, Any] | None = None) -> list[dict[str, str]]:
    """The slips written here and not yet dismissed, newest first: name and text (those a
    crash left half-written settled first, against ``collection``)."""
    _finish_partial_slips(collection)
    found = sorted(
        (p for p in _slips().glob("slip-*.slip") if _SLIP_NAME.fullmatch(p.name)), reverse=True
    )
    return [{"name": p.name, "text": p.read_text(encoding="ascii")} for p in found]


def _done(
    request: web.Request,
    title: str,
    answer: Answer,
    *,
    back: str,
    proofs: Sequence[dict[str, Any]] = (),
) -> web.Response:
    """An action done (or refused) by a POST: its outcome kept, and the browser sent to see
    it (303 → ``GET /done/ID``), so a reload never does it twice."""
    kept = state(request).done
    while len(kept) >= MAX_CONFIRMS:
        kept.pop(next(iter(kept)))
    ident = secrets.token_urlsafe(16)
    kept[ident] = Done(title, answer, back, tuple(proofs))
    return see(request, f"/done/{ident}")


@routes.get("/done/{ident}")
async def done(request: web.Request) -> web.Response:
    """An action's outcome, as often as it is reloaded (the action was done once)."""
    found = state(request).done.get(request.match_info["ident"])
    if found is None:
        return show(request, "refused.html", status=404, title="Done", refusal="no such outcome")
    return show(
        request,
        "result.html",
        status=200 if found.answer.ok else 409,
        title=found.title,
        answer=found.answer,
        slip="",
        back=found.back,
        proofs=list(found.proofs),
    )


async def _read(request: web.Request, *argv: str) -> tuple[Any, str | None]:
    """A reading command's ``--json`` document, or its refusal."""
    answer = await cz(request, *argv, "--json")
    return (answer.json(), None) if answer.ok else (None, answer.refusal)


# -- home and Topbar ----------------------------------------------------------------------


async def _collection(request: web.Request, title: str) -> dict[str, Any] | web.Response:
    """The wallet's collection for a Vault button, or the page that refuses ``title`` (no
    wallet, a locked one, no league set: cz's own refusal)."""
    collection, refusal = await _read(request, "collection")
    if collection is None:
        return show(request, "refused.html", status=409, title=title, refusal=refusal)
    collection_: dict[str, Any] = collection
    return collection_


@routes.get("/")
async def home(request: web.Request) -> web.Response:
    from clients.wallet import WalletHome

    if not WalletHome.default().exists():
        return see(request, "/exchange")
    campaign, refusal = await _read(request, "campaign")
    return show(request, "home.html", campaign=campaign, refusal=refusal)


@routes.get("/topbar")
async def topbar_page(request: web.Request) -> web.Response:
    return show(request, "topbar.html", refusal=None)


@routes.post("/unlock")
async def unlock(request: web.Request) -> web.Response:
    """The passphrase checked by opening the wallet (here, in this process), then kept in
    this process's memory until Lock or the server stops."""
    from clients.wallet import WalletHome, unseal
    from ledger.errors import LedgerError

    form = await _form(request)
    phrase = form.get("passphrase", "")
    home = WalletHome.default()
    try:
        await asyncio.to_thread(unseal, home.read_code(), phrase)
    except LedgerError as exc:
        return show(request, "topbar.html", status=403, refusal=exc.diagnostics().split(":", 1)[-1])
    state(request).passphrase = phrase
    back = form.get("next", "/")
    return see(request, back)


@routes.post("/lock")
async def lock(request: web.Request) -> web.Response:
    launch = state(request)
    launch.passphrase = ""
    launch.confirms.clear()
    return see(request, "/topbar")


@routes.post("/topbar/save")
async def save(request: web.Request) -> web.Response:
    """Topbar → Save → enter a passphrase → Write the save code (V.3)."""
    form = await _form(request)
    answer = await run(["save", "--json"], passphrase=form.get("passphrase", ""))
    code = answer.json()["code"] if answer.ok else None
    return show(request, "saved.html", status=200 if answer.ok else 409, answer=answer, code=code)


@routes.post("/topbar/load")
async def load(request: web.Request) -> web.Response:
    """Topbar → Load: a save code made this device's wallet (V.3)."""
    form = await _form(request)
    phrase = form.get("passphrase", "")
    argv = ["load", "-", "--json"] + (["--replace"] if form.get("replace") else [])
    answer = await run(argv, passphrase=phrase, stdin=_text(form, "code") + "\n")
    if answer.ok:
        state(request).passphrase = phrase
    return _done(request, "Load", answer, back="/vault")


@routes.post("/topbar/league")
async def league_set(request: web.Request) -> web.Response:
    """Topbar → the league: set and pinned on first use (its root key), as cz league set."""
    form = await _form(request)
    answer = await cz(request, "league", "set", "--", values.league_url(_text(form, "url")))
    return _done(request, "League set", answer, back="/topbar")


# -- Exchange -------------------------------------------------------------------------------


@routes.get("/exchange")
async def exchange(request: web.Request) -> web.Response:
    from clients.cz_wallet import WARNING
    from clients.wallet import WalletHome

    if not WalletHome.default().exists():
        return show(request, "strike.html", warning=WARNING, refusal=None)
    card, refusal = await _read(request, "card")
    collection, _ = await _read(request, "collection")
    return show(
        request,
        "exchange.html",
        card=card,
        collection=collection,
        refusal=refusal,
        slips=_kept_slips(collection),
    )


@routes.post("/exchange/strike")
async def strike(request: web.Request) -> web.Response:
    """Exchange → Strike the key, after the book's warning (V.2)."""
    from clients.cz_wallet import WARNING

    form = await _form(request)
    phrase, again = form.get("passphrase", ""), form.get("again", "")
    if phrase != again:
        return show(
            request,
            "strike.html",
            status=409,
            warning=WARNING,
            refusal="the two passphrases differ: nothing was written",
        )
    answer = await run(["key", "strike", "--json"], passphrase=phrase)
    if answer.ok:
        state(request).passphrase = phrase
    return _done(request, "Strike the key", answer, back="/topbar")


@routes.post("/exchange/send")
async def send(request: web.Request) -> web.Response:
    """Exchange → paste their ledger card → choose → Endorse & write the slip: the
    confirmation names the items and the card's address; nothing is signed yet."""
    from ledger.cards import LedgerCard
    from ledger.errors import LedgerError

    data = await request.post()
    items = [values.serial(v, "an item") for v in data.getall("item", []) if isinstance(v, str)]
    card_text = str(data.get("card", "")).strip()
    try:
        card = LedgerCard.from_armor(card_text + "\n")
    except LedgerError as exc:
        return show(
            request,
            "refused.html",
            status=409,
            title="Endorse & write the slip",
            refusal=f"not a ledger card: {exc.diagnostics()}; nothing was signed",
        )
    if not items:
        return show(
            request,
            "refused.html",
            status=409,
            title="Endorse & write the slip",
            refusal="choose the prints or notes to send; nothing was signed",
        )
    slip = _new_slip()
    return _confirm(
        request,
        Confirm(
            title="Endorse & write the slip",
            signed=tuple(f"an endorsement of {serial}" for serial in items),
            to=f"{card.address} (key {card.key}), the ledger card you pasted",
            button="Endorse & write the slip",
            argv=("send", "--to", "-", "--out", str(slip), "--", *items),
            stdin=card_text + "\n",
            slip_file=str(slip),
        ),
    )


@routes.post("/exchange/slips/dismiss")
async def dismiss(request: web.Request) -> web.Response:
    """Exchange → a kept slip → Dismiss (handed over): it leaves the list, kept in
    slips/dismissed/."""
    name = (await _form(request)).get("name", "")
    found = _slips() / name
    if not _SLIP_NAME.fullmatch(name) or not found.is_file():
        raise values.BadValue("the slip", f"{name[:60]!r} is not a kept slip")
    dismissed = _slips() / DISMISSED
    dismissed.mkdir(mode=0o700, exist_ok=True)
    found.rename(dismissed / name)
    return see(request, "/exchange")


@routes.post("/exchange/import")
async def import_slip(request: web.Request) -> web.Response:
    """Exchange → paste a received slip → Import: verified, notarized, admitted whole or
    refused (a fraud proof kept and shown)."""
    form = await _form(request)
    answer = await cz(request, "import", "-", stdin=_text(form, "slip") + "\n")
    proofs: list[dict[str, Any]] = []
    if not answer.ok:
        collection, _ = await _read(request, "collection")
        proofs = collection["fraud_proof_list"] if collection else []
    return _done(request, "Import", answer, back="/exchange", proofs=proofs)


@routes.post("/exchange/sync")
async def sync(request: web.Request) -> web.Response:
    """Exchange → Sync: let go of what the notary records sent on from this key since this
    wallet's save code was written (another device, an older code; L-23). Signs nothing."""
    answer = await cz(request, "sync")
    return _done(request, "Sync", answer, back="/exchange")


# -- Vault ----------------------------------------------------------------------------------


@routes.get("/vault")
async def vault(request: web.Request) -> web.Response:
    collection, refusal = await _read(request, "collection")
    store, _ = await _read(request, "store")
    from ledger.catalog import PLAYING

    return show(
        request,
        "vault.html",
        collection=collection,
        store=store,
        titles=[c.name for c in PLAYING],
        refusal=refusal,
    )


@routes.post("/vault/stamp")
async def stamp(request: web.Request) -> web.Response:
    """Vault Store → Present for stamping: every unstamped print, to the league's mint."""
    collection = await _collection(request, "Present for stamping")
    if isinstance(collection, web.Response):
        return collection
    unstamped = [p for p in collection["prints"] if not p["stamped"]]
    signed: list[str] = []
    if collection.get("pending_stamp"):  # a stamp cut short: cz stamp sends it again first
        signed.append(
            "nothing new for the stamping request kept in your wallet (signed and sent "
            "before, its answer not received): it is sent again to finish it, as cz stamp "
            "does, and nothing is stamped or paid twice"
        )
    if unstamped:
        signed.append(
            f"a stamping request for your {len(unstamped)} unstamped prints ("
            + ", ".join(f"{p['title']} {p['finish']}" for p in unstamped)
            + "), with its proof of work"
        )
    if not signed:
        return show(
            request,
            "refused.html",
            status=409,
            title="Present for stamping",
            refusal="there is no unstamped print to present; nothing was signed",
        )
    return _confirm(
        request,
        Confirm(
            title="Present for stamping",
            signed=tuple(signed),
            to=_mint_of(collection),
            button="Present for stamping",
            argv=("stamp",),
        ),
    )


def _mint_of(collection: dict[str, Any], service: str = "mint") -> str:
    league = collection.get("league")
    if league is None:
        return "no league is set (Topbar: set the league first)"
    return (
        f"the {service} of the league {league['name']!r} at {league['url']} (root {league['root']})"
    )


@routes.post("/vault/claim")
async def claim(request: web.Request) -> web.Response:
    """Vault → Claim notes from unstamped marks (the faucet, V.5)."""
    form = await _form(request)
    collection = await _collection(request, "Claim notes")
    if isinstance(collection, web.Response):
        return collection
    marks = form.get("marks", "").strip()
    if marks:
        marks = values.count(marks, "the marks")
    argv: tuple[str, ...] = ("notes", "claim", "--", marks) if marks else ("notes", "claim")
    amount = f"M{marks}" if marks else "as many as today's faucet converts"
    return _confirm(
        request,
        Confirm(
            title="Claim notes",
            signed=(f"a claim of {amount} of your unstamped marks for notes",),
            to=_mint_of(collection, "treasury"),
            button="Claim notes",
            argv=argv,
        ),
    )


@routes.post("/vault/buy")
async def buy(request: web.Request) -> web.Response:
    """Vault → Buy with notes: a single, or a finish upgrade of a standard print (V.5, L-20)."""
    form = await _form(request)
    collection = await _collection(request, "Buy")
    if isinstance(collection, web.Response):
        return collection
    serial = form.get("upgrade", "").strip()
    if serial:
        serial = values.serial(serial, "the print to upgrade")
        finish = values.finish(form.get("finish", "gilt"))
        argv: tuple[str, ...] = ("buy", "--upgrade", serial, "--finish", finish)
        signed: tuple[str, ...] = (
            f"endorsements of the notes that pay a {finish} upgrade, to the treasury's key",
            f"an endorsement of your standard print {serial}, back to the mint's key (L-20)",
            "the purchase request",
        )
        title = f"Buy a {finish} upgrade of {serial}"
    else:
        single = values.title(form.get("title", ""))
        argv = ("buy", "--", single)
        signed = (
            f"endorsements of the fewest of your notes that pay for a {single}, to the "
            "treasury's key (the change comes back as new notes)",
            "the purchase request",
        )
        title = f"Buy {single} with notes"
    return _confirm(
        request,
        Confirm(
            title=title,
            signed=signed,
            to=_mint_of(collection, "treasury"),
            button="Buy",
            argv=argv,
        ),
    )


@routes.post("/vault/store")
async def store(request: web.Request) -> web.Response:
    """The offline store (V.5): unstamped marks buy unstamped prints, upgrades and bundles;
    bundles are opened. Nothing is signed: it is the wallet's own record."""
    form = await _form(request)
    what = form.get("what", "")
    argv: Sequence[str]
    if what == "single":
        argv = ("store", "buy", "--", values.title(form.get("title", "")))
    elif what == "upgrade":
        index = values.count(form.get("index", ""), "the print's number")
        argv = ("store", "upgrade", "--", index, values.finish(form.get("finish", "")))
    elif what == "bundle":
        argv = ("store", "bundle")
    elif what == "open":
        argv = ("bundle", "open")
    else:
        raise values.BadValue("the store's button", f"{what[:40]!r} is not one")
    answer = await cz(request, *argv)
    return _done(request, "Store", answer, back="/vault")


# -- confirmations -------------------------------------------------------------------------


def _confirm(request: web.Request, confirm: Confirm) -> web.Response:
    launch: Web = state(request)
    while len(launch.confirms) >= MAX_CONFIRMS:
        launch.confirms.pop(next(iter(launch.confirms)))
    ident = secrets.token_urlsafe(16)
    launch.confirms[ident] = confirm
    return see(request, f"/confirm/{ident}")


def _no_confirmation(request: web.Request, more: str = "") -> web.Response:
    """The answer to a confirmation id this launch does not hold (one-time: used or dropped)."""
    refusal = "no such confirmation (already signed, or shown before a Lock)" + more
    return show(request, "refused.html", status=404, title="Confirm", refusal=refusal)


@routes.get("/confirm/{ident}")
async def confirm_page(request: web.Request) -> web.Response:
    confirm = state(request).confirms.get(request.match_info["ident"])
    if confirm is None:
        return _no_confirmation(request)
    return show(request, "confirm.html", confirm=confirm, ident=request.match_info["ident"])


@routes.post("/confirm/{ident}")
async def confirmed(request: web.Request) -> web.Response:
    """The click that signs: the confirmation's command run, once."""
    confirm = state(request).confirms.pop(request.match_info["ident"], None)
    if confirm is None:
        return _no_confirmation(request, "; nothing was signed")
    launch = state(request)
    progress = Watched()
    task = asyncio.create_task(
        run(confirm.argv, passphrase=launch.passphrase, stdin=confirm.stdin, progress=progress)
    )
    while len(launch.jobs) >= MAX_CONFIRMS:
        launch.jobs.pop(next(iter(launch.jobs)))
    ident = secrets.token_urlsafe(16)
    launch.jobs[ident] = Job(confirm, progress, task)
    return see(request, f"/jobs/{ident}")


@routes.get("/jobs/{ident}")
async def job(request: web.Request) -> web.Response:
    """A signing under way, with cz's own progress (the proof of work), the page reloading
    itself each second; once answered, its outcome."""
    found = state(request).jobs.get(request.match_info["ident"])
    if found is None:
        return show(request, "refused.html", status=404, title="Working", refusal="no such job")
    if not found.task.done():
        return show(
            request, "job.html", title=found.confirm.title, progress=found.progress.progress
        )
    answer = found.task.result()
    slip = ""
    if found.confirm.slip_file and answer.ok:  # written before the wallet was saved
        slip = await asyncio.to_thread(Path(found.confirm.slip_file).read_text, "ascii")
    back = "/exchange" if found.confirm.slip_file else "/vault"
    return _result(request, found.confirm.title, answer, slip=slip, back=back)


# -- Provenance -----------------------------------------------------------------------------


@routes.get("/provenance")
async def provenance(request: web.Request) -> web.Response:
    """The provenance of any print or note, every proof checked here (cz provenance)."""
    typed = request.query.get("serial", "").strip()[:64]
    serial = values.serial(typed) if typed else ""
    answer = await cz(request, "provenance", "--", serial) if serial else None
    return show(request, "provenance.html", serial=serial, answer=answer)
