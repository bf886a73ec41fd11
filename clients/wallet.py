"""The player's wallet (Book V.2, V.3, V.6; docs/architecture.md §3) and its home on disk.

A :class:`Wallet` is everything a save code holds: the ledger key, the campaign (progress and
the offline collection of ✓ stamped and ⧗ unstamped prints, unstamped marks and bundles), the
chain of every stamped print and note held, the seen-registry, the fraud proofs kept, the
pinned league (URL, root key, manifest) and a stamp request sent but not yet answered. Its
operations are pure; :class:`WalletHome` is the one place it touches the disk: the save code
kept encrypted in the user's data directory (``CZ_HOME`` overrides it), written atomically
(temporary file, fsync, rename; the previous code kept as ``wallet.czsave.bak``; mode 0600).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs

from game.window.campaign import Campaign
from game.window.economy.collection import Collection
from game.window.economy.prints import MISPRINT_SERIAL, Finish, Print
from ledger.address import address_of
from ledger.api.mint import StampAnswer, Stamped
from ledger.api.notary import Provenance
from ledger.api.treasury import BuyRequest, ClaimRequest
from ledger.armor import SAVE_CODE
from ledger.cards import LedgerCard
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.encoding import decode_b64url, encode_b64url
from ledger.endorsements import Chain, Endorsement, endorse, verify_league_chain
from ledger.errors import DecodeError, LedgerError, SchemaError, SizeLimitError, VerificationError
from ledger.fraud import FraudProof, SeenRegistry
from ledger.keys import SEED_SIZE, PublicKey, SigningKey
from ledger.limits import MAX_ARMOR_BYTES, MAX_CHAINS_PER_SLIP
from ledger.manifest import LeagueManifest
from ledger.requests import StampRequest
from ledger.savecode import DEFAULT_KDF, MINIMUM_KDF, KdfParams, open_save_code, seal_save_code
from ledger.slips import Slip

#: The payload's format name: a save code of another format is refused, not guessed at.
FORMAT = "cz-wallet/1"
#: The environment variable that moves the wallet's home (tests, several wallets on one machine).
HOME_ENV = "CZ_HOME"
#: ``CZ_KDF=minimum`` seals with libsodium's cheapest argon2id cost: for tests only.
KDF_ENV = "CZ_KDF"
WALLET_FILE = "wallet.czsave"
BACKUP_SUFFIX = ".bak"
#: Fraud proofs a wallet keeps (each is a few hundred bytes; the oldest are kept).
MAX_PROOFS = 10_000


class WalletError(LedgerError):
    """A wallet operation refused: no such item, nothing to stamp, no league pinned..."""


@dataclass(frozen=True, slots=True)
class LeaguePin:
    """The league this wallet trusts: where it is, its root key (pinned on first use) and the
    manifest that key signed (what every import is verified against, offline)."""

    url: str
    root: PublicKey
    manifest: LeagueManifest

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "root": self.root.to_text(), "manifest": self.manifest.to_wire()}

    @classmethod
    def from_json(cls, data: object) -> LeaguePin:
        if not isinstance(data, dict) or set(data) != {"url", "root", "manifest"}:
            raise SchemaError("a pinned league is an object with exactly url, root and manifest")
        url, root = data["url"], data["root"]
        if not isinstance(url, str) or not isinstance(root, str):
            raise SchemaError("a pinned league's url and root are text")
        pinned = PublicKey.from_text(root)
        manifest = LeagueManifest.from_wire(data["manifest"])
        manifest.verify_root(pinned)
        return cls(url, pinned, manifest)


@dataclass(frozen=True, slots=True)
class StampCredit:
    """What one stamp answer did to the wallet: the serials credited and the refusals."""

    stamped: tuple[PrintCertificate, ...]
    refused: tuple[tuple[str, str, str], ...]  # (title, finish, reason)


@dataclass(frozen=True, slots=True)
class NotaryRecord:
    """What the notary's record of one item says of a chain of it (L-23): the hops it
    records after the chain's last (``moved``: the item went on from where the chain ends),
    or the first hop at which its record differs from the chain (``differs``)."""

    chain: Chain
    moved: tuple[Endorsement, ...] = ()
    differs: int | None = None

    @property
    def holder(self) -> str:
        """The address of the holder the record names (the chain's own end if it did not
        move)."""
        if self.moved:
            return address_of(PublicKey.from_text(self.moved[-1].to))
        last = self.chain.endorsements
        return address_of(
            PublicKey.from_text(last[-1].to if last else self.chain.certificate.issued_to)
        )

    def says(self) -> str:
        """One clause for a person: where the record has the item."""
        if self.moved:
            first = self.moved[0]
            return (
                f"the notary records {self.chain.serial} sent on at hop {first.hop} "
                f"(to {address_of(PublicKey.from_text(first.to))}), now held by "
                f"{self.holder}"
            )
        return (
            f"the notary records another endorsement of {self.chain.serial} at hop "
            f"{self.differs} than this chain's"
        )


def notary_record(chain: Chain, life: Provenance, manifest: LeagueManifest) -> NotaryRecord:
    """Compare ``chain`` with the notary's account of its item (``GET /provenance``), the
    receipts of every hop of the chain's issue checked offline under the manifest's notary
    key, and the hops it records past the chain's end verified as the chain's continuation
    (signatures and links): the notary's word is checked, not believed."""
    notary = PublicKey.from_text(manifest.notary)
    origin = f"{manifest.league}/notary"
    recorded: dict[int, Endorsement] = {}
    for record in life.hops:
        receipt, endorsement = record.receipt, record.endorsement
        if receipt.issue != chain.issue or endorsement.serial != chain.serial:
            continue
        if receipt.origin != origin:
            raise VerificationError("a receipt is of another log than the league's notary")
        receipt.check(notary, endorsement)
        recorded[endorsement.hop] = endorsement
    mine = chain.endorsements
    for hop, endorsement in sorted(recorded.items()):
        if hop <= len(mine) and endorsement.hash() != mine[hop - 1].hash():
            return NotaryRecord(chain, differs=hop)
    moved: list[Endorsement] = []
    while (hop := len(mine) + len(moved) + 1) in recorded:
        moved.append(recorded[hop])
    if moved:
        verify_league_chain(
            Chain(certificate=chain.certificate, endorsements=(*mine, *moved)), manifest
        )
    return NotaryRecord(chain, moved=tuple(moved))


