"""The event store's contract: what every implementation of ``EventStore`` must do.

Written once against the protocol (``services.eventlog.contract``); each implementation's
test module subclasses :class:`EventStoreContract` and provides the ``store`` fixture (a fresh,
empty log in the ``mint`` schema, projection tables creatable there) and the ``key`` fixture
(the key it signs with). Projection statements are SQL: the contract runs them through the
store's own transactions, never around it.
"""

from __future__ import annotations

import asyncio

import pytest

from ledger.checkpoint import Checkpoint, log_verifier
from ledger.errors import LedgerError, Overloaded, ProofError
from ledger.keys import SigningKey
from ledger.merkle import (
    EMPTY_ROOT,
    LeafHashes,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    verify_consistency,
    verify_inclusion,
)
from services.eventlog import (
    EventStore,
    NewEvent,
    StoreIntegrityError,
    StreamConflict,
)

ORIGIN = "league.test/mint"


async def statement(store: EventStore, sql: str) -> None:
    """Run one statement (a projection table's DDL, say) in a transaction of the store."""
    async with store.transaction() as tx:
        await tx.execute(sql)


async def _fill(store: EventStore, n: int, start: int = 0) -> None:
    await store.append_batch([NewEvent("s", start + i, "t", {"i": start + i}) for i in range(n)])


