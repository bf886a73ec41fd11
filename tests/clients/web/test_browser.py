"""``cz web`` in a real headless Chromium, driven over the DevTools protocol, against a real
league served on the test PostgreSQL: two players, each their own ``cz web`` process (the
console script, ``--no-browser``, its wallet home) and tab. Everything below is done by clicks
and typing in the pages, no cz command run: a save code loaded (Topbar → Load), the league set
and pinned, a clerk's table played to its close (settled, recorded and replayed step by step),
the No-Go drill reproduced before its timer closes (IV.4), the unstamped prints presented for
stamping, notes claimed, a single bought with notes, a second player's key struck, its ledger
card copied, a slip endorsed to it and imported there, the print's provenance checked, the
same slip refused the second time, a second device (a save code written before the slip)
refused before it signs and synced, a third player's Import of the print signed away twice
(from a terminal, offline) refused with the fraud proof shown; and a cross-site form posted
into the page refused.
Screenshots are kept (``$CZ_ARTIFACTS/web``, default ``test-artifacts/web``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from clients.wallet import Wallet
from clients.web.app import launch_file, serve
from game.window.economy.prints import Finish, Print
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.harness.chromium import Browser, chromium, needs_chromium
from tests.harness.league import InProcessLeague, clean_env

CZ = Path(sys.executable).parent / "cz"
PASSPHRASE = "correct horse battery staple"
#: A guard against a hung step, not a timing assertion.
GUARD_SECONDS = 120


@contextlib.asynccontextmanager
async def cz_web(home: Path) -> AsyncIterator[str]:
    """``cz web --no-browser`` for the wallet in ``home``: the URL it prints."""
    env = {**clean_env(os.environ), "CZ_HOME": str(home), "CZ_KDF": "minimum"}
    log = home.with_name(f"{home.name}.log").open("wb")  # what it says on stderr, kept
    process = await asyncio.create_subprocess_exec(
        str(CZ),
        "web",
        "--no-browser",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
    )
    try:
        assert process.stdout is not None
        url = (await asyncio.wait_for(process.stdout.readline(), GUARD_SECONDS)).decode().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{43}/", url), url
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await process.wait()
        log.close()


def terminal(home: Path, *args: str, stdin: str) -> str:
    """``cz ARGS`` typed in a terminal of the wallet in ``home``: its stdout."""
    env = {
        **clean_env(os.environ),
        "CZ_HOME": str(home),
        "CZ_KDF": "minimum",
        "CZ_PASSPHRASE": PASSPHRASE,
    }
    done = subprocess.run(
        [str(CZ), *args], input=stdin, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def loaded(browser: Browser, act: Callable[[], Awaitable[Any]]) -> str:
    """Do ``act`` (a click, a submit) and wait for the next document to load; its path."""
    await browser.js("window.czOld = 1")
    await act()
    for _ in range(GUARD_SECONDS * 20):
        with contextlib.suppress(AssertionError):
            old, ready, path = await browser.js(
                "[window.czOld, document.readyState, location.pathname]"
            )
            if old is None and ready == "complete":  # the path under the launch's secret
                return "/" + str(path).split("/", 2)[2]
        await asyncio.sleep(0.05)
    raise AssertionError("no new page loaded")


async def click(browser: Browser, selector: str) -> str:
    """Click the element ``selector`` names; the path of the page it loads."""
    return await loaded(
        browser, lambda: browser.js(f"document.querySelector({json.dumps(selector)}).click()")
    )


async def fill(browser: Browser, selector: str, value: str) -> None:
    found = await browser.js(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
        f" if (!e) return false; e.value = {json.dumps(value)}; return true; }})()"
    )
    assert found, selector


async def text(browser: Browser, selector: str) -> str:
    value = await browser.js(
        f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || ''"
    )
    return str(value)


async def done(browser: Browser) -> None:
    """The result page says the action was done (else: its refusal, as the failure)."""
    outcome = await text(browser, "#outcome")
    assert outcome == "✓ Done.", await text(browser, "body")


async def value(browser: Browser, selector: str) -> str:
    return str(await browser.js(f"document.querySelector({json.dumps(selector)}).value"))


async def sign(browser: Browser, form: str, shot: str | None = None) -> tuple[str, str]:
    """Submit ``form`` (a button that signs), check the confirmation names what and to whom,
    click its button; what the confirmation said and the result page's outcome."""
    assert await click(browser, f"{form} button") == "/confirm/" + (
        await browser.js("location.pathname.split('/')[3]")
    )
    said = await text(browser, "#confirm")
    assert "Your key will sign" in said
    assert "to:" in said
    if shot:
        await browser.screenshot(shot)
    assert (await click(browser, "#sign")).startswith("/jobs/")
    while await browser.js("!!document.querySelector('#working')"):  # it reloads itself
        await loaded(browser, lambda: asyncio.sleep(0))
    outcome = await text(browser, "#outcome") or await text(browser, "#refusal")
    return said, outcome