@dataclass(slots=True)
class Wallet:
    """Everything a save code holds. Mutable: a command loads it, changes it, saves it."""

    key: SigningKey
    campaign: Campaign
    #: Stamped prints held: serial -> the chain ending at this wallet's key.
    prints: dict[str, Chain] = field(default_factory=dict)
    #: Notes held (the treasury is not served yet: empty until it is).
    notes: dict[str, Chain] = field(default_factory=dict)
    seen: SeenRegistry = field(default_factory=SeenRegistry)
    proofs: list[FraudProof] = field(default_factory=list)
    league: LeaguePin | None = None
    #: A stamp request sent (or about to be) whose answer has not been credited yet.
    pending: StampRequest | None = None
    #: A claim for notes, and a purchase with notes, sent (or about to be) and not credited
    #: yet: replayed as they are (the treasury answers a replay the same).
    pending_claim: ClaimRequest | None = None
    pending_buy: BuyRequest | None = None
    #: Notes this wallet endorsed to the treasury in a purchase the notary rejected without
    #: recording them (another note of it was spent elsewhere first): still this wallet's,
    #: but their hop to the treasury is signed and in the treasury's log, so another
    #: endorsement at that hop would convict this key (L-05). They are only ever paid to the
    #: treasury again, as these very chains (L-21).
    bound: dict[str, Chain] = field(default_factory=dict)
    #: Standard prints endorsed to the mint for an upgrade the notary rejected without
    #: recording them: the same, bound to the mint; only ever returned to the mint again, as
    #: these very chains, by the next upgrade of them (L-21).
    bound_prints: dict[str, Chain] = field(default_factory=dict)

    @classmethod
    def new(cls, key: SigningKey | None = None, *, seed: int | None = None) -> Wallet:
        """A fresh wallet: a newly struck key (V.2) and a campaign with nothing won yet."""
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "big") >> 1
        return cls(key or SigningKey.generate(), Campaign(seed))

    @property
    def public(self) -> PublicKey:
        return self.key.public

    @property
    def card(self) -> LedgerCard:
        """My ledger card: what a counterparty endorses to (V.6 "Copy my ledger card")."""
        return LedgerCard.for_key(self.public)

    @property
    def collection(self) -> Collection:
        return self.campaign.collection

    def _set_prints(self, prints: Iterable[Print]) -> None:
        collection = replace(self.collection, prints=tuple(prints))
        self.campaign = replace(self.campaign, collection=collection)

    def give(self, *, marks: int = 0, prints: Sequence[Print] = (), bundles: int = 0) -> None:
        """Credit offline winnings (unstamped marks, ⧗ prints, bundles) to the collection."""
        collection = self.collection.add(marks=marks, prints=tuple(prints), bundles=bundles)
        self.campaign = replace(self.campaign, collection=collection)

    # -- stamping (V.4) --------------------------------------------------------------------

    def unstamped(self) -> list[tuple[str, str]]:
        """(title, finish) of every ⧗ print that can be presented for stamping: all but the
        Misprint, which the mint never stamps (L-03)."""
        return [
            (p.title, p.finish.value)
            for p in self.collection.prints
            if not p.stamped and p.serial != MISPRINT_SERIAL
        ]

    def credit(self, answer: StampAnswer) -> StampCredit:
        """Turn one ⧗ print into a ✓ print per certificate of ``answer`` (checked by the
        caller: mint-signed, in the runs, issued to this key) and keep its chain; all of the
        answer is credited, or (a certificate for a print not presented) none of it."""
        prints = list(self.collection.prints)
        chains: dict[str, Chain] = {}
        stamped: list[PrintCertificate] = []
        refused: list[tuple[str, str, str]] = []
        for item in answer.items:
            if not isinstance(item, Stamped):
                refused.append((item.title, item.finish, item.reason))
                continue
            certificate = item.certificate
            if certificate.serial in self.prints or certificate.serial in chains:
                continue  # a replayed answer already credited
            index = next(
                (
                    i
                    for i, p in enumerate(prints)
                    if not p.stamped
                    and p.serial is None
                    and (p.title, p.finish.value) == (certificate.title, certificate.finish)
                ),
                None,
            )
            if index is None:
                raise WalletError(
                    f"the mint stamped a {certificate.finish} {certificate.title} "
                    "this wallet did not present"
                )
            prints[index] = Print(
                certificate.title, Finish(certificate.finish), True, certificate.serial
            )
            chains[certificate.serial] = Chain(certificate=certificate, endorsements=())
            stamped.append(certificate)
        self.prints.update(chains)  # all of the answer or, on a refusal above, none of it
        self._set_prints(prints)
        return StampCredit(tuple(stamped), tuple(refused))

    # -- trading (V.6) ---------------------------------------------------------------------

    def held_chains(self, serials: Sequence[str], to: PublicKey) -> list[Chain]:
        """The chains of the items ``serials`` names, each one this wallet may send to
        ``to``: held, free (not bound), named once, at most a slip's worth."""
        if not serials:
            raise WalletError("name at least one stamped print or note to send")
        if len(set(serials)) != len(serials):
            raise WalletError("name each serial once")
        if len(serials) > MAX_CHAINS_PER_SLIP:
            raise SizeLimitError(f"a slip carries at most {MAX_CHAINS_PER_SLIP} items")
        if to == self.public:
            raise WalletError("that ledger card is your own: a slip goes to another key")
        for serial in serials:
            if serial in self.bound:
                raise WalletError(
                    f"{serial} is bound to the treasury: its hop to the treasury is signed "
                    "(a rejected purchase), so it only pays the treasury again (cz buy)"
                )
            if serial in self.bound_prints:
                raise WalletError(
                    f"{serial} is bound to the mint: its hop to the mint is signed (a rejected "
                    f"upgrade), so it only goes back to the mint (cz buy --upgrade {serial})"
                )
            if serial not in self.prints and serial not in self.notes:
                raise WalletError(self._not_held(serial))
        held = [self.prints.get(serial) or self.notes[serial] for serial in serials]
        for chain in held:
            signed = self.seen.after(chain)
            if signed is not None:
                raise WalletError(
                    f"{chain.serial} was already signed away from here at hop {signed.hop}: "
                    "signing it again would be a double endorsement (V.7); nothing was signed"
                )
        return held

    def send(self, serials: Sequence[str], to: PublicKey, time: int) -> Slip:
        """Endorse each held item to ``to`` and return the slip. The items leave the wallet
        now (V.6: "the instant the slip is written"); the new hops join the seen-registry so
        this wallet never signs the same hop twice by accident (L-05)."""
        chains = [endorse(held, self.key, to, time) for held in self.held_chains(serials, to)]
        slip = Slip(chains=tuple(chains))
        for chain in chains:
            self.seen.admit(chain)
        self.release(serials)
        return slip

    def release(self, serials: Iterable[str]) -> None:
        """Items endorsed away leave the wallet, and prints its collection, at once (V.6)."""
        gone = set(serials)
        for serial in gone:
            self.prints.pop(serial, None)
            self.notes.pop(serial, None)
        self._set_prints(p for p in self.collection.prints if p.serial not in gone)

    def leave(self, record: NotaryRecord) -> None:
        """The notary records the item sent on from this wallet (by another device, from a
        newer save code): it leaves the wallet, and the recorded hops join the seen-registry,
        so this wallet never signs the item again (L-05, L-23)."""
        serial = record.chain.serial
        held = self.prints.get(serial) or self.notes.get(serial)
        if held is None or held != record.chain or not record.moved:
            raise WalletError(f"{serial} is not held here as the notary's record was read")
        self.seen.admit(
            Chain(certificate=held.certificate, endorsements=(*held.endorsements, *record.moved))
        )
        self.release([serial])

    def _not_held(self, serial: str) -> str:
        for p in self.collection.prints:
            if p.serial == serial:
                return f"{serial} is unstamped (⧗): only a stamped print can be traded (V.1)"
            if not p.stamped and serial.casefold() == p.title.casefold():
                return f"name a print by its serial, not its title ({serial!r})"
        return f"this wallet holds no stamped print or note {serial}"

    def check_new(self, chains: Iterable[Chain]) -> None:
        """Refuse chains of items this wallet already holds (a slip imported twice), and
        chains that end where this wallet has seen the item move on since (an old slip of an
        item sent away: held again, it would be signed away twice, L-05)."""
        for chain in chains:
            if (
                chain.serial in self.prints
                or chain.serial in self.notes
                or (chain.serial in self.bound or chain.serial in self.bound_prints)
            ):
                raise WalletError(f"{chain.serial} is already in this wallet")
            moved = self.seen.after(chain)
            if moved is not None:
                raise WalletError(
                    f"{chain.serial} has moved on since this slip (hop {moved.hop} is known "
                    "here): the slip is history, and holding it again would lead to signing "
                    "the item away twice; nothing was admitted"
                )

    def admit(self, chains: Iterable[Chain]) -> None:
        """Hold ``chains`` (verified by :func:`ledger.slips.receive_slip`, ending at my key)."""
        chains = list(chains)
        self.check_new(chains)
        prints = list(self.collection.prints)
        for chain in chains:
            certificate = chain.certificate
            if isinstance(certificate, NoteCertificate):
                self.notes[chain.serial] = chain
                continue
            self.prints[chain.serial] = chain
            prints.append(
                Print(certificate.title, Finish(certificate.finish), True, certificate.serial)
            )
        self._set_prints(prints)

    def keep(self, proofs: Iterable[FraudProof]) -> int:
        """Keep fraud proofs not kept yet (V.6 "refused with a fraud proof retained");
        returns how many are new."""
        have = {(p.first.hash(), p.second.hash()) for p in self.proofs}
        new = 0
        for proof in proofs:
            ident = (proof.first.hash(), proof.second.hash())
            if ident not in have and len(self.proofs) < MAX_PROOFS:
                self.proofs.append(proof)
                have.add(ident)
                new += 1
        return new

    # -- the save code's payload (V.3) ---------------------------------------------------------

    def to_payload(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "key": encode_b64url(self.key.seed),
            "campaign": self.campaign.to_json(),
            "prints": [c.to_wire() for c in self.prints.values()],
            "notes": [c.to_wire() for c in self.notes.values()],
            "seen": self.seen.to_wire(),
            "fraud_proofs": [p.to_wire() for p in self.proofs],
            "league": self.league.to_json() if self.league else None,
            "pending_stamp": self.pending.to_wire() if self.pending else None,
            "pending_claim": self.pending_claim.to_wire() if self.pending_claim else None,
            "pending_buy": self.pending_buy.to_wire() if self.pending_buy else None,
            "bound_notes": [c.to_wire() for c in self.bound.values()],
            "bound_prints": [c.to_wire() for c in self.bound_prints.values()],
        }

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> Wallet:
        """Read a payload back strictly; a wallet whose parts disagree is refused."""
        keys = {
            "format",
            "key",
            "campaign",
            "prints",
            "notes",
            "seen",
            "fraud_proofs",
            "league",
            "pending_stamp",
        }
        if data.get("format") != FORMAT:
            raise SchemaError(f"this save code is not a {FORMAT} wallet")
        # Codes sealed before the treasury's commands, and before bound items, still read.
        if set(data) not in (keys, keys | _TREASURY_KEYS, keys | _TREASURY_KEYS | _BOUND_KEYS):
            raise SchemaError(f"a wallet payload has exactly the fields {sorted(keys)}")
        seed = data["key"]
        if not isinstance(seed, str):
            raise SchemaError("the wallet's key is text")
        key = SigningKey(decode_b64url(seed, length=SEED_SIZE, what="the wallet's key"))
        proofs = _list(data["fraud_proofs"], "fraud_proofs")
        if len(proofs) > MAX_PROOFS:
            raise SizeLimitError(f"a wallet keeps at most {MAX_PROOFS} fraud proofs")
        pending = data["pending_stamp"]
        wallet = cls(
            key=key,
            campaign=Campaign.from_json(data["campaign"]),
            prints=_chains(data["prints"], "prints", PrintCertificate),
            notes=_chains(data["notes"], "notes", NoteCertificate),
            seen=SeenRegistry.from_wire(data["seen"]),
            proofs=[FraudProof.from_wire(p) for p in proofs],
            league=None if data["league"] is None else LeaguePin.from_json(data["league"]),
            pending=None if pending is None else StampRequest.from_wire(pending),
        )
        claim, buy = data.get("pending_claim"), data.get("pending_buy")
        wallet.pending_claim = None if claim is None else ClaimRequest.from_wire(claim)
        wallet.pending_buy = None if buy is None else BuyRequest.from_wire(buy)
        wallet.bound = _chains(data.get("bound_notes", []), "bound_notes", NoteCertificate)
        wallet.bound_prints = _chains(
            data.get("bound_prints", []), "bound_prints", PrintCertificate
        )
        wallet._check()
        return wallet

    def _check(self) -> None:
        mine = self.public.to_text()
        for chain in (*self.prints.values(), *self.notes.values()):
            last = chain.endorsements[-1].to if chain.endorsements else chain.certificate.issued_to
            if last != mine:
                raise SchemaError(f"the wallet holds {chain.serial}, endorsed to another key")
        for chain in (*self.bound.values(), *self.bound_prints.values()):
            if not chain.endorsements or chain.endorsements[-1].from_ != mine:
                raise SchemaError(f"the wallet binds {chain.serial} without its own last hop")
            if chain.serial in self.notes or chain.serial in self.prints:
                raise SchemaError(f"the wallet holds {chain.serial} both free and bound")
        stamped = sorted(p.serial or "" for p in self.collection.prints if p.stamped)
        if stamped != sorted(self.prints):
            raise SchemaError("the wallet's stamped prints and the chains it holds disagree")


