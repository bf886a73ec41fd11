"""Services on separate hosts finding each other through the signed manifest (docs/operations.md,
"Separate processes"): `league init --url SERVICE=URL` names where each answers, and three `league
serve NAME` processes on three databases, with no MINT_URL, TREASURY_URL or NOTARY_URL at all, run
the story across each other; the notary is ready once it has read both issuers' feeds. `league
audit` then reads each service where the manifest says (given only the mint's URL), or where --mint,
--treasury and --notary say; a service's flag naming another service's host fails."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import aiohttp
import pytest

from auditor import AuditorError, service_urls
from services.kernel.database import scratch_database
from tests.harness.audit import audit
from tests.harness.separate import NAMES, Separate, free_ports, logs_written, story, urls_of
from tests.harness.served import clean_env, league


@pytest.fixture
def found(tmp_path: Path, server_url: str) -> Iterator[Separate]:
    """The three services apart, each knowing the others only from the manifest."""
    with ExitStack() as stack:
        databases = {
            name: stack.enter_context(scratch_database(server_url, f"cz_{name}")) for name in NAMES
        }
        ports = free_ports()
        home_env = {**clean_env(), "LEAGUE_HOME": str(tmp_path / "league")}
        for name in NAMES:
            home_env.pop(f"{name.upper()}_URL", None)
        named = [arg for name, url in urls_of(ports).items() for arg in ("--url", f"{name}={url}")]
        made = league(
            {**home_env, "DATABASE_URL": databases["mint"]},
            "init",
            "--policy",
            "stamp_work=1",
            "--policy",
            "checkpoint_interval_ms=50",
            *named,
        )
        assert made.returncode == 0, made.stderr
        separate = Separate(home_env, databases, ports, settings=False)
        for name in NAMES:
            migrated = league(separate.envs[name], "migrate")
            assert migrated.returncode == 0, migrated.stderr
        stack.callback(separate.stop)
        for name in ("mint", "notary", "treasury"):
            separate.start(name)
        yield separate


async def ready(url: str) -> None:
    """Bounded: until ``url`` answers /readyz 200 (a guard, not a timing assertion)."""
    async with aiohttp.ClientSession() as session:
        for _ in range(400):
            async with session.get(url + "/readyz") as response:
                last = await response.text()
                if response.status == 200:
                    return
            await asyncio.sleep(0.05)
    raise AssertionError(f"{url} never ready: {last}")


# V.4, V.8; docs/operations.md "Separate processes"
def test_services_apart_find_each_other_and_are_audited_through_the_manifest(
    found: Separate, tmp_path: Path
) -> None:
    for name in NAMES:
        assert not any(
            key.endswith("_URL") and key != "DATABASE_URL" for key in found.envs[name]
        ), found.envs[name]
    asyncio.run(story(found.urls))  # the treasury's saga calls the notary and the mint
    for name in NAMES:
        assert asyncio.run(logs_written(found.envs[name]["DATABASE_URL"])) == {name}
    asyncio.run(ready(found.urls["notary"]))  # it read the mint's and the treasury's feeds
    state = tmp_path / "audit"

    by_manifest = audit(found.envs["mint"], found.urls["mint"], state)
    assert by_manifest.returncode == 0, by_manifest.stderr
    assert f"the notary read at {found.urls['notary']}" in by_manifest.stdout
    assert f"the treasury read at {found.urls['treasury']}" in by_manifest.stdout
    assert "the mint read at" not in by_manifest.stdout  # at the URL given
    assert "mint: 2 events verified" in by_manifest.stdout
    assert "notary: 3 events verified" in by_manifest.stdout
    assert "treasury purchases: 1 delivered" in by_manifest.stdout
    assert "evidence: none kept by mint, notary, treasury" in by_manifest.stdout

    flags = [arg for name in NAMES for arg in (f"--{name}", found.urls[name])]
    by_flags = league(found.envs["mint"], "audit", "--state", str(state), *flags)
    assert by_flags.returncode == 0, by_flags.stderr
    assert "as pinned" in by_flags.stdout  # the same URL (the mint's), the same root
    assert "notary: 3 events verified" in by_flags.stdout

    wrong = league(
        found.envs["mint"],
        "audit",
        "--state",
        str(state),
        found.urls["mint"],
        "--notary",
        found.urls["mint"],
    )
    assert wrong.returncode == 2
    assert "notary" in wrong.stderr
    assert len(wrong.stderr.splitlines()) == 1, wrong.stderr


def test_the_services_urls_given_to_the_audit_are_checked() -> None:
    """The league's URL is the one given, else the mint's; each service's URL is checked as a
    manifest's would be (no credentials to leak into a state file or a log)."""
    assert service_urls("http://gw.example/", {"notary": "http://n.example/"}) == (
        "http://gw.example",
        {"notary": "http://n.example"},
    )
    assert service_urls(None, {"mint": "http://m.example", "notary": None}) == (
        "http://m.example",
        {"mint": "http://m.example"},
    )
    with pytest.raises(AuditorError, match="give the league's URL"):
        service_urls(None, {"notary": "http://n.example"})
    with pytest.raises(AuditorError, match=r"^--treasury: .*no credentials") as refused:
        service_urls("http://gw.example", {"treasury": "https://u:secret@t.example"})
    assert "secret" not in str(refused.value)
    with pytest.raises(AuditorError, match="http:// or https://"):
        service_urls("http://gw.example", {"mint": "ftp://m.example"})