class EventStoreContract:
    """The behaviour every event store implementation shares."""

    async def test_append_then_read_the_feed(self, store: EventStore, key: SigningKey) -> None:
        """Appends get dense seqs and stream versions; the feed returns them after N, signed."""
        a = await store.append("print/A", 0, "stamped", {"serial": "A", "n": 1})
        b = await store.append("print/B", 0, "stamped", {"serial": "B"})
        c = await store.append("print/A", 1, "endorsed", {"hop": 1, "to": "ü"})
        assert [(e.seq, e.stream, e.stream_version) for e in (a, b, c)] == [
            (0, "print/A", 1),
            (1, "print/B", 1),
            (2, "print/A", 2),
        ]
        assert await store.read() == [a, b, c]
        assert await store.read(after=0) == [b, c]
        assert await store.read(after=0, limit=1) == [b]
        assert await store.read(after=2) == []
        assert await store.read_stream("print/A") == [a, c]
        assert await store.event(1) == b
        assert await store.event(3) is None
        for event in (a, b, c):
            key.public.verify_raw(event.leaf(), event.signature)
            assert event.leaf_hash == leaf_hash(event.leaf())
        head = await store.head()
        assert head.size == 3

    async def test_wrong_expected_version_is_a_stream_conflict(self, store: EventStore) -> None:
        """A stale expected version raises StreamConflict naming stream, expected and actual."""
        await store.append("s", 0, "t", {})
        await store.append("s", 1, "t", {})
        with pytest.raises(StreamConflict) as caught:
            await store.append("s", 1, "t", {})
        assert (caught.value.stream, caught.value.expected, caught.value.actual) == ("s", 1, 2)
        assert "stream 's' is at version 2" in caught.value.diagnostics()
        with pytest.raises(StreamConflict):
            await store.append("new", 3, "t", {})
        assert (await store.head()).size == 2

    async def test_a_batch_is_all_or_nothing(self, store: EventStore) -> None:
        """A conflict anywhere in a batch writes none of it; a good batch chains versions."""
        await store.append("x", 0, "t", {})
        bad = [NewEvent("y", 0, "t", {}), NewEvent("x", 0, "t", {})]
        with pytest.raises(StreamConflict):
            await store.append_batch(bad)
        assert (await store.head()).size == 1
        good = [NewEvent("y", 0, "t", {"i": 0}), NewEvent("y", 1, "t", {"i": 1})]
        events = await store.append_batch(good)
        assert [(e.seq, e.stream_version) for e in events] == [(1, 1), (2, 2)]

    @pytest.mark.parametrize(
        ("stream", "body"),
        [
            ("s", {"price": 1.5}),
            ("s", {"nul": "a\x00b"}),
            ("", {}),
            ("s" * 201, {}),
            ("s", {"big": "x" * 70_000}),
            ("s", ["not", "an", "object"]),
        ],
    )
    async def test_bad_events_are_refused_before_writing(
        self, store: EventStore, stream: str, body: dict[str, object]
    ) -> None:
        """Floats, NULs, empty or long streams and oversized bodies are typed errors, not rows."""
        with pytest.raises(LedgerError):
            await store.append(stream, 0, "t", body)
        assert (await store.head()).size == 0

    async def test_projection_commits_and_rolls_back_with_the_append(
        self, store: EventStore
    ) -> None:
        """Projection SQL in the append's transaction commits with it and rolls back with it."""
        await statement(store, "CREATE TABLE mint.census (serial text PRIMARY KEY)")
        async with store.transaction() as tx:
            event = await tx.append("print/A", 0, "stamped", {"serial": "A"})
            await tx.execute("INSERT INTO mint.census VALUES ($1)", event.body["serial"])

        async def failing_handler() -> None:
            async with store.transaction() as tx:
                await tx.append("print/B", 0, "stamped", {"serial": "B"})
                await tx.execute("INSERT INTO mint.census VALUES ('B')")
                raise RuntimeError("handler failed after the append")

        with pytest.raises(RuntimeError):
            await failing_handler()
        assert await store.fetch("SELECT serial FROM mint.census") == [("A",)]
        assert [e.stream for e in await store.read()] == ["print/A"]
        assert (await store.head()).size == 1

    async def test_lock_first_makes_check_then_append_atomic(self, store: EventStore) -> None:
        """Taking the log lock before reading a projection stops two callers both passing a
        check."""
        await statement(store, "CREATE TABLE mint.run (remaining int NOT NULL)")
        await statement(store, "INSERT INTO mint.run VALUES (1)")

        async def stamp(who: str) -> bool:
            async with store.transaction() as tx:
                next_seq = await tx.lock()
                remaining = await tx.fetchval("SELECT remaining FROM mint.run")
                await asyncio.sleep(0.05)  # widen the window a lock-free check would lose in
                if remaining == 0:
                    return False
                event = await tx.append(f"print/{who}", 0, "stamped", {"to": who})
                assert event.seq == next_seq
                await tx.execute("UPDATE mint.run SET remaining = remaining - 1")
                return True

        results = await asyncio.gather(*(stamp(f"p{i}") for i in range(4)))
        assert sorted(results) == [False, False, False, True]
        assert (await store.head()).size == 1

    async def test_projection_constraint_violations_are_typed(self, store: EventStore) -> None:
        """A projection write the database refuses rolls back the append as StoreIntegrityError."""
        await statement(store, "CREATE TABLE mint.owners (serial text PRIMARY KEY)")
        await statement(store, "INSERT INTO mint.owners VALUES ('A')")

        async def duplicate() -> None:
            async with store.transaction() as tx:
                await tx.append("print/A", 0, "stamped", {})
                await tx.execute("INSERT INTO mint.owners VALUES ('A')")

        with pytest.raises(StoreIntegrityError):
            await duplicate()
        assert await store.stream_version("print/A") == 0
        await store.append("print/A", 0, "stamped", {})
        assert await store.stream_version("print/A") == 1

    async def test_store_proofs_equal_the_pure_ones_and_verify(self, store: EventStore) -> None:
        """For many sizes, store proofs equal proofs over the leaf list and verify against roots."""
        await _fill(store, 7)
        await _fill(store, 30, start=7)
        leaves = [e.leaf_hash for e in await store.read()]
        tree = LeafHashes(leaves)
        for size in (1, 2, 5, 8, 16, 31, 37):
            root = LeafHashes(leaves[:size]).root()
            assert await store.root(size) == root
            for index in {0, size // 2, size - 1}:
                proof = await store.inclusion_proof(index, size)
                assert proof == inclusion_proof(index, size, tree)
                verify_inclusion(index, size, leaves[index], proof, root)
            for old in {1, size // 3 or 1, size - 1 or 1}:
                proof = await store.consistency_proof(old, size)
                assert proof == consistency_proof(old, size, tree)
                verify_consistency(old, size, LeafHashes(leaves[:old]).root(), root, proof)
        assert (await store.head()).root == tree.root()

    async def test_batch_proofs_equal_the_single_ones(self, store: EventStore) -> None:
        """inclusion_proofs answers each index in the order given (repeats too), equal to
        inclusion_proof's; an empty batch is empty; out of range is refused like one proof."""
        await _fill(store, 37)
        leaves = [e.leaf_hash for e in await store.read()]
        for size in (1, 5, 16, 37):
            indices = [size - 1, 0, size // 2, size - 1, size // 3]
            root = LeafHashes(leaves[:size]).root()
            proofs = await store.inclusion_proofs(indices, size)
            assert proofs == [await store.inclusion_proof(index, size) for index in indices]
            for index, proof in zip(indices, proofs, strict=True):
                verify_inclusion(index, size, leaves[index], proof, root)
        assert await store.inclusion_proofs([], 37) == []
        with pytest.raises(ProofError, match="beyond"):
            await store.inclusion_proofs([0], 38)
        with pytest.raises(ProofError, match="outside"):
            await store.inclusion_proofs([3, 37], 37)

    async def test_proofs_beyond_the_head_are_refused(self, store: EventStore) -> None:
        """Asking for a tree larger than the log, or a leaf outside it, is a ProofError."""
        await _fill(store, 4)
        with pytest.raises(ProofError, match="beyond"):
            await store.inclusion_proof(0, 5)
        with pytest.raises(ProofError, match="outside"):
            await store.inclusion_proof(4, 4)
        with pytest.raises(ProofError, match="beyond"):
            await store.consistency_proof(2, 9)

    async def test_checkpoints_are_signed_consistent_and_verifiable(
        self, store: EventStore, key: SigningKey
    ) -> None:
        """Checkpoints verify under the log key, name head size and root, and chain consistently."""
        verifier = log_verifier(ORIGIN, key.public)
        empty = await store.sign_checkpoint()
        assert (empty.size, empty.root) == (0, EMPTY_ROOT)
        await _fill(store, 5)
        first = await store.sign_checkpoint()
        assert first.verify([verifier]) == [verifier]
        assert (first.origin, first.size, first.root) == (ORIGIN, 5, (await store.head()).root)
        assert await store.sign_checkpoint() == first
        await _fill(store, 6, start=5)
        second = await store.sign_checkpoint()
        proof = await store.consistency_proof(first.size, second.size)
        verify_consistency(first.size, second.size, first.root, second.root, proof)
        assert await store.latest_checkpoint() == second
        assert await store.checkpoints() == [empty, first, second]
        assert Checkpoint.from_note(str(second)) == second

    async def test_a_transaction_records_one_time_for_all_its_events(
        self, store: EventStore
    ) -> None:
        """Every event of a transaction records the transaction's time (one clock), which is
        known once the lock is taken and not before."""
        async with store.transaction() as tx:
            with pytest.raises(LedgerError, match="lock"):
                _ = tx.now
            await tx.lock()
            moment = tx.now
            events = await tx.append_batch([NewEvent("a", 0, "t", {}), NewEvent("b", 0, "t", {})])
        assert {e.recorded_at for e in events} == {moment}
        assert moment.utcoffset() is not None
        assert await store.now() >= moment

    async def test_commit_listeners_hear_appends_only_once_committed(
        self, store: EventStore
    ) -> None:
        """A listener hears how many events each committed transaction appended; a rolled
        back transaction and one that appended nothing are not heard."""
        heard: list[int] = []
        store.on_commit(heard.append)
        await store.append_batch([NewEvent("a", i, "t", {}) for i in range(3)])

        async def rolled_back() -> None:
            async with store.transaction() as tx:
                await tx.append("b", 0, "t", {})
                raise RuntimeError("rolled back")

        with pytest.raises(RuntimeError):
            await rolled_back()
        async with store.transaction() as tx:
            await tx.lock()
        await store.append("c", 0, "t", {})
        assert heard == [3, 1]

    async def test_readers_are_served_the_stored_checkpoint_only(self, store: EventStore) -> None:
        """Before the first checkpoint a reader is told to come back; afterwards it is served
        the latest signed one, and serving signs nothing new however the log grows."""
        with pytest.raises(Overloaded):
            await store.served_checkpoint()
        await _fill(store, 2)
        signed = await store.sign_checkpoint()
        await _fill(store, 3, start=2)
        assert await store.served_checkpoint() == signed
        assert await store.checkpoints() == [signed]

    async def test_stream_versions_and_single_events(self, store: EventStore) -> None:
        """stream_version counts a stream's events; event(seq) finds one or None."""
        assert await store.stream_version("s") == 0
        await _fill(store, 4)
        assert await store.stream_version("s") == 4
        found = await store.event(2)
        assert found is not None
        assert found.body == {"i": 2}
        assert leaf_hash(found.leaf()) == found.leaf_hash
        assert await store.event(4) is None

    async def test_events_by_seq_in_one_read(self, store: EventStore) -> None:
        """events(seqs) answers the events at those seqs in seq order, leaving out any past
        the end; each equals what event(seq) answers."""
        await _fill(store, 5)
        found = await store.events([4, 0, 2, 9])
        assert [e.seq for e in found] == [0, 2, 4]
        assert found == [await store.event(seq) for seq in (0, 2, 4)]
        assert await store.events([]) == []
