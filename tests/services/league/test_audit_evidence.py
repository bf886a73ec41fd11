"""`league audit` and the witnesses' evidence: an outsider cannot plant it, a front or an
edited saved directory cannot hide it (docs/eventlog.md, "Witnesses"; docs/operations.md).

The mint and the notary are composed in one server on a known port (the notary conftest's
league), each witnessing the other. Evidence is driven at the notary's witness with
checkpoints of the treasury's origin, a league service this server does not run (so nothing
else submits them, and the witness cannot reach it), signed with the treasury's key from the
league's key files: anyone holds such checkpoints, since a log publishes them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from auditor import AuditorError, audit_offline, audit_url
from ledger.audit import AuditFailure
from ledger.merkle import leaf_hash
from tests.harness.audit import front
from tests.harness.founding import make_settings
from tests.harness.mint import league
from tests.harness.trading import server, settings, trade
from tests.harness.witness import Treasury, body, evidence, post, treasury, tree

__all__ = ["league", "make_settings", "server", "settings", "trade", "treasury"]


async def test_garbage_from_an_outsider_is_no_evidence_and_the_audit_passes(
    server: TestServer, treasury: Treasury, league: LeagueClient, tmp_path: Path
) -> None:
    """The attack: the accused log out of the witness's reach (the treasury, not served where
    the notary's witness asks), an outsider submits its genuine checkpoint newer than the
    one cosigned with a garbage proof. 503 retry-later, nothing kept, and `league audit` of
    the league still passes, reading every witness's evidence (before: 422, an `unproven`
    record kept, and every audit failed naming the treasury)."""
    five = tree(5)
    assert (await post(server, body(0, [], treasury.checkpoint(five, 3))))[0] == 200
    garbage = body(3, [leaf_hash(b"garbage")] * 3, treasury.checkpoint(five))
    status, _, text = await post(server, garbage)
    assert status == 503, text
    assert json.loads(text)["type"].endswith("/retry-later")
    assert (await evidence(league)).evidence == []
    outcome = await audit_url(str(server.make_url("")), tmp_path / "audit", workers=0)
    assert outcome.report.evidence == {"mint": 1, "notary": 1}


async def keep_evidence(server: TestServer, treasury: Treasury, league: LeagueClient) -> None:
    """Real evidence at the notary's witness: two roots the treasury's key signed at one
    size (convicts by itself)."""
    assert (await post(server, body(0, [], treasury.checkpoint(tree(4)))))[0] == 200
    assert (await post(server, body(4, [], treasury.checkpoint(tree(4, salt=1)))))[0] == 422
    (kept,) = (await evidence(league)).evidence
    assert kept.kind == "same-size"


async def test_evidence_hidden_by_a_front_fails_the_audit(
    server: TestServer, treasury: Treasury, league: LeagueClient, tmp_path: Path
) -> None:
    """Real evidence kept fails the audit naming the treasury; a front answering 404 for
    /notary/evidence (hiding it) fails it too, on one line naming the notary and the 404: the
    notary serves its log, so its witness's evidence must be served (before: passed)."""
    await keep_evidence(server, treasury, league)
    url = str(server.make_url("")).rstrip("/")
    with pytest.raises(AuditFailure, match="the notary witness keeps evidence against"):
        await audit_url(url, tmp_path / "audit", workers=0)
    async with front(url, lambda path: path == "/notary/evidence") as hiding:
        with pytest.raises(AuditorError) as hidden:
            await audit_url(hiding, tmp_path / "audit", workers=0)
    line = str(hidden.value)
    assert "\n" not in line
    assert line.startswith(f"the notary at {hiding} does not serve its witness's evidence (404)")
    assert "its log is served" in line


async def test_a_deleted_saved_evidence_file_fails_the_offline_audit(
    server: TestServer, treasury: Treasury, league: LeagueClient, tmp_path: Path
) -> None:
    """Real evidence kept: the audit saved with --save fails naming the treasury, and so does
    `--offline` over the saved directory. With notary/evidence/000000.json deleted from it,
    the offline audit still fails, on one line naming the missing file (before: passed)."""
    await keep_evidence(server, treasury, league)
    saved, state = tmp_path / "saved", tmp_path / "audit"
    with pytest.raises(AuditFailure, match="the notary witness keeps evidence against"):
        await audit_url(str(server.make_url("")), state, workers=0, save=saved)
    with pytest.raises(AuditFailure, match="convicts the log"):
        await asyncio.to_thread(audit_offline, saved, state, workers=0)
    (saved / "notary" / "evidence" / "000000.json").unlink()
    with pytest.raises(AuditorError) as hidden:
        await asyncio.to_thread(audit_offline, saved, state, workers=0)
    line = str(hidden.value)
    assert "\n" not in line
    assert line.startswith("the saved audit has no evidence of the notary's witness (")
    assert "notary/evidence/000000.json is missing" in line
