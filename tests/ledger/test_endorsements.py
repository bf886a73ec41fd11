"""Endorsements and chains (docs/architecture.md §3, Book V.6): the holder at hop n-1 signs hop
n."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.endorsements import Chain, Endorsement, endorse, verify_chain, verify_league_chain
from ledger.errors import (
    BadSignatureError,
    ChainError,
    SchemaError,
    StaleIssueError,
    VerificationError,
)
from ledger.keys import SigningKey
from ledger.limits import MAX_HOPS_PER_CHAIN
from ledger.wire import hash_text
from tests.ledger.factories import League, chain_of, key


def _with_hops(chain: Chain, hops: tuple[Endorsement, ...]) -> Chain:
    return Chain(certificate=chain.certificate, endorsements=hops)


def test_verified_chain_returns_the_last_recipient(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """Ownership is the last `to`: alice → bob → carol leaves carol holding the print."""
    chain = chain_of(league.print_certificate(alice), alice, bob, carol)
    assert verify_chain(chain, league.mint.public) == carol.public
    assert verify_league_chain(chain, league.manifest) == carol.public
    assert [e.hop for e in chain.endorsements] == [1, 2]


def test_a_bare_certificate_is_held_by_its_issued_to(league: League, alice: SigningKey) -> None:
    """With no endorsement the holder is the key the certificate was issued to."""
    chain = chain_of(league.note_certificate(alice), alice)
    assert verify_league_chain(chain, league.manifest) == alice.public


def test_prev_links_the_certificate_then_each_endorsement(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """Hop 1's prev is the certificate's hash; hop n's is hop n-1's hash."""
    chain = chain_of(league.print_certificate(alice), alice, bob, carol)
    first, second = chain.endorsements
    assert first.prev == hash_text(chain.certificate.hash())
    assert second.prev == hash_text(first.hash())


def test_wrong_holder_is_refused(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """A hop signed by a key that does not hold the item is refused, even with a valid
    signature and link (carol cannot give away alice's print)."""
    chain = chain_of(league.print_certificate(alice), alice)
    theft = Endorsement.sign(
        carol,
        serial=chain.serial,
        hop=1,
        prev=hash_text(chain.certificate.hash()),
        to=bob.public.to_text(),
        time=1,
        **{"from": carol.public.to_text()},
    )
    with pytest.raises(ChainError, match="did not hold"):
        verify_chain(_with_hops(chain, (theft,)), league.mint.public)
    with pytest.raises(ChainError, match="not held by the signing key"):
        endorse(chain, carol, bob.public, 1)


def test_skipped_hop_is_refused(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """Leaving out hop 2 of three breaks the chain."""
    chain = chain_of(league.print_certificate(alice), alice, bob, carol, alice)
    first, _, third = chain.endorsements
    with pytest.raises(ChainError):
        verify_chain(_with_hops(chain, (first, third)), league.mint.public)


def test_reordered_hops_are_refused(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """Hops in another order than their numbers are refused."""
    chain = chain_of(league.print_certificate(alice), alice, bob, carol)
    first, second = chain.endorsements
    with pytest.raises(ChainError, match="says it is hop 2"):
        verify_chain(_with_hops(chain, (second, first)), league.mint.public)


def test_broken_prev_is_refused(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """A hop whose prev names another link (here: hop 1 of another print) is refused."""
    chain = chain_of(league.print_certificate(alice), alice, bob)
    other = league.print_certificate(alice, "CZ-MODEL-A-0043")
    relinked = Endorsement.sign(
        alice,
        serial=chain.serial,
        hop=1,
        prev=hash_text(other.hash()),
        to=bob.public.to_text(),
        time=1,
        **{"from": alice.public.to_text()},
    )
    with pytest.raises(ChainError, match="does not link"):
        verify_chain(_with_hops(chain, (relinked,)), league.mint.public)


def test_hop_of_another_serial_is_refused(
    league: League, alice: SigningKey, bob: SigningKey
) -> None:
    """An endorsement of another serial cannot extend this chain."""
    chain = chain_of(league.print_certificate(alice), alice, bob)
    other = chain_of(league.print_certificate(alice, "CZ-MODEL-A-0043"), alice, bob)
    with pytest.raises(ChainError, match="CZ-MODEL-A-0043"):
        verify_chain(_with_hops(chain, other.endorsements), league.mint.public)


def test_forged_signatures_are_refused(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """An endorsement whose `to` was changed after signing, a certificate signed by the wrong
    key and a chain checked against the wrong issuer are all refused."""
    chain = chain_of(league.print_certificate(alice), alice, bob)
    (hop,) = chain.endorsements
    redirected = Endorsement.from_wire({**hop.to_wire(), "to": carol.public.to_text()})
    with pytest.raises(BadSignatureError):
        verify_chain(_with_hops(chain, (redirected,)), league.mint.public)
    with pytest.raises(BadSignatureError):
        verify_chain(chain, league.treasury.public)
    fake = chain_of(league.print_certificate(alice).sign(carol, **_unsigned(chain)), alice, bob)
    with pytest.raises(BadSignatureError):
        verify_league_chain(fake, league.manifest)


def _unsigned(chain: Chain) -> dict[str, object]:
    body = chain.certificate.body()
    del body["kind"]
    return body


def test_older_issue_is_history(league: League, alice: SigningKey, bob: SigningKey) -> None:
    """Given the current issue number, a chain of an older issue is refused as history and a
    chain of an issue not yet made is refused too; the current issue verifies."""
    old = chain_of(league.note_certificate(alice, issue=1), alice, bob)
    current = chain_of(league.note_certificate(bob, issue=2), bob)
    with pytest.raises(StaleIssueError, match="history"):
        verify_league_chain(old, league.manifest, current_issue=2)
    assert verify_league_chain(current, league.manifest, current_issue=2) == bob.public
    with pytest.raises(ChainError, match="not been issued"):
        verify_league_chain(current, league.manifest, current_issue=1)
    assert verify_league_chain(old, league.manifest) == bob.public  # history still verifies


def test_chain_outside_the_league_is_refused(league: League, alice: SigningKey) -> None:
    """verify_league_chain checks the certificate against the manifest before signatures."""
    chain = chain_of(league.print_certificate(alice, "CZ-MODEL-A-1201"), alice)
    with pytest.raises(VerificationError):
        verify_league_chain(chain, league.manifest)


def test_chain_length_is_limited(league: League, alice: SigningKey, bob: SigningKey) -> None:
    """A chain longer than the published hop limit is refused on parse."""
    chain = chain_of(league.print_certificate(alice), alice, bob)
    wire = chain.to_wire()
    wire["endorsements"] = wire["endorsements"] * (MAX_HOPS_PER_CHAIN + 1)
    with pytest.raises(SchemaError, match="endorsements"):
        Chain.from_wire(wire)


def test_endorse_builds_the_next_hop(league: League, alice: SigningKey, bob: SigningKey) -> None:
    """endorse numbers the hop, links prev, signs as the holder and stamps the given time."""
    chain = endorse(chain_of(league.print_certificate(alice), alice), alice, bob.public, 1234)
    (hop,) = chain.endorsements
    assert (hop.hop, hop.from_, hop.to, hop.time) == (
        1,
        alice.public.to_text(),
        bob.public.to_text(),
        1234,
    )
    hop.verify(alice.public)


@pytest.mark.parametrize(
    "change",
    [{"hop": 0}, {"time": -1}, {"time": 1.5}, {"time": "2026-01-01T00:00:00Z"}, {"from": None}],
)
def test_malformed_endorsements_are_refused(
    league: League, alice: SigningKey, bob: SigningKey, change: dict[str, object]
) -> None:
    """Hops count from 1; time is integer Unix seconds; every field is present and typed."""
    (hop,) = chain_of(league.print_certificate(alice), alice, bob).endorsements
    with pytest.raises(SchemaError):
        Endorsement.from_wire({**hop.to_wire(), **change})


def test_endorsement_wire_names_the_from_field(
    league: League, alice: SigningKey, bob: SigningKey
) -> None:
    """On the wire the sender is `from` (not the Python name `from_`)."""
    (hop,) = chain_of(league.print_certificate(alice), alice, bob).endorsements
    assert list(hop.to_wire()) == ["kind", "serial", "hop", "prev", "from", "to", "time", "sig"]
    wire = hop.to_wire()
    with pytest.raises(SchemaError):
        Endorsement.from_wire({**wire, "from_": hop.from_})
    del wire["from"]
    with pytest.raises(SchemaError):
        Endorsement.from_wire({**wire, "from_": hop.from_})


@settings(max_examples=60, deadline=None)
@given(
    recipients=st.lists(st.integers(10, 13), min_size=1, max_size=5),
    picks=st.lists(st.integers(0, 9), max_size=7),
)
def test_only_a_prefix_of_a_valid_chain_verifies(
    league: League, recipients: list[int], picks: list[int]
) -> None:
    """Any sequence drawn from a chain's own endorsements (reordered, repeated, skipped)
    verifies exactly when it is a prefix of the chain, and then names that prefix's holder.
    (A prefix is an honest past state: only the seen-registry and the notary know later hops.)"""
    holder = key(10)
    keys = [key(n) for n in recipients]
    chain = chain_of(league.print_certificate(holder), holder, *keys)
    links = chain.endorsements
    chosen = tuple(links[i % len(links)] for i in picks)
    candidate = Chain(certificate=chain.certificate, endorsements=chosen)
    if chosen == links[: len(chosen)]:
        expected = keys[len(chosen) - 1] if chosen else holder
        assert verify_chain(candidate, league.mint.public) == expected.public
    else:
        with pytest.raises(ChainError):
            verify_chain(candidate, league.mint.public)
