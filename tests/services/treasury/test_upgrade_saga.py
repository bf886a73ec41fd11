"""The upgrade saga survives a crash of the treasury (issue 11 items 2 and 4; L-20): killed at
each step of a finish upgrade, the treasury restarted ends it exactly once, the returned print
taken back by the mint once, and on an exhausted run the print handed back to the buyer once.

The treasury runs as ``league serve treasury`` in a child process (test_saga's helpers), the
mint and the notary in this process.
"""

from __future__ import annotations

import time

import pytest
from aiohttp.test_utils import TestServer

from clients.league import LeagueClient, stamp_request
from ledger.api.treasury import BuyRequest, Upgrade, buy_request
from ledger.endorsements import Chain, endorse
from ledger.events import MINT_EVENTS, PrintReissued, PrintReturned, parse_event
from ledger.keys import PublicKey, SigningKey
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.treasury.buying import KILL_POINTS
from tests.harness.founding import TEST_POLICIES
from tests.harness.saga import CASES as SAGA_CASES
from tests.harness.saga import (
    DELIVERED,
    REFUNDED,
    bought_across_a_kill,
    mint_stamps,
    peers,
    ports,
    stamps_of,
)
from tests.harness.trading import T0
from tests.harness.treasury import Faucet

#: test_saga's fixtures, used here too.
__all__ = ["peers", "ports"]

#: test_saga's kill points on the delivered and refunded paths, passed by an upgrade here.
CASES = [case for case in SAGA_CASES if case[1] != "rejected"]


@pytest.fixture
def settings(make_settings: object) -> LeagueSettings:
    make = make_settings
    assert callable(make)
    made: LeagueSettings = make(
        policies=TEST_POLICIES.model_copy(update={"faucet_marks_per_day": 100})
    )
    return made


async def mint_backs(server: TestServer, pid: str) -> list[str]:
    """The mint's print-returned and print-reissued events of order ``pid``."""
    found = []
    for event in await server.app[MINT_LOG].read():
        body = parse_event(event, MINT_EVENTS)
        if isinstance(body, PrintReturned | PrintReissued) and body.order_id == pid:
            found.append(body.TYPE)
    return found


@pytest.mark.parametrize(("point", "path"), CASES, ids=[f"{p}-{q}" for p, q in CASES])
async def test_the_treasury_killed_at_each_step_of_an_upgrade_ends_it_once(
    settings: LeagueSettings,
    ports: tuple[int, int],
    peers: tuple[TestServer, LeagueClient],
    point: str,
    path: str,
) -> None:
    """# V.5, L-20: killed at ``point`` on the way to ``path``, the restarted treasury ends a
    gilt upgrade exactly once: each step once, at most one gilt stamp for the order, the
    returned print taken back once (and, refunded, issued again to the buyer once), the
    change or the refund issued once, and the supply invariant holds."""
    assert point in KILL_POINTS
    server, league = peers
    manifest = load_manifest(settings)
    treasury_key = PublicKey.from_text(manifest.treasury)
    mint_key = PublicKey.from_text(manifest.mint)
    buyer, stamper = SigningKey.generate(), SigningKey.generate()
    pid = f"up-{point}-{path}"
    title = "Escrow" if path == "refunded" else "Tally"
    if path == "refunded":  # the gilt run of 2 stamped out before the purchase
        await league.stamp(stamp_request(stamper, manifest, [(title, "gilt")] * 2))
    (item,) = (await league.stamp(stamp_request(buyer, manifest, [(title, "standard")]))).items
    assert item.status == "stamped"
    standard = Chain(certificate=item.certificate, endorsements=())
    notes: list[Chain] = []

    async def prepare(faucet: Faucet) -> BuyRequest:
        notes.extend(Chain(certificate=n, endorsements=())
                     for n in (await faucet.claim(buyer, 100)).notes)
        return buy_request(
            buyer, manifest, title, [endorse(n, buyer, treasury_key, T0) for n in notes],
            purchase_id=pid, at=int(time.time()),
            upgrade=Upgrade(finish="gilt", returned=endorse(standard, buyer, mint_key, T0)),
        )

    answer, steps = await bought_across_a_kill(settings, ports[1], server, point, prepare)
    assert answer.outcome == path
    assert steps == {"delivered": DELIVERED, "refunded": REFUNDED}[path]
    stamped = stamps_of(await mint_stamps(server), pid)
    backs = await mint_backs(server, pid)
    if path == "delivered":
        assert stamped == 1
        assert answer.stamped is not None
        assert (answer.stamped.finish, answer.stamped.issued_to) == (
            "gilt", buyer.public.to_text()
        )
        assert sum(n.denomination for n in answer.change) == 20
        assert backs == ["print-returned"]
    else:
        assert (stamped, answer.change) == (0, [])
        assert [(n.serial, n.issue) for n in answer.refund] == [
            (n.serial, n.issue + 1) for n in notes
        ]
        assert backs == ["print-returned", "print-reissued"]
        assert answer.returned is not None
        assert (answer.returned.serial, answer.returned.issue, answer.returned.issued_to) == (
            standard.serial, 2, buyer.public.to_text()
        )