async def play_to_the_close(browser: Browser) -> int:
    """Click the first legal action (or answer a drill with its lit cells) until the verdict;
    how many clicks."""
    for clicks in range(1, 400):
        if await browser.js("!!document.querySelector('#verdict')"):
            return clicks
        if await browser.js("!!document.querySelector('#drill-form')"):
            await answer_drill(browser, "#drill-answer")
        else:
            assert await click(browser, "button.action") == "/table"
    raise AssertionError("the table did not close")


async def answer_drill(browser: Browser, button: str) -> str:
    """Click the lit cells of the drill on the page, then answer."""
    lit = await browser.js(
        "[...document.querySelectorAll('label.cell.lit')].map(c => c.dataset.cell)"
    )
    assert len(lit) == 4
    for cell in lit:
        await browser.js(f"document.querySelector('label[data-cell=\"{cell}\"] input').click()")
    return await click(browser, button)


@needs_chromium
async def test_from_cz_web_to_a_notarized_trade_by_clicks(
    served: InProcessLeague, tmp_path: Path
) -> None:
    wallet = Wallet.new()
    wallet.give(marks=60, prints=[Print("Tally"), Print("Tally"), Print("Tally", Finish.HOLOFOIL)])
    code = seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF)

    async with (
        cz_web(tmp_path / "a") as url_a,
        cz_web(tmp_path / "b") as url_b,
        chromium("web") as browser,
    ):
        base_a = url_a.rstrip("/")
        base_b = url_b.rstrip("/")
        # The launch URL, the secret its path: no wallet yet means Strike the key.
        assert await browser.open(url_a) == f"{base_a}/exchange"
        assert "There is no reset" in await text(browser, "#warning")

        # Topbar → Load a save code; the league set and pinned.
        await browser.open(f"{base_a}/topbar")
        await fill(browser, "#load textarea[name=code]", code)
        await fill(browser, "#load input[name=passphrase]", PASSPHRASE)
        assert (await click(browser, "#load button")).startswith("/done/")
        await done(browser)
        await browser.open(f"{base_a}/topbar")
        await fill(browser, "#league-set input[name=url]", served.url)
        await click(browser, "#league-set button")
        await done(browser)
        assert "pinned CZ-" in await text(browser, "#league")

        # A clerk's table by clicks: the replies shown, the close settled and recorded.
        await browser.open(f"{base_a}/")
        assert await text(browser, "#next") == "clerk-1"
        assert await click(browser, "#play-next") == "/table"
        assert await browser.js("document.querySelectorAll('#board .side').length") == 2
        await browser.screenshot("table")
        clicks = await play_to_the_close(browser)
        assert clicks > 3
        settled = await text(browser, "#settled")
        assert settled.startswith("clerk-1: "), await text(browser, "#verdict")
        assert "Substance" in await text(browser, "#verdict pre")
        await browser.screenshot("table-closed")
        # Replayed step by step: the board after move 1, then the end and its verdict.
        assert (await click(browser, "#settled a")).startswith("/tables/")
        assert (await text(browser, "#step")).startswith("move 0 of ")
        await click(browser, "#next-move")
        assert (await text(browser, "#step")).startswith("move 1 of ")
        await click(browser, "#end")
        assert "the columns at the close" in await text(browser, "#verdict")
        await browser.screenshot("replay")

        # The No-Go drill: shown, hidden, reproduced by clicks before the timer closes.
        await browser.open(f"{base_a}/drill")
        assert (await click(browser, "#drill-start button")).startswith("/drill/")
        await browser.screenshot("drill")
        # Shown, then hidden: the showing's animations run to their end (as the seconds
        # would pass), the lit cells look like every other.
        backgrounds = (
            "[...document.querySelectorAll('label.cell')].map(c => getComputedStyle(c)"
            ".backgroundColor)"
        )
        shown = await browser.js(backgrounds)
        assert len(set(shown)) == 2
        await browser.js(
            "document.getAnimations().filter(a => a.animationName === 'lit')"
            ".forEach(a => a.finish())"
        )
        assert len(set(await browser.js(backgrounds))) == 1
        await answer_drill(browser, "#drill-answer")
        assert await browser.js("document.querySelector('#outcome').dataset.outcome") == (
            "success"
        ), await text(browser, "#outcome")

        # Vault: Present for stamping, Claim notes, Buy with notes; each confirmed first.
        await browser.open(f"{base_a}/vault")
        assert await browser.js("document.querySelectorAll('#prints li.unstamped').length") == 3
        # The holofoil finish is animated (V.1: "holofoil (animated)"), the others are not.
        assert await browser.js(
            "document.getAnimations().filter(a => a.animationName === 'holofoil'"
            " && a.playState === 'running').map(a => a.effect.target.textContent)"
        ) == ["Tally"]
        said, outcome = await sign(browser, "#stamp", "confirm-stamp")
        assert "your 3 unstamped prints" in said
        assert "the mint of the league" in said
        assert outcome == "✓ Done.", outcome
        await browser.open(f"{base_a}/vault")
        stamped = await browser.js(
            "[...document.querySelectorAll('#prints li.stamped')].map(li => li.dataset.serial)"
        )
        assert len(stamped) == 3
        said, outcome = await sign(browser, "#claim")
        assert "the treasury of the league" in said
        assert outcome == "✓ Done.", outcome
        await browser.open(f"{base_a}/vault")
        await fill(browser, "#buy select[name=title]", "Tally")
        said, outcome = await sign(browser, "#buy")
        assert "pay for a Tally" in said
        assert outcome == "✓ Done.", outcome
        assert "stamped to you" in await text(browser, "#said")
        await browser.open(f"{base_a}/vault")
        assert await browser.js("document.querySelectorAll('#prints li.stamped').length") == 4
        await browser.screenshot("vault")
        # Topbar → Save → enter a passphrase → Write the save code (kept for a second device).
        await browser.open(f"{base_a}/topbar")
        await fill(browser, "#save input[name=passphrase]", PASSPHRASE)
        await click(browser, "#save button")
        saved = await value(browser, "#save-code")
        assert saved.startswith("-----BEGIN")

        # B strikes a key, sets the league, copies its ledger card.
        assert await browser.open(url_b) == f"{base_b}/exchange"
        await fill(browser, "#strike input[name=passphrase]", PASSPHRASE)
        await fill(browser, "#strike input[name=again]", PASSPHRASE)
        await click(browser, "#strike button")
        await done(browser)
        await browser.open(f"{base_b}/topbar")
        await fill(browser, "#league-set input[name=url]", served.url)
        await click(browser, "#league-set button")
        await browser.open(f"{base_b}/exchange")
        await browser.screenshot("exchange")
        card_b = await value(browser, "#my-card")
        address_b = await text(browser, "#address")
        assert address_b in card_b or card_b.startswith("-----BEGIN")

        # A endorses a stamped Tally to B's card: the confirmation names B; the slip written.
        await browser.open(url_a)
        await browser.open(f"{base_a}/exchange")
        await fill(browser, "#send textarea[name=card]", card_b)
        serial = stamped[0]
        await browser.js(f"document.querySelector('#items input[value=\"{serial}\"]').click()")
        said, outcome = await sign(browser, "#send", "confirm-send")
        assert f"an endorsement of {serial}" in said
        assert address_b in said
        assert outcome.startswith("✓ The slip is written")
        slip = await value(browser, "#slip")

        # B imports it: admitted, notarized; the provenance checked here names B the holder.
        await browser.open(url_b)
        await browser.open(f"{base_b}/exchange")
        await fill(browser, "#import textarea[name=slip]", slip)
        await click(browser, "#import button")
        await done(browser)
        assert serial in await text(browser, "#said")
        await browser.open(f"{base_b}/provenance?serial={serial}")
        assert (await text(browser, "#verdict")).startswith("✓ Every signature and proof")
        life = await text(browser, "#life")
        assert f"holder: {address_b}" in life
        await browser.screenshot("provenance")
        # The same slip again: refused, nothing admitted twice.
        await browser.open(f"{base_b}/exchange")
        await fill(browser, "#import textarea[name=slip]", slip)
        await click(browser, "#import button")
        assert await text(browser, "#refusal"), await text(browser, "#outcome")
        await browser.screenshot("import-refused")

        # A second device of A's, from the save code written before the slip: cz's refusal
        # (the notary records the print sent on from this key), before anything is signed.
        async with cz_web(tmp_path / "a2") as url_a2:
            base_a2 = url_a2.rstrip("/")
            await browser.open(url_a2)
            await browser.open(f"{base_a2}/topbar")
            await fill(browser, "#load textarea[name=code]", saved)
            await fill(browser, "#load input[name=passphrase]", PASSPHRASE)
            await click(browser, "#load button")
            await done(browser)
            await browser.open(f"{base_a2}/exchange")
            await fill(browser, "#send textarea[name=card]", card_b)
            await browser.js(f"document.querySelector('#items input[value=\"{serial}\"]').click()")
            _, refusal = await sign(browser, "#send")
            assert "no longer holds it" in refusal, await text(browser, "body")
            assert refusal.endswith("nothing was signed")
            await browser.screenshot("second-device-refused")
            # Sync, as the refusal says: the print leaves this device's wallet.
            await browser.open(f"{base_a2}/exchange")
            await click(browser, "#sync button")
            await done(browser)
            assert f"{serial} left this wallet" in await text(browser, "#said")
            # A third device of A's signs it anyway, from a terminal without asking the
            # notary (cz send --offline), to a third player, C, in a cz web of their own:
            # C's Import is refused and shows the fraud proof convicting A's key, kept.
            async with cz_web(tmp_path / "c") as url_c:
                base_c = url_c.rstrip("/")
                await browser.open(url_c)
                await fill(browser, "#strike input[name=passphrase]", PASSPHRASE)
                await fill(browser, "#strike input[name=again]", PASSPHRASE)
                await click(browser, "#strike button")
                await browser.open(f"{base_c}/topbar")
                await fill(browser, "#league-set input[name=url]", served.url)
                await click(browser, "#league-set button")
                await browser.open(f"{base_c}/exchange")
                card_c = await value(browser, "#my-card")
                address_c = await text(browser, "#address")
                terminal(tmp_path / "a3", "load", "-", stdin=saved)
                twice = terminal(
                    tmp_path / "a3", "send", "--offline", "--to", "-", serial, stdin=card_c
                )
                await fill(browser, "#import textarea[name=slip]", twice)
                await click(browser, "#import button")
                refusal = await text(browser, "#refusal")
                assert "the notary recorded another endorsement first" in refusal
                proofs = await text(browser, "#proofs")
                assert f"{serial} was signed away twice at hop 1" in proofs
                assert address_b in proofs
                assert address_c in proofs
                await browser.screenshot("import-fraud-proof")

        # A cross-site form (another port of this machine, the secret leaked into its page)
        # posted to B's Lock: refused by the Origin check, B still unlocked.
        async def evil_page(request: web.Request) -> web.Response:
            return web.Response(
                text=f'<form method="post" action="{base_b}/lock"><button>win</button></form>',
                content_type="text/html",
            )

        evil = web.Application()
        evil.router.add_get("/", evil_page)
        runner = web.AppRunner(evil)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        try:
            port = runner.addresses[0][1]
            await browser.open(f"http://127.0.0.1:{port}/")
            await click(browser, "form button")
            refused = await text(browser, "body")
            assert refused.startswith("cz web refused this request"), refused
        finally:
            await runner.cleanup()
        await browser.open(f"{base_b}/topbar")
        assert await browser.js("!!document.querySelector('#lock')")  # still unlocked


@needs_chromium
async def test_the_launch_file_leads_the_browser_to_the_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``cz web`` hands the browser (a 0600 file of the player's, never the secret)
    brings a real Chromium to the launch's pages, at the secret's path: no wallet yet, so
    Exchange → Strike the key."""
    monkeypatch.setenv("CZ_HOME", str(tmp_path / "home"))
    stop, listening, urls = asyncio.Event(), asyncio.Event(), []

    def ready(url: str) -> None:
        urls.append(url)
        listening.set()

    served = asyncio.create_task(serve(0, ready, stop))
    try:
        await asyncio.wait_for(listening.wait(), GUARD_SECONDS)
        (url,) = urls
        path = launch_file(url, 1)
        async with chromium("web") as browser:
            await browser.open(path.as_uri())
            for _ in range(GUARD_SECONDS * 20):
                if str(await browser.js("location.href")).startswith("http"):
                    break
                await asyncio.sleep(0.05)
            assert await browser.js("location.href") == f"{url}exchange"
            assert "There is no reset" in await text(browser, "#warning")
    finally:
        stop.set()
        await served
