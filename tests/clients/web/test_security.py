"""``cz web`` is safe by construction (clients/web/security.py): nothing answers without this
launch's secret (given once in the URL, then an HttpOnly, SameSite=Strict cookie), a request
naming another host is refused (DNS rebinding), a request that changes anything must come from
the page itself (Origin: no cross-site form, no script of another port, strikes or signs
anything), and every answer carries a strict Content-Security-Policy that the pages keep (no
inline script or style). Over real HTTP against the application in this process."""

from __future__ import annotations

import re

import aiohttp

from clients.wallet import WalletHome
from clients.web.launch import Web
from clients.web.security import CSP
from tests.clients.web.conftest import base, cookie, same_origin

PASSPHRASE = "correct horse battery staple"


async def test_nothing_answers_without_the_launch_key(
    launch: Web, http: aiohttp.ClientSession
) -> None:
    """No key, a wrong key, a wrong cookie: refused (403). The launch URL's key becomes an
    HttpOnly, SameSite=Strict cookie and the browser is sent to the page without it; with the
    cookie, pages and static files answer, each with the strict CSP."""
    guard = launch.guard
    for path in ("/", "/vault", "/static/web.js", f"/?key={guard.secret[:-1]}x"):
        async with http.get(base(guard) + path, allow_redirects=False) as response:
            assert response.status == 403, path
            assert "open the URL cz web printed" in await response.text() or "key" in path
    wrong = {"Cookie": f"{guard.cookie}=not-the-secret"}
    async with http.get(base(guard) + "/topbar", headers=wrong) as response:
        assert response.status == 403

    async with http.get(
        base(guard) + f"/topbar?key={guard.secret}", allow_redirects=False
    ) as response:
        assert response.status == 303
        assert response.headers["Location"] == "/topbar"
        set_cookie = response.headers["Set-Cookie"]
    assert set_cookie.startswith(f"{guard.cookie}={guard.secret};")
    assert "HttpOnly" in set_cookie
    assert "SameSite=Strict" in set_cookie

    for path in ("/topbar", "/exchange", "/drill", "/play", "/static/web.js", "/drill.css"):
        async with http.get(base(guard) + path, headers=cookie(guard)) as response:
            assert response.status == 200, path
            assert response.headers["Content-Security-Policy"] == CSP
            assert response.headers["X-Frame-Options"] == "DENY"
            text = await response.text()
        if response.content_type == "text/html":
            # Every script from this server, none inline; no inline style or handler.
            scripts = re.findall(r"<script\b[^>]*>", text)
            assert scripts == ['<script src="/static/web.js" defer>'], path
            assert not re.search(r"\sstyle=|\son[a-z]+=|javascript:", text), path
    assert "script-src 'self'" in CSP
    assert "unsafe" not in CSP
    assert "frame-ancestors 'none'" in CSP
    assert "form-action 'self'" in CSP


async def test_a_request_naming_another_host_is_refused(
    launch: Web, http: aiohttp.ClientSession
) -> None:
    """DNS rebinding: a page at evil.example rebinds its name to 127.0.0.1; its requests name
    evil.example as the Host, and are refused (421) even with the cookie."""
    guard = launch.guard
    for host in (f"evil.example:{guard.port}", "127.0.0.1", f"127.0.0.1:{guard.port + 1}"):
        async with http.get(
            base(guard) + "/topbar", headers={**cookie(guard), "Host": host}
        ) as response:
            assert response.status == 421, host
    async with http.get(
        base(guard) + "/topbar", headers={**cookie(guard), "Host": f"localhost:{guard.port}"}
    ) as response:
        assert response.status == 200


async def test_a_cross_site_request_changes_nothing(
    launch: Web, http: aiohttp.ClientSession
) -> None:
    """Exchange → Strike the key, posted with the cookie (a browser sends it to any port of
    127.0.0.1: same site) but from another origin, with no Origin, or marked cross-site by the
    browser: refused, and no wallet is struck. From the page itself it is struck. A key in a
    POST's URL is refused too, and a confirmation nobody was shown signs nothing."""
    guard = launch.guard
    form = {"passphrase": PASSPHRASE, "again": PASSPHRASE}
    url = base(guard) + "/exchange/strike"
    home = WalletHome.default()
    for origin, site in (
        ("http://evil.example", "cross-site"),
        (f"http://127.0.0.1:{guard.port + 1}", "same-site"),
        ("null", "cross-site"),
        (None, None),
        (base(guard), "same-site"),
    ):
        headers = dict(cookie(guard))
        if origin is not None:
            headers["Origin"] = origin
        if site is not None:
            headers["Sec-Fetch-Site"] = site
        async with http.post(url, data=form, headers=headers) as response:
            assert response.status == 403, origin
        assert not home.exists(), origin
    same = same_origin(guard)
    async with http.post(url + f"?key={guard.secret}", data=form, headers=same) as response:
        assert response.status == 403
    async with http.post(base(guard) + "/confirm/never-shown", data={}, headers=same) as response:
        assert response.status == 404
        assert "nothing was signed" in await response.text()
    assert not home.exists()

    async with http.post(url, data=form, headers=same, allow_redirects=False) as response:
        assert response.status == 200, await response.text()
    assert home.exists()
    assert launch.passphrase == PASSPHRASE  # unlocked in this process, nowhere else
