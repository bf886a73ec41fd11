"""``cz league set URL`` with a URL a person types: without a scheme it is taken as
``http://`` (and said so), one that names no league's server is refused in one line, and a
league that cannot be reached is one line saying what to check (nothing listening: is
``league serve`` running there; https against plain http: TLS), never a traceback."""

from __future__ import annotations

import pytest

from tests.clients.conftest import Player, one_line_failure
from tests.harness.league import InProcessLeague
from tests.harness.ports import free_port


def test_a_url_without_a_scheme_is_taken_as_http(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """``cz league set 127.0.0.1:PORT`` (the address as ``league serve`` prints it, no
    scheme) pins the league at ``http://127.0.0.1:PORT`` and says it took it so."""
    a = players["A"]
    a.strike()
    bare = served.url.removeprefix("http://")
    shown = a.ok("league", "set", bare)
    assert f"{bare} has no scheme: taken as http://" in shown
    again = a.json("league", "set", served.url)
    assert again["url"] == served.url
    assert again["first_use"] is False


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1:8080", "http://:8080", "127.0.0.1:99999", "http://"]
)
def test_a_url_naming_no_server_is_refused_in_one_line(
    players: dict[str, Player], url: str
) -> None:
    """A URL of another scheme, without a host, or with no valid port: one line, exit 2."""
    a = players["A"]
    a.strike()
    assert "is not a league's URL" in one_line_failure(a.run("league", "set", url))


def test_nothing_listening_says_to_check_league_serve(players: dict[str, Player]) -> None:
    """A port nobody listens on: one line naming the URL and asking whether ``league
    serve`` runs there (not aiohttp's connection error)."""
    a = players["A"]
    a.strike()
    url = f"http://127.0.0.1:{free_port()}"
    line = one_line_failure(a.run("league", "set", url))
    assert f"{url} did not answer: is `league serve` running there" in line


def test_https_against_plain_http_names_tls(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """``https://`` to the league's plain-HTTP port: one line naming TLS and http://."""
    a = players["A"]
    a.strike()
    url = served.url.replace("http://", "https://")
    line = one_line_failure(a.run("league", "set", url))
    assert f"TLS failed at {url}" in line
    assert "plain http://" in line
