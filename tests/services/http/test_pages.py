"""Pages for people (docs/operations.md "Pages for people"): ``/ledger``, ``/treasury`` and
``/provenance/SERIAL``
answer HTML to a browser by content negotiation, JSON to everyone else; over real HTTP against
the mint, the notary and the treasury composed in one app, and in a real headless Chromium
(driven over the DevTools protocol: pages render, a link is followed, a serial is searched
through the form; screenshots kept in ``$CZ_ARTIFACTS``, default ``test-artifacts/``)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import NotaryConflict
from ledger.api.provenance import provenance_checks
from ledger.api.treasury import ClaimAnswer, claim_request
from ledger.keys import SigningKey
from ledger.print_runs import MISPRINT_SERIAL
from services.http.pages import environment
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.treasury.app import SERVICE as TREASURY
from tests.harness.chromium import chromium, needs_chromium
from tests.harness.founding import make_settings
from tests.harness.mint import league
from tests.harness.ports import free_port
from tests.harness.serving import composed
from tests.harness.trading import T0, Trade, hop, trade

__all__ = ["league", "make_settings", "trade"]  # the league over this module's server

#: A league whose name would run a script if any page printed it unescaped.
EVIL_NAME = '<script>alert("pwned")</script> & "Friends"'
#: What a browser sends for a page it navigates to.
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.fixture
def settings(make_settings: Callable[..., LeagueSettings]) -> LeagueSettings:
    return make_settings(name=EVIL_NAME).model_copy(update={"port": free_port()})


@pytest.fixture
async def server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    """The whole league in one app on a known port (the notary follows the mint and the
    treasury at the server's own address)."""
    async with composed(settings, [MINT, NOTARY, TREASURY]) as server:
        yield server


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def traded(trade: Trade) -> str:
    """A print stamped to A, endorsed A→B→C, and B's second signature (to D) refused."""
    a, b, c, d = (SigningKey.generate() for _ in range(4))
    stamped = await trade.stamp(a)
    await trade.league.notarize([hop(hop(stamped, a, b), b, c, T0 + 1)])
    with pytest.raises(NotaryConflict):
        await trade.league.notarize([hop(hop(stamped, a, b), b, d, T0 + 2)])
    return stamped.serial


async def get(
    http: aiohttp.ClientSession, url: str, accept: str | None, **kw: Any
) -> tuple[aiohttp.ClientResponse, str]:
    headers = {} if accept is None else {"Accept": accept}
    async with http.get(url, headers=headers, **kw) as response:
        return response, await response.text()


# -- negotiation ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/ledger", "/treasury", f"/provenance/{MISPRINT_SERIAL}"])
async def test_a_browser_gets_a_page_everyone_else_json(
    server: TestServer, http: aiohttp.ClientSession, path: str
) -> None:
    url = str(server.make_url(path))
    for accept in (BROWSER, "text/html", "application/json;q=0.5, text/html"):
        response, text = await get(http, url, accept)
        assert response.status == 200
        assert response.content_type == "text/html", accept
        assert text.startswith("<!doctype html>")
        policy = response.headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy
        assert "form-action 'self'" in policy
        assert response.headers["Vary"] == "Accept"
        assert not re.search(r"(src|href)=\"(https?:)?//", text)  # nothing loaded from elsewhere
        assert "<script" not in text
    for accept in (
        None,
        "*/*",
        "application/json",
        "text/html, application/json",
        "text/*",
        "text/html;q=0.5, */*",
        "text/html;q=bogus",
    ):
        response, text = await get(http, url, accept)
        assert response.status == 200
        assert response.content_type == "application/json", accept
        assert response.headers["Vary"] == "Accept"
        json.loads(text)


async def test_the_root_is_a_landing_page_to_a_browser_and_the_index_to_everyone_else(
    server: TestServer, http: aiohttp.ClientSession
) -> None:
    """``/``, the one URL ``league serve`` prints: to a browser a page linking the ledger,
    the treasury and a serial search (a GET form to ``/provenance``, which redirects to the
    serial's page); to every other client the services' index as before (docs/api.md)."""
    url = str(server.make_url("/"))
    response, text = await get(http, url, BROWSER)
    assert response.status == 200
    assert response.content_type == "text/html"
    assert response.headers["Vary"] == "Accept"
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    start = text[text.index('id="start"') : text.index("</div>", text.index('id="start"'))]
    assert 'href="/ledger"' in start
    assert 'href="/treasury"' in start
    assert re.search(r'<form[^>]*method="get" action="/provenance"', start)
    assert 'name="serial"' in start
    for service in ("mint", "notary", "treasury"):
        assert f'href="/{service}/openapi.json"' in text
    assert "<script" not in text
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in text  # the name, as text
    for accept in (None, "*/*", "application/json"):
        response, text = await get(http, url, accept)
        assert response.content_type == "application/json", accept
        assert response.headers["Vary"] == "Accept"
        index = json.loads(text)
        assert index["name"] == EVIL_NAME
        assert {s["name"] for s in index["services"]} == {"mint", "notary", "treasury"}


async def test_a_name_with_markup_is_printed_as_text(
    server: TestServer, http: aiohttp.ClientSession, trade: Trade
) -> None:
    serial = await traded(trade)
    assert trade.manifest.name == EVIL_NAME
    for path in ("/ledger", "/treasury", f"/provenance/{serial}", "/provenance/CZ-NOPE-0001"):
        _, text = await get(http, str(server.make_url(path)), BROWSER)
        assert "<script" not in text
        assert 'alert("pwned")' not in text
        assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt; &amp; &#34;Friends&#34;" in text


async def test_the_census_page_has_a_bar_per_run_and_links_the_latest_print(
    server: TestServer, http: aiohttp.ClientSession, trade: Trade
) -> None:
    serial = await traded(trade)
    census = await trade.league.census()
    _, text = await get(http, str(server.make_url("/ledger")), BROWSER)
    runs = sum(len(title.finishes) for title in census.titles)
    assert text.count('<td class="run"') == runs
    assert text.count('class="bar ') == runs
    assert text.count(f'href="/provenance/{serial}"') == 1
    drawn = 'aria-label="Model-A standard" aria-valuemin="0" aria-valuemax="3" aria-valuenow="1"'
    assert drawn in text


async def claimed(trade: Trade, http: aiohttp.ClientSession, url: str) -> ClaimAnswer:
    """Notes of 31 marks claimed from the faucet (an M25, an M5 and an M1)."""
    claim = claim_request(
        SigningKey.generate(), trade.manifest, 31, request_id="page-claim", at=int(time.time())
    )
    async with http.post(f"{url}/treasury/claim", json=claim.to_wire()) as response:
        assert response.status == 200
        return ClaimAnswer.model_validate_json(await response.text())


async def test_the_treasury_page_shows_every_denomination(
    server: TestServer, http: aiohttp.ClientSession, trade: Trade
) -> None:
    await claimed(trade, http, str(server.make_url("")).rstrip("/"))
    _, supply = await get(http, str(server.make_url("/treasury")), "application/json")
    denominations = json.loads(supply)["denominations"]
    _, text = await get(http, str(server.make_url("/treasury")), BROWSER)
    assert text.count('<tr class="denomination"') == len(denominations)
    for row in denominations:
        assert (
            f'data-denomination="{row["denomination"]}">\n    <td><strong>M{row["denomination"]}'
            f'</strong></td>\n    <td class="num">{row["supply"]:,}</td>\n'
            f'    <td class="num">{row["reserve"]:,}</td>\n'
            f'    <td class="num">{row["circulation"]:,}</td>'
        ) in text
    assert sum(row["circulation"] for row in denominations) == 3


async def test_a_notes_page_marks_its_issue_verified(
    server: TestServer, http: aiohttp.ClientSession, trade: Trade
) -> None:
    """A note's life: its issue checked against the treasury's event and signed checkpoint."""
    answer = await claimed(trade, http, str(server.make_url("")).rstrip("/"))
    note = answer.notes[0]
    _, text = await get(http, str(server.make_url(f"/provenance/{note.serial}")), BROWSER)
    marks = re.findall(r'data-proof="([a-z0-9-]+)" data-verified="(true|false)"', text)
    assert sorted(marks) == [("holder", "true"), ("issue-1", "true")]
    assert f"an M{note.denomination} note" in text


async def test_the_provenance_page_marks_every_proof_verified(
    server: TestServer, http: aiohttp.ClientSession, trade: Trade
) -> None:
    """The stamp, two hops' receipts, the conflict's fraud proof and the holder: each checked
    by the server with the client's own checks, each marked verified."""
    serial = await traded(trade)
    life = await trade.league.provenance(serial)
    _, text = await get(http, str(server.make_url(f"/provenance/{serial}")), BROWSER)
    marks = re.findall(r'data-proof="([a-z0-9-]+)" data-verified="(true|false)"', text)
    assert sorted(marks) == sorted(
        [("stamp", "true"), ("holder", "true")]
        + [(f"hop-{h.receipt.index}", "true") for h in life.hops]
        + [(f"conflict-{x.index}", "true") for x in life.conflicts]
    )
    assert 'id="verdict">✓ Every proof verified' in text
    assert f'id="holder">{life.holder_address}<' in text


async def test_a_proof_that_fails_is_marked_not_verified_alone(
    server: TestServer, http: aiohttp.ClientSession, trade: Trade
) -> None:
    """An account whose two receipts are swapped: the page the provenance template makes of
    it marks those two receipts not verified, and every other proof verified."""
    serial = await traded(trade)
    life = await trade.league.provenance(serial)
    assert life.stamp is not None
    (event,) = (await trade.league.events(life.stamp.index - 1, 1)).events
    first, second = life.hops
    lie = life.model_copy(
        update={
            "hops": [
                first.model_copy(update={"receipt": second.receipt}),
                second.model_copy(update={"receipt": first.receipt}),
            ]
        }
    )
    checked = provenance_checks(lie, trade.manifest, [event])
    text = (
        environment()
        .get_template("provenance.html")
        .render(
            league=EVIL_NAME,
            league_id=trade.manifest.league,
            path=f"/provenance/{serial}",
            answer=lie,
            checked=checked,
            proofs=checked.by_ref(),
        )
    )
    marks = dict(re.findall(r'data-proof="([a-z0-9-]+)" data-verified="(true|false)"', text))
    swapped = {f"hop-{h.receipt.index}" for h in lie.hops}
    assert {ref for ref, verified in marks.items() if verified == "false"} == swapped
    assert 'id="verdict">✗ Not every proof verified' in text
    assert "✗ not verified: the receipt is not for this endorsement" in text


async def test_the_search_redirects_to_the_serial_and_refuses_a_bad_one(
    server: TestServer, http: aiohttp.ClientSession
) -> None:
    url = str(server.make_url("/provenance"))
    for accept in (BROWSER, None):
        response, _ = await get(
            http, url, accept, params={"serial": " cz-model-a-0001 "}, allow_redirects=False
        )
        assert response.status == 303
        assert response.headers["Location"] == "/provenance/CZ-MODEL-A-0001"
    for bad in ("CZ-NO-SUCH-TITLE-0001", "not a serial", "", "X" * 65, "CZ-MODEL-A-0001/../x"):
        response, text = await get(http, url, BROWSER, params={"serial": bad})
        assert response.status == 400, bad
        assert response.content_type == "text/html"
        assert 'id="problem"' in text
        response, text = await get(http, url, None, params={"serial": bad})
        assert response.status == 400
        assert response.content_type == "application/problem+json"
    response, _ = await get(http, url, BROWSER)  # no serial at all
    assert response.status == 400


async def test_an_unknown_serial_is_a_404_page_to_a_browser(
    server: TestServer, http: aiohttp.ClientSession
) -> None:
    url = str(server.make_url("/provenance/CZ-MODEL-A-0002"))  # in the runs, never stamped
    response, text = await get(http, url, BROWSER)
    assert response.status == 404
    assert response.content_type == "text/html"
    assert "unknown-serial" in text
    assert "has not stamped it" in text
    response, text = await get(http, url, "application/json")
    assert response.status == 404
    assert response.content_type == "application/problem+json"


# -- a real browser ------------------------------------------------------------------------


@needs_chromium
async def test_in_chromium_pages_render_links_work_and_a_serial_is_searched(
    server: TestServer, trade: Trade
) -> None:
    serial = await traded(trade)
    census = await trade.league.census()
    base = str(server.make_url("")).rstrip("/")
    async with chromium() as browser:
        assert await browser.open(f"{base}/ledger") == f"{base}/ledger"
        assert await browser.js("document.title") == f"Ledger · {EVIL_NAME}"
        assert await browser.js("document.querySelector('.brand small').textContent") == EVIL_NAME
        runs = sum(len(title.finishes) for title in census.titles)
        assert await browser.js("document.querySelectorAll('#census td.run').length") == runs
        assert await browser.js(
            "[...document.querySelectorAll('#census td.run')]"
            ".every(run => run.querySelector('.bar > span'))"
        )
        # The bar of the run with a print stamped is drawn: wider than nothing.
        drawn = await browser.js(
            "[...document.querySelectorAll('#census td.run')].map(run => [run.dataset.title,"
            " run.dataset.finish, run.querySelector('.bar > span').getBoundingClientRect().width,"
            " run.querySelector('.bar').getBoundingClientRect().width])"
        )
        filled = {(title, finish): round(3 * part / whole) for title, finish, part, whole in drawn}
        assert filled.pop(("Model-A", "standard")) == 1  # a third of its run of 3
        assert set(filled.values()) == {0}
        await browser.screenshot("ledger")

        # The census links the run's latest print; the link goes where it says.
        link = await browser.js(
            "(() => { const a = document.querySelector("
            f"'#census a[href=\"/provenance/{serial}\"]'); a.click(); return a.textContent; }})()"
        )
        assert link == serial
        assert await browser.settled(f"{base}/ledger") == f"{base}/provenance/{serial}"
        assert await browser.js("document.querySelector('#serial').textContent") == serial
        verdict = await browser.js("document.querySelector('#verdict').textContent")
        assert verdict.startswith("✓ Every proof verified")
        assert await browser.js("document.querySelectorAll('#timeline li').length") == 5
        await browser.screenshot("provenance")

        # The nav's treasury link, then a serial searched through the form.
        await browser.js("document.querySelector('nav a[href=\"/treasury\"]').click()")
        assert await browser.settled(f"{base}/provenance/{serial}") == f"{base}/treasury"
        assert await browser.js("document.querySelectorAll('#supply tr.denomination').length") > 0
        await browser.screenshot("treasury")
        await browser.js(
            f"(() => {{ const box = document.querySelector('form.search input[name=serial]');"
            f" box.value = '{serial.lower()}'; box.form.requestSubmit(); }})()"
        )
        assert await browser.settled(f"{base}/treasury") == f"{base}/provenance/{serial}"
        assert await browser.js("document.querySelector('#serial').textContent") == serial

        # An unknown serial searched: the problem, rendered.
        await browser.js(
            "(() => { const box = document.querySelector('form.search input[name=serial]');"
            " box.value = 'CZ-MODEL-A-0003'; box.form.requestSubmit(); })()"
        )
        assert await browser.settled(f"{base}/provenance/{serial}") == (
            f"{base}/provenance/CZ-MODEL-A-0003"
        )
        problem = await browser.js("document.querySelector('#problem').textContent")
        assert "has not stamped it" in problem
        await browser.screenshot("unknown-serial")
