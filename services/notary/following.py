"""The notary follows the mint's feed (the treasury's once it exists): exactly once.

The kernel's :class:`~services.kernel.follower.FeedFollower` verifies every page against the
mint's signed checkpoints; :func:`apply_mint_page` records each stamped print in
``notary.prints`` in the follower's transaction, with its position. A plain INSERT: were a
page ever applied twice, the primary key would refuse it rather than hide it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence

from clients.league import LeagueClient, LeagueProblem, LeagueUnreachable
from ledger.checkpoint import Checkpoint
from ledger.encoding import decode_b64, encode_b64
from ledger.errors import LedgerError, RetryLater
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.limits import MAX_FEED_PAGE
from ledger.manifest import LeagueManifest
from ledger.merkle import verify_inclusion
from services.eventlog import EventStore, StoreTransaction, StoreUnavailable
from services.kernel.follower import FeedFollower, FeedRefused
from services.notary.tables import FollowedPrint

log = logging.getLogger(__name__)

INSERT_PRINTS = """
INSERT INTO notary.prints (serial, issue, certificate, certificate_hash, mint_seq, leaf_hash)
SELECT w.s, w.i, w.c::jsonb, w.h, w.q, w.l
FROM unnest($1::text[], $2::int[], $3::text[], $4::bytea[], $5::bigint[], $6::bytea[])
     AS w(s, i, c, h, q, l)
"""


async def apply_mint_page(tx: StoreTransaction, events: Sequence[Event]) -> None:
    """Record the prints a verified page of the mint's feed stamped."""
    rows = []
    for event in events:
        body = parse_event(event, MINT_EVENTS)
        if isinstance(body, PrintStamped):
            certificate = body.certificate
            rows.append(
                (
                    certificate.serial,
                    certificate.issue,
                    json.dumps(certificate.to_wire()),
                    certificate.hash(),
                    event.seq,
                    event.leaf_hash,
                )
            )
    if rows:
        await tx.execute(INSERT_PRINTS, *[[row[i] for row in rows] for i in range(6)])


class MintLink:
    """The notary's view of the mint: its feed followed into ``notary.prints`` by a
    background task, a catch-up on demand (a print stamped a moment ago is known before it
    is notarized), and the mint's inclusion proofs for provenance."""

    def __init__(
        self, store: EventStore, manifest: LeagueManifest, league: LeagueClient | None
    ) -> None:
        self.league = league
        self.follower = (
            None
            if league is None
            else FeedFollower(
                store=store,
                league=league,
                source="mint",
                origin=f"{manifest.league}/mint",
                key=PublicKey.from_text(manifest.mint),
                apply=apply_mint_page,
            )
        )
        self._catching = asyncio.Lock()
        #: How long to wait for the mint's checkpoint to cover a stamp: a few of its beats.
        self._patience = 3 * manifest.policies.checkpoint_interval_ms / 1000 + 2

    def _following(self) -> FeedFollower:
        if self.follower is None:
            raise RetryLater(
                "the notary does not know where the mint answers (set MINT_URL, "
                "docs/operations.md)",
                60,
            )
        return self.follower

    async def catch_up(self, through: int = -1) -> None:
        """Apply the mint's feed up to its current checkpoint now, and on until a checkpoint
        covers event ``through`` (a stamp the mint has not yet checkpointed), within a few
        of the mint's published checkpoint intervals."""
        follower = self._following()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._patience
        async with self._catching:
            try:
                while True:
                    await follower.catch_up()
                    if (await follower.position()).next_seq > through:
                        return
                    if loop.time() >= deadline:
                        return
                    await asyncio.sleep(0.01)
            except (LeagueUnreachable, LeagueProblem, StoreUnavailable) as exc:
                raise RetryLater(
                    f"the notary cannot read the mint's feed now: {exc.diagnostics()}", 5
                ) from None

    async def stamped_since(self, serial: str) -> int | None:
        """The seq of a stamp of ``serial`` the mint has logged past the notary's position
        but not yet checkpointed (read, not applied: the follower applies it once a
        checkpoint covers it), or None."""
        follower = self._following()
        if self.league is None:
            return None
        after = (await follower.position()).next_seq - 1
        try:
            feed = await self.league.events(after, MAX_FEED_PAGE, service="mint")
        except (LeagueUnreachable, LeagueProblem) as exc:
            raise RetryLater(f"the mint does not answer: {exc.diagnostics()}", 5) from None
        stream = f"print/{serial}"
        return next((event.seq for event in feed.events if event.stream == stream), None)

    async def run(self) -> None:
        """Follow until cancelled; a refused feed stops following (the evidence is kept)."""
        follower = self._following()
        try:
            await follower.run()
        except FeedRefused as exc:
            log.error("the notary stopped following the mint: %s", exc.diagnostics())

    async def stamp_proof(self, printed: FollowedPrint) -> tuple[Checkpoint, list[str]]:
        """The mint checkpoint the notary verified last and the stamp's inclusion proof in
        it, fetched from the mint and checked before it is served."""
        follower = self._following()
        checkpoint = (await follower.position()).checkpoint
        if self.league is None or checkpoint is None or checkpoint.size <= printed.mint_seq:
            raise RetryLater("the notary has not verified a mint checkpoint covering it", 5)
        try:
            answer = await self.league.inclusion_proof(
                printed.mint_seq, checkpoint.size, service="mint"
            )
            proof = [decode_b64(h, what="proof hash") for h in answer.proof]
            verify_inclusion(
                printed.mint_seq, checkpoint.size, printed.leaf_hash, proof, checkpoint.root
            )
        except (LeagueUnreachable, LeagueProblem) as exc:
            raise RetryLater(f"the mint does not answer: {exc.diagnostics()}", 5) from None
        except LedgerError as exc:
            raise RetryLater(f"the mint's proof did not verify: {exc.diagnostics()}", 60) from None
        return checkpoint, [encode_b64(h) for h in proof]
