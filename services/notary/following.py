"""The notary follows the issuers' feeds, the mint's and the treasury's: exactly once.

The kernel's :class:`~services.kernel.follower.FeedFollower` verifies every page against the
issuer's signed checkpoints; :func:`apply_mint_page` records each stamped print in
``notary.prints`` (and each return of a print for an upgrade in ``notary.print_returns``, each
issue of it again in ``notary.prints``: L-20) and :func:`apply_treasury_page` each issue of a
note in ``notary.notes`` and each return in ``notary.note_returns``, in the follower's
transaction, with its position. Plain INSERTs: were a page ever applied twice, the primary
key would refuse it rather than hide it. :func:`check_current` holds chains against an
issuer's feed as followed: only the newest issue of a note or a print moves; an older one, or
one returned to its issuer, is history (docs/architecture.md §3).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import orjson

from apiclient.league import LeagueClient, LeagueProblem, LeagueUnreachable
from ledger.certificates import Certificate, PrintCertificate
from ledger.checkpoint import Checkpoint
from ledger.encoding import decode_b64, encode_b64
from ledger.endorsements import Chain
from ledger.errors import LedgerError, NotStamped, RetryLater, SchemaError, StaleIssueError
from ledger.events import (
    MINT_EVENTS,
    TREASURY_EVENTS,
    NoteIssued,
    NoteReturned,
    PrintReissued,
    PrintReturned,
    PrintStamped,
    note_stream,
    parse_event,
    print_stream,
)
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.limits import MAX_FEED_PAGE
from ledger.manifest import LeagueManifest
from ledger.merkle import verify_inclusion
from services.eventlog import EventStore, StoreTransaction, StoreUnavailable
from services.eventlog.signals import CHECKPOINTS
from services.kernel.follower import Apply, FeedFollower, FeedRefused
from services.notary import tables

log = logging.getLogger(__name__)

#: While a catch-up waits for an issuer's checkpoint that no bell announces (an issuer in
#: another database), it looks again after this many seconds, doubling to the issuer's beat.
FIRST_LOOK = 0.01

INSERT_PRINTS = """
INSERT INTO notary.prints (serial, issue, certificate, certificate_hash, mint_seq, leaf_hash)
SELECT w.s, w.i, w.c::jsonb, w.h, w.q, w.l
FROM unnest($1::text[], $2::int[], $3::text[], $4::bytea[], $5::bigint[], $6::bytea[])
     AS w(s, i, c, h, q, l)
"""

INSERT_NOTES = """
INSERT INTO notary.notes (serial, issue, certificate, certificate_hash, treasury_seq, leaf_hash)
SELECT w.s, w.i, w.c::jsonb, w.h, w.q, w.l
FROM unnest($1::text[], $2::int[], $3::text[], $4::bytea[], $5::bigint[], $6::bytea[])
     AS w(s, i, c, h, q, l)
"""

INSERT_RETURNS = """
INSERT INTO notary.note_returns (serial, issue, notarized, purchase_id, treasury_seq, leaf_hash)
SELECT w.s, w.i, w.n, w.p, w.q, w.l
FROM unnest($1::text[], $2::int[], $3::bigint[], $4::text[], $5::bigint[], $6::bytea[])
     AS w(s, i, n, p, q, l)
"""


INSERT_PRINT_RETURNS = """
INSERT INTO notary.print_returns (serial, issue, notarized, order_id, mint_seq, leaf_hash)
SELECT w.s, w.i, w.n, w.p, w.q, w.l
FROM unnest($1::text[], $2::int[], $3::bigint[], $4::text[], $5::bigint[], $6::bytea[])
     AS w(s, i, n, p, q, l)
"""


def _columns(rows: Sequence[tuple[object, ...]], width: int) -> list[list[object]]:
    return [[row[i] for row in rows] for i in range(width)]


def _issued_row(certificate: Certificate, event: Event) -> tuple[object, ...]:
    """The row an issued certificate (a print stamped, a note issued) makes in the notary's
    table of its kind: serial, issue, the certificate, its hash, the issuer's event."""
    return (
        certificate.serial,
        certificate.issue,
        orjson.dumps(certificate.to_wire()).decode(),
        certificate.hash(),
        event.seq,
        event.leaf_hash,
    )


