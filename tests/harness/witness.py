"""The notary's witness as tests feed it: trees of leaves, add-checkpoint bodies, the
treasury's checkpoints as its key signs them, evidence and cosigned checkpoints read back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from ledger.api.witness import EvidenceList
from ledger.checkpoint import (
    AddCheckpoint,
    Checkpoint,
    sign_checkpoint,
)
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.merkle import EMPTY_ROOT, LeafHashes, leaf_hash, root_from
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from tests.harness.trading import Trade


def tree(n: int, salt: int = 0) -> LeafHashes:
    return LeafHashes([leaf_hash(f"{salt}:{i}".encode()) for i in range(n)])


def body(old: int, proof: Sequence[bytes], checkpoint: Checkpoint) -> str:
    return str(AddCheckpoint(old, tuple(proof), checkpoint))


class Treasury:
    """Checkpoints of the treasury's log, as its key would sign them."""

    def __init__(self, manifest: LeagueManifest, key: SigningKey) -> None:
        self.origin = f"{manifest.league}/treasury"
        self.key = key

    def checkpoint(self, leaves: LeafHashes, size: int | None = None) -> Checkpoint:
        """The checkpoint of the first ``size`` leaves (all of them by default)."""
        size = leaves.size if size is None else size
        root = root_from(size, leaves) if size else EMPTY_ROOT
        return sign_checkpoint(self.origin, size, root, self.key)


@pytest.fixture
def treasury(trade: Trade, settings: LeagueSettings) -> Treasury:
    return Treasury(trade.manifest, read_key(settings.keys_dir, "treasury"))


async def post(server: TestServer, text: str | bytes) -> tuple[int, str, str]:
    """POST an add-checkpoint body to the notary's witness: (status, content type, text)."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(str(server.make_url("/notary/witness/add-checkpoint")), data=text) as response,
    ):
        return response.status, response.content_type, await response.text()


async def evidence(league: LeagueClient, service: str = "notary") -> EvidenceList:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{league.base_url}/{service}/evidence") as response,
    ):
        assert response.status == 200
        return EvidenceList.model_validate_json(await response.text())


async def cosigned(league: LeagueClient, service: str, witness: str, size: int = 0) -> Checkpoint:
    """``service``'s served checkpoint once it is of ``size`` or more and carries
    ``witness``'s cosignature (a bounded wait: a guard, not a timing assertion)."""
    for _ in range(500):
        checkpoint = await league.signed_checkpoint(service=service)
        if checkpoint.size >= size and any(
            s.name.endswith(f"/{witness}") for s in checkpoint.note.signatures
        ):
            return checkpoint
        await asyncio.sleep(0.02)
    raise AssertionError(f"{service}'s checkpoint of {size} was never cosigned by {witness}")
