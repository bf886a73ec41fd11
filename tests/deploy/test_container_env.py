"""The containers' configuration, run for real without Docker (docs/operations.md "Running in
containers"): the compose
file's own commands and environment, its container paths mapped to directories laid out as
the compose file mounts them (the secrets: only the service's own key, the passphrase, the
pgpass file; the league home: only the manifest and the checkpoints volume), over the test
database. `league migrate` then `league serve mint`, `league serve treasury` and `league serve
notary` as separate processes, each ready at /readyz (the notary once it has read both feeds);
no league is created, no root key is needed."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from services.kernel.settings import LeagueSettings
from tests.harness.deploy import COMPOSE_FILE, environment, mounted_secrets
from tests.harness.founding import make_settings

__all__ = ["make_settings"]  # fixtures

SCRIPT = Path(sys.executable).parent / "league"
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "services.league.cli"]
#: Guards against a hung child, not timing assertions.
GUARD_SECONDS = 120
PASSPHRASE = "a passphrase for the containers"


def lay_out(
    service: dict[str, Any], settings: LeagueSettings, root: Path, name: str
) -> dict[str, str]:
    """The directories the compose file mounts for ``service``, made under ``root``, and its
    environment with the container's paths mapped to them."""
    env = environment(service)
    secrets, home = root / "secrets", root / "home"
    root.mkdir()
    secrets.mkdir(mode=0o700)
    home.mkdir(mode=0o700)
    sources = {
        "mint_key": settings.keys_dir / "mint.key",
        "treasury_key": settings.keys_dir / "treasury.key",
        "notary_key": settings.keys_dir / "notary.key",
        "league_passphrase": None,
        "pgpass": None,
    }
    for secret, target in mounted_secrets(service).items():
        path = secrets / Path(target).name
        source = sources[secret]
        if source is not None:
            shutil.copyfile(source, path)
        elif secret == "league_passphrase":
            path.write_text(PASSPHRASE + "\n", encoding="utf-8")
        else:
            path.write_text("nohost:5432:league:league:unused\n", encoding="utf-8")
        path.chmod(0o600)
    for config in service.get("configs", []):
        assert config["source"] == "manifest", name
        shutil.copyfile(settings.manifest_path, home / Path(config["target"]).name)
    (home / "checkpoints").mkdir(mode=0o700)
    mapped = {
        key: value.replace("/run/secrets", str(secrets)).replace("/var/lib/league", str(home))
        for key, value in env.items()
    }
    # The database is the test's; the port any free one, on loopback.
    mapped.update(DATABASE_URL=settings.database, LEAGUE_HOST="127.0.0.1", LEAGUE_PORT="0")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LEAGUE_", "DATABASE_"))}
    return {**base, **mapped}


async def run(command: list[str], env: dict[str, str]) -> int:
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        *command[1:],
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await asyncio.wait_for(process.wait(), GUARD_SECONDS)


async def serve(command: list[str], env: dict[str, str]) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        *command[1:],
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), GUARD_SECONDS)).decode()
    if not line.startswith("serving on "):
        assert process.stderr is not None
        raise AssertionError(line + (await process.stderr.read()).decode())
    return process, line.removeprefix("serving on ").strip()


async def until_ready(url: str) -> None:
    """Bounded: a guard, not a timing assertion."""
    async with aiohttp.ClientSession() as session:
        for _ in range(400):
            async with session.get(url + "/readyz") as response:
                if response.status == 200:
                    return
                last = await response.text()
            await asyncio.sleep(0.05)
    raise AssertionError(f"{url} never ready: {last}")


async def until_following(url: str) -> None:
    """Bounded: until the notary's follower has read the mint's feed (its lag published)."""
    async with aiohttp.ClientSession() as session:
        for _ in range(400):
            async with session.get(url + "/metrics") as response:
                if 'league_feed_lag_events{service="notary",source="mint"}' in (
                    await response.text()
                ):
                    return
            await asyncio.sleep(0.05)
    raise AssertionError("the notary never followed the mint")


async def test_the_compose_services_run_as_configured(
    make_settings: Callable[..., LeagueSettings], tmp_path: Path
) -> None:
    spec = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))["services"]
    settings = make_settings(passphrase=PASSPHRASE)
    migrate = spec["migrate"]
    assert await run(migrate["command"], lay_out(migrate, settings, tmp_path / "m", "m")) == 0
    processes = []
    try:
        mint_env = lay_out(spec["mint"], settings, tmp_path / "mint", "mint")
        mint, mint_url = await serve(spec["mint"]["command"], mint_env)
        processes.append(mint)
        await until_ready(mint_url)
        treasury_env = lay_out(spec["treasury"], settings, tmp_path / "treasury", "treasury")
        treasury_env["MINT_URL"] = mint_url  # the compose network's http://mint:8080
        for other in ("TREASURY_URL", "NOTARY_URL"):  # none here: the server's own address
            treasury_env.pop(other)
        treasury, treasury_url = await serve(spec["treasury"]["command"], treasury_env)
        processes.append(treasury)
        await until_ready(treasury_url)
        notary_env = lay_out(spec["notary"], settings, tmp_path / "notary", "notary")
        # The notary follows both issuers' feeds (and is not ready before it has read each).
        notary_env.update(MINT_URL=mint_url, TREASURY_URL=treasury_url)
        notary_env.pop("NOTARY_URL")
        notary, notary_url = await serve(spec["notary"]["command"], notary_env)
        processes.append(notary)
        await until_ready(notary_url)
        await until_following(notary_url)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        codes = [await asyncio.wait_for(p.wait(), GUARD_SECONDS) for p in processes]
    assert codes == [0, 0, 0]
    for name in ("mint", "treasury", "notary"):
        home = tmp_path / name / "home"
        # Nothing written but the serving lock each `league serve` holds (no league made).
        assert sorted(p.name for p in home.iterdir()) == [
            "checkpoints",
            "manifest.json",
            "serving.lock",
        ]
        secrets = sorted(p.name for p in (tmp_path / name / "secrets").iterdir())
        assert secrets == sorted(["league_passphrase", "pgpass", f"{name}.key"])
