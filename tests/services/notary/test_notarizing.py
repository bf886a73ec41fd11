"""POST /notary/endorsements over real HTTP and PostgreSQL: receipts, 409 fraud proofs and the
422 refusals (Book V.6, V.7)."""

from __future__ import annotations

import asyncio

import pytest

from apiclient.league import LeagueClient, LeagueProblem, NotaryConflict
from ledger.api.notary import NotarizeAnswer
from ledger.certificates import PrintCertificate
from ledger.endorsements import Chain, Endorsement
from ledger.keys import SigningKey
from ledger.slips import Slip
from ledger.wire import hash_text
from services.kernel.founding import load_service_key
from services.kernel.settings import LeagueSettings
from services.notary.notarizing import MAX_CONFLICTS_PER_HOP
from tests.harness.trading import T0, Trade, hop


async def test_a_to_b_to_c_hop_by_hop(trade: Trade) -> None:
    """A→B is notarized with a receipt checkable offline; then A→B→C records hop 2 alone and
    answers hop 1's receipt again, byte for byte; the same chain again records nothing and
    answers the same receipts (V.6)."""
    a, b, c = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    to_b = hop(await trade.stamp(a), a, b)
    first = await trade.league.notarize([to_b])
    assert first.recorded == 1
    (receipt,) = first.receipts
    checkpoint = receipt.check(trade.notary_key, to_b.endorsements[0])
    assert checkpoint.size > receipt.index
    assert receipt.to == b.public.to_text()

    to_c = hop(to_b, b, c, T0 + 1)
    second = await trade.league.notarize([to_c])
    assert second.recorded == 1
    assert second.receipts[0] == receipt
    second.receipts[1].check(trade.notary_key, to_c.endorsements[1])
    assert second.receipts[1].index > receipt.index

    again = await trade.league.notarize([to_c])
    assert again == NotarizeAnswer(receipts=second.receipts, recorded=0)


async def test_a_to_b_to_c_as_one_chain_in_a_slip(trade: Trade) -> None:
    """A chain that skips unrecorded hops is recorded hop by hop, in order, in one request;
    an armored slip is taken as the chains it holds (V.6)."""
    a, b, c = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    chain = hop(hop(await trade.stamp(a), a, b), b, c, T0 + 1)
    answer = await trade.league.notarize(slip=Slip(chains=(chain,)).to_armor())
    assert answer.recorded == 2
    assert [r.hop for r in answer.receipts] == [1, 2]
    for receipt, endorsement in zip(answer.receipts, chain.endorsements, strict=True):
        receipt.check(trade.notary_key, endorsement)
    assert answer.receipts[0].index + 1 == answer.receipts[1].index
    assert (await trade.league.provenance(chain.serial)).holder == c.public.to_text()


async def test_one_print_endorsed_twenty_ways_at_once_gets_one_receipt(
    trade: Trade, league: LeagueClient
) -> None:
    """A signs one print away to twenty keys, submitted at once from twenty connections:
    exactly one receipt; every other answer is 409 with the prior record (the winner's
    receipt) and a fraud proof convicting A (V.6 "the first endorsement recorded at each hop
    wins", V.7 "barred outright when a notary is in the loop")."""
    a = SigningKey.generate()
    stamped = await trade.stamp(a)
    chains = [hop(stamped, a, SigningKey.generate(), T0 + i) for i in range(20)]

    async def submit(chain: Chain) -> NotarizeAnswer | NotaryConflict:
        async with LeagueClient(league.base_url) as own_connection:
            try:
                return await own_connection.notarize([chain])
            except NotaryConflict as conflict:
                return conflict

    answers = await asyncio.gather(*(submit(chain) for chain in chains))
    receipts = [answer for answer in answers if isinstance(answer, NotarizeAnswer)]
    refused = [answer for answer in answers if isinstance(answer, NotaryConflict)]
    assert len(receipts) == 1
    assert len(refused) == 19
    (won,) = receipts[0].receipts
    winner = next(
        c.endorsements[0] for c in chains if hash_text(c.endorsements[0].hash()) == won.endorsement
    )
    for conflict in refused:
        assert conflict.status == 409
        assert conflict.slug == "fraud"
        (found,) = conflict.conflicts
        assert found.prior == won
        assert found.proof.first == winner
        assert found.proof.verify() == a.public
    provenance = await trade.league.provenance(stamped.serial)
    # Every refusal carries its proof; the log keeps the first few at the hop (L-22).
    assert len(provenance.conflicts) == MAX_CONFLICTS_PER_HOP
    assert provenance.holder == winner.to


