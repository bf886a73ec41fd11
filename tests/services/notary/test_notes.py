"""The notary notarizes notes as it does prints, learning them from the treasury's feed
(docs/architecture.md §4 "one arbiter of transfers"; Book V.5, V.6, V.8): a note travels by
endorsement, the first endorsement at each hop wins, only a note's current issue is
spendable, and /provenance/{note serial} shows its issues, hops and returns.

The mint, the treasury and the notary are served in one app on a real port; the notary
follows both feeds over HTTP at the server's own address. The supply invariant is checked
after every test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, LeagueProblem, NotaryConflict
from ledger.certificates import NoteCertificate
from ledger.checkpoint import Checkpoint, log_verifier
from ledger.encoding import decode_b64
from ledger.endorsements import Chain, endorse
from ledger.errors import SchemaError
from ledger.events import PURCHASE_EVENTS, NoteReturned
from ledger.keys import PublicKey, SigningKey
from ledger.merkle import verify_inclusion
from services.kernel.founding import load_service_key
from services.kernel.settings import LeagueSettings
from services.notary.app import NOTARY as NOTARY_KEY
from services.notary.app import NOTARY_LOG
from services.notary.following import apply_treasury_page
from services.notary.projection import PROJECTION as NOTARY_PROJECTION
from services.treasury.app import TREASURY_LOG
from services.treasury.projection import PROJECTION as TREASURY_PROJECTION
from tests.harness.buying import server as server  # the three services in one app
from tests.harness.mint import checkpoint_covering
from tests.harness.mint import league as league  # the league over this module's server
from tests.harness.trading import T0, hop
from tests.harness.treasury import Faucet, checked_faucet


@pytest.fixture
async def faucet(settings: LeagueSettings, server: TestServer) -> AsyncIterator[Faucet]:
    """The faucet; after the test the supply invariant and the notary's rebuild are checked."""
    async with checked_faucet(settings, server, (NOTARY_LOG, NOTARY_PROJECTION)) as faucet:
        yield faucet


async def claim_note(faucet: Faucet, owner: SigningKey, marks: int = 25) -> Chain:
    (note,) = (await faucet.claim(owner, marks)).notes
    return Chain(certificate=note, endorsements=())


async def return_note(server: TestServer, chain: Chain, notarized: int) -> None:
    """Append the note-returned event a purchase appends once the notary recorded the
    payment (the buy saga's step; here the test stands in for it)."""
    store = server.app[TREASURY_LOG]
    returned = NoteReturned(
        serial=chain.serial,
        issue=chain.issue,
        endorsement=chain.endorsements[-1],
        notarized=notarized,
        purchase_id=f"buy-{chain.serial}-{chain.issue}",
    )
    async with store.transaction() as tx:
        await tx.lock()
        version = await tx.fetchval(
            "SELECT count(*) FROM treasury.events WHERE stream = $1", f"note/{chain.serial}"
        )
        (event,) = await tx.append_batch([returned.new_event(expected_version=version)])
        changes = TREASURY_PROJECTION.empty()
        TREASURY_PROJECTION.project(event, changes)
        await TREASURY_PROJECTION.write(tx, changes)


def treasury_key(faucet: Faucet) -> PublicKey:
    return PublicKey.from_text(faucet.manifest.treasury)


async def test_a_claimed_note_is_endorsed_notarized_and_told(
    faucet: Faucet, league: LeagueClient
) -> None:
    """A note from the faucet endorsed A→B→C: both hops receipted under issue 1, and its
    provenance shows the issue with the treasury's inclusion proof, both hops, C holding it."""
    a, b, c = (SigningKey.generate() for _ in range(3))
    claimed = await claim_note(faucet, a)
    to_c = hop(hop(claimed, a, b), b, c, T0 + 1)
    answer = await league.notarize([to_c])
    assert answer.recorded == 2
    notary = PublicKey.from_text(faucet.manifest.notary)
    for receipt, endorsement in zip(answer.receipts, to_c.endorsements, strict=True):
        receipt.check(notary, endorsement)
        assert (receipt.serial, receipt.issue) == (claimed.serial, 1)

    life = await league.provenance(claimed.serial)
    assert (life.standing, life.stamp, life.returns) == ("issued", None, [])
    (issued,) = life.issues
    assert issued.certificate == claimed.certificate
    checkpoint = Checkpoint.from_note(issued.checkpoint)
    checkpoint.verify([log_verifier(f"{faucet.manifest.league}/treasury", treasury_key(faucet))])
    verify_inclusion(
        issued.index,
        checkpoint.size,
        decode_b64(issued.leaf_hash),
        [decode_b64(h) for h in issued.proof],
        checkpoint.root,
    )
    assert [h.endorsement for h in life.hops] == list(to_c.endorsements)
    assert life.holder == c.public.to_text()


