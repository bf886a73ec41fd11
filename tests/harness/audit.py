"""Helpers of ``league audit`` over a served league: the command, a stamp, and a bounded wait
for a published checkpoint."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from clients.league import LeagueClient, stamp_request
from ledger.api.mint import Stamped
from ledger.endorsements import Chain
from ledger.keys import SigningKey
from tests.harness.served import league

T0 = 1_700_000_000


def audit(
    env: dict[str, str], url: str, state: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    return league(env, "audit", url, "--state", str(state), *options)


async def stamp(url: str, owner: SigningKey, title: str) -> Chain:
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
        answer = await client.stamp(stamp_request(owner, manifest, [(title, "standard")]))
    (item,) = answer.items
    assert isinstance(item, Stamped)
    return Chain(certificate=item.certificate, endorsements=())


async def published(url: str, service: str, size: int) -> None:
    """Wait (bounded: a guard, not a timing assertion) for a checkpoint of ``size``."""
    async with LeagueClient(url) as client:
        for _ in range(200):
            if (await client.signed_checkpoint(service=service)).size >= size:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"{service} never published a checkpoint of size {size}")
