"""Fixtures for the protocol tests (builders in tests/ledger/factories.py)."""

from __future__ import annotations

import pytest

from ledger.keys import SigningKey
from ledger.print_runs import PrintRun, PrintRunTable
from tests.ledger.factories import League, key, make_league


@pytest.fixture(scope="session")
def league() -> League:
    """A league under the published runs, note set and policies."""
    return make_league()


@pytest.fixture(scope="session")
def small_league() -> League:
    """A league whose only run is three Tallies (2 standard, 1 gilt): tiny wire forms."""
    runs = PrintRunTable(
        runs=(PrintRun(title="Tally", set="base", standard=2, gilt=1, holofoil=0),)
    )
    return make_league(print_runs=runs)


@pytest.fixture
def alice() -> SigningKey:
    return key(10)


@pytest.fixture
def bob() -> SigningKey:
    return key(11)


@pytest.fixture
def carol() -> SigningKey:
    return key(12)