async def test_a_note_endorsed_to_a_friend_and_to_the_treasury_is_spent_once(
    faucet: Faucet, league: LeagueClient
) -> None:
    """The holder signs one note to a friend and to the treasury: whichever the notary
    records first wins, the other is refused with a fraud proof convicting the holder, and
    the provenance keeps the conflict (V.6, V.7; docs/architecture.md §4)."""
    owner, friend = SigningKey.generate(), SigningKey.generate()
    for first_to_friend in (True, False):
        claimed = await claim_note(faucet, owner)
        to_friend = hop(claimed, owner, friend)
        payment = endorse(claimed, owner, treasury_key(faucet), T0 + 1)
        first, second = (to_friend, payment) if first_to_friend else (payment, to_friend)
        await league.notarize([first])
        with pytest.raises(NotaryConflict) as caught:
            await league.notarize([second])
        (conflict,) = caught.value.conflicts
        assert conflict.proof.verify() == owner.public
        assert (conflict.proof.first, conflict.proof.second) == (
            first.endorsements[0],
            second.endorsements[0],
        )
        life = await league.provenance(claimed.serial)
        assert life.holder == first.endorsements[0].to
        assert [(c.issue, c.hop) for c in life.conflicts] == [(1, 1)]


async def test_a_note_of_an_older_issue_is_history(
    faucet: Faucet, league: LeagueClient, server: TestServer, settings: LeagueSettings
) -> None:
    """A note paid to the treasury and returned is in the reserve (provenance in-reserve,
    held by the treasury); issued again, its issue-1 chain is refused as history with the
    reason, even re-sent unchanged, while a conflicting hop of it is still fraud with its
    proof, and its issue-2 chain is spendable (docs/architecture.md §3, L-17)."""
    owner, friend, next_owner = (SigningKey.generate() for _ in range(3))
    claimed = await claim_note(faucet, owner)
    paid = endorse(claimed, owner, treasury_key(faucet), T0)
    (receipt,) = (await league.notarize([paid])).receipts
    await return_note(server, paid, receipt.index)

    back = await league.provenance(claimed.serial)
    assert back.standing == "in-reserve"
    assert back.holder == faucet.manifest.treasury
    assert [(r.issue, r.notarized) for r in back.returns] == [(1, receipt.index)]

    with pytest.raises(LeagueProblem) as caught:
        await league.notarize([paid])
    assert (caught.value.status, caught.value.slug) == (409, "stale-issue")
    assert "reserve" in (caught.value.problem.detail or "")

    again = await claim_note(faucet, next_owner)
    assert (again.serial, again.issue) == (claimed.serial, 2)
    await league.provenance(claimed.serial)  # the notary has followed the new issue
    with pytest.raises(LeagueProblem) as caught:
        await league.notarize([paid])
    assert (caught.value.status, caught.value.slug) == (409, "stale-issue")
    assert "history" in (caught.value.problem.detail or "")
    with pytest.raises(NotaryConflict) as fraud:  # a conflict is fraud, whatever the issue
        await league.notarize([hop(claimed, owner, friend)])
    (conflict,) = fraud.value.conflicts
    assert (conflict.proof.verify(), conflict.proof.first) == (owner.public, paid.endorsements[0])
    treasury = load_service_key(settings, faucet.manifest, "treasury", None)
    with pytest.raises(LeagueProblem) as caught:  # a new hop of history is refused
        await league.notarize([hop(paid, treasury, friend)])
    assert caught.value.slug == "stale-issue"

    (fresh,) = (await league.notarize([hop(again, next_owner, friend)])).receipts
    assert (fresh.issue, fresh.hop) == (2, 1)
    life = await league.provenance(claimed.serial)
    assert life.standing == "issued"
    assert [i.certificate.issue for i in life.issues] == [1, 2]
    assert [(h.receipt.issue, h.endorsement.hop) for h in life.hops] == [(1, 1), (2, 1)]
    assert life.holder == friend.public.to_text()