#: The payload's fields since the treasury's commands (optional when read back).
_TREASURY_KEYS = {"pending_claim", "pending_buy"}
#: The payload's field since notes bound to the treasury (L-21; optional when read back).
_BOUND_KEYS = {"bound_notes", "bound_prints"}


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise SchemaError(f"the wallet's {what} are a list")
    return value


def _chains(
    value: object, what: str, kind: type[PrintCertificate | NoteCertificate]
) -> dict[str, Chain]:
    chains: dict[str, Chain] = {}
    for item in _list(value, what):
        chain = Chain.from_wire(item)
        if not isinstance(chain.certificate, kind):
            raise SchemaError(f"the wallet's {what} hold a {chain.certificate.kind} certificate")
        if chain.serial in chains:
            raise SchemaError(f"the wallet holds {chain.serial} twice")
        chains[chain.serial] = chain
    return chains


def kdf_from_env() -> KdfParams:
    """The argon2id cost save codes are sealed with: libsodium's moderate cost, or the
    minimum when ``CZ_KDF=minimum`` (tests only: a weak passphrase falls fast under it)."""
    name = os.environ.get(KDF_ENV, "moderate")
    if name == "moderate":
        return DEFAULT_KDF
    if name == "minimum":
        return MINIMUM_KDF
    raise DecodeError(f"{KDF_ENV} is 'moderate' or 'minimum', not {name!r}")


