"""Each service is a C2SP tlog-witness of the league's other services' logs.

The witness is named by its own log's origin (``<league>/<service>``) and cosigns with its
service key in the tlog-cosignature v1 format: the signed message starts ``cosignature/v1``
and the key id is computed with type 0x04, so a cosignature can never pass for a checkpoint
signature of the same key (docs/eventlog.md, "Witnesses"). It witnesses exactly the logs of
the league's *other* services, with the origins and keys the manifest names.

``POST /<service>/witness/add-checkpoint`` follows tlog-witness: 404 for an unknown origin,
403 without a valid signature by the log's key, 400 for a malformed body or an old size
beyond the checkpoint, 409 (``text/x.tlog.size``) when the old size is not the size it last
cosigned, 422 for a bad consistency proof, 503 (retry-later) when it could not check a failing
proof with the log itself, else 200 with its cosignature line. The state per log is one row
read ``FOR UPDATE`` and replaced in the same transaction, so two racing submissions cannot
both advance it.

A pair of checkpoints that is not one append-only history is kept as
:class:`~ledger.api.witness.Evidence` (``GET /<service>/evidence``) only when it convicts the
log by itself, offline: two roots signed at one size (``same-size``), or a valid proof showing
another root at the cosigned size (``fork``). The checkpoints are public and the proof is the
submitter's (anyone's), so a proof that merely fails proves nothing about the log and is never
kept: when it shows no root at the cosigned size, the witness asks the log (at its URL) for
the inclusion proof of that size's last leaf in the submitted tree, which shows the tree's
root there. Another root is kept as a ``fork``; the cosigned root, or an answer that does not
verify, answers 422 with nothing kept; no answer at all answers 503 with nothing kept (the
log's own submitter, whose proofs verify, never waits on this).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from apiclient.league import LeagueClient
from ledger.api.witness import (
    MAX_EVIDENCE_PAGE,
    Evidence,
    EvidenceKind,
    EvidenceList,
    prefix_from_inclusion,
    prefix_root,
)
from ledger.checkpoint import (
    MAX_ADD_CHECKPOINT_BYTES,
    AddCheckpoint,
    Checkpoint,
    Cosigner,
    log_verifier,
)
from ledger.encoding import decode_b64, encode_b64
from ledger.errors import (
    DecodeError,
    LedgerError,
    ProofError,
    RetryLater,
    SizeLimitError,
    UnknownLog,
    UntrustedCheckpoint,
    VerificationError,
)
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import format_time
from ledger.manifest import LeagueManifest
from ledger.merkle import EMPTY_ROOT, HASH_SIZE
from ledger.signed_note import Note, NoteVerifier
from services.eventlog import EventStore, StoreTransaction
from services.http.endpoints import Endpoint
from services.http.limits import limits_of

log = logging.getLogger(__name__)

#: The league's services whose keys the manifest names: each may witness the others' logs.
LEAGUE_SERVICES = ("mint", "treasury", "notary")
#: The media type of a 409 answer: the size the witness last cosigned (tlog-witness).
TLOG_SIZE = "text/x.tlog.size"
#: How long the witness waits for a log's inclusion proof while it answers (seconds): well
#: within the submitter's own request timeout.
LOOK_TIMEOUT = 4.0
#: The Retry-After of a submission it could not check with the log (seconds).
LOOK_RETRY_AFTER = 5


def witnessed_services(manifest: LeagueManifest) -> tuple[str, ...]:
    """The services whose logs the league's witnesses cosign, each witnessing the others':
    the three, and the tables service once the manifest names its key."""
    return LEAGUE_SERVICES + (("tables",) if manifest.tables is not None else ())


def origin_of(manifest: LeagueManifest, service: str) -> str:
    """A service's log origin, which is also its name as a witness."""
    return f"{manifest.league}/{service}"


def service_key(manifest: LeagueManifest, service: str) -> PublicKey:
    return PublicKey.from_text(getattr(manifest, service))


@dataclass(frozen=True, slots=True)
class Cosigned:
    """The witness cosigned the checkpoint: the line to answer."""

    line: str


@dataclass(frozen=True, slots=True)
class SizeConflict:
    """The submission's old size is not the size the witness last cosigned (409)."""

    size: int


