"""Each service asks the league's other services' witnesses to cosign its checkpoints.

One background task per witness follows the service's :class:`Checkpointer`: after each
newly signed checkpoint it sends the witness a tlog-witness ``add-checkpoint`` request whose
old size is the size that witness last cosigned (kept from its last cosignature, or learnt
from a 409 answer) with a consistency proof from the service's own log. Each cosignature
that verifies under the witness's key (the manifest's key of that service, cosignature type
0x04, name = its origin) is stored, and ``GET /<service>/checkpoint`` serves the latest
checkpoint with every cosignature it has for it (:meth:`Witnessing.served_checkpoint`). A
busy log signs a checkpoint every interval; each witness is asked about the latest at most
every :data:`MIN_SUBMIT_GAP` seconds.

A witness that is down, or refuses, is retried with exponential backoff capped at
:data:`MAX_BACKOFF` seconds; nothing here ever blocks a request (stamping, notarizing) or the
checkpointer. A witness that has cosigned a larger tree than the log holds (the log restored
from an old backup) is not asked again until the log has grown past it: then the consistency
proof from the witness's size shows the fork, and the witness keeps the evidence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import aiohttp
from aiohttp import web

from ledger.checkpoint import AddCheckpoint, Checkpoint, CosignatureVerifier
from ledger.errors import LedgerError, VerificationError
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.signed_note import parse_note
from services.eventlog import EventStore
from services.http.logs import served_checkpoint_key
from services.kernel.checkpoints import Checkpointer
from services.kernel.settings import LeagueSettings
from services.kernel.witness_server import (
    LEAGUE_SERVICES,
    TLOG_SIZE,
    Witness,
    origin_of,
    service_key,
    witness_key,
    witnessed_services,
)

log = logging.getLogger(__name__)

#: The services that serve a witness: every service the league runs (``services.league.
#: registry``), each installing :func:`witnessing` and :func:`witness_endpoints`; the tables
#: service's is asked once the manifest names its key (:func:`witnessed_services`).
WITNESSES = (*LEAGUE_SERVICES, "tables")
#: Longest wait between two attempts at one witness, in seconds.
MAX_BACKOFF = 60.0
#: Shortest time between two submissions to one witness, in seconds: a busy log signs a
#: checkpoint every interval, and its witnesses cosign the latest one at most this often.
MIN_SUBMIT_GAP = 0.25
#: How long one request to a witness may take, in seconds.
REQUEST_TIMEOUT = 10.0
#: Largest answer read from a witness: a few signature lines.
MAX_WITNESS_ANSWER = 16 * 1024
_SIZE_ANSWER = re.compile(r"(0|[1-9][0-9]{0,18})\n")


class WitnessRefused(LedgerError):
    """A witness did not cosign a checkpoint: it is down, or answered a refusal."""


def witness_urls(
    settings: LeagueSettings, service: str, manifest: LeagueManifest
) -> dict[str, str]:
    """Where the witnesses of ``service``'s log answer, by service (those with a known URL)."""
    found = {}
    for other in witnessed_services(manifest):
        url = settings.service_url(other) if other != service else None
        if url is not None:
            found[other] = url
    return found


@dataclass
class _Peer:
    """One witness, as the submitting log knows it."""

    service: str
    name: str
    url: str
    verifier: CosignatureVerifier
    #: The size it last cosigned of this log (None: unknown, ask with 0 and learn it).
    size: int | None = None
    #: The (size, root) of this log's checkpoint it cosigned last.
    cosigned: tuple[int, bytes] | None = None
    failures: int = 0