def seal(wallet: Wallet, passphrase: str) -> str:
    """A fresh save code of ``wallet`` (a new salt and nonce every time)."""
    return seal_save_code(wallet.to_payload(), passphrase, kdf_from_env())


def unseal(code: str, passphrase: str) -> Wallet:
    """The wallet inside a save code."""
    return Wallet.from_payload(open_save_code(code, passphrase))


class WalletHome:
    """The directory that keeps this device's wallet as an encrypted save code."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / WALLET_FILE
        self.backup = directory / (WALLET_FILE + BACKUP_SUFFIX)

    @classmethod
    def default(cls) -> WalletHome:
        """``$CZ_HOME``, else the platform's user data directory for ``cz``."""
        named = os.environ.get(HOME_ENV)
        directory = Path(named) if named else Path(platformdirs.user_data_dir("cz", False))
        return cls(directory)

    def exists(self) -> bool:
        return self.path.exists()

    def read_code(self) -> str:
        """The kept save code's text (no passphrase needed to read it, only to open it)."""
        if not self.path.exists():
            hint = f" (a previous one is kept in {self.backup})" if self.backup.exists() else ""
            raise WalletError(
                f"no wallet in {self.directory}{hint}: strike a key (cz key strike) "
                "or load a save code (cz load CODE)"
            )
        return read_code(self.path)

    def read(self, passphrase: str) -> Wallet:
        return unseal(self.read_code(), passphrase)

    def write(self, wallet: Wallet, passphrase: str) -> None:
        self.write_code(seal(wallet, passphrase))

    def write_code(self, code: str) -> None:
        """Replace the kept code atomically: the new code is written to a temporary file and
        synced, the current one is hard-linked to ``.bak``, then the new one renamed over it.
        At every instant the wallet file is a whole code, old or new."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.directory / f".{WALLET_FILE}.{os.getpid()}.tmp"
        try:
            write_synced(temporary, code)
            if self.path.exists():
                linked = self.directory / f".{WALLET_FILE}.{os.getpid()}.bak"
                with contextlib.suppress(FileNotFoundError):
                    linked.unlink()
                os.link(self.path, linked)
                os.replace(linked, self.backup)
            os.replace(temporary, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
        _sync_directory(self.directory)

    def retire(self) -> Path | None:
        """Keep the current code for good before a wallet is replaced (a new key, another
        save code): ``replaced/wallet-<UTC time>.czsave``, 0600. The ``.bak`` holds only the
        previous write and would lose it two writes later."""
        if not self.path.exists():
            return None
        kept = self.directory / "replaced"
        kept.mkdir(mode=0o700, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        target = kept / f"wallet-{stamp}.czsave"
        write_synced(target, read_code(self.path), os.O_EXCL)
        _sync_directory(kept)
        return target

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the home's lock: one ``cz`` at a time changes a wallet."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.directory / "wallet.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def read_code(path: Path) -> str:
    """A save code's text from ``path``, read no further than the published limit."""
    return read_ascii(path, MAX_ARMOR_BYTES[SAVE_CODE], "save code")


