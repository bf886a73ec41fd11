"""Trading through ``cz`` against a real all-in-one league, where it goes wrong: every bad
input one line, exit 2, nothing lost; a league gone, or another league at the pinned URL or
elsewhere, refused with nothing lost (Book V.2, V.3, V.6, V.7, V.8). The trade story itself
(stamp, send, import notarized, a double spend from an old save code refused with its fraud
proof kept, a second device, provenance) is told in test_cz_story.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from apiclient.league import LeagueClient
from clients.wallet import notary_record, unseal
from game.window.economy.prints import Finish, Print
from ledger.api.notary import Provenance
from ledger.endorsements import endorse
from ledger.errors import BadSignatureError, ProofError
from ledger.keys import SigningKey
from services.kernel.database import scratch_database
from tests.clients.conftest import PASSPHRASE, Player, one_line_failure, serving, wallet_with
from tests.harness.league import InProcessLeague, init_league

PRINTS = (Print("Model-A"), Print("Tally", Finish.GILT), Print("Faithful"))


def serials(player: Player) -> dict[str, str]:
    """Title -> serial of every stamped print the player's wallet shows."""
    return {p["title"]: p["serial"] for p in player.json("collection")["prints"] if p["stamped"]}


# V.3, V.6, V.7 (bad input)
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
        a.run("save", passphrase="wrong horse")  # collection needs none: a public summary
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