async def apply_mint_page(tx: StoreTransaction, events: Sequence[Event]) -> None:
    """Record the prints a verified page of the mint's feed stamped, took back and issued
    again (issues first: a return follows its issue in log order)."""
    rows = []
    returned = []
    for event in events:
        body = parse_event(event, MINT_EVENTS)
        if isinstance(body, PrintStamped | PrintReissued):
            rows.append(_issued_row(body.certificate, event))
        elif isinstance(body, PrintReturned):
            returned.append(
                (body.serial, body.issue, body.notarized, body.order_id, event.seq, event.leaf_hash)
            )
    if rows:
        await tx.execute(INSERT_PRINTS, *_columns(rows, 6))
    if returned:
        await tx.execute(INSERT_PRINT_RETURNS, *_columns(returned, 6))


#: The treasury's events the notary records: notes issued and returned.
NOTE_EVENTS = frozenset((NoteIssued.TYPE, NoteReturned.TYPE))


async def apply_treasury_page(tx: StoreTransaction, events: Sequence[Event]) -> None:
    """Record the issues and returns of notes a verified page of the treasury's feed holds.

    In log order a note's return always follows its issue, and both land in the same page or
    the issue in an earlier one, so the issues are inserted first. A purchase's own steps
    (most of a buy's events, the largest bodies) tell the notary nothing: their type is
    checked, their bodies are not parsed.
    """
    issued = []
    returned = []
    for event in events:
        if event.type not in NOTE_EVENTS:
            if event.type not in TREASURY_EVENTS:
                raise SchemaError(f"event {event.seq} has the unknown type {event.type!r}")
            continue
        body = parse_event(event, TREASURY_EVENTS)
        if isinstance(body, NoteIssued):
            issued.append(_issued_row(body.certificate, event))
        elif isinstance(body, NoteReturned):
            returned.append(
                (
                    body.serial,
                    body.issue,
                    body.notarized,
                    body.purchase_id,
                    event.seq,
                    event.leaf_hash,
                )
            )
    if issued:
        await tx.execute(INSERT_NOTES, *_columns(issued, 6))
    if returned:
        await tx.execute(INSERT_RETURNS, *_columns(returned, 6))


@dataclass(frozen=True, slots=True)
class Issuer:
    """One issuer the notary follows: its service name, the setting that says where it
    answers, the stream of one of its items, and how a page of its feed is applied."""

    source: str
    setting: str
    stream: str
    apply: Apply

    def key(self, manifest: LeagueManifest) -> PublicKey:
        return PublicKey.from_text(manifest.mint if self.source == "mint" else manifest.treasury)


MINT = Issuer("mint", "MINT_URL", print_stream("{}"), apply_mint_page)
TREASURY = Issuer("treasury", "TREASURY_URL", note_stream("{}"), apply_treasury_page)


