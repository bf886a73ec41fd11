"""A league founded on disk over the test's migrated database: tiny print runs, test policies
(checkpoints every 20 ms, proof of work free), and ``make_settings`` to found one or more."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ledger.catalog import PLAYING
from ledger.manifest import Policies
from ledger.print_runs import PrintRun, PrintRunTable
from ledger.savecode import MINIMUM_KDF
from services.kernel.founding import create_league
from services.kernel.settings import LeagueSettings

#: Every title with tiny runs: 3 standard, 2 gilt, 1 holofoil (serials 0001-0003, 0004-0005,
#: 0006), so exhaustion is reachable in a test.
SMALL_RUNS = PrintRunTable(
    runs=tuple(
        PrintRun(title=c.name, set=c.card_set.value, standard=3, gilt=2, holofoil=1)
        for c in PLAYING
    )
)


#: Checkpoints every 20 ms, so a test waits little for the one covering its stamps; proof of
#: work free (1 expected hash), except in the tests of proof of work; no source limit to speak
#: of (every test client is 127.0.0.1), except in the tests of rate limits.
TEST_POLICIES = Policies(
    faucet_marks_per_day=50,
    stamp_allowance_per_day=50,
    stamp_batch_limit=10,
    checkpoint_interval_ms=20,
    stamp_work=1,
    stamp_work_rise=1,
    table_work_per_mark=1,
    source_prints_per_minute=1_000_000,
    source_prints_burst=1_000_000,
)


@pytest.fixture
def make_settings(tmp_path: Path, database_url: str) -> Callable[..., LeagueSettings]:
    """Create a league in a fresh data dir over the test's database (migrated: a copy of the
    session's template, tests/conftest.py)."""
    counter = iter(range(100))

    def make(**league: Any) -> LeagueSettings:
        settings = LeagueSettings(
            data_dir=tmp_path / f"league-{next(counter)}", database_url=database_url
        )
        league.setdefault("print_runs", SMALL_RUNS)
        league.setdefault("policies", TEST_POLICIES)
        league.setdefault("kdf", MINIMUM_KDF)
        create_league(settings, **league)
        return settings

    return make


@pytest.fixture
def settings(make_settings: Callable[..., LeagueSettings]) -> LeagueSettings:
    return make_settings()