def read_ascii(source: str | Path, limit: int, what: str) -> str:
    """The text of the file ``source``, read no further than ``limit`` bytes of ASCII (a
    ``what`` names it in the refusals)."""
    raw = read_bounded(source, limit, what)
    return ascii_text(raw, f"{source} is not a {what} (not ASCII text)")


def read_bounded(source: str | Path, limit: int, what: str) -> bytes:
    """The bytes of the file ``source``, read no further than ``limit`` (:class:`DecodeError`
    when it cannot be read, :class:`SizeLimitError` past ``limit``: a ``what`` names it)."""
    try:
        with Path(source).open("rb") as f:
            raw = f.read(limit + 1)
    except OSError as exc:
        raise DecodeError(f"cannot read {source}: {exc.strerror}") from None
    return bounded(raw, limit, what)


def bounded(raw: bytes, limit: int, what: str) -> bytes:
    """``raw``, read up to ``limit`` + 1 bytes: :class:`SizeLimitError` past ``limit``."""
    if len(raw) > limit:
        raise SizeLimitError(f"a {what} is at most {limit} bytes")
    return raw


def ascii_text(raw: bytes, not_ascii: str) -> str:
    """``raw`` as text: :class:`DecodeError` with the line ``not_ascii`` unless it is ASCII."""
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise DecodeError(not_ascii) from None


def write_synced(path: Path, text: str, create: int = os.O_TRUNC) -> None:
    """Write ASCII ``text`` to ``path`` (mode 0600 when created) and sync it before returning;
    ``create`` is ``os.O_TRUNC`` (replace what is there) or ``os.O_EXCL`` (a new file only)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | create, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())


def _sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