class IssuerLink:
    """The notary's view of one issuer: its feed followed into the notary's tables by a
    background task, a catch-up on demand (an item issued a moment ago is known before it is
    notarized), and the issuer's inclusion proofs for provenance, proven from the issuer's
    Merkle tree as the notary followed it."""

    def __init__(
        self,
        store: EventStore,
        manifest: LeagueManifest,
        league: LeagueClient | None,
        issuer: Issuer,
    ) -> None:
        self.league = league
        self.issuer = issuer
        self.follower = (
            None
            if league is None
            else FeedFollower(
                store=store,
                league=league,
                source=issuer.source,
                origin=f"{manifest.league}/{issuer.source}",
                key=issuer.key(manifest),
                apply=issuer.apply,
                prove=True,
            )
        )
        #: The issuer's published checkpoint interval (seconds).
        self._beat = manifest.policies.checkpoint_interval_ms / 1000
        #: How long to wait for the issuer's checkpoint to cover an issue: a few of its beats.
        self._patience = 3 * self._beat + 2

    def _following(self) -> FeedFollower:
        if self.follower is None:
            raise RetryLater(
                f"the notary does not know where the {self.issuer.source} answers (set "
                f"{self.issuer.setting}, docs/operations.md)",
                60,
            )
        return self.follower

    async def catch_up(self, through: int = -1) -> None:
        """Apply the issuer's feed up to its current checkpoint now, and on until a
        checkpoint covers event ``through`` (an issue the issuer has not yet checkpointed),
        within a few of the issuer's published checkpoint intervals.

        Every caller shares the follower's catch-ups (requests waiting for the same event, and
        the background task: :meth:`FeedFollower.caught_up`), asks the issuer for a checkpoint
        (in this process, or its others of this database) when its event is not covered yet,
        and waits for the issuer's next checkpoint on its bell (:mod:`services.eventlog.signals`),
        looking again now and then should no bell ring (an issuer in another database)."""
        follower = self._following()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._patience
        pause = FIRST_LOOK
        wanted = False
        try:
            while True:
                mark = CHECKPOINTS.mark(follower.channel)
                if (await follower.caught_up()).next_seq > through:
                    return
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return
                if not wanted:  # the issuer signs one now rather than at its next beat
                    await follower.store.want_checkpoint(self.issuer.source)
                    wanted = True
                await CHECKPOINTS.wait(follower.channel, mark, min(pause, remaining))
                pause = min(pause * 2, max(self._beat, FIRST_LOOK))
        except (LeagueUnreachable, LeagueProblem, StoreUnavailable) as exc:
            raise RetryLater(
                f"the notary cannot read the {self.issuer.source}'s feed now: {exc.diagnostics()}",
                5,
            ) from None

    async def not_yet_followed(self, serial: str, event: int) -> RetryLater | None:
        """The answer for a certificate the notary does not know: the issuer signed it (its
        signature was checked) at ``event`` of its log, so while the notary has not applied
        that event it is "not yet", a retry; once it has, the certificate is no issue of the
        issuer's (None: the caller refuses it)."""
        if (await self._following().position()).next_seq > event:
            return None
        return RetryLater(
            f"{serial} was issued at event {event} of the {self.issuer.source}'s log, which the "
            f"notary has not followed yet",
            1,
        )

    async def issued_since(self, serial: str) -> int | None:
        """The seq of an event of ``serial`` the issuer has logged past the notary's position
        but not yet checkpointed (read, not applied: the follower applies it once a
        checkpoint covers it), or None."""
        follower = self._following()
        if self.league is None:
            return None
        after = (await follower.position()).next_seq - 1
        try:
            feed = await self.league.events(after, MAX_FEED_PAGE, service=self.issuer.source)
        except (LeagueUnreachable, LeagueProblem) as exc:
            raise RetryLater(
                f"the {self.issuer.source} does not answer: {exc.diagnostics()}", 5
            ) from None
        stream = self.issuer.stream.format(serial)
        return next((event.seq for event in feed.events if event.stream == stream), None)

    async def run(self) -> None:
        """Follow until cancelled; a refused feed stops following (the evidence is kept)."""
        follower = self._following()
        try:
            await follower.run()
        except FeedRefused as exc:
            log.error(
                "the notary stopped following the %s: %s", self.issuer.source, exc.diagnostics()
            )

    async def inclusions(
        self, events: Sequence[tuple[int, bytes]], reads: EventStore | None = None
    ) -> tuple[Checkpoint, list[list[str]]]:
        """The issuer's checkpoint the notary verified and applied through last, and the
        inclusion proof in it of each of the issuer's ``events`` (seq, leaf hash), each
        checked against its leaf hash and the checkpoint's root before it is served.

        Built from the issuer's Merkle tree as the notary followed it (read from ``reads``, a
        replica's view, else the notary's store): no call to the issuer. Only for events the
        kept tree cannot prove (followed before the notary kept it, migration 0012) is the
        proof asked of the issuer, against the stored checkpoint, as before."""
        follower = self._following()
        kept = await follower.proofs([seq for seq, _ in events], reads)
        if kept is not None:
            checkpoint, proofs = kept
            try:
                for (seq, leaf), proof in zip(events, proofs, strict=True):
                    verify_inclusion(seq, checkpoint.size, leaf, proof, checkpoint.root)
            except LedgerError as exc:  # a damaged table: say so, and ask the issuer
                log.error(
                    "the %s's tree as the notary kept it proves no inclusion: %s",
                    self.issuer.source,
                    exc.diagnostics(),
                )
            else:
                return checkpoint, [[encode_b64(h) for h in proof] for proof in proofs]
        stored = (await follower.position()).checkpoint
        if stored is None or any(stored.size <= seq for seq, _ in events):
            raise RetryLater(
                f"the notary has not verified a {self.issuer.source} checkpoint covering it", 5
            )
        return stored, [await self._fetched(stored, seq, leaf) for seq, leaf in events]

    async def _fetched(self, checkpoint: Checkpoint, seq: int, leaf: bytes) -> list[str]:
        """The inclusion proof of the issuer's event ``seq`` in ``checkpoint``, asked of the
        issuer and checked before it is served."""
        source = self.issuer.source
        try:
            answer = await self._following().league.inclusion_proof(
                seq, checkpoint.size, service=source
            )
            proof = [decode_b64(h, what="proof hash") for h in answer.proof]
            verify_inclusion(seq, checkpoint.size, leaf, proof, checkpoint.root)
        except (LeagueUnreachable, LeagueProblem) as exc:
            raise RetryLater(f"the {source} does not answer: {exc.diagnostics()}", 5) from None
        except LedgerError as exc:
            raise RetryLater(
                f"the {source}'s proof did not verify: {exc.diagnostics()}", 60
            ) from None
        return [encode_b64(h) for h in proof]


