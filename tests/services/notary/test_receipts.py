"""services.notary.receipts: receipts asked for at once are made in one batch, and a request
whose seqs fail a batch fails alone."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from ledger.keys import SigningKey
from services.eventlog import EventLogError, EventStore, PostgresEventStore
from services.notary.app import RECEIPTS
from services.notary.receipts import Receipts
from tests.harness.trading import T0, Trade, hop


class Counted:
    """The notary's real store, counting the reads and transactions receipts cost."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        if name in ("fetch", "events", "inclusion_proofs", "transaction"):
            self.calls[name] += 1
        return getattr(self.store, name)


async def recorded_without_receipts(trade: Trade, server: TestServer, hops: int) -> list[int]:
    """``hops`` hops recorded, their receipts dropped from the table again (as if the
    answers had been lost before their receipts were made): their event seqs."""
    runs = trade.manifest.print_runs.runs  # the test league's runs are 3 standard prints each
    titles = [run.title for run in runs for _ in range(3)][:hops]
    owners = [SigningKey.generate() for _ in titles]
    chains = [
        hop(await trade.stamp(a, title), a, SigningKey.generate(), T0)
        for a, title in zip(owners, titles, strict=True)
    ]
    answer = await trade.league.notarize(chains)
    seqs = [receipt.index for receipt in answer.receipts]
    dropped = await server.app[RECEIPTS].store.fetch(
        "DELETE FROM notary.receipts WHERE seq = ANY($1::bigint[]) RETURNING seq", seqs
    )
    assert len(dropped) == hops
    return seqs


async def test_receipts_asked_for_at_once_are_made_in_one_pass(
    trade: Trade, server: TestServer
) -> None:
    """Twenty requests asking at once for a receipt not yet made each are answered by one
    batch: one read of the receipts kept, one of the events, one inclusion-proof pass and
    one insert (a statement: no transaction), not one of each per request; every receipt
    checks offline."""
    seqs = await recorded_without_receipts(trade, server, 20)
    kept = server.app[RECEIPTS]
    counted = Counted(kept.store)
    receipts = Receipts(counted, kept.key, kept.checkpointer)  # type: ignore[arg-type]

    answers = await asyncio.gather(*(receipts.of([seq]) for seq in seqs))

    assert counted.calls == {"fetch": 2, "events": 1, "inclusion_proofs": 1}
    for seq, answer in zip(seqs, answers, strict=True):
        assert list(answer) == [seq]
        assert answer[seq].index == seq
        answer[seq].check(trade.notary_key)
    again = await kept.of(seqs)  # kept now: the same receipts, read back
    assert again == {seq: answer[seq] for seq, answer in zip(seqs, answers, strict=True)}


async def test_a_request_whose_seq_fails_the_batch_fails_alone(
    trade: Trade, server: TestServer
) -> None:
    """A request asking for a receipt of an event that is not there fails; the request
    batched with it still gets its receipt."""
    (seq,) = await recorded_without_receipts(trade, server, 1)
    receipts = server.app[RECEIPTS]
    nowhere = -1  # no event is there
    good, bad = await asyncio.gather(
        receipts.of([seq]), receipts.of([nowhere]), return_exceptions=True
    )
    assert isinstance(bad, EventLogError)
    assert not isinstance(good, BaseException)
    good[seq].check(trade.notary_key)
    with pytest.raises(EventLogError):
        await receipts.of([nowhere])


async def test_the_hops_a_request_recorded_are_not_read_back_for_their_receipts(
    trade: Trade, server: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The receipts of the hops a request has just recorded are made from what the
    transaction that appended them knows (serial, issue, hop, endorsement, holder, leaf
    hash): neither their events nor kept receipts are read, and they are the receipts a
    re-submission reads back, byte for byte, every one checking offline."""
    store = server.app[RECEIPTS].store
    calls: Counter[str] = Counter()
    for name in ("events", "fetch"):
        real = getattr(PostgresEventStore, name)

        def counting(real: Any, name: str) -> Any:
            async def counted(self: PostgresEventStore, first: Any, *args: Any) -> Any:
                if self is store and (name != "fetch" or "notary.receipts" in first):
                    calls[name if name != "fetch" else first.split()[0].lower()] += 1
                return await real(self, first, *args)

            return counted

        monkeypatch.setattr(PostgresEventStore, name, counting(real, name))
    a = SigningKey.generate()
    chains = [hop(await trade.stamp(a, "Tally"), a, SigningKey.generate(), T0)]
    answer = await trade.league.notarize(chains)
    assert calls == {"insert": 1}  # no event read back, no kept receipt looked for
    (receipt,) = answer.receipts
    receipt.check(trade.notary_key)
    again = await trade.league.notarize(chains)
    assert again.receipts == answer.receipts
    assert again.recorded == 0
    assert calls == {"insert": 1, "select": 1}  # the re-submission's: read back as kept