@dataclass(frozen=True, slots=True)
class _Refused:
    """Not cosigned: ``error`` is the answer (evidence that convicts by itself may have been
    kept in the same transaction). With ``kept`` and ``submitted`` the proof failed and showed
    no root: the log is asked (once the transaction is over) before anything is answered."""

    error: ProofError
    kept: Checkpoint | None = None
    submitted: Checkpoint | None = None


class Witness:
    """The witness of ``service`` over its own schema, cosigning with ``key``."""

    def __init__(
        self,
        store: EventStore,
        manifest: LeagueManifest,
        service: str,
        key: SigningKey,
        urls: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        #: Where each witnessed log answers, by origin: (service, base URL).
        self.log_urls = {
            origin_of(manifest, other): (other, url) for other, url in (urls or {}).items()
        }
        self.name = origin_of(manifest, service)
        self.cosigner = Cosigner(self.name, key)
        #: The logs it witnesses, by origin: every other service the manifest names.
        self.logs: dict[str, NoteVerifier] = {
            origin_of(manifest, other): log_verifier(
                origin_of(manifest, other), service_key(manifest, other)
            )
            for other in witnessed_services(manifest)
            if other != service
        }
        self._by_hash = {hashlib.sha256(o.encode()).hexdigest(): o for o in self.logs}
        s = store.schema
        self._lock_state = (
            "SELECT tree_size, root_hash, checkpoint, clock_timestamp() "  # noqa: S608
            f"FROM {s}.witnessed_logs WHERE origin = $1 FOR UPDATE"
        )
        self._new_state = (
            f"INSERT INTO {s}.witnessed_logs (origin, tree_size, root_hash) "  # noqa: S608
            "VALUES ($1, 0, $2) ON CONFLICT (origin) DO NOTHING"
        )
        self._advance = (
            f"UPDATE {s}.witnessed_logs SET tree_size = $2, root_hash = $3, "  # noqa: S608
            "checkpoint = $4, cosigned_at = $5 WHERE origin = $1"
        )
        self._keep = (
            f"INSERT INTO {s}.witness_evidence (origin, kind, reason, cosigned, "  # noqa: S608
            "submitted, cosigned_root, submitted_root, old_size, proof, prefix_root, "
            "leaf_hash, inclusion_proof) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
            "ON CONFLICT (origin, cosigned_root, submitted_root) DO NOTHING RETURNING id"
        )
        self._read_evidence = (
            f"SELECT id, origin, recorded_at, kind, reason, cosigned, submitted, "  # noqa: S608
            "old_size, proof, prefix_root, leaf_hash, inclusion_proof "
            f"FROM {s}.witness_evidence WHERE id > $1 "
            "ORDER BY id LIMIT $2"
        )
        self._read_cosigned = f"SELECT checkpoint FROM {s}.witnessed_logs WHERE origin = $1"  # noqa: S608

    def _trusted(self, submission: AddCheckpoint) -> Checkpoint:
        """The checkpoint with the log's own signature alone (others' lines dropped);
        404 for an origin it does not witness, 403 without the log's valid signature."""
        checkpoint = submission.checkpoint
        verifier = self.logs.get(checkpoint.origin)
        if verifier is None:
            raise UnknownLog(f"{self.name} does not witness a log named {checkpoint.origin!r}")
        try:
            checkpoint.verify([verifier])
        except VerificationError as exc:
            raise UntrustedCheckpoint(
                f"the checkpoint is not signed by {checkpoint.origin}'s key: {exc.diagnostics()}"
            ) from None
        own = tuple(s for s in checkpoint.note.signatures if verifier.matches(s))
        return Checkpoint.from_note(Note(checkpoint.text, own))

    async def add_checkpoint(self, body: bytes) -> Cosigned | SizeConflict:
        """Decide one tlog-witness submission; refusals raise (see the module)."""
        try:
            submission = AddCheckpoint.parse(body)
        except SizeLimitError:
            raise
        except DecodeError as exc:  # a malformed checkpoint too: 400, never 422
            raise DecodeError(exc.diagnostics()) from None
        checkpoint = self._trusted(submission)
        if submission.old_size > checkpoint.size:
            raise DecodeError(
                f"old size {submission.old_size} is beyond the checkpoint's size {checkpoint.size}"
            )
        if checkpoint.size == 0 and not hmac.compare_digest(checkpoint.root, EMPTY_ROOT):
            raise ProofError("a checkpoint of size 0 must have the empty tree's root")
        if submission.old_size == 0 and submission.proof:
            raise ProofError("a consistency proof from size 0 must be empty")
        async with self.store.transaction() as tx:
            outcome = await self._decide(tx, submission, checkpoint)
        if isinstance(outcome, _Refused):
            if outcome.kept is not None and outcome.submitted is not None:
                raise await self._look_closer(
                    outcome.kept, outcome.submitted, submission, outcome.error
                )
            raise outcome.error
        return outcome

    async def _decide(
        self, tx: StoreTransaction, submission: AddCheckpoint, checkpoint: Checkpoint
    ) -> Cosigned | SizeConflict | _Refused:
        origin = checkpoint.origin
        await tx.execute(self._new_state, origin, EMPTY_ROOT)
        row = await tx.fetchrow(self._lock_state, origin)
        if row is None:  # inserted just above, and rows are never deleted
            raise UnknownLog(f"{self.name} keeps no state for {origin!r}")
        size, root, kept_text = row[0], bytes(row[1]), row[2]
        now: datetime = row[3]  # the database's clock, the league's one clock
        kept = None if kept_text is None else Checkpoint.from_note(kept_text)
        if (
            kept is not None
            and checkpoint.size == size
            and not hmac.compare_digest(checkpoint.root, root)
        ):
            await self._keep_evidence(
                tx,
                "same-size",
                kept,
                checkpoint,
                submission,
                None,
                f"{origin} signed two roots at size {size}",
            )
            if submission.old_size == size:
                return _Refused(
                    ProofError(
                        f"{origin} signed another root at size {size} before: kept as evidence"
                    )
                )
        if submission.old_size != size:
            return SizeConflict(size)
        if checkpoint.size > size:
            try:
                submission.verify_extension(root)
            except ProofError as exc:
                error = ProofError(
                    f"the consistency proof from size {size} to {checkpoint.size} does not "
                    f"verify against the root this witness cosigned: {exc.diagnostics()}"
                )
                if kept is None:
                    return _Refused(error)
                shown = prefix_root(kept.size, checkpoint.size, checkpoint.root, submission.proof)
                if shown is None:  # nothing shown, nothing proven: ask the log itself
                    return _Refused(error, kept, checkpoint)
                if not hmac.compare_digest(shown, kept.root):
                    await self._keep_evidence(
                        tx,
                        "fork",
                        kept,
                        checkpoint,
                        submission,
                        shown,
                        f"{origin}'s checkpoint of size {checkpoint.size} extends root "
                        f"{encode_b64(shown)} at size {kept.size}, where it signed "
                        f"{encode_b64(kept.root)}",
                    )
                return _Refused(error)
        line = self.cosigner.cosign(checkpoint, int(now.timestamp()))
        cosigned = checkpoint.with_signature(line)
        await tx.execute(
            self._advance, origin, checkpoint.size, checkpoint.root, str(cosigned), now
        )
        return Cosigned(line.line())

    async def _look_closer(
        self, kept: Checkpoint, new: Checkpoint, submission: AddCheckpoint, error: ProofError
    ) -> LedgerError:
        """The answer to a submission whose proof from ``kept`` failed and showed no root at
        ``kept.size``, once the log is asked for the inclusion proof of leaf ``kept.size - 1``
        in ``new``'s tree.

        A root there other than the one the log signed convicts the log: kept as a ``fork``
        with that proof, and ``error`` answered (422). The signed root means the log's tree
        does extend what was cosigned (the failing proof was an outsider's, a replay's or a
        bug's), and an answer that does not verify against ``new``'s root proves nothing:
        ``error``, nothing kept. When the log cannot be asked (no URL, no answer within
        :data:`LOOK_TIMEOUT`, a problem answered), :class:`RetryLater` (503), nothing kept:
        anyone can send a log's genuine checkpoint with a garbage proof while the log is
        out of reach, and the log's own submitter, whose proofs verify, never gets here.
        """
        found = self.log_urls.get(new.origin)
        if kept.size == 0:  # no leaf to ask about (a proof from 0 is empty, and verifies)
            return error
        if found is None:
            return RetryLater(
                f"{error.diagnostics()}; this witness cannot ask {new.origin} for its own "
                f"proof: nothing kept, submit a valid proof",
                LOOK_RETRY_AFTER,
            )
        service, url = found
        index = kept.size - 1
        try:
            async with LeagueClient(url, timeout=LOOK_TIMEOUT) as client:
                answer = await client.inclusion_proof(index, new.size, service=service)
            leaf = decode_b64(answer.leaf_hash, length=HASH_SIZE, what="leaf hash")
            path = [decode_b64(h, length=HASH_SIZE, what="proof hash") for h in answer.proof]
        except LedgerError as exc:
            log.info(
                "witness %s: no inclusion proof from %s: %s",
                self.name,
                new.origin,
                exc.diagnostics(),
            )
            return RetryLater(
                f"{error.diagnostics()}; {new.origin} did not answer this witness with its "
                f"own proof, so nothing is kept: retry later",
                LOOK_RETRY_AFTER,
            )
        shown = prefix_from_inclusion(index, new.size, leaf, path, new.root)
        if shown is None:
            return ProofError(
                f"{error.diagnostics()}; {new.origin}'s own inclusion proof of leaf {index} "
                f"does not verify against the submitted checkpoint's root either"
            )
        if hmac.compare_digest(shown, kept.root):
            log.info(
                "witness %s: %s extends what it cosigned; a failing proof of it is no evidence",
                self.name,
                new.origin,
            )
            return error
        reason = (
            f"{new.origin}'s checkpoint of size {new.size} has root {encode_b64(shown)} at "
            f"size {kept.size} (its inclusion proof of leaf {index}), where it signed "
            f"{encode_b64(kept.root)}"
        )
        async with self.store.transaction() as tx:
            await self._keep_evidence(
                tx, "fork", kept, new, submission, shown, reason, (leaf, path)
            )
        return error

    async def _keep_evidence(
        self,
        tx: StoreTransaction,
        kind: EvidenceKind,
        kept: Checkpoint,
        new: Checkpoint,
        submission: AddCheckpoint,
        shown: bytes | None,
        reason: str,
        inclusion: tuple[bytes, list[bytes]] | None = None,
    ) -> None:
        """Keep a pair that convicts the log by itself (``same-size`` or ``fork``), once."""
        leaf, path = inclusion if inclusion is not None else (None, None)
        if (
            await tx.fetchval(
                self._keep,
                new.origin,
                kind,
                reason,
                str(kept),
                str(new),
                kept.root,
                new.root,
                submission.old_size,
                list(submission.proof),
                shown,
                leaf,
                path,
            )
            is not None
        ):
            log.warning("witness %s kept evidence against %s: %s", self.name, new.origin, reason)

    async def evidence(self, after: int, limit: int) -> EvidenceList:
        rows = await self.store.fetch(self._read_evidence, after, limit)
        found = [
            Evidence(
                id=r[0],
                origin=r[1],
                recorded_at=format_time(r[2]),
                kind=r[3],
                reason=r[4],
                cosigned=r[5],
                submitted=r[6],
                old_size=r[7],
                proof=[encode_b64(bytes(h)) for h in r[8]],
                prefix_root=None if r[9] is None else encode_b64(bytes(r[9])),
                leaf_hash=None if r[10] is None else encode_b64(bytes(r[10])),
                inclusion_proof=None if r[11] is None else [encode_b64(bytes(h)) for h in r[11]],
            )
            for r in rows
        ]
        return EvidenceList(
            witness=self.name, evidence=found, next_after=found[-1].id if found else after
        )

    async def cosigned(self, origin_hash: str) -> str:
        """The checkpoint it cosigned last of the log whose origin hashes to ``origin_hash``,
        with the log's signature and its own cosignature (tlog-witness monitoring)."""
        origin = self._by_hash.get(origin_hash)
        text = None if origin is None else await self.store.fetchval(self._read_cosigned, origin)
        if text is None:
            raise UnknownLog(f"{self.name} has cosigned no checkpoint of that log")
        return str(text)


class EvidenceQuery(BaseModel):
    """Which evidence to read."""

    model_config = ConfigDict(extra="forbid")

    after: int = Field(default=0, ge=0, le=2**63 - 1, description="Return ids greater than this")
    limit: int = Field(default=MAX_EVIDENCE_PAGE, ge=1, le=MAX_EVIDENCE_PAGE)


async def read_text_body(request: web.Request, limit: int) -> bytes:
    """The raw body, at most ``limit`` bytes, within the body read timeout (else 408)."""
    if (request.content_length or 0) > limit:
        raise SizeLimitError(f"request body is larger than {limit} bytes")
    timeout = limits_of(request.app).body_timeout
    try:
        async with asyncio.timeout(timeout):
            raw = await request.content.read(limit + 1)
    except TimeoutError:
        raise web.HTTPRequestTimeout(
            text=f"the request body did not arrive within {timeout:g} seconds"
        ) from None
    if len(raw) > limit:
        raise SizeLimitError(f"request body is larger than {limit} bytes")
    return raw


def witness_key(service: str) -> web.AppKey[Witness]:
    """The app key of ``service``'s witness (one per service in a composed app)."""
    key = _KEYS.get(service)
    if key is None:  # made once: an AppKey made again (setdefault's argument) is another key
        key = _KEYS[service] = web.AppKey(f"{service}_witness", Witness)
    return key


_KEYS: dict[str, web.AppKey[Witness]] = {}


def witness_endpoints(service: str) -> tuple[Endpoint, ...]:
    """``service``'s witness: add-checkpoint, the monitoring checkpoint, the evidence."""
    key = witness_key(service)

    async def add_checkpoint(request: web.Request) -> web.Response:
        body = await read_text_body(request, MAX_ADD_CHECKPOINT_BYTES)
        outcome = await request.app[key].add_checkpoint(body)
        if isinstance(outcome, SizeConflict):
            return web.Response(status=409, text=f"{outcome.size}\n", content_type=TLOG_SIZE)
        return web.Response(text=outcome.line, content_type="text/plain")

    async def witnessed_checkpoint(request: web.Request) -> str:
        return await request.app[key].cosigned(request.match_info["origin_hash"])

    async def evidence(request: web.Request, query: EvidenceQuery) -> EvidenceList:
        return await request.app[key].evidence(query.after, query.limit)

    prefix = f"/{service}"
    return (
        Endpoint(
            "POST",
            f"{prefix}/witness/add-checkpoint",
            f"Ask the {service}'s witness to cosign a checkpoint (C2SP tlog-witness)",
            add_checkpoint,
            str,
            problems=(
                DecodeError,
                SizeLimitError,
                UnknownLog,
                UntrustedCheckpoint,
                ProofError,
                RetryLater,
            ),
            max_body=MAX_ADD_CHECKPOINT_BYTES,
            description=(
                "The body is text, as tlog-witness defines it: 'old <size>', up to 63 "
                "consistency proof lines (base64), an empty line, and a checkpoint signed by "
                "one of the league's other services (origin <league>/<service>, the key the "
                "manifest names). 200: the witness's cosignature line (tlog-cosignature v1, "
                "key name = this service's origin). 409, Content-Type text/x.tlog.size: the "
                "old size is not the size this witness last cosigned of that log, and the "
                "body is that size and a newline. 404: a log this witness does not witness; "
                "403: no valid signature by the log's key; 400: a malformed body or an old "
                "size beyond the checkpoint's; 422: the consistency proof does not verify "
                "(a pair of checkpoints that convicts the log by itself is kept as evidence; "
                "a proof that merely fails never is); 503 retry-later: the proof failed and "
                "the witness could not ask the log for its own proof, nothing kept."
            ),
        ),
        Endpoint(
            "GET",
            f"{prefix}/witness/{{origin_hash}}/checkpoint",
            f"The checkpoint the {service}'s witness cosigned last of a log",
            witnessed_checkpoint,
            str,
            problems=(UnknownLog,),
            description=(
                "origin_hash is the lowercase hex SHA-256 of the log's origin. The answer "
                "carries the log's signature and this witness's cosignature (tlog-witness "
                "monitoring); 404 when it has cosigned none of that log."
            ),
        ),
        Endpoint(
            "GET",
            f"{prefix}/evidence",
            f"Inconsistent checkpoints the {service}'s witness kept",
            evidence,
            EvidenceList,
            query=EvidenceQuery,
            description=(
                "Each record holds two checkpoints one log signed that are not one "
                "append-only history, the proofs that show it and why: it convicts the log "
                "offline (ledger.api.witness.Evidence.convicts with the log's key from the "
                "league manifest). A witness keeps nothing else."
            ),
        ),
    )