async def test_a_resubmitted_conflict_is_refused_again_and_logged_once(trade: Trade) -> None:
    """The same conflicting endorsement sent twice is refused twice and kept once in the
    notary's log (V.7)."""
    a, b, c = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    stamped = await trade.stamp(a)
    await trade.league.notarize([hop(stamped, a, b)])
    for _ in range(2):
        with pytest.raises(NotaryConflict):
            await trade.league.notarize([hop(stamped, a, c)])
    assert len((await trade.league.provenance(stamped.serial)).conflicts) == 1


async def test_a_conflict_records_nothing_of_its_request(trade: Trade) -> None:
    """A request is taken whole or not at all: a slip with one good new chain and one
    conflicting chain records neither (docs/api.md "The notary")."""
    a, b, c = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    first, second = await trade.stamp(a, "Model-A"), await trade.stamp(a, "Model-B")
    await trade.league.notarize([hop(first, a, b)])
    with pytest.raises(NotaryConflict):
        await trade.league.notarize([hop(second, a, b), hop(first, a, c)])
    assert (await trade.league.provenance(second.serial)).hops == []


async def test_a_thiefs_replay_of_a_slip_endorsed_to_someone_else(trade: Trade) -> None:
    """A thief holding a slip endorsed to B can notarize only B's ownership; signing it on
    from the thief's key, or rewriting hop 1 to the thief, is refused with nothing recorded
    (V.7: "a pasted code endorsed to another key is unusable and un-re-endorsable")."""
    a, b, thief = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    to_b = hop(await trade.stamp(a), a, b)
    onward = Endorsement.sign(
        thief,
        serial=to_b.serial,
        hop=2,
        prev=hash_text(to_b.endorsements[0].hash()),
        to=thief.public.to_text(),
        time=T0,
        **{"from": thief.public.to_text()},
    )
    stolen = Chain(certificate=to_b.certificate, endorsements=(*to_b.endorsements, onward))
    with pytest.raises(LeagueProblem) as refused:
        await trade.league.notarize([stolen])
    assert (refused.value.status, refused.value.slug) == (422, "broken-chain")

    rewritten = to_b.endorsements[0].model_copy(update={"to": thief.public.to_text()})
    with pytest.raises(LeagueProblem) as forged:
        await trade.league.notarize(
            [Chain(certificate=to_b.certificate, endorsements=(rewritten,))]
        )
    assert (forged.value.status, forged.value.slug) == (422, "bad-signature")
    assert (await trade.league.provenance(to_b.serial)).hops == []

    replayed = await trade.league.notarize(slip=Slip(chains=(to_b,)).to_armor())
    assert replayed.receipts[0].to == b.public.to_text()


