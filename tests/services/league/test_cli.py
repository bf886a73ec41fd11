"""``league`` run as a subprocess against a temporary LEAGUE_HOME and the test database."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from apiclient.league import LeagueClient, stamp_request
from ledger.address import address_of
from ledger.api.mint import Stamped
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from services.kernel.database import embedded_tool
from services.league.cli import SERVER_MODULES
from services.league.database_commands import split_password
from tests.harness.served import Served, claim_notes, league, one_line_failure

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def env(tmp_path: Path, database_url: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LEAGUE_")}
    return {**clean, "LEAGUE_HOME": str(tmp_path / "home"), "DATABASE_URL": database_url}


def manifest_of(env: dict[str, str]) -> LeagueManifest:
    manifest = LeagueManifest.from_wire(
        (Path(env["LEAGUE_HOME"]) / "manifest.json").read_text(encoding="utf-8")
    )
    manifest.verify_root()
    return manifest


def test_init_creates_keys_and_a_signed_manifest(env: dict[str, str]) -> None:
    """init writes four 0600 key files in a 0700 directory and a root-signed manifest naming
    the service keys, the runs and the note set; it prints every address."""
    result = league(env, "init", "--name", "Test League")
    assert result.returncode == 0, result.stderr
    home = Path(env["LEAGUE_HOME"])
    assert (home / "keys").stat().st_mode & 0o777 == 0o700
    for role in ("root", "mint", "treasury", "notary"):
        assert (home / "keys" / f"{role}.key").stat().st_mode & 0o777 == 0o600
    manifest = manifest_of(env)
    assert (manifest.name, manifest.league) == ("Test League", "test-league")
    assert len(manifest.print_runs.runs) == 41
    assert manifest.note_set.total_marks == 1_500_000
    assert manifest.policies.stamp_allowance_per_day == 50
    for role in ("root", "mint", "treasury", "notary"):
        assert address_of(PublicKey.from_text(getattr(manifest, role))) in result.stdout


def test_init_never_overwrites(env: dict[str, str]) -> None:
    """A second init is refused on one line, exit 2, and the manifest is untouched."""
    assert league(env, "init").returncode == 0
    before = (Path(env["LEAGUE_HOME"]) / "manifest.json").read_bytes()
    assert "already exists" in one_line_failure(league(env, "init"))
    assert (Path(env["LEAGUE_HOME"]) / "manifest.json").read_bytes() == before


def test_keys_show_prints_the_manifest_keys(env: dict[str, str]) -> None:
    """keys show prints each role with its address and public key, as the manifest names it."""
    assert league(env, "init").returncode == 0
    result = league(env, "keys", "show")
    assert result.returncode == 0, result.stderr
    manifest = manifest_of(env)
    for role in ("root", "mint", "treasury", "notary"):
        key = getattr(manifest, role)
        assert f"{role}" in result.stdout
        assert f"{address_of(PublicKey.from_text(key))}  {key}" in result.stdout


def test_errors_are_one_line_with_status_2(env: dict[str, str]) -> None:
    """No league, an unknown command, an unknown service, a missing option value: each is one
    line on stderr and exit status 2."""
    assert "league init" in one_line_failure(league(env, "keys", "show"))
    assert "invalid choice" in one_line_failure(league(env, "bogus"))
    assert "no service is called" in one_line_failure(league(env, "serve", "casino"))
    one_line_failure(league(env, "serve", "--port"))


def test_help_teaches_every_command(env: dict[str, str]) -> None:
    """--help names every command and says where files and the database live."""
    result = league(env, "--help")
    assert result.returncode == 0
    for command in ("init", "keys", "db", "migrate", "serve", "openapi"):
        assert command in result.stdout
    assert "LEAGUE_HOME" in result.stdout
    assert "DATABASE_URL" in result.stdout


def test_migrate_creates_the_schemas(env: dict[str, str], empty_database_url: str) -> None:
    """migrate brings an empty database to the newest schema (and is idempotent)."""
    for _ in range(2):
        result = league({**env, "DATABASE_URL": empty_database_url}, "migrate")
        assert result.returncode == 0, result.stderr

    async def tables() -> set[str]:
        conn = await asyncpg.connect(empty_database_url)
        try:
            rows = await conn.fetch(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'mint'"
            )
        finally:
            await conn.close()
        return {r[0] for r in rows}

    assert {"events", "runs", "owned", "stamp_requests", "allowances"} <= asyncio.run(tables())


def test_openapi_check_passes_on_the_committed_documents(env: dict[str, str]) -> None:
    """`league openapi --check` agrees with docs/openapi (the drift check the docs promise)."""
    result = league(env, "openapi", "--check")
    assert result.returncode == 0, result.stderr


def test_db_path_and_status(env: dict[str, str]) -> None:
    """db path is inside LEAGUE_HOME; status of a never-started server says stopped."""
    path = league(env, "db", "path")
    assert path.stdout.strip() == str(Path(env["LEAGUE_HOME"]) / "pgdata")
    status = league(env, "db", "status")
    assert status.returncode == 3  # "not running" is not success
    assert status.stdout.startswith("stopped")


@pytest.fixture
def served(env: dict[str, str]) -> Iterator[Served]:
    server = Served(env)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


async def stamp_one(url: str, owner: SigningKey, title: str) -> str:
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
        answer = await client.stamp(stamp_request(owner, manifest, [(title, "standard")]))
    (item,) = answer.items
    assert isinstance(item, Stamped)
    return item.certificate.serial


def test_serve_creates_a_league_and_serves_the_mint(env: dict[str, str], served: Served) -> None:
    """A first `league serve` creates the league (saying so on stderr), migrates, serves the
    mint; stopped and started again it keeps the league and the stamps."""
    owner = SigningKey.generate()
    assert asyncio.run(stamp_one(served.url, owner, "Omegafam")) == "CZ-OMEGAFAM-0001"
    code, stderr = served.stop()
    assert code == 0
    assert "created 'THE WINDOW league'" in stderr
    manifest = manifest_of(env)
    again = Served(env, "mint")
    try:
        assert asyncio.run(stamp_one(again.url, owner, "Omegafam")) == "CZ-OMEGAFAM-0002"
    finally:
        code, stderr = again.stop()
    assert code == 0
    assert "created" not in stderr
    assert manifest_of(env) == manifest


def test_passphrase_armored_keys(env: dict[str, str], tmp_path: Path) -> None:
    """init --passphrase-file armors every key (CZ KEY), and refuses a passphrase file others
    may read; serve without the passphrase is refused on one line, with it the league serves."""
    secret = tmp_path / "passphrase"
    secret.write_text("correct horse battery staple\n", encoding="utf-8")
    secret.chmod(0o644)
    assert "chmod 600" in one_line_failure(league(env, "init", "--passphrase-file", str(secret)))
    secret.chmod(0o600)
    assert league(env, "init", "--passphrase-file", str(secret)).returncode == 0
    key_text = (Path(env["LEAGUE_HOME"]) / "keys" / "mint.key").read_text(encoding="ascii")
    assert key_text.startswith("-----BEGIN CZ KEY-----")
    assert "passphrase" in one_line_failure(league(env, "serve", "--port", "0"))
    wrong = tmp_path / "wrong"
    wrong.write_text("incorrect horse\n", encoding="utf-8")
    wrong.chmod(0o600)
    refused = league(env, "serve", "--port", "0", "--passphrase-file", str(wrong))
    assert "passphrase" in one_line_failure(refused)
    server = Served({**env, "LEAGUE_PASSPHRASE_FILE": str(secret)})
    try:
        serial = asyncio.run(stamp_one(server.url, SigningKey.generate(), "Reflection"))
        assert serial == "CZ-REFLECTION-0001"
    finally:
        code, _ = server.stop()
    assert code == 0


def test_db_dump_writes_a_restorable_dump(env: dict[str, str], tmp_path: Path) -> None:
    """db dump writes a pg_dump archive of the league's database that lists the mint's log."""
    assert league(env, "migrate").returncode == 0
    target = tmp_path / "league.dump"
    result = league(env, "db", "dump", str(target))
    assert result.returncode == 0, result.stderr
    listing = subprocess.run(
        [str(embedded_tool("pg_restore")), "--list", str(target)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "TABLE mint events" in listing
    assert "TABLE mint runs" in listing
    # An existing dump is never overwritten without --force
    before = target.read_bytes()
    assert "exists" in one_line_failure(league(env, "db", "dump", str(target)))
    assert target.read_bytes() == before
    assert league(env, "db", "dump", str(target), "--force").returncode == 0


def test_unreachable_database_is_one_line(env: dict[str, str]) -> None:
    """A database that refuses connections, or a URL of another kind, is one line and exit 2
    (never a traceback), and the password in the URL is never printed."""
    refused = {**env, "DATABASE_URL": "postgresql://nobody:s3cret-pw@127.0.0.1:1/league"}
    line = one_line_failure(league(refused, "migrate"))
    assert "cannot migrate the database" in line
    assert "s3cret-pw" not in line
    wrong = {**env, "DATABASE_URL": "mysql://nobody@localhost/league"}
    assert "postgresql://" in one_line_failure(league(wrong, "migrate"))


def test_serve_without_database_url_uses_the_embedded_server(env: dict[str, str]) -> None:
    """The README's first command: no DATABASE_URL, no league. `league serve` creates the
    league, starts the embedded PostgreSQL in LEAGUE_HOME and serves; `league db stop` stops
    the database afterwards."""
    embedded = {k: v for k, v in env.items() if k != "DATABASE_URL"}
    server = Served(embedded)
    try:
        serial = asyncio.run(stamp_one(server.url, SigningKey.generate(), "Canonical"))
        assert serial == "CZ-CANONICAL-0001"
        status = league(embedded, "db", "status")
        assert status.stdout.startswith("running: postgresql://")
    finally:
        code, _ = server.stop()
        stopped = league(embedded, "db", "stop")
    assert code == 0
    assert stopped.stdout.strip() == "stopped"


def test_verify_checks_the_log_and_the_census(
    env: dict[str, str], served: Served, database_url: str
) -> None:
    """verify passes on a served league; an edited event body is named by its seq (exit 2)."""
    for title in ("Wellformed", "Faithful"):
        asyncio.run(stamp_one(served.url, SigningKey.generate(), title))
    served.stop()
    result = league(env, "verify")
    assert result.returncode == 0, result.stderr
    assert "mint log: 2 events" in result.stdout
    assert "mint census: 2 prints" in result.stdout

    async def tamper() -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute(
                "UPDATE mint.events SET body = jsonb_set(body, '{request_id}', '\"forged-1\"') "
                "WHERE seq = 1"
            )
        finally:
            await conn.close()

    asyncio.run(tamper())
    assert "seq 1" in one_line_failure(league(env, "verify"))


def test_verify_covers_the_treasury(env: dict[str, str], served: Served, database_url: str) -> None:
    """verify checks every service's log and projection: the treasury's after claims passes;
    a projection row edited is named (the service, the table); an edited event is named by
    the service and its seq."""
    assert asyncio.run(claim(served.url, SigningKey.generate(), 31, "claim-0001")) == 31
    served.stop()
    result = league(env, "verify")
    assert result.returncode == 0, result.stderr
    assert "treasury log: 3 events" in result.stdout  # M25 M5 M1
    assert "treasury projection: " in result.stdout
    assert "notary projection: " in result.stdout

    async def edit(statement: str) -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(edit("UPDATE treasury.faucet SET marks = 1"))
    line = one_line_failure(league(env, "verify"))
    assert "treasury projection differs" in line
    assert "treasury.faucet" in line
    asyncio.run(edit("UPDATE treasury.faucet SET marks = 31"))
    assert league(env, "verify").returncode == 0
    asyncio.run(
        edit(
            "UPDATE treasury.events SET body = jsonb_set(body, '{reason}', '\"change\"') "
            "WHERE seq = 1"
        )
    )
    line = one_line_failure(league(env, "verify"))
    assert "treasury log" in line
    assert "seq 1" in line


@pytest.mark.parametrize(
    ("url", "dbname", "password"),
    [
        ("postgresql://app:s%40cret@db:5432/league", "postgresql://app@db:5432/league", "s@cret"),
        ("postgresql://:pw@/league?host=/run/pg", "postgresql:///league?host=/run/pg", "pw"),
        ("postgresql://pg@/postgres?host=/tmp/x", "postgresql://pg@/postgres?host=/tmp/x", None),
    ],
)
def test_db_dump_keeps_the_password_off_the_command_line(
    url: str, dbname: str, password: str | None
) -> None:
    """pg_dump's --dbname never carries the password; it goes to the child's environment."""
    assert split_password(url) == (dbname, password)


def test_rebuild_reports_and_repairs_an_edited_projection(
    env: dict[str, str], served: Served, database_url: str
) -> None:
    """rebuild --check names the rows an edit left that the log does not account for (exit
    2, nothing changed); rebuild rewrites them from the log; afterwards --check agrees."""
    for title in ("Wellformed", "Faithful"):
        asyncio.run(stamp_one(served.url, SigningKey.generate(), title))
    served.stop()

    async def sql(statement: str) -> object:
        conn = await asyncpg.connect(database_url)
        try:
            return await conn.fetchval(statement)
        finally:
            await conn.close()

    asyncio.run(sql("UPDATE mint.owned SET owned = 7 WHERE title = 'Faithful'"))
    check = league(env, "rebuild", "--check")
    assert check.returncode == 2
    assert "differed: mint.owned: 1 rows the log does not account for" in check.stdout
    assert asyncio.run(sql("SELECT owned FROM mint.owned WHERE title = 'Faithful'")) == 7
    repaired = league(env, "rebuild", "mint")
    assert repaired.returncode == 0, repaired.stderr
    assert "mint: rebuilt" in repaired.stdout
    assert asyncio.run(sql("SELECT owned FROM mint.owned WHERE title = 'Faithful'")) == 1
    again = league(env, "rebuild", "--check")
    assert again.returncode == 0, again.stderr
    assert "differed" not in again.stdout
    assert "no service is called 'bank'" in one_line_failure(league(env, "rebuild", "bank"))


def test_bad_port_and_policy_are_one_line(env: dict[str, str]) -> None:
    """A port out of range or not a number, from the flag or LEAGUE_PORT, and a policy that is
    not NAME=VALUE are one line naming where the value came from, never a pydantic dump
    (docs/api.md "Conventions")."""
    line = one_line_failure(league(env, "serve", "--port", "99999"))
    assert "--port or LEAGUE_PORT" in line
    assert "99999" in line
    line = one_line_failure(league({**env, "LEAGUE_PORT": "abc"}, "serve"))
    assert "LEAGUE_PORT" in line
    assert "errors.pydantic.dev" not in line
    assert "NAME=VALUE" in one_line_failure(league(env, "init", "--policy", "stamp_work"))
    assert "whole number" in one_line_failure(league(env, "init", "--policy", "stamp_work=-1"))


def test_init_publishes_the_policies_it_is_given(env: dict[str, str]) -> None:
    """`league init --policy stamp_work=1` signs that price into the manifest; the rest keep
    their defaults."""
    result = league(env, "init", "--policy", "stamp_work=1", "--policy", "stamp_work_rise=2")
    assert result.returncode == 0, result.stderr
    policies = manifest_of(env).policies
    assert (policies.stamp_work, policies.stamp_work_rise) == (1, 2)
    assert policies.source_prints_burst == 200


def test_init_signs_the_services_urls_into_the_manifest(env: dict[str, str]) -> None:
    """`league init --url SERVICE=URL` (or one URL for a gateway serving them all) names where
    each service answers, under the root's signature; `keys show` prints them."""
    result = league(
        env, "init", "--url", "https://league.example", "--url", "notary=http://10.0.0.7:8080"
    )
    assert result.returncode == 0, result.stderr
    urls = manifest_of(env).urls
    assert urls is not None
    assert (urls.mint, urls.treasury, urls.notary) == (
        "https://league.example",
        "https://league.example",
        "http://10.0.0.7:8080",
    )
    shown = league(env, "keys", "show")
    assert "notary    answers at http://10.0.0.7:8080" in shown.stdout


