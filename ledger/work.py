"""Proof of work for drawing down supply: a cost per print that a script cannot avoid.

Keys are free, so a per-key allowance only slows an honest player (Book V.4 makes stamping
"the one moment supply is drawn down"). Each presented print therefore carries a nonce, and
the print is stamped only if

    SHA-256(b"CZ1/stamp-work\\n" || challenge || index (4 bytes) || nonce (8 bytes))

read as a 256-bit big-endian integer is below ``2**256 // work``, where ``challenge`` is the
SHA-256 of the request's canonical bytes without its ``work`` and ``sig`` (so the work is bound
to the owner, the request id, the time and the prints, and is useless for any other request
or after the request's freshness window), and ``work`` is the published expected number of
hashes for that print (:func:`work_per_print`). Finding a nonce takes ``work`` hashes on
average; checking one takes one hash. Hashcash's idea, with Tor's onion-service defence's
lesson that the cost must be bound to the request and cheap to verify.

The cost rises as a run empties, by whole tenths stamped: a print of a run with more than
90 % left costs ``stamp_work``, one of a run with 10 % or less left costs
``stamp_work * stamp_work_rise``, in nine equal steps between. Early players pay the least;
a drain must pay the steepest prices last (``docs/economy.md`` has the arithmetic).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from ledger.canonical import jcs
from ledger.errors import InsufficientWork, UnknownTitle

WORK_TAG = b"CZ1/stamp-work\n"
#: Steps of the rising price: a run's cost moves every tenth of it stamped.
TIERS = 10
#: Nonces are 8-byte unsigned integers.
MAX_NONCE = 2**64 - 1


def challenge(request: Mapping[str, Any]) -> bytes:
    """What the work of a request is bound to: its canonical bytes without work and sig."""
    unsigned = {key: value for key, value in request.items() if key not in ("work", "sig")}
    return hashlib.sha256(WORK_TAG + jcs(unsigned)).digest()


def work_hash(bound: bytes, index: int, nonce: int) -> int:
    """The hash of print ``index``'s ``nonce``, as an integer (lower is more work)."""
    digest = hashlib.sha256(
        WORK_TAG + bound + index.to_bytes(4, "big") + nonce.to_bytes(8, "big")
    ).digest()
    return int.from_bytes(digest, "big")


def target(work: int) -> int:
    """The bound a hash must stay below for ``work`` expected hashes."""
    return (1 << 256) // max(1, work)


def tier(size: int, stamped: int) -> int:
    """Whole tenths of a run gone, rounded down: 0 while more than 90 % is left, 9 in the
    last tenth, 10 once empty."""
    if size <= 0:
        return TIERS
    return min(TIERS, stamped * TIERS // size)


def work_per_print(base: int, rise: int, size: int, stamped: int) -> int:
    """The published work for the next print of a run of ``size`` with ``stamped`` gone:
    ``base`` while more than 90 % is left, rising linearly by tenths to ``base * rise`` in
    the last tenth."""
    steps = min(tier(size, stamped), TIERS - 1)
    return base + (base * (rise - 1) * steps) // (TIERS - 1)


def request_work(
    base: int,
    rise: int,
    runs: Mapping[tuple[str, str], tuple[int, int]],
    prints: Sequence[tuple[str, str]],
) -> list[int]:
    """The work each of ``prints`` ((title, finish), in request order) costs, given each run's
    (size, stamped) as the census shows it: earlier prints of the request count as stamped."""
    drawn: dict[tuple[str, str], int] = {}
    works = []
    for run in prints:
        if run not in runs:
            raise UnknownTitle(f"the league has no {run[1]} run of {run[0]!r}")
        size, stamped = runs[run]
        works.append(work_per_print(base, rise, size, stamped + drawn.get(run, 0)))
        drawn[run] = drawn.get(run, 0) + 1
    return works


def meets(bound: bytes, index: int, nonce: int, work: int) -> bool:
    """Whether ``nonce`` is ``work`` expected hashes' worth for print ``index``."""
    return 0 <= nonce <= MAX_NONCE and work_hash(bound, index, nonce) < target(work)


def solve(bound: bytes, index: int, work: int, start: int = 0) -> int:
    """The first nonce from ``start`` that meets ``work`` (``work`` hashes on average).

    The honest client's solver: plain Python over hashlib. One core does 1-2 million
    hashes a second here; ``bench/drain.py`` measures it.
    """
    limit = target(work)
    prefix = WORK_TAG + bound + index.to_bytes(4, "big")
    sha256 = hashlib.sha256
    for nonce in range(start, MAX_NONCE + 1):
        if int.from_bytes(sha256(prefix + nonce.to_bytes(8, "big")).digest(), "big") < limit:
            return nonce
    raise InsufficientWork("no nonce meets the work (the nonce space is exhausted)")


def run_work(base: int, rise: int, size: int) -> int:
    """Expected hashes to stamp every print of a run of ``size``, first to last."""
    return sum(work_per_print(base, rise, size, stamped) for stamped in range(size))
