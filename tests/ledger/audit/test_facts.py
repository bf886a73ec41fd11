"""The auditor's pure core (docs/operations.md "Auditing a running league"), over logs built in
memory with real signatures (tests/ledger/audit/world.py). The stateless page checks
(ledger/audit/facts.py): the fast path gives the reference's verdicts, byte for byte, on every
mutation of a page, and a process pool gives the same."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest

from ledger.api.notary import HolderRow, Holders
from ledger.audit import AuditFailure, Auditor, check_page, facts
from ledger.audit.facts import _canonical, _Slow
from ledger.canonical import jcs
from tests.ledger.audit.world import World, a, audit_with_holders, b, c, mutations, traded
from tests.ledger.factories import chain_of


def test_fast_canonical_json_is_rfc8785() -> None:
    """The audit's canonical form of ASCII JSON is RFC 8785's, every C0 control and escape
    included; anything else goes to the reference path."""
    texts = ["".join(chr(n) for n in range(128)), 'quote " and \\ back', ""]
    value = {"z": texts, "a": {"k": [1, -9_007_199_254_740_991, True, None]}, "B": "x"}
    assert _canonical(value) == jcs(value)
    for refused in ({"é": 1}, {"k": "\U0001f600"}, {"k": "\ud800"}, {"k": "\u2028"}):
        with pytest.raises(_Slow):
            _canonical(refused)


def test_the_fast_path_gives_the_reference_verdicts(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page, clean or defective, gets the same facts and the same failure whether the
    fast path or only the protocol's own code (FeedEvent.verified, parse_event) checks it."""
    traded(world)
    pages = mutations(world)
    context = Auditor(world.league.manifest, world.league.root.public).context
    fast = [check_page(context(service), text) for service, text in pages]
    assert sum(page.failure is None for page in fast) == 4  # the clean pages only
    # The runs with a bad signature inside: the good events before it judged, none after.
    assert [(p.failure and p.failure[0], len(p.facts)) for p in fast[-3:]] == [
        (1, 1),
        (1, 1),
        (0, 0),
    ]
    with monkeypatch.context() as slow:

        def reference_only(*args: object) -> object:
            raise _Slow

        slow.setattr(facts, "_fast", reference_only)
        reference = [check_page(context(service), text) for service, text in pages]
    assert fast == reference


def test_a_process_pool_gives_the_same_verdicts(world: World) -> None:
    """check_page in worker processes (as league audit runs it) answers what it answers here."""
    traded(world)
    pages = mutations(world)
    context = Auditor(world.league.manifest, world.league.root.public).context
    here = [check_page(context(service), text) for service, text in pages]
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=spawn) as pool:
        there = list(pool.map(check_page, [context(s) for s, _ in pages], [t for _, t in pages]))
    assert there == here


def test_holders_pages_tile_the_serials(world: World) -> None:
    """Pages are read in order (each after the last serial of the one
    before) and compared at their own log sizes; a page out of serial order fails."""
    to_c = traded(world)
    other = world.stamp(b, "CZ-MODEL-A-0003")
    world.record(chain_of(other.certificate, b, a), 1)
    first = Holders(
        holders=[HolderRow(serial=to_c.serial, issue=1, hops=2, holder=c.public.to_text())],
        log_size=2,
        next_after=to_c.serial,
    )  # read when two hops were recorded
    second = Holders(
        holders=[HolderRow(serial=other.serial, issue=1, hops=1, holder=a.public.to_text())],
        log_size=len(world.notary.events),
        next_after=None,
    )
    report = audit_with_holders(world, ("", first), (to_c.serial, second)).report()
    assert report.compared == 2
    with pytest.raises(ValueError, match="in order"):
        audit_with_holders(world, ("", first), ("", second))
    backwards = Holders(holders=second.holders + first.holders, log_size=2, next_after=None)
    with pytest.raises(AuditFailure, match="not in serial order"):
        audit_with_holders(world, ("", backwards))
