"""What one holder can make the notary record: a few conflicts per hop, a few new hops per
chain per request (ruling L-22), over real HTTP and PostgreSQL."""

from __future__ import annotations

import pytest

from apiclient.league import LeagueProblem, NotaryConflict
from ledger.endorsements import Chain
from ledger.keys import SigningKey
from ledger.limits import MAX_NEW_HOPS_PER_CHAIN
from services.notary.notarizing import MAX_CONFLICTS_PER_HOP
from tests.harness.trading import T0, Trade, hop


async def test_conflicts_at_one_hop_are_logged_a_few_times_and_all_refused(
    trade: Trade,
) -> None:
    """A holder signing one print away again and again at one hop gets every attempt refused
    with a fraud proof convicting them, but the notary's log keeps only the first
    MAX_CONFLICTS_PER_HOP of them: the provenance stops growing (L-22; L-07 kept one event
    per distinct endorsement, without end)."""
    a, b = SigningKey.generate(), SigningKey.generate()
    stamped = await trade.stamp(a)
    await trade.league.notarize([hop(stamped, a, b)])
    for i in range(MAX_CONFLICTS_PER_HOP + 3):
        with pytest.raises(NotaryConflict) as refused:
            await trade.league.notarize([hop(stamped, a, SigningKey.generate(), T0 + i)])
        (conflict,) = refused.value.conflicts
        assert conflict.proof.verify() == a.public
        conflict.prior.check(trade.notary_key, conflict.proof.first)
    provenance = await trade.league.provenance(stamped.serial)
    assert len(provenance.conflicts) == MAX_CONFLICTS_PER_HOP
    assert provenance.holder == b.public.to_text()


async def test_a_later_hop_has_its_own_conflicts_logged(trade: Trade) -> None:
    """The bound is per hop: a later holder's double endorsement is logged even when an
    earlier hop of the same print has reached its bound (L-22)."""
    a, b, c = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    stamped = await trade.stamp(a)
    to_b = hop(stamped, a, b)
    to_c = hop(to_b, b, c, T0 + 1)
    await trade.league.notarize([to_c])
    for i in range(MAX_CONFLICTS_PER_HOP + 1):
        with pytest.raises(NotaryConflict):
            await trade.league.notarize([hop(stamped, a, SigningKey.generate(), T0 + i)])
    with pytest.raises(NotaryConflict):
        await trade.league.notarize([hop(to_b, b, SigningKey.generate(), T0 + 2)])
    conflicts = (await trade.league.provenance(stamped.serial)).conflicts
    assert [c.hop for c in conflicts] == [1] * MAX_CONFLICTS_PER_HOP + [2]


def _chain(start: Chain, holder: SigningKey, hops: int) -> tuple[Chain, SigningKey]:
    chain = start
    for i in range(hops):
        receiver = SigningKey.generate()
        chain = hop(chain, holder, receiver, T0 + i)
        holder = receiver
    return chain, holder


async def test_a_chain_bringing_too_many_new_hops_is_refused_whole(trade: Trade) -> None:
    """A chain with more than MAX_NEW_HOPS_PER_CHAIN hops after its last recorded one is
    refused, 413 too-large, and nothing of its request is recorded; its first hops are
    recorded alone, and then the rest (L-22: one request recorded a 1,024-hop chain)."""
    a = SigningKey.generate()
    stamped = await trade.stamp(a)
    chain, _ = _chain(stamped, a, MAX_NEW_HOPS_PER_CHAIN + 1)
    other = hop(await trade.stamp(a, "Model-B"), a, SigningKey.generate())
    with pytest.raises(LeagueProblem) as refused:
        await trade.league.notarize_once([other, chain])
    assert (refused.value.status, refused.value.slug) == (413, "too-large")
    assert str(MAX_NEW_HOPS_PER_CHAIN) in (refused.value.problem.detail or "")
    assert (await trade.league.provenance(chain.serial)).hops == []
    assert (await trade.league.provenance(other.serial)).hops == []

    first = Chain(certificate=chain.certificate, endorsements=chain.endorsements[:2])
    assert (await trade.league.notarize([first])).recorded == 2
    answer = await trade.league.notarize_once([chain])
    assert answer.recorded == MAX_NEW_HOPS_PER_CHAIN - 1
    assert len(answer.receipts) == MAX_NEW_HOPS_PER_CHAIN + 1


async def test_the_client_sends_a_long_chain_in_pieces(trade: Trade) -> None:
    """L-22: a chain of 2.5 x MAX_NEW_HOPS_PER_CHAIN offline trades, notarized by the league
    client, goes in pieces (its first hops first) and is recorded whole, a receipt per hop
    that checks, beside a short chain in the same call; sent again, it moves nothing."""
    a = SigningKey.generate()
    stamped = await trade.stamp(a)
    length = MAX_NEW_HOPS_PER_CHAIN * 5 // 2
    chain, holder = _chain(stamped, a, length)
    other = hop(await trade.stamp(a, "Model-B"), a, SigningKey.generate())
    answer = await trade.league.notarize([other, chain])
    assert len(answer.receipts) == length + 1
    for receipt, endorsement in zip(answer.receipts[1:], chain.endorsements, strict=True):
        receipt.check(trade.notary_key, endorsement)
    assert (await trade.league.provenance(chain.serial)).holder == holder.public.to_text()
    assert (await trade.league.notarize([chain])).recorded == 0