async def test_a_forged_hop_is_refused(trade: Trade) -> None:
    """An endorsement claiming to be A's but signed by another key, and a certificate not
    signed by the mint, are 422 bad-signature (V.7: forgery cannot happen)."""
    a, b, forger = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    stamped = await trade.stamp(a)
    forged = Endorsement.sign(
        forger,
        serial=stamped.serial,
        hop=1,
        prev=hash_text(stamped.certificate.hash()),
        to=b.public.to_text(),
        time=T0,
        **{"from": a.public.to_text()},
    )
    with pytest.raises(LeagueProblem) as refused:
        await trade.league.notarize(
            [Chain(certificate=stamped.certificate, endorsements=(forged,))]
        )
    assert (refused.value.status, refused.value.slug) == (422, "bad-signature")

    fake = PrintCertificate.sign(
        forger,
        **{k: v for k, v in stamped.certificate.to_wire().items() if k not in ("kind", "sig")},
    )
    with pytest.raises(LeagueProblem) as fake_print:
        await trade.league.notarize([hop(Chain(certificate=fake, endorsements=()), a, b)])
    assert (fake_print.value.status, fake_print.value.slug) == (422, "bad-signature")


async def test_a_hop_by_a_non_holder_is_refused(trade: Trade) -> None:
    """B signing away a print A holds is 422 broken-chain, and nothing is recorded (V.6: the
    signer must hold the item at the previous hop)."""
    a, b, c = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    stamped = await trade.stamp(a)
    by_b = Endorsement.sign(
        b,
        serial=stamped.serial,
        hop=1,
        prev=hash_text(stamped.certificate.hash()),
        to=c.public.to_text(),
        time=T0,
        **{"from": b.public.to_text()},
    )
    with pytest.raises(LeagueProblem) as refused:
        await trade.league.notarize([Chain(certificate=stamped.certificate, endorsements=(by_b,))])
    assert (refused.value.status, refused.value.slug) == (422, "broken-chain")
    assert "did not hold it" in refused.value.diagnostics()
    provenance = await trade.league.provenance(stamped.serial)
    assert provenance.hops == []
    assert provenance.holder == a.public.to_text()


async def test_a_print_the_mint_never_stamped_is_refused(
    trade: Trade, settings: LeagueSettings
) -> None:
    """A certificate under the mint's own key for a serial the mint's log never stamped is
    422 not-stamped: the notary checks the mint's feed, not only the signature; a chain of no
    hop has nothing to notarize."""
    a, b = SigningKey.generate(), SigningKey.generate()
    stamped = await trade.stamp(a, "Model-A")
    mint_key = load_service_key(settings, trade.manifest, "mint", None)
    wire = stamped.certificate.to_wire()
    unstamped = PrintCertificate.sign(
        mint_key,
        **{
            **{k: v for k, v in wire.items() if k not in ("kind", "sig")},
            "serial": "CZ-MODEL-A-0003",
        },
    )
    with pytest.raises(LeagueProblem) as refused:
        await trade.league.notarize([hop(Chain(certificate=unstamped, endorsements=()), a, b)])
    assert (refused.value.status, refused.value.slug) == (422, "not-stamped")
    # Naming an event the mint's log does not hold yet, it is "not yet followed": a retry.
    ahead = PrintCertificate.sign(
        mint_key,
        **{
            **{k: v for k, v in wire.items() if k not in ("kind", "sig")},
            "serial": "CZ-MODEL-A-0003",
            "event": 10_000,
        },
    )
    with pytest.raises(LeagueProblem) as later:
        await trade.league.notarize([hop(Chain(certificate=ahead, endorsements=()), a, b)])
    assert (later.value.status, later.value.slug) == (503, "retry-later")
    with pytest.raises(LeagueProblem) as empty:
        await trade.league.notarize([stamped])
    assert (empty.value.status, empty.value.slug) == (422, "broken-chain")


async def test_a_print_stamped_a_moment_ago_is_known(trade: Trade) -> None:
    """The notary catches up with the mint's feed when a chain names a print it has not
    followed yet, so a print can be traded the moment it is stamped (docs/api.md "The notary")."""
    a, b = SigningKey.generate(), SigningKey.generate()
    for title in ("Tally", "Pairing", "Separation"):
        answer = await trade.league.notarize([hop(await trade.stamp(a, title), a, b)])
        assert answer.recorded == 1
