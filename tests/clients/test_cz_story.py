"""The whole story from play: a new player strikes a key on a terminal, plays
the campaign's tables with ``cz play --auto`` until a Registrar's table pays prints, stamps
them (a progress bar on a terminal); then trades a print won at the table (the slip, the print
leaving at once, the import notarized), is caught signing it away twice from an old save code
(the fraud proof kept), and a second device of the receiver, loaded from a save code, trades
it on; its provenance shows both hops and the conflict, every proof checked. ``cz`` runs in
this process (a pseudo-terminal process where it asks) against a real all-in-one league on
real PostgreSQL (Book IV.1-IV.5, V.2-V.8).

The trade story that tests/clients/test_cz_trade.py told from loaded prints is folded into
this one; bad input and a changed league are test_cz_trade.py's other tests, claiming notes
and buying test_cz_notes.py's (and test_readme.py's, from these same tables)."""

from __future__ import annotations

from pathlib import Path

from ledger.catalog import ARCHIVE_SETS, CardSet
from ledger.fraud import FraudProof
from tests.clients.conftest import (
    PASSPHRASE,
    Player,
    on_terminal,
    one_line_failure,
    serving,
)

#: The campaign's first five tables, each ``cz play --auto VI --seed 6``: the client's Chair VI
#: wins the clerks' tables 1 to 3 (the market seal breaks, IV.1), the Assessor's (IV.2) and the
#: Lettered Registrar's, whose first settlement strikes the set's seven prints (IV.5). Found by
#: experiment (seeded tables and AIs: the same seed, the same table); about a second each.
PLAY = ("play", "--auto", "VI", "--seed", "6")
PATH = [
    ("clerk-1", "win"),
    ("clerk-2", "win"),
    ("clerk-3", "win"),
    ("assessor", "win"),
    ("registrar-lettered", "win"),
]
#: M10 per clerk's table, M25 at the Assessor's, M100 for a first win at a Registrar's.
EARNED = 3 * 10 + 25 + 100
LETTERED = sorted(c.name for c in ARCHIVE_SETS[CardSet.LETTERED])


