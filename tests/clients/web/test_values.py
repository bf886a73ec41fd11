"""A form's values never become options of the ``cz`` command a page runs
(clients/web/values.py): an item ``--to=OTHER.card`` (once sent to another key than the
confirmation named), ``--out=PATH`` (once overwrote a file), a provenance serial ``--help``
(once ran cz's help), a store title, number or finish that is not one: each refused (400,
saying which value) before any confirmation is made or command run; a good value's command
puts ``--`` before its positional arguments. Over real HTTP against the application here."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from clients.web.calls import call
from clients.web.launch import Web
from tests.clients.web.conftest import base, same_origin

PASSPHRASE = "correct horse battery staple"


async def test_a_value_that_is_not_one_runs_nothing(
    launch: Web, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    url, headers = base(launch.guard), same_origin(launch.guard)

    async def post(path: str, form: object) -> tuple[int, str]:
        async with http.post(
            url + path, data=form, headers=headers, allow_redirects=False
        ) as response:
            return response.status, await response.text()

    form = {"passphrase": PASSPHRASE, "again": PASSPHRASE}
    assert (await post("/exchange/strike", form))[0] == 303
    card = call(["card", "--json"]).json()["card"]
    other = tmp_path / "other.card"
    other.write_text(card)
    victim = tmp_path / "victim.txt"
    victim.write_text("kept\n")
    for item in (f"--to={other}", f"--out={victim}", "-h", "CZ-TALLY-0001 --json"):
        status, page = await post(
            "/exchange/send", [("card", card), ("item", "CZ-TALLY-0001"), ("item", item)]
        )
        assert status == 400, (item, status)
        assert "an item" in page
        assert "nothing was run" in page
    assert launch.confirms == {}
    assert victim.read_text() == "kept\n"

    async with http.get(url + "/provenance", params={"serial": "--help"}) as response:
        assert response.status == 400
        page = await response.text()
    assert "usage:" not in page
    assert "is not a serial" in page

    for path, bad in (
        ("/vault/store", {"what": "single", "title": "--help"}),
        ("/vault/store", {"what": "upgrade", "index": "-1", "finish": "gilt"}),
        ("/vault/store", {"what": "upgrade", "index": "1", "finish": "--json"}),
        ("/vault/store", {"what": "--help"}),
        ("/vault/buy", {"title": "--help"}),
        ("/vault/buy", {"upgrade": "--json", "finish": "gilt"}),
        ("/vault/buy", {"upgrade": "CZ-TALLY-0001", "finish": "misprint"}),
        ("/vault/claim", {"marks": "-5"}),
        ("/topbar/league", {"url": "--help"}),
        ("/topbar/league", {"url": "-h"}),
    ):
        status, page = await post(path, bad)
        assert status == 400, (path, bad, page)
        assert "nothing was run" in page
    assert launch.confirms == {}

    # A good value: the confirmation's command has "--" before the items.
    status, _ = await post("/exchange/send", [("card", card), ("item", "cz-tally-0001")])
    assert status == 303
    (confirm,) = launch.confirms.values()
    assert confirm.argv[-2:] == ("--", "CZ-TALLY-0001")
    assert confirm.argv.count("--") == 1
