"""README "Play in the browser", run as written: its block typed in a shell in the clone (the
venv activated, ``cz web --no-browser`` the console script), the URL it prints opened (the
launch's secret its path), a key struck and the league set through the pages' own forms,
then every step the section names, "Booth → Button", found on that booth's page as a button,
link or heading with those words (so a renamed button fails here)."""

from __future__ import annotations

import contextlib
import html
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp

from tests.harness.league import InProcessLeague, clean_env

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
CZ = Path(sys.executable).parent / "cz"
PASSPHRASE = "correct horse battery staple"
_SECTION = re.compile(r"^## Play in the browser\n(.*?)^## ", re.M | re.S)
_BLOCK = re.compile(r"^<!-- play-in-the-browser -->\n```sh\n(.*?)^```", re.M | re.S)
_STEP = re.compile(r"\*\*([A-Za-z -]+?) →\s+([^*]+?)\*\*")
#: Each booth's page.
BOOTHS = {
    "Topbar": "/topbar",
    "Exchange": "/exchange",
    "Vault": "/vault",
    "Play": "/play",
    "Provenance": "/provenance",
    "No-Go drill": "/drill",
}
_NAMED = re.compile(r"<(button|a|h1|h2)\b[^>]*>(.*?)</\1>", re.S)


def section() -> str:
    found = _SECTION.search(README.read_text(encoding="utf-8"))
    assert found, "README has no 'Play in the browser' section"
    return found[1]


def steps() -> list[tuple[str, str]]:
    return [(booth, " ".join(button.split())) for booth, button in _STEP.findall(section())]


@contextlib.contextmanager
def typed(lines: list[str], cwd: Path, env: dict[str, str]) -> Iterator[str]:
    """The block's lines run as one shell script in ``cwd``; the first line it prints."""
    process = subprocess.Popen(
        ["bash", "-c", "\n".join([*lines[:-1], f"exec {lines[-1]}"])],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=60)


def named(page: str) -> list[str]:
    """The words of every button, link and heading on ``page``."""
    return [
        " ".join(html.unescape(re.sub(r"<[^>]+>", "", inner)).split())
        for _, inner in _NAMED.findall(page)
    ]


async def test_play_in_the_browser_runs_as_written(served: InProcessLeague, tmp_path: Path) -> None:
    block = _BLOCK.search(section())
    assert block, "the section has no play-in-the-browser block"
    lines = [line for line in block[1].splitlines() if line.strip()]
    assert lines == [". .venv/bin/activate", "cz web --no-browser"]
    (tmp_path / ".venv").symlink_to(CZ.parent.parent)
    env = {k: v for k, v in clean_env(os.environ).items() if k != "VIRTUAL_ENV"}
    env |= {"XDG_DATA_HOME": str(tmp_path / "data"), "CZ_KDF": "minimum"}
    assert [booth for booth, _ in steps()][:2] == ["Exchange", "Topbar"]
    assert {booth for booth, _ in steps()} <= set(BOOTHS)
    assert len(steps()) >= 12

    with typed(lines, tmp_path, env) as url:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{43}/", url), url
        base = url.rstrip("/")
        origin = "/".join(url.split("/")[:3])
        async with aiohttp.ClientSession(headers={"Origin": origin}) as http:
            async with http.get(url, allow_redirects=False) as response:
                assert response.status == 303  # no wallet yet: to Exchange

            async def page(path: str) -> str:
                async with http.get(base + path) as response:
                    assert response.status == 200, path
                    return await response.text()

            async def post(path: str, form: dict[str, str]) -> None:
                async with http.post(base + path, data=form) as response:
                    assert response.status == 200, await response.text()

            # No wallet yet: Exchange shows Strike the key (the first step), then it is done.
            assert any("Strike the key" in words for words in named(await page("/exchange")))
            await post("/exchange/strike", {"passphrase": PASSPHRASE, "again": PASSPHRASE})
            await post("/topbar/league", {"url": served.url})
            for booth, button in steps():
                shown = named(await page(BOOTHS[booth]))
                if (booth, button) == ("Exchange", "Strike the key"):
                    continue  # shown before a wallet exists: checked above
                assert any(button in words for words in shown), (booth, button, shown)
    assert (tmp_path / "data" / "cz" / "wallet.czsave").is_file()  # where the README's cz keeps it
