"""``league tables enroll`` (docs/operations.md "The tables service"): a league founded before
the tables service serves without it, and gains it by its root signing the manifest again,
the manifest's id (which every certificate and request names) unchanged."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from services.kernel.keyring import read_key
from tests.harness.audit import audit, published
from tests.harness.ports import free_port
from tests.harness.served import Served, init_league, league, one_line_failure
from tests.harness.tables import Player, played_out, unenrolled


def test_an_older_league_enrolls_the_tables_key(tmp_path: Path, database_url: str) -> None:
    """Without a tables key: served without the tables (its paths 404), verified; enrolled:
    the manifest names the new key (root-signed, same id), and the tables serve a table;
    enrolling again is refused in one line."""
    env = init_league(tmp_path / "league", database_url)
    home = Path(env["LEAGUE_HOME"])
    older = unenrolled(home)

    served = Served(env)
    try:
        player = Player(SigningKey.generate(), older, served.url)
        assert asyncio.run(player.get("/tables/table/" + "0" * 32)).status == 404
    finally:
        assert served.stop()[0] == 0
    verified = league(env, "verify")
    assert verified.returncode == 0, verified.stderr
    refused = one_line_failure(league(env, "serve", "tables", "--port", "0"))
    assert "names no tables key" in refused

    enrolled = league(env, "tables", "enroll")
    assert enrolled.returncode == 0, enrolled.stderr
    manifest = LeagueManifest.from_wire((home / "manifest.json").read_text(encoding="utf-8"))
    manifest.verify_root(PublicKey.from_text(older.root))
    assert manifest.hash_text() == older.hash_text()
    assert manifest.tables == read_key(home / "keys", "tables").public.to_text()
    assert "names a tables key already" in one_line_failure(league(env, "tables", "enroll"))

    served = Served(env, "tables")
    try:
        player = Player(SigningKey.generate(), manifest, served.url)
        opened = asyncio.run(player.open("clerk-1"))
        assert opened.body["waiting"] == "seed"
    finally:
        assert served.stop()[0] == 0


def test_league_audit_replays_the_witnessed_tables(tmp_path: Path, database_url: str) -> None:
    """``league audit URL`` replays every closed table of the tables' log with the engine and
    says so; the table's verdict is the one it counts."""
    env = init_league(tmp_path / "league", database_url)
    served = Served(env, "--port", str(free_port()))
    try:
        manifest = LeagueManifest.from_wire(
            (Path(env["LEAGUE_HOME"]) / "manifest.json").read_text(encoding="utf-8")
        )
        player = Player(SigningKey.generate(), manifest, served.url)
        asyncio.run(player.open("clerk-1"))
        view = asyncio.run(played_out(player))
        asyncio.run(published(served.url, "tables", 4))
        audited = audit(env, served.url, tmp_path / "audit")
    finally:
        served.stop()
    assert audited.returncode == 0, audited.stderr
    assert "1 tables, 1 closed and replayed with the engine" in audited.stdout
    assert f"verdicts: 1 {view['closing']['verdict']}" in audited.stdout
