"""`cz provenance` believes nothing: every proof in the league's account of a print is checked
on the player's machine (Book V.8), and an account altered anywhere is refused."""

from __future__ import annotations

import pytest

from apiclient.league import NotaryConflict
from ledger.api.logs import FeedEvent
from ledger.api.notary import Provenance
from ledger.api.provenance import check_provenance
from ledger.errors import VerificationError
from ledger.keys import SigningKey
from ledger.print_runs import MISPRINT_SERIAL
from tests.harness.founding import make_settings
from tests.harness.mint import league
from tests.harness.trading import T0, Trade, hop, server, settings, trade

__all__ = ["league", "make_settings", "server", "settings", "trade"]  # the notary's fixtures


async def account(trade: Trade) -> tuple[Provenance, FeedEvent, list[SigningKey]]:
    """A print stamped to A, endorsed A→B→C, and B's second signature (to D) refused: the
    league's account of it and the stamp's event in the mint's log."""
    a, b, c, d = (SigningKey.generate() for _ in range(4))
    stamped = await trade.stamp(a)
    to_c = hop(hop(stamped, a, b), b, c, T0 + 1)
    await trade.league.notarize([to_c])
    with pytest.raises(NotaryConflict):
        await trade.league.notarize([hop(hop(stamped, a, b), b, d, T0 + 2)])
    life = await trade.league.provenance(stamped.serial)
    assert life.stamp is not None
    (event,) = (await trade.league.events(life.stamp.index - 1, 1)).events
    return life, event, [a, b, c, d]


async def test_a_true_account_checks_and_proves_the_holder(trade: Trade) -> None:
    life, event, (_, _, c, _) = await account(trade)
    assert check_provenance(life, trade.manifest, life.serial, [event]) == c.public
    misprint = await trade.league.provenance(MISPRINT_SERIAL)
    assert check_provenance(misprint, trade.manifest, MISPRINT_SERIAL, []) is None


async def test_an_altered_account_is_refused(trade: Trade) -> None:
    """Another holder, a hop dropped, receipts swapped, the conflict's proof turned round, a
    stamp's leaf or event of another print, or an answer for another serial: each refused."""
    life, event, (*_, d) = await account(trade)
    assert life.stamp is not None
    other = await trade.stamp(SigningKey.generate(), "Faithful")
    (other_event,) = (await trade.league.events(life.stamp.index, 1)).events
    first, second = life.hops
    swapped = [
        first.model_copy(update={"receipt": second.receipt}),
        second.model_copy(update={"receipt": first.receipt}),
    ]
    (conflict,) = life.conflicts
    turned = conflict.model_copy(
        update={
            "proof": conflict.proof.model_copy(
                update={"first": conflict.proof.second, "second": conflict.proof.first}
            )
        }
    )
    altered = [
        life.model_copy(update={"holder": d.public.to_text()}),
        life.model_copy(update={"holder": None, "holder_address": "CZ-0000-0000-0000"}),
        life.model_copy(update={"hops": [first]}),
        life.model_copy(update={"hops": swapped}),
        life.model_copy(update={"conflicts": [turned]}),
        life.model_copy(
            update={"stamp": life.stamp.model_copy(update={"leaf_hash": other_event.leaf_hash})}
        ),
        life.model_copy(
            update={"stamp": life.stamp.model_copy(update={"certificate": other.certificate})}
        ),
    ]
    for lie in altered:
        with pytest.raises(VerificationError):
            check_provenance(lie, trade.manifest, life.serial, [event])
    with pytest.raises(VerificationError):
        check_provenance(life, trade.manifest, life.serial, [other_event])
    with pytest.raises(VerificationError):
        check_provenance(life, trade.manifest, other.serial, [event])
