"""Structured logs with request ids, and never a secret in a log (docs/operations.md "Health,
metrics and logs"), over real
HTTP: a league served with passphrase-armored keys and a password in its database URL."""

from __future__ import annotations

import io
import json
import logging
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from ledger.encoding import encode_b64url
from services.http.apps import POOL
from services.http.serving import (
    REQUEST_ID,
    HumanLogFormatter,
    JsonLogFormatter,
    log_formatter,
    structured_logs,
)
from services.kernel.compose import LOG_SECRETS, compose
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.keyring import ROLES
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from tests.harness.founding import make_settings
from tests.harness.ports import free_port
from tests.harness.trading import Trade, stamp_and_follow

__all__ = ["make_settings"]  # fixtures

PASSPHRASE = "correct horse battery staple 7431"
PASSWORD = "db-password-0f9e8d7c"


@contextmanager
def captured_log(secrets: list[str]) -> Iterator[io.StringIO]:
    """Everything logged (debug and up) while the block runs, as ``league serve`` writes it to
    a stream that is not a terminal."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with structured_logs(secrets):
            yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def with_password(database_url: str) -> tuple[str, str]:
    """``database_url`` with a password in it (the test server's own, when it has one), and
    that password."""
    url = urllib.parse.urlsplit(database_url)
    if url.password:
        return database_url, url.password
    user = url.username or "postgres"
    where = url.netloc.rpartition("@")[2]
    return url._replace(netloc=f"{user}:{PASSWORD}@{where}").geturl(), PASSWORD


@pytest.fixture
def secret_settings(make_settings: Callable[..., LeagueSettings], tmp_path: Path) -> LeagueSettings:
    passphrase_file = tmp_path / "passphrase"
    passphrase_file.write_text(PASSPHRASE + "\n", encoding="utf-8")
    passphrase_file.chmod(0o600)
    settings = make_settings(passphrase=PASSPHRASE)
    url, _ = with_password(settings.database)
    return settings.model_copy(
        update={"passphrase_file": passphrase_file, "database_url": url, "port": free_port()}
    )


async def test_the_request_id_is_the_clients_when_well_formed_and_echoed(
    secret_settings: LeagueSettings,
) -> None:
    app = compose(secret_settings, [MINT])
    server = TestServer(app, host="127.0.0.1", port=secret_settings.port)
    await server.start_server()
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            session = league._session
            assert session is not None
            given = "7f3e2a9c-1b4d-4e8f-9a0b-c1d2e3f4a5b6"
            async with session.get(
                league.base_url + "/healthz", headers={"X-Request-Id": given}
            ) as response:
                assert response.headers["X-Request-Id"] == given
            for bad in ("", "a b", "x" * 129, "id\u00e9", "<script>"):
                async with session.get(
                    league.base_url + "/no/such", headers={"X-Request-Id": bad}
                ) as response:
                    made = response.headers["X-Request-Id"]
                    assert made != bad
                    assert len(made) == 32
                    assert int(made, 16) >= 0
            async with (
                session.get(league.base_url + "/ledger") as first,
                session.get(league.base_url + "/ledger") as second,
            ):
                assert first.headers["X-Request-Id"] != second.headers["X-Request-Id"]
    finally:
        await server.close()


async def test_every_line_is_json_with_the_request_id_and_no_secret_shows(
    secret_settings: LeagueSettings,
) -> None:
    """A league served with armored keys (its passphrase in a file) and a password in its
    database URL: requests answered, refused, failing for a lost database, and a careless log
    line quoting both; no line shows the passphrase, the password or any key's seed."""
    _, password = with_password(secret_settings.database)
    app = compose(secret_settings, [MINT, NOTARY])
    assert sorted(app[LOG_SECRETS]) == sorted([PASSPHRASE, password])
    manifest = load_manifest(secret_settings)
    seeds = [
        encode_b64url(load_service_key(secret_settings, manifest, role, PASSPHRASE).seed)
        for role in ROLES
        if role != "root"
    ]
    careless = logging.getLogger("services.kernel.test")
    with captured_log(app[LOG_SECRETS]) as log:
        server = TestServer(app, host="127.0.0.1", port=secret_settings.port)
        await server.start_server()
        try:
            async with LeagueClient(str(server.make_url(""))) as league:
                trade = Trade(league, await league.manifest())
                await stamp_and_follow(trade)
                session = league._session
                assert session is not None
                async with session.get(
                    league.base_url + "/provenance/nope", headers={"X-Request-Id": "req-42"}
                ) as response:
                    assert response.status == 404
                careless.warning(
                    "connecting to %s with %r", secret_settings.database_url, PASSPHRASE
                )
                try:
                    raise RuntimeError(f"cannot open the key with {PASSPHRASE}")
                except RuntimeError:
                    careless.exception("failed")
                server.app[POOL].terminate()
                async with session.get(league.base_url + "/readyz") as response:
                    assert response.status == 503
                async with session.get(league.base_url + "/ledger") as response:
                    assert response.status == 503
        finally:
            await server.close()
    text = log.getvalue()
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) > 10
    for secret in (PASSPHRASE, password, *seeds):
        assert secret not in text
    assert {"time", "level", "logger", "message"} <= set(lines[0])
    refused = [line for line in lines if line.get("request_id") == "req-42"]
    assert refused == [
        {
            "time": refused[0]["time"],
            "level": "info",
            "logger": "services.http.access",
            "message": refused[0]["message"],
            "request_id": "req-42",
            "method": "GET",
            "route": "/provenance/{serial}",
            "status": 404,
            "duration_ms": refused[0]["duration_ms"],
        }
    ]
    assert refused[0]["message"].startswith("GET /provenance/nope -> 404 in ")
    quoted = [line for line in lines if line["logger"] == "services.kernel.test"]
    assert (
        quoted[0]["message"]
        == "connecting to "
        + secret_settings.database.replace(password, "[redacted]")
        + " with '[redacted]'"
    )
    assert "cannot open the key with [redacted]" in quoted[1]["exception"]


def test_a_terminal_gets_human_lines_with_the_request_id() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(log_formatter(io.StringIO()), JsonLogFormatter)
    human = log_formatter(Terminal(), ["s3cret"])
    assert isinstance(human, HumanLogFormatter)
    record = logging.LogRecord("league", logging.WARNING, __file__, 1, "key %s", ("s3cret",), None)
    token = REQUEST_ID.set("abc123")
    try:
        line = human.format(record)
    finally:
        REQUEST_ID.reset(token)
    assert line.endswith(" WARNING league [abc123] key [redacted]")