@pytest.mark.parametrize(
    ("urls", "why"),
    [
        (["mint=https://m.example"], "no URL for the treasury, notary"),
        (["https://a.example", "https://b.example"], "more than one URL"),
        (["mint=https://m.example", "mint=https://n.example", "https://a.example"], "twice"),
        (["https://user:pw@league.example"], "no credentials"),
        (["file:///etc/passwd"], "http:// or https://"),
    ],
)
def test_init_refuses_bad_urls_on_one_line(env: dict[str, str], urls: list[str], why: str) -> None:
    args = [arg for url in urls for arg in ("--url", url)]
    assert why in one_line_failure(league(env, "init", *args))
    assert not (Path(env["LEAGUE_HOME"]) / "manifest.json").exists()


async def checkpoint_size(url: str) -> int:
    async with LeagueClient(url) as client:
        return (await client.signed_checkpoint()).size


def stamp_and_publish(env: dict[str, str], title: str, size: int) -> None:
    """Serve, stamp one print, wait (bounded) until a checkpoint of ``size`` is published,
    stop."""
    server = Served(env)
    try:
        asyncio.run(stamp_one(server.url, SigningKey.generate(), title))
        for _ in range(100):
            if asyncio.run(checkpoint_size(server.url)) >= size:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"no checkpoint of size {size} was published")
    finally:
        server.stop()


