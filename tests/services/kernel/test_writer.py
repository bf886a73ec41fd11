"""The kernel's group writer, which the mint's stamper and the notary's writer both are:
requests decided in groups in arrival order, a refusal failing its request alone, a failed
transaction its whole group, and a bounded queue (docs/architecture.md §4)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from ledger.errors import LedgerError, Overloaded, SchemaError
from services.kernel.writer import GroupWriter


class Decider:
    """Answers each request with its double, refuses negative ones, fails a whole group that
    holds 13; records the groups it was given. It waits on ``gate`` before each group."""

    def __init__(self) -> None:
        self.groups: list[list[int]] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self, group: Sequence[int]) -> list[int | LedgerError]:
        await self.gate.wait()
        self.groups.append(list(group))
        if 13 in group:
            raise RuntimeError("the transaction failed")
        return [SchemaError(f"{n} is negative") if n < 0 else 2 * n for n in group]


def writer(decide: Decider, max_group: int = 10, max_waiting: int = 100) -> GroupWriter[int, int]:
    return GroupWriter(
        decide, units=abs, max_group=max_group, max_waiting=max_waiting, what="units"
    )


async def test_waiting_requests_are_decided_in_groups_in_order() -> None:
    """Requests arriving while a group is decided wait and go together into the next one (up
    to max_group units, at least one request), answered in arrival order."""
    decide = Decider()
    decide.gate.clear()
    w = writer(decide, max_group=5)
    tasks = [asyncio.create_task(w.submit(n)) for n in (1, 2, 3, 4, 9)]
    await asyncio.sleep(0)
    decide.gate.set()
    assert await asyncio.gather(*tasks) == [2, 4, 6, 8, 18]
    assert decide.groups == [[1, 2], [3], [4], [9]]
    await w.close()


async def test_a_refusal_fails_its_request_and_a_failure_its_group() -> None:
    """A refused request raises its refusal while its group's others are answered; a failed
    transaction fails every request of its group and no other."""
    decide = Decider()
    decide.gate.clear()
    w = writer(decide, max_group=100)
    first = [asyncio.create_task(w.submit(n)) for n in (1, -2, 3)]
    await asyncio.sleep(0)
    decide.gate.set()
    results = await asyncio.gather(*first, return_exceptions=True)
    assert results[0] == 2
    assert isinstance(results[1], SchemaError)
    assert results[2] == 6
    decide.gate.clear()
    doomed = [asyncio.create_task(w.submit(n)) for n in (13, 4)]
    await asyncio.sleep(0)
    decide.gate.set()
    failed = await asyncio.gather(*doomed, return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in failed)
    assert await w.submit(5) == 10


async def test_a_full_queue_refuses_at_once() -> None:
    """Past max_waiting units waiting, a request is Overloaded with a retry, queued never."""
    decide = Decider()
    decide.gate.clear()
    w = writer(decide, max_group=100, max_waiting=5)
    held = [asyncio.create_task(w.submit(n)) for n in (3, 2)]
    await asyncio.sleep(0)
    with pytest.raises(Overloaded) as caught:
        await w.submit(1)
    assert caught.value.retry_after == 1
    decide.gate.set()
    assert await asyncio.gather(*held) == [6, 4]