async def test_a_note_the_treasury_never_issued_is_refused(
    faucet: Faucet, league: LeagueClient, settings: LeagueSettings
) -> None:
    """Certificates signed with the treasury's own key but absent from its feed (an issue
    never made, another certificate under an issued serial and issue, a serial never
    issued) are not notarized; a note never issued has no provenance (404)."""
    owner = SigningKey.generate()
    claimed = await claim_note(faucet, owner)
    key = load_service_key(settings, faucet.manifest, "treasury", None)
    wire = {k: v for k, v in claimed.certificate.to_wire().items() if k not in ("kind", "sig")}

    def forged_hop(**change: object) -> Chain:
        forged = NoteCertificate.sign(key, **{**wire, **change})
        return hop(Chain(certificate=forged, endorsements=()), owner, SigningKey.generate())

    for change in ({"issue": 2}, {"event": wire["event"] + 1}, {"serial": "CZ-M25-000009"}):
        with pytest.raises(LeagueProblem) as caught:
            await league.notarize([forged_hop(**change)])
        assert (caught.value.status, caught.value.slug) == (422, "not-stamped"), change
    # A certificate of a note the notary does not know, naming an event of the treasury's log
    # it has not followed (here: not yet written), is "not yet", a retry, never "never
    # issued" (a buy paid with a note issued a moment ago must not be rejected for the
    # notary's lag) ...
    ahead = forged_hop(serial="CZ-M25-000009", event=wire["event"] + 1)
    with pytest.raises(LeagueProblem) as later:
        await league.notarize([ahead])
    assert (later.value.status, later.value.slug) == (503, "retry-later")
    # ... and once the log holds another event there, it is refused for good.
    await claim_note(faucet, SigningKey.generate())
    with pytest.raises(LeagueProblem) as caught:
        await league.notarize([ahead])
    assert (caught.value.status, caught.value.slug) == (422, "not-stamped")
    with pytest.raises(LeagueProblem) as missing:
        await league.provenance("CZ-M1-000001")
    assert (missing.value.status, missing.value.slug) == (404, "unknown-serial")


async def test_the_notary_follows_every_issue_and_return_once(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """Every issue and return the treasury logs lands in the notary's tables once, at its
    seq in the treasury's log."""
    owner = SigningKey.generate()
    claimed = await claim_note(faucet, owner)
    paid = endorse(claimed, owner, treasury_key(faucet), T0)
    (receipt,) = (await league.notarize([paid])).receipts
    await return_note(server, paid, receipt.index)
    await faucet.claim(SigningKey.generate(), 31)
    await checkpoint_covering(league, 5, "treasury")
    await server.app[NOTARY_KEY].treasury.catch_up(through=4)
    logged = [
        (e.type, e.stream.removeprefix("note/"), e.seq)
        for e in await server.app[TREASURY_LOG].read()
    ]
    store = server.app[NOTARY_LOG]
    issues = await store.fetch("SELECT serial, issue, treasury_seq FROM notary.notes")
    returns = await store.fetch(
        "SELECT serial, issue, notarized, treasury_seq FROM notary.note_returns"
    )
    assert sorted(("note-issued", r[0], r[2]) for r in issues) + [
        ("note-returned", r[0], r[3]) for r in returns
    ] == sorted(e for e in logged if e[0] == "note-issued") + [
        e for e in logged if e[0] == "note-returned"
    ]
    assert [tuple(r) for r in returns] == [(claimed.serial, 1, receipt.index, 1)]
    assert sorted((r[0], r[1]) for r in issues) == [
        ("CZ-M1-000001", 1),
        ("CZ-M25-000001", 1),
        ("CZ-M25-000001", 2),
        ("CZ-M5-000001", 1),
    ]


async def test_a_purchases_own_steps_are_not_parsed_by_the_notary(
    faucet: Faucet, server: TestServer
) -> None:
    """The notary takes the notes' issues and returns from the treasury's feed; a purchase's
    own steps (most of a buy's events, the largest bodies) tell it nothing, so their type is
    checked and their bodies are not parsed (the page they are in is bound to its leaf hashes
    and the treasury's signed checkpoint before it is applied); a type the treasury never
    logs still refuses the page."""
    await claim_note(faucet, SigningKey.generate())
    (issued,) = [e for e in await server.app[TREASURY_LOG].read() if e.type == "note-issued"]
    steps = [
        replace(issued, seq=1000 + k, type=step.TYPE, body={"read": "never"})
        for k, step in enumerate(PURCHASE_EVENTS)
    ]
    store = server.app[NOTARY_LOG]
    async with store.transaction() as tx:
        await apply_treasury_page(tx, steps)
    with pytest.raises(SchemaError, match="unknown type 'print-stamped'"):
        async with store.transaction() as tx:
            await apply_treasury_page(tx, [replace(issued, type="print-stamped")])
