"""The pages' templates (``clients/web/templates``, Jinja2, every value escaped) and the
Topbar every page carries, read from the wallet's public summary (no passphrase)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web

from clients.cz_public import current
from clients.wallet import WalletHome

TEMPLATES = Path(__file__).parent / "templates"


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def topbar(unlocked: bool) -> dict[str, Any]:
    """The Topbar: the address, the league set and pinned, whether the wallet is unlocked."""
    home = WalletHome.default()
    summary = current(home)
    league = None
    address = None
    if summary is not None:
        address = summary["address"]
        league = summary["collection"].get("league")
    return {
        "exists": home.exists(),
        "address": address,
        "league": league,
        "unlocked": unlocked,
    }


def page(
    template: str, *, root: str, unlocked: bool, status: int = 200, **context: Any
) -> web.Response:
    """``template`` rendered with ``context`` and the Topbar; ``root`` is the path every link
    and form of the launch begins with (its secret)."""
    text = environment().get_template(template).render(top=topbar(unlocked), root=root, **context)
    return web.Response(status=status, text=text, content_type="text/html", charset="utf-8")