# IV.1-IV.5, V.2-V.8
def test_from_the_tables_to_a_notarized_trade(
    league_env: dict[str, str], players: dict[str, Player], tmp_path: Path
) -> None:
    a, b, c, b2 = (players[n] for n in ("A", "B", "C", "B2"))
    for player in players.values():
        player.workdir = tmp_path

    # V.2: A strikes a key on a terminal, reads the warning and types the passphrase twice.
    typing = {k: v for k, v in a.env().items() if k != "CZ_PASSPHRASE"}
    status, shown = on_terminal(
        ["key", "strike"],
        typing,
        [("choose a passphrase: ", PASSPHRASE), ("the same passphrase again: ", PASSPHRASE)],
    )
    assert status == 0, shown
    assert "Lose the passphrase, lose the" in shown
    a_key = a.json("key", "show")
    assert f"struck {a_key['address']}" in shown

    with serving(league_env) as served:
        url = served.url
        pinned = a.json("league", "set", url)
        assert pinned["first_use"] is True
        assert a.json("league", "set", url)["first_use"] is False

        # IV.1-IV.5: tables until a Registrar's pays prints.
        assert [(t["venue"], t["verdict"]) for t in (a.json(*PLAY) for _ in PATH)] == PATH
        held = a.json("collection")
        assert (held["marks"], held["unstamped"], held["stamped"]) == (EARNED, 7, 0)
        assert sorted(p["title"] for p in held["prints"]) == LETTERED
        assert [p["finish"] for p in held["prints"]].count("holofoil") == 1
        assert held["campaign"]["registrar-lettered"] == {"wins": 1, "losses": 0, "balances": 0}

        # V.4: stamping, a progress bar on the terminal; each print gets its serial.
        status, shown = on_terminal(["stamp"], a.env())
        assert status == 0, shown
        assert "proof of work [" in shown
        assert "7/7" in shown
        assert "stamped 7 prints" in shown
        assert "there is no unstamped print" in one_line_failure(a.run("stamp"))

        # Every print stamped, every mark kept (marks to notes and a single bought with change
        # are test_cz_notes.py's; test_readme.py plays these same tables to them).
        held = a.json("collection")
        assert (held["marks"], held["unstamped"], held["stamped"]) == (EARNED, 0, 7)
        won = {p["serial"]: p["title"] for p in held["prints"]}
        assert sorted(won.values()) == LETTERED

        # V.6, V.7: B and C strike keys and hand A their cards; A saves, then sends B a print
        # won at the Registrar's table; B imports it, notarized.
        b_address, c_address = b.strike(url), c.strike(url)
        for player in (b, c):
            player.ok("card", "--out", f"{player.home.name}.card")
        b_card, c_card = (f"{p.home.name}.card" for p in (b, c))
        a.ok("save", "--out", "a-old.code")
        assert (tmp_path / "a-old.code").stat().st_mode & 0o777 == 0o600
        serial = min(won)
        finish = {p["serial"]: p["finish"] for p in held["prints"]}[serial]
        sent = a.json("send", "--to", b_card, serial, "--out", "to-b.slip")
        assert sent == {"to": b_address, "serials": [serial], "file": "to-b.slip"}
        # V.6: the print left at the instant the slip was written.
        assert serial not in {p["serial"] for p in a.json("collection")["prints"]}
        imported = b.json("import", "to-b.slip")
        assert (imported["admitted"], imported["notarized"], imported["recorded"]) == (
            [serial],
            True,
            1,
        )
        assert [p["serial"] for p in b.json("collection")["prints"]] == [serial]

        # A signs the same print to C from the old save code: refused, the fraud proof kept.
        a.ok("load", "--replace", "a-old.code")
        # The notary records the print gone; only --offline signs it again (L-23).
        assert "no longer holds it" in one_line_failure(
            a.run("send", "--to", c_card, serial, "--out", "to-c.slip")
        )
        a.ok("send", "--offline", "--to", c_card, serial, "--out", "to-c.slip")
        refusal = one_line_failure(c.run("import", "to-c.slip"))
        assert f"{serial} was signed away twice at hop 1" in refusal
        assert "fraud proof is kept" in refusal
        assert c.json("collection")["prints"] == []

        # V.3: B's save code on a second device shows the print; that device sends it on to
        # C, who now holds it rightly, at hop 2.
        b.ok("save", "--out", "b.code")
        device = b2.json("load", "-", stdin=(tmp_path / "b.code").read_text())
        assert (device["address"], device["stamped"], device["unstamped"], device["marks"]) == (
            b_address,
            1,
            0,
            0,
        )
        assert f"✓ {won[serial]} ({finish}) {serial}" in b2.ok("collection")
        b2.ok("send", "--to", c_card, serial, "--out", "to-c-rightly.slip")
        assert c.json("import", "to-c-rightly.slip")["admitted"] == [serial]
        kept = c.json("collection")
        assert [p["serial"] for p in kept["prints"]] == [serial]
        assert kept["fraud_proofs"] == 1
        assert "1 fraud proof kept" in c.ok("collection")  # not "1 fraud proofs"
        proof = FraudProof.from_wire(kept["fraud_proof_list"][0]["proof"])
        assert proof.verify().to_text() == a_key["key"]  # A's own signatures convict A

        # V.8: the print's life, every proof checked on C's machine: both hops, the conflict.
        life = c.json("provenance", serial)
        assert (life["verified"], life["stamped_to"], life["holder"]) == (
            True,
            a_key["address"],
            c_address,
        )
        assert [(h["hop"], h["from"], h["to"]) for h in life["hops"]] == [
            (1, a_key["address"], b_address),
            (2, b_address, c_address),
        ]
        (conflict,) = life["conflicts"]
        assert (conflict["hop"], conflict["convicted"]) == (1, a_key["address"])
        assert conflict["says"].endswith(f"to {b_address} and to {c_address}")
        text = c.ok("provenance", serial.lower())
        assert "every signature and proof verified here" in text
        assert f"hop 1: {a_key['address']} → {b_address}" in text
