"""``cz buy`` when the single is not delivered, from the client's side against a served league:
an exhausted run refunds the very notes paid, back in the wallet; a purchase paid with a note
already signed to someone else is rejected, the fraud proof kept (Book V.5, V.7). The wallet's
marks and notes are exact after each."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from game.window.economy.prints import Print
from ledger.address import address_of
from ledger.fraud import FraudProof
from services.kernel.founding import create_league
from services.kernel.settings import LeagueSettings
from tests.clients.conftest import Player, one_line_failure, serving, wallet_with
from tests.harness.founding import SMALL_RUNS, TEST_POLICIES
from tests.harness.league import InProcessLeague
from tests.harness.served import clean_env


@pytest.fixture
def small(tmp_path: Path, database_url: str) -> Iterator[InProcessLeague]:
    """A league whose every run is tiny (3 standard prints a title), served."""
    home = tmp_path / "league"
    create_league(
        LeagueSettings(data_dir=home, database_url=database_url),
        print_runs=SMALL_RUNS,
        policies=TEST_POLICIES,
    )
    with serving({**clean_env(), "LEAGUE_HOME": str(home), "DATABASE_URL": database_url}) as server:
        yield server


def notes(player: Player) -> dict[str, int]:
    """Serial -> denomination of every note the wallet holds."""
    return {n["serial"]: n["denomination"] for n in player.json("collection")["note_list"]}


# V.5
def test_an_exhausted_run_refunds_the_notes_paid(small: InProcessLeague, tmp_path: Path) -> None:
    """Tally's standard run (3) stamped out by the player's own prints: cz buy Tally is
    refunded, the notes paid issued back to the buyer and held again, nothing else changed;
    the refunded notes then buy another single."""
    a = Player(tmp_path / "a", workdir=tmp_path)
    a.ok("load", str(wallet_with(tmp_path / "a.code", [Print("Tally")] * 3, marks=60)))
    a.ok("league", "set", small.url)
    assert [s["serial"] for s in a.json("stamp")["stamped"]] == [
        "CZ-TALLY-0001",
        "CZ-TALLY-0002",
        "CZ-TALLY-0003",
    ]
    claimed = a.json("notes", "claim")
    held = {n["serial"]: n["denomination"] for n in claimed["notes"]}
    assert sorted(held.values()) == [25, 25]

    (refunded,) = a.json("buy", "Tally")["purchases"]
    assert (refunded["outcome"], refunded["serial"], refunded["change"]) == ("refunded", None, [])
    assert "exhausted" in refunded["reason"]
    assert sorted(refunded["paid_notes"]) == sorted(held)
    assert sorted(n["serial"] for n in refunded["refund"]) == sorted(held)
    after = a.json("collection")
    assert {n["serial"]: n["denomination"] for n in after["note_list"]} == held  # the very notes
    assert (after["marks"], after["stamped"], after["pending_buy"]) == (10, 3, None)
    text = a.ok("buy", "Tally")  # a person is told the same, on exit status 0: notes back
    assert text.startswith("Tally: refunded, price M30, paid M50 with 2 notes (M25 + M25)")
    assert text.count("  refund M25 CZ-M25-") == 2

    (bought,) = a.json("buy", "Escrow")["purchases"]  # the refunded notes pay
    assert (bought["outcome"], bought["serial"]) == ("delivered", "CZ-ESCROW-0001")
    assert sorted(n["denomination"] for n in bought["change"]) == [5, 5, 5, 5]
    assert sorted(notes(a).values()) == [5, 5, 5, 5]


# V.5, V.7
def test_notes_signed_elsewhere_first_reject_the_purchase(
    small: InProcessLeague, tmp_path: Path
) -> None:
    """A claims two M25 notes, saves, signs both to B (notarized); from the old save code A
    pays a Tally with them: the notary has B's hops first, so the purchase is rejected on one
    line, exit 2, the fraud proofs that convict A kept in A's wallet, nothing delivered, the
    marks untouched; B's notes are B's."""
    a = Player(tmp_path / "a", workdir=tmp_path)
    b = Player(tmp_path / "b", workdir=tmp_path)
    a_address = a.json("load", str(wallet_with(tmp_path / "a.code", [], marks=60)))["address"]
    a.ok("league", "set", small.url)
    b.strike(small.url)
    b.ok("card", "--out", "b.card")
    a.ok("notes", "claim")
    held = notes(a)
    assert sorted(held.values()) == [25, 25]
    a.ok("save", "--out", "old.code")
    a.ok("send", "--to", "b.card", *sorted(held), "--out", "notes.slip")
    assert b.json("import", "notes.slip")["recorded"] == 2
    a.ok("load", "--replace", "old.code")

    refusal = one_line_failure(a.run("buy", "Tally"))
    assert "was rejected" in refusal
    assert "was signed away twice at hop 1" in refusal
    assert "fraud proofs are kept in your wallet" in refusal
    after = a.json("collection")
    assert (after["note_list"], after["marks"], after["prints"], after["pending_buy"]) == (
        [],
        10,
        [],
        None,
    )
    proofs = [FraudProof.from_wire(p["proof"]) for p in after["fraud_proof_list"]]
    assert proofs
    assert {p.first.serial for p in proofs} <= set(held)
    assert {address_of(p.verify()) for p in proofs} == {a_address}  # A's signatures convict A
    assert notes(b) == held


@pytest.fixture
def generous(tmp_path: Path, database_url: str) -> Iterator[InProcessLeague]:
    """A league whose faucet gives 200 marks a key a day, served."""
    home = tmp_path / "league"
    policies = TEST_POLICIES.model_copy(update={"faucet_marks_per_day": 200})
    create_league(
        LeagueSettings(data_dir=home, database_url=database_url),
        print_runs=SMALL_RUNS,
        policies=policies,
    )
    with serving({**clean_env(), "LEAGUE_HOME": str(home), "DATABASE_URL": database_url}) as server:
        yield server


# V.5, V.7, L-05, L-21
def test_an_honest_note_of_a_rejected_purchase_stays_bound_to_the_treasury(
    generous: InProcessLeague, tmp_path: Path
) -> None:
    """A pays a Tally with two M25 notes, one of them signed to B first from a newer wallet:
    the purchase is rejected with the proof convicting A of that one note; the other note was
    never recorded anywhere, so it is still A's, but A's hop to the treasury is signed (and in
    the treasury's log): it is kept bound to the treasury, cannot be sent to anyone (that
    would be a second endorsement at its hop), and pays the next purchase as the very chain
    signed."""
    a = Player(tmp_path / "a", workdir=tmp_path)
    b = Player(tmp_path / "b", workdir=tmp_path)
    a.ok("load", str(wallet_with(tmp_path / "a.code", [], marks=110)))
    a.ok("league", "set", generous.url)
    b.strike(generous.url)
    b.ok("card", "--out", "b.card")
    a.ok("notes", "claim", "50")
    first, second = sorted(notes(a))
    a.ok("save", "--out", "old.code")
    a.ok("send", "--to", "b.card", first, "--out", "one.slip")
    assert b.json("import", "one.slip")["recorded"] == 1
    a.ok("load", "--replace", "old.code")

    refusal = one_line_failure(a.run("buy", "Tally"))
    assert "was rejected" in refusal
    after = a.json("collection")
    assert after["note_list"] == []
    assert after["bound_notes"] == [{"serial": second, "denomination": 25}]
    assert {FraudProof.from_wire(p["proof"]).first.serial for p in after["fraud_proof_list"]} == {
        first
    }
    assert "bound to the treasury" in a.ok("notes")
    sent = one_line_failure(a.run("send", "--to", "b.card", second, "--out", "two.slip"))
    assert f"{second} is bound to the treasury" in sent
    assert not (tmp_path / "two.slip").exists()

    a.ok("notes", "claim", "50")  # M50 more: the bound M25 and one of these pay M30
    (bought,) = a.json("buy", "Tally")["purchases"]
    assert (bought["outcome"], bought["serial"]) == ("delivered", "CZ-TALLY-0001")
    assert second in bought["paid_notes"]
    assert len(bought["paid_notes"]) == 2
    assert sorted(n["denomination"] for n in bought["change"]) == [5, 5, 5, 5]
    after = a.json("collection")
    assert after["bound_notes"] == []
    assert sorted(n["denomination"] for n in after["note_list"]) == [5, 5, 5, 5, 25]
    life = a.json("provenance", second)  # the very hop signed at the rejected purchase
    assert [(h["issue"], h["hop"]) for h in life["hops"]] == [(1, 1)]
    assert [r["issue"] for r in life["returns"]] == [1]


# V.5, V.7, L-05, L-20, L-21
def test_the_print_of_a_rejected_upgrade_stays_bound_to_the_mint(
    generous: InProcessLeague, tmp_path: Path
) -> None:
    """A pays a gilt upgrade of its Tally with an M100 note already signed to B from a newer
    wallet: the purchase is rejected, the note B's; the Tally's hop to the mint was never
    recorded, so it is still A's, but that hop is signed (and in the treasury's log): it is
    kept bound to the mint, cannot be sent, and goes back to the mint, as the very chain
    signed, with the next upgrade of it, which is delivered."""
    a = Player(tmp_path / "a", workdir=tmp_path)
    b = Player(tmp_path / "b", workdir=tmp_path)
    a.ok("load", str(wallet_with(tmp_path / "a.code", [Print("Tally")], marks=210)))
    a.ok("league", "set", generous.url)
    b.strike(generous.url)
    b.ok("card", "--out", "b.card")
    (tally,) = [s["serial"] for s in a.json("stamp")["stamped"]]
    a.ok("notes", "claim", "100")
    (note,) = notes(a)
    a.ok("save", "--out", "old.code")
    a.ok("send", "--to", "b.card", note, "--out", "note.slip")
    assert b.json("import", "note.slip")["recorded"] == 1
    a.ok("load", "--replace", "old.code")

    refusal = one_line_failure(a.run("buy", "--upgrade", tally, "--finish", "gilt"))
    assert "was rejected" in refusal
    after = a.json("collection")
    assert after["bound_prints"] == [{"serial": tally, "title": "Tally"}]
    assert [p for p in after["prints"] if p.get("serial") == tally] == []
    assert (after["bound_notes"], after["note_list"]) == ([], [])
    assert f"{tally}, bound to the mint" in a.ok("collection")
    sent = one_line_failure(a.run("send", "--to", "b.card", tally, "--out", "t.slip"))
    assert f"{tally} is bound to the mint" in sent

    a.ok("notes", "claim", "100")
    (bought,) = a.json("buy", "--upgrade", tally, "--finish", "gilt")["purchases"]
    assert (bought["outcome"], bought["returned_print"], bought["finish"]) == (
        "delivered",
        tally,
        "gilt",
    )
    after = a.json("collection")
    assert after["bound_prints"] == []
    assert [(p["title"], p["finish"]) for p in after["prints"] if p.get("stamped")] == [
        ("Tally", "gilt")
    ]
    life = a.json("provenance", tally)  # the one hop to the mint, signed at the rejection
    assert [(h["issue"], h["hop"]) for h in life["hops"]] == [(1, 1)]
    assert [r["issue"] for r in life["returns"]] == [1]