def test_an_older_backup_is_never_served(env: dict[str, str], tmp_path: Path) -> None:
    """Dump at 1 event, stamp a second (checkpoint of size 2 published), then:
    `league db restore` of the old dump is refused naming both sizes and changes nothing; an
    operator who restores it by hand gets a league that refuses to serve and a verify that
    fails; restoring the newest dump serves again."""
    stamp_and_publish(env, "Tally", 1)
    old, new = tmp_path / "old.dump", tmp_path / "new.dump"
    assert league(env, "db", "dump", str(old)).returncode == 0
    stamp_and_publish(env, "Pairing", 2)
    assert league(env, "db", "dump", str(new)).returncode == 0
    refused = one_line_failure(league(env, "db", "restore", str(old)))
    assert "holds 1 event," in refused
    assert "checkpoint of size 2" in refused
    assert league(env, "verify").returncode == 0  # untouched by the refused restore
    subprocess.run(
        [
            str(embedded_tool("pg_restore")),
            "--clean",
            "--if-exists",
            "--no-owner",
            "--dbname",
            env["DATABASE_URL"],
            str(old),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    line = one_line_failure(league(env, "serve", "mint", "--port", "0"))
    assert "older than what was published" in line
    assert "older than what was published" in one_line_failure(league(env, "verify"))
    restored = league(env, "db", "restore", str(new))
    assert restored.returncode == 0, restored.stderr
    again = Served(env)
    try:
        assert asyncio.run(stamp_one(again.url, SigningKey.generate(), "Tally")) == (
            "CZ-TALLY-0002"
        )
    finally:
        again.stop()


async def claim(url: str, owner: SigningKey, marks: int, request_id: str) -> int:
    """A faucet claim over HTTP (Book V.5); the marks it converted."""
    return sum(n.denomination for n in await claim_notes(url, owner, marks, request_id))


def test_the_server_extra_is_what_league_names() -> None:
    """pyproject's ``server`` extra holds exactly the modules ``league`` names as the
    server's (SERVER_MODULES), and the base install none of them: the auditor's and the
    player's install stays free of the database, migrations and metrics (README "Auditing a
    league")."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def module(requirement: str) -> str:
        name = re.split(r"[\[<>=!~ ]", requirement, maxsplit=1)[0]
        return name.lower().replace("-", "_")

    assert {module(r) for r in project["optional-dependencies"]["server"]} == SERVER_MODULES
    assert not {module(r) for r in project["dependencies"]} & SERVER_MODULES