@dataclass(frozen=True, slots=True)
class Kind:
    """How the notary speaks of one kind of item: its issuer's verb, where it goes back and
    where it is once back."""

    issued: str
    back: str
    kept: str


NOTES = Kind("issued by the treasury", "the note came back to the treasury", "waits in the reserve")
PRINTS = Kind("stamped by the mint", "the print came back to the mint", "is held by the mint")


async def check_notes(
    store: EventStore,
    treasury: IssuerLink,
    chains: Sequence[Chain],
    read: Mapping[str, tables.CurrentIssue] | None = None,
) -> StaleIssueError | None:
    """:func:`check_current` for chains of notes, against the treasury's feed (``read``: their
    current issues as the caller just read them)."""
    return await check_current(
        treasury,
        chains,
        lambda: tables.current_notes(store, [c.serial for c in chains]),
        NOTES,
        read,
    )


async def check_prints(
    store: EventStore,
    mint: IssuerLink,
    chains: Sequence[Chain],
    read: Mapping[str, tables.CurrentIssue] | None = None,
) -> StaleIssueError | None:
    """:func:`check_current` for chains of prints, against the mint's feed (L-20; ``read``:
    their current issues as the caller just read them)."""
    return await check_current(
        mint,
        chains,
        lambda: tables.followed_prints(store, [c.serial for c in chains]),
        PRINTS,
        read,
    )


async def check_current(
    issuer: IssuerLink,
    chains: Sequence[Chain],
    read: Callable[[], Awaitable[Mapping[str, tables.CurrentIssue]]],
    kind: Kind,
    first: Mapping[str, tables.CurrentIssue] | None = None,
) -> StaleIssueError | None:
    """Hold chains against the issuer's feed as followed: each certificate must be the one
    the issuer issued as the item's current issue. A chain of an older issue is history,
    refused with :class:`StaleIssueError` (docs/architecture.md §3: "a chain of an older issue is
    history, never spendable again", refused with the reason; L-17, L-20), and so is the
    current issue's once the item came back to its issuer. The notary knows of a return or an
    issue once it has followed the issuer's feed past it (as the issuer checkpoints it, or at
    once when a chain names a newer issue); a chain of the ended issue in between
    can only repeat hops already recorded (it ends at the issuer's key), so it is answered
    their receipts and moves nothing.

    A chain that is history is not refused here but returned (the first found): the writer
    refuses it unless a hop of it conflicts with a recorded one, which is fraud whatever the
    issue, answered with its proof. ``first``: the current issues as the caller just read
    them (to tell which certificates it followed), read again only after a catch-up."""
    current = await read() if first is None else first
    behind = [
        chain
        for chain in chains
        if chain.serial not in current or current[chain.serial].issue < chain.issue
    ]
    if behind:
        # Issued a moment ago, perhaps: follow the issuer until its log covers the newest
        # certificate named (each names its event's index), or a few checkpoints go by.
        await issuer.catch_up(through=max(chain.certificate.event for chain in behind))
        current = await read()
    stale: StaleIssueError | None = None
    for chain in chains:
        certificate = chain.certificate
        item = current.get(chain.serial)
        if item is None or certificate.issue > item.issue:
            not_yet = await issuer.not_yet_followed(chain.serial, certificate.event)
            if not_yet is not None:
                raise not_yet
        if item is None:
            raise NotStamped(f"{chain.serial} was never {kind.issued}")
        if certificate.issue < item.issue:
            stale = stale or StaleIssueError(
                f"{chain.serial} issue {certificate.issue} is history: {kind.back} and its "
                f"current issue is {item.issue}"
            )
            continue
        if certificate.issue == item.issue and item.returned is not None:
            stale = stale or StaleIssueError(
                f"{chain.serial} issue {certificate.issue} is history: {kind.back} (event "
                f"{item.returned} of its log) and {kind.kept}"
            )
        if certificate.issue > item.issue:
            raise NotStamped(
                f"{chain.serial} issue {certificate.issue} was never {kind.issued} "
                f"(its current issue is {item.issue})"
            )
        if not hmac.compare_digest(item.certificate_hash, certificate.hash()):
            seq = item.seq
            noun = (
                "the mint stamped"
                if isinstance(certificate, PrintCertificate)
                else ("the treasury issued")
            )
            raise NotStamped(
                f"{chain.serial}'s certificate is not the one {noun} (event {seq} of its log)"
            )
    return stale