class Witnessing:
    """Submits ``store``'s checkpoints to the witnesses at ``urls`` (service -> base URL)."""

    def __init__(
        self,
        store: EventStore,
        checkpointer: Checkpointer,
        manifest: LeagueManifest,
        urls: Mapping[str, str],
        *,
        interval: float,
        max_backoff: float = MAX_BACKOFF,
        min_gap: float = MIN_SUBMIT_GAP,
    ) -> None:
        self.store = store
        self.checkpointer = checkpointer
        self.interval = interval
        self.max_backoff = max_backoff
        self.gap = max(interval, min_gap)
        self.peers = [
            _Peer(
                service=other,
                name=origin_of(manifest, other),
                url=f"{url.rstrip('/')}/{other}/witness/add-checkpoint",
                verifier=CosignatureVerifier(
                    origin_of(manifest, other), service_key(manifest, other)
                ),
            )
            for other, url in urls.items()
        ]
        self._session: aiohttp.ClientSession | None = None
        s = store.schema
        self._keep = (
            f"INSERT INTO {s}.cosignatures (witness, tree_size, root_hash, signature) "  # noqa: S608
            "VALUES ($1, $2, $3, $4) ON CONFLICT (witness, tree_size) "
            "DO UPDATE SET root_hash = excluded.root_hash, signature = excluded.signature"
        )
        self._of = (
            f"SELECT signature FROM {s}.cosignatures "  # noqa: S608
            "WHERE tree_size = $1 AND root_hash = $2 ORDER BY witness"
        )
        self._last = (
            f"SELECT DISTINCT ON (witness) witness, tree_size, root_hash "  # noqa: S608
            f"FROM {s}.cosignatures ORDER BY witness, tree_size DESC"
        )

    async def served_checkpoint(self, reads: EventStore | None = None) -> Checkpoint:
        """The latest checkpoint with every cosignature received for it, as ``reads`` (a
        read view of the log, e.g. a replica's; default the log itself) holds them."""
        store = reads or self.store
        latest = await store.served_checkpoint()
        lines = await store.fetch(self._of, latest.size, latest.root)
        if not lines:
            return latest
        return Checkpoint.from_note(str(latest) + "".join(str(r[0]) for r in lines))

    async def submit(self, peer: _Peer, checkpoint: Checkpoint) -> bool:
        """Ask ``peer`` to cosign ``checkpoint``; True once it has, False when it cannot be
        asked yet (the witness holds a larger tree than this log). Raises
        :class:`WitnessRefused` (or the store's error) otherwise."""
        old = peer.size or 0
        for _ in range(2):  # a 409 teaches the witness's size once; then ask with it
            if old > checkpoint.size:
                return False
            proof = (
                []
                if old in (0, checkpoint.size)
                else await self.store.consistency_proof(old, checkpoint.size)
            )
            status, content_type, text = await self._post(
                peer, str(AddCheckpoint(old, tuple(proof), checkpoint))
            )
            if status == 409 and content_type == TLOG_SIZE and _SIZE_ANSWER.fullmatch(text):
                peer.size = old = int(text)
                continue
            if status != 200:
                raise WitnessRefused(
                    f"{peer.name} answered {status} to {self.store.origin}'s checkpoint of "
                    f"size {checkpoint.size}: {text[:300]}"
                )
            await self._keep_cosignature(peer, checkpoint, text)
            return True
        raise WitnessRefused(f"{peer.name} changed its size twice while asked")

    async def _keep_cosignature(self, peer: _Peer, checkpoint: Checkpoint, text: str) -> None:
        """Verify ``peer``'s answer (lines of other keys ignored) and store its cosignature."""
        try:
            answered = parse_note(str(checkpoint) + text).signatures[
                len(checkpoint.note.signatures) :
            ]
        except LedgerError as exc:
            raise WitnessRefused(f"{peer.name}'s answer: {exc.diagnostics()}") from None
        for line in answered:
            if not peer.verifier.matches(line):
                continue
            try:
                peer.verifier.timestamp(checkpoint.text, line)
            except VerificationError as exc:
                raise WitnessRefused(f"{peer.name}: {exc.diagnostics()}") from None
            async with self.store.transaction() as tx:
                await tx.execute(
                    self._keep, peer.name, checkpoint.size, checkpoint.root, line.line()
                )
            peer.size = checkpoint.size
            peer.cosigned = (checkpoint.size, checkpoint.root)
            return
        raise WitnessRefused(f"{peer.name} answered no cosignature by its key")

    async def _post(self, peer: _Peer, body: str) -> tuple[int, str, str]:
        if self._session is None:
            raise RuntimeError("use Witnessing.running()")
        try:
            async with self._session.post(
                peer.url, data=body.encode(), headers={"Content-Type": "text/plain"}
            ) as response:
                raw = await response.content.read(MAX_WITNESS_ANSWER + 1)
                if len(raw) > MAX_WITNESS_ANSWER:
                    raise WitnessRefused(f"{peer.name}'s answer is too long")
                return response.status, response.content_type, raw.decode("utf-8", "replace")
        except (aiohttp.ClientError, TimeoutError) as exc:
            reason = str(exc) or type(exc).__name__  # a disconnection has no message
            raise WitnessRefused(f"{peer.name} at {peer.url} did not answer: {reason}") from None

    async def _follow(self, peer: _Peer) -> None:
        """Ask ``peer`` to cosign the latest checkpoint whenever there is a new one (at most
        once a gap), backing off while it fails."""
        while True:
            latest = self.checkpointer.latest
            if latest is None or peer.cosigned == (latest.size, latest.root):
                await asyncio.sleep(self.interval)
                continue
            try:
                cosigned = await self.submit(peer, latest)
                peer.failures = 0
                await asyncio.sleep(self.gap if cosigned else self.interval)
            except Exception as exc:  # the task must outlive any one failure
                peer.failures += 1
                if peer.failures & (peer.failures - 1) == 0:  # 1st, 2nd, 4th, 8th... failure
                    reason = exc.diagnostics() if isinstance(exc, LedgerError) else repr(exc)
                    # One failed attempt is no operator's concern (a witness restarting, or
                    # the league's own server stopping under a submission in flight); a
                    # witness that fails again is.
                    log.log(
                        logging.INFO if peer.failures == 1 else logging.WARNING,
                        "%s: no cosignature from %s (%d attempts): %s",
                        self.store.origin,
                        peer.name,
                        peer.failures,
                        reason,
                    )
                await asyncio.sleep(min(self.max_backoff, self.interval * 2**peer.failures))

    async def _load(self) -> None:
        """What each witness cosigned last, as stored (it may since have cosigned more)."""
        rows = await self.store.fetch(self._last)
        last = {str(r[0]): (int(r[1]), bytes(r[2])) for r in rows}
        for peer in self.peers:
            if peer.name in last:
                peer.cosigned = last[peer.name]
                peer.size = peer.cosigned[0]

    async def run(self) -> None:
        """Follow every witness until cancelled: the log's leader's work
        (:mod:`services.kernel.leadership`), inside :meth:`running`."""
        await self._load()
        await asyncio.gather(*(self._follow(peer) for peer in self.peers))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Witnessing]:
        """Hold the client session :meth:`run` submits through until the block exits."""
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            self._session = session
            try:
                yield self
            finally:
                self._session = None


@contextlib.asynccontextmanager
async def witnessing(
    app: web.Application,
    service: str,
    manifest: LeagueManifest,
    key: SigningKey,
    store: EventStore,
    checkpointer: Checkpointer,
    urls: Mapping[str, str],
) -> AsyncIterator[Witnessing]:
    """``service``'s witness of the others' logs, and the submission of its own checkpoints
    to their witnesses at ``urls`` (see :func:`witness_urls`), for the block's duration."""
    app[witness_key(service)] = Witness(store, manifest, service, key, urls)
    submitter = Witnessing(
        store,
        checkpointer,
        manifest,
        urls,
        interval=manifest.policies.checkpoint_interval_ms / 1000,
    )
    app[served_checkpoint_key(service)] = submitter
    async with submitter.running():
        yield submitter