# V.2 ("no server permission", the root pinned on first use); L-13
def test_a_league_gone_or_changed_is_refused_and_nothing_is_lost(
    league_env: dict[str, str],
    players: dict[str, Player],
    tmp_path: Path,
    server_url: str,
) -> None:
    """With the pinned league stopped, stamp, import, provenance, sync and send say it did not
    answer (one line, nothing changes) and `import --offline` admits on offline verification alone
    (L-15). Then another league at the pinned URL (served on its port) and another league at
    another URL: league set, stamp, provenance and notes claim refuse on one line naming the
    pinned root key (L-13); the wallets are unchanged."""
    a, b = players["A"], players["B"]
    a.ok("load", str(wallet_with(tmp_path / "a.code", PRINTS, marks=10)))
    with serving(league_env) as first:
        url = first.url
        port = int(url.rsplit(":", 1)[1])
        pinned = a.json("league", "set", url)
        (stamped, *_) = a.json("stamp")["stamped"]
        b.strike(url)
        b.ok("card", "--out", str(tmp_path / "b.card"))
        slip = a.ok("send", "--to", str(tmp_path / "b.card"), stamped["serial"])
    before = {p.home: p.wallet_file.read_bytes() for p in (a, b)}
    kept = sorted(set(serials(a).values()) - {stamped["serial"]})
    for player, args in (
        (a, ("stamp",)),
        (b, ("import", "-")),
        (b, ("provenance", stamped["serial"])),
        (a, ("sync",)),
        (a, ("send", "--to", str(tmp_path / "b.card"), kept[0])),  # L-23
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
            for player, args in (
                (b, ("league", "set", url)),
                (b, ("stamp",)),
                (b, ("provenance", "CZ-MODEL-A-0001")),
                (a, ("notes", "claim")),
            ):
                refusal = one_line_failure(player.run(*args))
                assert refusal.startswith("cz: REFUSED"), refusal
                assert pinned["root"] in refusal
        with serving(other) as elsewhere:
            refusal = one_line_failure(b.run("league", "set", elsewhere.url))
            assert "REFUSED" in refusal
            assert pinned["root"] in refusal
    assert b.wallet_file.read_bytes() == before


def no_conflicts(player: Player, serial: str) -> None:
    """The notary's record of ``serial`` convicts no one: no refused conflict at any hop."""
    life = player.json("provenance", serial)
    assert life["verified"] is True
    assert life["conflicts"] == []


# V.6, V.7, L-05, L-23 (an old slip imported again)
def test_an_old_slip_imported_again_is_refused_not_admitted(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """A sends CZ-TALLY-0001 to B, B sends it back to A; B imports the old slip again: the
    notary records the print sent on past that slip's hop, so the import is refused on one
    line, exit 2, nothing admitted and B's wallet unchanged (not admitted, B can never sign it
    a second time); the print's life at the notary convicts no one."""
    a, b = players["A"], players["B"]
    a.ok("load", str(wallet_with(tmp_path / "a.code", [Print("Tally")])))
    address = a.json("key", "show")["address"]
    a.ok("league", "set", served.url)
    (stamped,) = a.json("stamp")["stamped"]
    serial = stamped["serial"]
    assert serial == "CZ-TALLY-0001"
    b.strike(served.url)
    a.ok("card", "--out", str(tmp_path / "a.card"))
    b.ok("card", "--out", str(tmp_path / "b.card"))
    older = b.ok("save")  # B's code from before the Tally came and went
    sent = a.run("send", "--to", str(tmp_path / "b.card"), serial)
    assert sent.stderr.startswith("slip of 1 item to ")  # one item, not "1 items"
    gift = sent.stdout
    assert f"admitted 1 item from {address}, notarized:\n  ✓ {serial}\n" == b.ok(
        "import", "-", stdin=gift
    )
    back = b.ok("send", "--to", str(tmp_path / "a.card"), serial)
    assert a.json("import", "-", stdin=back)["admitted"] == [serial]

    before = b.wallet_file.read_bytes()
    # B's own wallet knows the hop it signed since (the seen-registry, L-05): refused at home,
    # with or without a league to ask.
    for offline in ((), ("--offline",)):
        refusal = one_line_failure(b.run("import", *offline, "-", stdin=gift))
        assert f"{serial} has moved on since this slip (hop 2 is known here)" in refusal
    assert b.wallet_file.read_bytes() == before
    # A device of B from the older code does not know that hop: the notary does (L-23).
    b2 = players["B2"]
    b2.ok("load", "-", stdin=older)
    refusal = one_line_failure(b2.run("import", "-", stdin=gift))
    assert "superseded" in refusal
    assert f"{serial} sent on at hop 2" in refusal
    assert b.json("collection")["prints"] == []
    assert "holds no stamped print" in one_line_failure(
        b.run("send", "--to", str(tmp_path / "a.card"), serial)
    )
    assert serial in serials(a).values()
    no_conflicts(a, serial)
    assert [h["hop"] for h in a.json("provenance", serial)["hops"]] == [1, 2]


# V.3, V.6, V.7, L-05, L-23 (a second device from an older save code)
def test_a_second_device_from_an_older_code_never_signs_a_print_sent_away(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """Device 2 loads A's save code from before device 1 sent the Tally to B. Its `cz send`
    of the Tally asks the notary, which records it gone: refused on one line, exit 2, nothing
    signed, no slip, the wallet unchanged. `cz sync` then lets it go, a line for it, and keeps
    the print it still holds; `--offline` still sends that one, with a one-line warning. No
    fraud proof against anyone at the end."""
    a, a2, b, c = players["A"], players["B2"], players["B"], players["C"]
    a.ok("load", str(wallet_with(tmp_path / "a.code", [Print("Tally"), Print("Faithful")])))
    a.ok("league", "set", served.url)
    a.ok("stamp")
    held = serials(a)
    tally, faithful = held["Tally"], held["Faithful"]
    b.strike(served.url)
    c.strike(served.url)
    b.ok("card", "--out", str(tmp_path / "b.card"))
    c.ok("card", "--out", str(tmp_path / "c.card"))
    old = a.ok("save")
    assert b.json("import", "-", stdin=a.ok("send", "--to", str(tmp_path / "b.card"), tally))[
        "admitted"
    ] == [tally]

    a2.ok("load", "-", stdin=old)
    assert tally in serials(a2).values()
    before = a2.wallet_file.read_bytes()
    out = tmp_path / "to-c.slip"
    refusal = one_line_failure(
        a2.run("send", "--to", str(tmp_path / "c.card"), tally, "--out", str(out))
    )
    assert f"the notary records {tally} sent on at hop 1" in refusal
    assert "nothing was signed" in refusal
    assert not out.exists()
    assert a2.wallet_file.read_bytes() == before

    synced = a2.run("sync")
    assert synced.returncode == 0, synced.stderr
    assert f"  {tally} left this wallet: the notary records {tally} sent on at hop 1" in (
        synced.stdout
    )
    assert len(synced.stdout.splitlines()) == 2  # the count, and a line for the Tally
    assert serials(a2) == {"Faithful": faithful}
    again = a2.json("sync")
    assert (again["checked"], again["left"]) == (1, [])
    assert "holds no stamped print" in one_line_failure(
        a2.run("send", "--to", str(tmp_path / "c.card"), tally)
    )

    offline = a2.run(
        "send", "--offline", "--to", str(tmp_path / "c.card"), faithful, "--out", str(out)
    )
    assert offline.returncode == 0, offline.stderr
    warning, *_ = offline.stderr.splitlines()
    assert warning.startswith("cz: warning:")
    assert "--offline" in warning
    assert c.json("import", str(out))["admitted"] == [faithful]
    for serial in (tally, faithful):
        no_conflicts(c, serial)


# V.6 ("a witness, never a warden"), L-23
def test_the_notarys_record_is_checked_not_believed(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """notary_record compares a chain with the notary's real record of its item: a chain the
    record moved past names the hops after it and the holder they reach; a chain differing at a
    recorded hop names that hop; a record whose hop was changed, or whose receipt is not the
    notary's, is refused, never taken as the item's holder."""
    a, b = players["A"], players["B"]
    a.ok("load", str(wallet_with(tmp_path / "a.code", [Print("Tally")])))
    a.ok("league", "set", served.url)
    (stamped,) = a.json("stamp")["stamped"]
    serial = stamped["serial"]
    b_address = b.strike(served.url)
    b.ok("card", "--out", str(tmp_path / "b.card"))
    old = unseal(a.ok("save"), PASSPHRASE)
    b.ok("import", "-", stdin=a.ok("send", "--to", str(tmp_path / "b.card"), serial))
    assert old.league is not None
    manifest, held = old.league.manifest, old.prints[serial]

    async def ask() -> Provenance:
        async with LeagueClient(served.url) as client:
            return await client.provenance(serial)

    life = asyncio.run(ask())
    record = notary_record(held, life, manifest)
    assert ([e.hop for e in record.moved], record.differs, record.holder) == ([1], None, b_address)
    elsewhere = endorse(held, old.key, SigningKey.generate().public, 1)
    other = notary_record(elsewhere, life, manifest)
    assert (other.moved, other.differs) == ((), 1)

    def changed(part: str, field: str, value: object) -> Provenance:
        """The record as the notary sent it, one field of its hop changed (parsed again, as
        an answer is: nothing of the original is carried over)."""
        wire = life.model_dump(mode="json", by_alias=True)
        (hop,) = wire["hops"]
        hop[part][field] = value
        return Provenance.model_validate(wire)

    with pytest.raises(ProofError):  # the receipt is of another endorsement
        notary_record(held, changed("endorsement", "to", old.public.to_text()), manifest)
    with pytest.raises(BadSignatureError):  # the receipt is not the notary's word
        notary_record(held, changed("receipt", "index", life.hops[0].receipt.index + 1), manifest)
