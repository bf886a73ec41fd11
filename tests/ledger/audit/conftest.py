"""The world every audit test starts from: the league's logs, empty."""

from __future__ import annotations

import pytest

from tests.ledger.audit.world import World
from tests.ledger.factories import League


@pytest.fixture
def world(league: League) -> World:
    return World(league)
