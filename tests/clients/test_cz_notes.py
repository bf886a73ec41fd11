"""``cz notes claim`` and ``cz buy`` against a served league: unstamped marks become notes at
the faucet, at most the day's cap; notes buy a single with exact change, or a finish upgrade
against a standard print returned to the mint (L-20); a purchase whose answer was lost is
finished with the same purchase id, never paid twice (Book V.5)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from apiclient.league import LeagueClient, new_request_id, stamp_request
from clients.wallet import LeaguePin, Wallet
from ledger.address import address_of
from ledger.api.mint import Stamped
from ledger.api.treasury import buy_request, claim_request
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey, SigningKey
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.clients.conftest import PASSPHRASE, Player, on_terminal, one_line_failure, wallet_with
from tests.harness.league import InProcessLeague


def held(player: Player) -> tuple[object, object]:
    return player.json("collection"), player.json("notes")


# V.5
def test_claim_then_buy_a_single_with_change(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """M50 of marks (the day's cap) become notes and leave the collection; the cap refuses a
    second claim in one line; a M30 Tally is paid with the fewest notes, stamped to the buyer
    and the change credited; a purchase the notes cannot cover is refused, nothing changed."""
    a = players["A"]
    a.ok("load", str(wallet_with(tmp_path / "a.code", [], marks=120)))
    a.ok("league", "set", served.url)

    claimed = a.json("notes", "claim")
    assert claimed["marks"] == 50
    assert claimed["left_today"] == 0
    assert sum(n["denomination"] for n in claimed["notes"]) == 50
    assert a.json("collection")["marks"] == 70
    assert sorted(n["serial"] for n in a.json("notes")["notes"]) == sorted(
        n["serial"] for n in claimed["notes"]
    )
    assert "2 notes, M50 in all:" in a.ok("notes")  # 25 + 25, for a person
    assert "faucet_marks_per_day" in a.ok("notes", "claim", "--help")
    before = held(a)
    assert "midnight" in one_line_failure(a.run("notes", "claim", "10"))
    assert held(a) == before  # the marks stay until notes are credited

    (bought,) = a.json("buy", "tally")["purchases"]
    assert (bought["title"], bought["outcome"], bought["price"]) == ("Tally", "delivered", 30)
    assert len(bought["paid_notes"]) == 2  # 25 + 25: the fewest notes that make 30
    assert sum(n["denomination"] for n in bought["change"]) == bought["paid"] - 30
    collection = a.json("collection")
    (tally,) = collection["prints"]
    assert (tally["title"], tally["stamped"], tally["serial"]) == ("Tally", True, bought["serial"])
    notes = a.json("notes")
    assert notes["marks"] == 20
    assert {n["serial"] for n in bought["change"]} <= {n["serial"] for n in notes["notes"]}
    assert not {n["serial"] for n in notes["notes"]} & set(bought["paid_notes"])

    # V.8: a note's life is checked on the player's machine like a print's: the change note's
    # issue against the treasury's own feed and checkpoint, the holder proved by the chain.
    change = bought["change"][0]["serial"]
    life = a.json("provenance", change)
    assert (life["serial"], life["verified"]) == (change, True)
    assert life["issues"][-1]["to"] == life["holder"]
    assert "in the treasury's signed checkpoint" in a.ok("provenance", change)

    before = held(a)
    assert "the price is M30" in one_line_failure(a.run("buy", "Tally"))
    assert held(a) == before
    assert "no title" in one_line_failure(a.run("buy", "No-Such-Title"))

    b = players["B"]  # on a terminal, without MARKS: all it holds, under the day's cap
    b.ok("load", str(wallet_with(tmp_path / "b.code", [], marks=7)))
    b.ok("league", "set", served.url)
    status, shown = on_terminal(["notes", "claim"], b.env())
    assert status == 0, shown
    assert "proof of work [" in shown
    assert "M7 of unstamped marks became 3 notes" in shown  # 5 + 1 + 1
    assert "left today: M43 of M50" in shown
    assert b.json("collection")["marks"] == 0


async def paid_and_lost(url: str, wallet: Wallet) -> tuple[str, str]:
    """Claim M50 of notes for ``wallet``, buy a Tally with them and keep the request as pending,
    as if cz had died after the treasury answered: (purchase id, serial delivered)."""
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
        now = int(time.time())
        claim = await client.claim(
            claim_request(wallet.key, manifest, 50, request_id=new_request_id(), at=now)
        )
        treasury = PublicKey.from_text(manifest.treasury)
        payment = [
            endorse(Chain(certificate=n, endorsements=()), wallet.key, treasury, now)
            for n in claim.notes
        ]
        request = buy_request(
            wallet.key, manifest, "Tally", payment, purchase_id=new_request_id(), at=now
        )
        answer = await client.buy(request)
    assert answer.stamped is not None
    wallet.league = LeaguePin(url, PublicKey.from_text(manifest.root), manifest)
    wallet.give(marks=-50)
    wallet.pending_buy = request
    return request.purchase_id, answer.stamped.serial


# V.5
def test_lost_answers_are_finished_not_paid_twice(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """A purchase and a claim kept in the wallet whose answers never arrived are sent again
    as they were: the same print and notes credited once, nothing paid or converted twice."""
    a = players["A"]
    wallet = Wallet.new()
    wallet.give(marks=50)
    purchase, serial = asyncio.run(paid_and_lost(served.url, wallet))
    code = tmp_path / "a.code"
    code.write_text(seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF), encoding="ascii")
    a.ok("load", str(code))
    (finished,) = a.json("buy", "Tally")["purchases"]
    assert (finished["purchase_id"], finished["serial"]) == (purchase, serial)
    (tally,) = a.json("collection")["prints"]
    assert (tally["serial"], tally["stamped"]) == (serial, True)
    assert a.json("notes")["marks"] == 20
    assert "the price is M30" in one_line_failure(a.run("buy", "Tally"))

    b = players["B"]  # a claim whose answer was lost: the same notes, the marks taken once
    wallet = Wallet.new()
    wallet.give(marks=60)

    async def claimed_and_lost() -> list[str]:
        async with LeagueClient(served.url) as client:
            manifest = await client.manifest()
            request = claim_request(
                wallet.key, manifest, 50, request_id=new_request_id(), at=int(time.time())
            )
            answer = await client.claim(request)
        wallet.league = LeaguePin(served.url, PublicKey.from_text(manifest.root), manifest)
        wallet.pending_claim = request
        return sorted(n.serial for n in answer.notes)

    notes = asyncio.run(claimed_and_lost())
    code.write_text(seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF), encoding="ascii")
    b.ok("load", str(code))
    resumed = b.json("notes", "claim")
    assert resumed["resumed"] is True
    assert sorted(n["serial"] for n in resumed["notes"]) == notes
    assert b.json("collection")["marks"] == 10
    assert "midnight" in one_line_failure(b.run("notes", "claim"))
    assert b.json("collection")["marks"] == 10


async def ready_to_upgrade(url: str, wallet: Wallet) -> str:
    """A standard Tally stamped to ``wallet`` and M100 of notes (its own day's M50 and a
    friend's M50 endorsed to it), as a wallet would hold them; the Tally's serial."""
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
        now = int(time.time())
        (item,) = (
            await client.stamp(stamp_request(wallet.key, manifest, [("Tally", "standard")]))
        ).items
        assert isinstance(item, Stamped)
        friend = SigningKey.generate()
        own = await client.claim(
            claim_request(wallet.key, manifest, 50, request_id=new_request_id(), at=now)
        )
        given = await client.claim(
            claim_request(friend, manifest, 50, request_id=new_request_id(), at=now)
        )
    wallet.league = LeaguePin(url, PublicKey.from_text(manifest.root), manifest)
    wallet.admit(
        [
            Chain(certificate=item.certificate, endorsements=()),
            *(Chain(certificate=n, endorsements=()) for n in own.notes),
            *(
                endorse(Chain(certificate=n, endorsements=()), friend, wallet.public, now)
                for n in given.notes
            ),
        ]
    )
    return item.certificate.serial


# V.5, L-20
def test_buy_a_finish_upgrade_returning_a_standard_print(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """cz buy --upgrade SERIAL --finish gilt: M80 of notes and the standard Tally returned to
    the mint buy a gilt Tally; the standard print leaves the collection, the gilt one joins
    it, M20 of change is credited. --help teaches it; a gilt print, --finish without
    --upgrade and a print not held are refused on one line, nothing changed."""
    a = players["A"]
    wallet = Wallet.new()
    serial = asyncio.run(ready_to_upgrade(served.url, wallet))
    code = tmp_path / "a.code"
    code.write_text(seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF), encoding="ascii")
    a.ok("load", str(code))
    shown = a.ok("buy", "--help")
    assert "--upgrade SERIAL" in shown
    assert "gilt M80" in shown
    assert "holofoil M200" in shown

    before = held(a)
    assert "--finish goes with --upgrade" in one_line_failure(
        a.run("buy", "Tally", "--finish", "gilt")
    )
    assert "holds no stamped print" in one_line_failure(
        a.run("buy", "--upgrade", "CZ-TALLY-9999", "--finish", "gilt")
    )
    assert "is a Tally, not a Pairing" in one_line_failure(
        a.run("buy", "Pairing", "--upgrade", serial)
    )
    assert held(a) == before

    (bought,) = a.json("buy", "--upgrade", serial, "--finish", "gilt")["purchases"]
    assert (bought["title"], bought["finish"], bought["outcome"], bought["price"]) == (
        "Tally",
        "gilt",
        "delivered",
        80,
    )
    assert bought["returned_print"] == serial
    assert sum(n["denomination"] for n in bought["change"]) == bought["paid"] - 80
    (gilt,) = a.json("collection")["prints"]
    assert (gilt["serial"], gilt["finish"], gilt["stamped"]) == (bought["serial"], "gilt", True)
    assert a.json("notes")["marks"] == 20
    assert "is a gilt print" in one_line_failure(
        a.run("buy", "--upgrade", bought["serial"], "--finish", "holofoil")
    )
    assert wallet.league is not None
    life = a.json("provenance", serial)  # checked on the player's machine: back at the mint
    mint = address_of(PublicKey.from_text(wallet.league.manifest.mint))
    assert (life["verified"], life["holder"]) == (True, mint)


async def holofoil_run_out(url: str, wallet: Wallet) -> str:
    """The holofoil run of Plenum (40) stamped out by another key; a standard Plenum stamped
    to ``wallet`` and M200 of notes (its own M50 and three friends' M50 each endorsed to it);
    the standard Plenum's serial."""
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
        size = manifest.print_runs.run("Plenum").size("holofoil")
        stamper = SigningKey.generate()
        for start in range(0, size, 10):
            count = min(10, size - start)
            answer = await client.stamp_prints(stamper, manifest, [("Plenum", "holofoil")] * count)
            assert all(isinstance(i, Stamped) for i in answer.items), answer.items
        (item,) = (
            await client.stamp(stamp_request(wallet.key, manifest, [("Plenum", "standard")]))
        ).items
        assert isinstance(item, Stamped)
        now = int(time.time())
        chains = [Chain(certificate=item.certificate, endorsements=())]
        for giver in (wallet.key, *(SigningKey.generate() for _ in range(3))):
            claimed = await client.claim(
                claim_request(giver, manifest, 50, request_id=new_request_id(), at=now)
            )
            for note in claimed.notes:
                chain = Chain(certificate=note, endorsements=())
                chains.append(
                    chain if giver is wallet.key else endorse(chain, giver, wallet.public, now)
                )
    wallet.league = LeaguePin(url, PublicKey.from_text(manifest.root), manifest)
    wallet.admit(chains)
    return item.certificate.serial


# V.5, L-18, L-20
def test_an_upgrade_of_an_exhausted_run_gives_back_the_notes_and_the_print(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """cz buy --upgrade of a Plenum whose holofoil run is stamped out: refunded; the paid
    notes come back (their next issue) and so does the standard Plenum, issued again by the
    mint as issue 2, in the collection as it was."""
    a = players["A"]
    wallet = Wallet.new()
    serial = asyncio.run(holofoil_run_out(served.url, wallet))
    code = tmp_path / "a.code"
    code.write_text(seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF), encoding="ascii")
    a.ok("load", str(code))
    (refunded,) = a.json("buy", "--upgrade", serial, "--finish", "holofoil")["purchases"]
    assert (refunded["outcome"], refunded["price"], refunded["serial"]) == ("refunded", 200, None)
    assert "exhausted" in refunded["reason"]
    assert refunded["print_back"] == {"serial": serial, "issue": 2}
    assert sum(n["denomination"] for n in refunded["refund"]) == refunded["paid"]
    (plenum,) = a.json("collection")["prints"]
    assert (plenum["serial"], plenum["finish"], plenum["stamped"]) == (serial, "standard", True)
    assert a.json("notes")["marks"] == refunded["paid"]
    shown = a.ok("buy", "Tally")  # the refunded notes pay for a single
    assert "delivered" in shown
