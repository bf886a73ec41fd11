"""``cz web`` is safe by construction (clients/web/security.py): nothing answers without this
launch's secret as the first segment of its path (never a cookie, never a query), a request
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
from tests.clients.web.conftest import base, same_origin

PASSPHRASE = "correct horse battery staple"


async def test_nothing_answers_without_the_path_secret(
    launch: Web, http: aiohttp.ClientSession
) -> None:
    """The secret is a capability in the path (``/SECRET/…``), never a cookie: a browser
    sends 127.0.0.1's cookies to every port of it, so a listener on another port would get a
    cookie's secret. No path secret, a wrong one, the old cookie, the secret in a query: all
    refused (403), and no answer ever sets a cookie. Under the secret, pages answer with the
    strict CSP and Referrer-Policy same-origin, and every link and form of a page stays
    under it (static files alone are public)."""
    guard = launch.guard
    origin, root = f"http://127.0.0.1:{guard.port}", f"/{guard.secret}"
    old_cookie = {"Cookie": f"cz_web_{guard.port}={guard.secret}"}
    for path, headers in (
        ("/", {}),
        ("/vault", {}),
        ("/vault", old_cookie),
        ("/topbar", old_cookie),
        (f"/?key={guard.secret}", {}),
        (f"/topbar?key={guard.secret}", {}),
        (f"{root}/topbar?key={guard.secret}", {}),
        (f"/{guard.secret[:-1]}/topbar", {}),
        (f"{root}x/topbar", {}),
        (f"/topbar/{guard.secret}", {}),
    ):
        async with http.get(origin + path, headers=headers, allow_redirects=False) as response:
            assert response.status == 403, path
            assert "Set-Cookie" not in response.headers, path
    async with http.post(
        origin + "/lock",
        headers={**old_cookie, "Origin": origin, "Sec-Fetch-Site": "same-origin"},
        allow_redirects=False,
    ) as response:
        assert response.status == 403

    for path in ("/topbar", "/exchange", "/drill", "/play", "/vault", "/drill.css"):
        async with http.get(origin + root + path, allow_redirects=False) as response:
            assert response.status == 200, path
            assert "Set-Cookie" not in response.headers, path
            assert response.headers["Content-Security-Policy"] == CSP
            assert response.headers["X-Frame-Options"] == "DENY"
            assert response.headers["Referrer-Policy"] == "same-origin"
            text = await response.text()
        if response.content_type == "text/html":
            # Every script from this server, none inline; no inline style or handler.
            scripts = re.findall(r"<script\b[^>]*>", text)
            assert scripts == ['<script src="/static/web.js" defer>'], path
            assert not re.search(r"\sstyle=|\son[a-z]+=|javascript:", text), path
            for target in re.findall(r'(?:href|action)="([^"]*)"', text):
                assert target.startswith((root + "/", "/static/")), (path, target)
    async with http.get(origin + "/static/web.js") as response:
        assert response.status == 200  # public: nothing of the player's
    assert "script-src 'self'" in CSP
    assert "unsafe" not in CSP
    assert "frame-ancestors 'none'" in CSP
    assert "form-action 'self'" in CSP


async def test_no_redirect_leaves_this_origin(launch: Web, http: aiohttp.ClientSession) -> None:
    """A path that looks like another host (``//localhost:PORT/x``, once bounced to
    ``////localhost…`` with the old launch key) is answered without a redirect, and the
    Unlock form's ``next`` sends the browser only to a page of this launch."""
    guard = launch.guard
    origin, root = f"http://127.0.0.1:{guard.port}", f"/{guard.secret}"
    for path in (
        f"//localhost:{guard.port + 1}/x?key={guard.secret}",
        f"{root}//localhost:{guard.port + 1}/x",
    ):
        async with http.get(origin + path, allow_redirects=False) as response:
            assert response.status in (403, 404), path
            assert "Location" not in response.headers, path
    phrase = {"passphrase": PASSPHRASE, "again": PASSPHRASE}
    same = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
    async with http.post(origin + root + "/exchange/strike", data=phrase, headers=same) as r:
        assert r.status == 200
    for nxt in (
        f"//localhost:{guard.port + 1}/x",
        "/\\evil.example/",
        "/\t/evil.example/",
        "http://evil.example/",
    ):
        async with http.post(
            origin + root + "/unlock",
            data={"passphrase": PASSPHRASE, "next": nxt},
            headers=same,
            allow_redirects=False,
        ) as response:
            assert response.status == 303, nxt
            assert response.headers["Location"] == root + "/", nxt


async def test_a_request_naming_another_host_is_refused(
    launch: Web, http: aiohttp.ClientSession
) -> None:
    """DNS rebinding: a page at evil.example rebinds its name to 127.0.0.1; its requests name
    evil.example as the Host, and are refused (421) even under the secret."""
    guard = launch.guard
    for host in (f"evil.example:{guard.port}", "127.0.0.1", f"127.0.0.1:{guard.port + 1}"):
        async with http.get(base(guard) + "/topbar", headers={"Host": host}) as response:
            assert response.status == 421, host
    async with http.get(
        base(guard) + "/topbar", headers={"Host": f"localhost:{guard.port}"}
    ) as response:
        assert response.status == 200


async def test_a_cross_site_request_changes_nothing(
    launch: Web, http: aiohttp.ClientSession
) -> None:
    """Exchange → Strike the key, posted to the right path (as if the secret had leaked) but
    from another origin, with no Origin, or marked cross-site by the browser: refused, and no
    wallet is struck. From the page itself it is struck. A key in a
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
        (f"http://127.0.0.1:{guard.port}", "same-site"),
    ):
        headers: dict[str, str] = {}
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
        assert response.status == 303, await response.text()  # to its outcome
    assert home.exists()
    assert launch.passphrase == PASSPHRASE  # unlocked in this process, nowhere else
