"""The tables' audit of the Misprint's award (``ledger.audit.rewards``, docs/rulings.md L-24,
L-41): given the mint's award and the tables log's closes, replayed by the players' witnessed
campaigns, the audit passes only an award to the log's first *settling* Balance at Chair VI or
above, by that table's player; an award to a throwaway key's Balance at a chair its campaign
never opened, to a Balance opened without its proof of work, to a later settling Balance, to
another player, or to a table that is no Balance at Chair VI+, fails it."""

from __future__ import annotations

import itertools
import time

import pytest

from game.window.rewards import WitnessedCampaigns, table_open
from ledger.audit.reward_facts import MisprintAwarded
from ledger.audit.rewards import RewardsAudit
from ledger.errors import LedgerError
from ledger.keys import SigningKey
from ledger.manifest import DEFAULT_POLICIES, LeagueManifest
from ledger.tables import TableOpen
from tests.ledger.factories import make_league

POLICIES = DEFAULT_POLICIES.model_copy(update={"table_work_per_mark": 1})
#: The venues a campaign beats to open Chair VI (IV.1, IV.6).
TO_CHAIR_SIX = ("clerk-1", "clerk-2", "clerk-4", "assessor", "chair-I", "chair-II", "chair-III")
TO_CHAIR_SIX += ("chair-IV", "chair-V")
NUMBERS = itertools.count()


def opened(
    manifest: LeagueManifest, key: SigningKey, venue: str, *, work: bool = True
) -> TableOpen:
    """``key``'s signed open of a table at ``venue``, with its work unless ``work`` is false."""
    request_id, at = f"table-{next(NUMBERS):05d}", int(time.time())
    return table_open(key, manifest, venue=venue, request_id=request_id, at=at, worked=work)


def closes(manifest: LeagueManifest) -> list[tuple[TableOpen, str]]:
    """A tables log's closes, in order: a throwaway key's Balance at chair-VI (its campaign
    never opened it), then a player's campaign to Chair VI, its Balance at chair-VI without
    work, its settling Balance at chair-VI, and a second player's settling Balance at
    chair-VII after it."""
    throwaway, player, second = (SigningKey.generate() for _ in range(3))
    log = [(opened(manifest, throwaway, "chair-VI"), "balance")]
    log += [(opened(manifest, player, venue), "win") for venue in TO_CHAIR_SIX]
    log += [(opened(manifest, player, "chair-VI", work=False), "balance")]
    log += [(opened(manifest, player, "chair-VI"), "balance")]
    log += [(opened(manifest, second, venue), "win") for venue in (*TO_CHAIR_SIX, "chair-VI")]
    log += [(opened(manifest, second, "chair-VII"), "balance")]
    return log


def audited(
    log: list[tuple[TableOpen, str]], award: MisprintAwarded | None, *, replayed: bool = True
) -> None:
    """The tables' rewards audit of ``log`` given the mint's ``award``: its closes replayed by
    the witnessed campaigns (or, not ``replayed``, only the records' shape checked), then the
    Misprint's award checked (as ``finish`` checks it, after the rewards)."""
    audit = RewardsAudit(WitnessedCampaigns(POLICIES) if replayed else None, misprint=award)
    for request, verdict in log:
        audit.close(request, verdict, 0)
    audit.check_misprint()


def award_of(request: TableOpen, player: str | None = None) -> MisprintAwarded:
    return MisprintAwarded(seq=7, table=request.table_id(), player=player or request.player)


def test_the_misprint_awarded_to_the_first_settling_balance_passes() -> None:
    """# IV.6, L-41: the award to the player's settling Balance at chair-VI passes, the
    throwaway key's and the unworked Balances before it passed over; no award passes too
    (the mint may not have answered yet)."""
    manifest = make_league(policies=POLICIES).manifest
    log = closes(manifest)
    first = log[len(TO_CHAIR_SIX) + 2][0]
    audited(log, award_of(first))
    audited(log, None)


@pytest.mark.parametrize(
    ("which", "said"),
    [
        ("throwaway", "settles nothing"),
        ("unworked", "settles nothing"),
        ("later", "first settling Balance at Chair VI or above"),
        ("chair-V", "does not close with a Balance at Chair VI"),
    ],
)
def test_the_misprint_awarded_to_a_table_that_did_not_win_it_fails(which: str, said: str) -> None:
    """# IV.6, L-25, L-28, L-41: the award to the throwaway key's Balance at a chair its
    campaign never opened, to the Balance opened without its work, to the second player's
    settling Balance after the first, or to a table that closed with no Balance at Chair VI
    or above (a win at chair-V) fails the audit, naming the award."""
    manifest = make_league(policies=POLICIES).manifest
    log = closes(manifest)
    n = len(TO_CHAIR_SIX)
    table = {
        "throwaway": log[0][0],
        "unworked": log[n + 1][0],
        "later": log[-1][0],
        "chair-V": log[n][0],
    }[which]
    with pytest.raises(LedgerError, match=said) as failed:
        audited(log, award_of(table))
    assert f"to table {table.table_id()}" in str(failed.value)


def test_the_misprint_awarded_to_another_player_fails() -> None:
    """# L-24: the award of the first settling Balance's table made out to another key fails;
    without the campaigns replayed, the award is still checked to be a Balance at Chair VI
    or above by its player."""
    manifest = make_league(policies=POLICIES).manifest
    log = closes(manifest)
    first = log[len(TO_CHAIR_SIX) + 2][0]
    stranger = SigningKey.generate().public.to_text()
    with pytest.raises(LedgerError, match="the table is"):
        audited(log, award_of(first, stranger))
    audited(log, award_of(log[0][0]), replayed=False)
    with pytest.raises(LedgerError, match="does not close with a Balance"):
        audited(log, award_of(log[1][0]), replayed=False)
