"""The trade story of issue 12 item 4, driven through ``cz`` as players would, against a real
all-in-one league: stamp, send, import (notarized), a double spend from an old save code refused
with its fraud proof kept, a second device, provenance; and every bad input one line, exit 2,
nothing lost (Book V.2, V.3, V.4, V.6, V.7, V.8)."""

from __future__ import annotations

from pathlib import Path

from game.economy.prints import Finish, Print
from ledger.fraud import FraudProof
from services.kernel.database import scratch_database
from tests.clients.conftest import Player, on_terminal, one_line_failure, serving, wallet_with
from tests.harness.league import InProcessLeague, init_league

PRINTS = (Print("Model-A"), Print("Tally", Finish.GILT), Print("Faithful"))


def serials(player: Player) -> dict[str, str]:
    """Title -> serial of every stamped print the player's wallet shows."""
    return {p["title"]: p["serial"] for p in player.json("collection")["prints"] if p["stamped"]}


# V.4, V.6, V.7, V.8; issue 12 item 4
def test_the_trade_story(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """A stamps three prints (a progress bar on a terminal), sends one to B, who imports it
    notarized; A sends the same print to C from an old save code: C's import is refused with
    the fraud proof kept; B's save code loads on a second device and shows the print; cz
    provenance shows the hop and the conflict, every proof verified."""
    a, b, c, b2 = players["A"], players["B"], players["C"], players["B2"]
    url = served.url
    code = wallet_with(tmp_path / "a-start.code", PRINTS, marks=40)
    loaded = a.json("load", str(code))
    assert (loaded["unstamped"], loaded["stamped"], loaded["marks"]) == (3, 0, 40)
    pinned = a.json("league", "set", url)
    assert pinned["first_use"] is True
    assert a.json("league", "set", url)["first_use"] is False

    status, shown = on_terminal(["stamp"], a.env())
    assert status == 0, shown
    assert "proof of work [" in shown
    assert "3/3" in shown
    assert "stamped 3 prints" in shown
    held = serials(a)
    assert set(held) == {"Model-A", "Tally", "Faithful"}
    assert held["Tally"].startswith("CZ-TALLY-")
    assert "there is no unstamped print" in one_line_failure(a.run("stamp"))

    for player in (b, c):
        player.strike(url)
        player.ok("card", "--out", str(tmp_path / f"{player.home.name}.card"))
    b_card, c_card = (tmp_path / f"{p.home.name}.card" for p in (b, c))
    b_address = b.json("key", "show")["address"]
    old_code = tmp_path / "a-old.code"
    a.ok("save", "--out", str(old_code))
    assert old_code.stat().st_mode & 0o777 == 0o600

    serial = held["Model-A"]
    slip_b = tmp_path / "to-b.slip"
    sent = a.json("send", "--to", str(b_card), serial, "--out", str(slip_b))
    assert sent == {"to": b_address, "serials": [serial], "file": str(slip_b)}
    assert serial not in serials(a).values()  # V.6: it left at the instant the slip was written
    imported = b.json("import", str(slip_b))
    assert imported["admitted"] == [serial]
    assert imported["notarized"] is True
    assert imported["recorded"] == 1
    assert serials(b) == {"Model-A": serial}

    # A goes back to the old save code and signs the same print to C.
    a.ok("load", "--replace", str(old_code))
    assert serials(a)["Model-A"] == serial
    slip_c = a.ok("send", "--to", str(c_card), serial)
    assert slip_c.startswith("-----BEGIN CZ SLIP-----")
    refusal = one_line_failure(c.run("import", "-", stdin=slip_c))
    assert "signed away twice at hop 1" in refusal
    assert "fraud proof is kept" in refusal
    kept = c.json("collection")
    assert kept["prints"] == []
    assert kept["fraud_proofs"] == 1
    proof = FraudProof.from_wire(kept["fraud_proof_list"][0]["proof"])
    assert proof.verify().to_text() == a.json("key", "show")["key"]  # A's signatures convict A

    # B's save code on a second device.
    b_code = b.ok("save")
    assert b2.json("load", "-", stdin=b_code)["address"] == b_address
    assert serials(b2) == {"Model-A": serial}
    shown_text = b2.ok("collection")
    assert f"✓ Model-A (standard) {serial}" in shown_text

    life = b2.json("provenance", serial)
    a_address = a.json("key", "show")["address"]
    assert life["verified"] is True
    assert life["stamped_to"] == a_address
    assert [(h["hop"], h["from"], h["to"]) for h in life["hops"]] == [(1, a_address, b_address)]
    (conflict,) = life["conflicts"]
    assert (conflict["hop"], conflict["convicted"]) == (1, a_address)
    assert life["holder"] == b_address
    text = b2.ok("provenance", serial.lower())
    assert "every signature and proof verified here" in text
    assert f"hop 1: {a_address} → {b_address}" in text


# V.3, V.6, V.7; issue 12 item 4 (bad input)
def test_bad_input_is_one_line_and_loses_nothing(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """A wrong passphrase, a truncated save code, a slip for someone else, a slip with one byte
    changed: each one line, exit 2, and the wallet's file byte for byte what it was."""
    a, b, c = players["A"], players["B"], players["C"]
    a.ok("load", str(wallet_with(tmp_path / "a.code", PRINTS[:2])))
    a.ok("league", "set", served.url)
    a.ok("stamp")
    b.strike(served.url)
    c.strike(served.url)
    b.ok("card", "--out", str(tmp_path / "b.card"))
    first, second = sorted(serials(a).values())
    slip = a.ok("send", "--to", str(tmp_path / "b.card"), first)
    code = a.ok("save")
    before = {p.home: p.wallet_file.read_bytes() for p in (a, b, c)}

    assert "does not open with this passphrase" in one_line_failure(
        a.run("collection", passphrase="wrong horse")
    )
    assert "does not open" in one_line_failure(
        b.run("load", "--replace", "-", stdin=code, passphrase="wrong horse")
    )
    truncated = "\n".join(code.splitlines()[:3]) + "\n"
    assert "cut short" in one_line_failure(b.run("load", "--replace", "-", stdin=truncated))
    assert "not yours to take" in one_line_failure(c.run("import", "-", stdin=slip))
    lines = slip.splitlines()
    middle = lines[3]
    flipped = middle[:20] + ("A" if middle[20] != "A" else "B") + middle[21:]
    changed = "\n".join([*lines[:3], flipped, *lines[4:]]) + "\n"
    one_line_failure(b.run("import", "-", stdin=changed))
    one_line_failure(b.run("import", "-", stdin=slip[:-40]))
    assert "holds no stamped print" in one_line_failure(
        a.run("send", "--to", str(tmp_path / "b.card"), first)
    )
    nowhere = str(tmp_path / "no-such-dir" / "gift.slip")
    assert "No such file" in one_line_failure(
        a.run("send", "--to", str(tmp_path / "b.card"), second, "--out", nowhere)
    )  # the slip could not be written, so the print never left
    for player in (a, b, c):
        assert player.wallet_file.read_bytes() == before[player.home], player.home
    # and the good slip still imports, once
    assert b.json("import", "-", stdin=slip)["admitted"] == [first]
    assert "already in this wallet" in one_line_failure(b.run("import", "-", stdin=slip))
    assert second in serials(a).values()


# V.2 ("no server permission", the root pinned on first use); issue 12 item 3
def test_a_league_gone_or_changed_is_refused_and_nothing_is_lost(
    league_env: dict[str, str], players: dict[str, Player], tmp_path: Path,
    server_url: str,
) -> None:
    """With the pinned league stopped, stamp, import and provenance say it did not answer
    (one line, nothing changes) and `import --offline` admits on offline verification alone
    (L-15). Then another league at the pinned URL (served on its port) and another league at
    another URL: league set, stamp and provenance refuse on one line naming the pinned root
    key (L-13); the wallets are unchanged."""
    a, b = players["A"], players["B"]
    a.ok("load", str(wallet_with(tmp_path / "a.code", PRINTS)))
    with serving(league_env) as first:
        url = first.url
        port = int(url.rsplit(":", 1)[1])
        pinned = a.json("league", "set", url)
        (stamped, *_) = a.json("stamp")["stamped"]
        b.strike(url)
        b.ok("card", "--out", str(tmp_path / "b.card"))
        slip = a.ok("send", "--to", str(tmp_path / "b.card"), stamped["serial"])
    before = {p.home: p.wallet_file.read_bytes() for p in (a, b)}
    for player, args in (
        (a, ("stamp",)), (b, ("import", "-")), (b, ("provenance", stamped["serial"])),
    ):
        assert "did not answer" in one_line_failure(player.run(*args, stdin=slip))
    assert {p.home: p.wallet_file.read_bytes() for p in (a, b)} == before
    offline = b.json("import", "--offline", "-", stdin=slip)
    assert offline["admitted"] == [stamped["serial"]]
    assert offline["notarized"] is False
    assert stamped["serial"] in b.ok("collection")

    before = b.wallet_file.read_bytes()
    with scratch_database(server_url, "cz_other") as other_db:
        other = init_league(tmp_path / "other", other_db)
        with serving(other, port) as impostor:
            assert impostor.url == url
            for args in (("league", "set", url), ("stamp",), ("provenance", "CZ-MODEL-A-0001")):
                refusal = one_line_failure(b.run(*args))
                assert refusal.startswith("cz: REFUSED"), refusal
                assert pinned["root"] in refusal
        with serving(other) as elsewhere:
            refusal = one_line_failure(b.run("league", "set", elsewhere.url))
            assert "REFUSED" in refusal
            assert pinned["root"] in refusal
    assert b.wallet_file.read_bytes() == before
