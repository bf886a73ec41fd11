"""``cz key``, ``save``, ``load``, ``collection``, ``card`` as a player runs them, on a terminal
where they ask for the passphrase (Book V.2 "Read the warning and mean it", V.3)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from apiclient.league import new_request_id, stamp_request
from clients.cz_notes import choose_notes
from clients.wallet import Wallet, WalletHome
from game.window.campaign import clerk, settle
from game.window.economy.prints import Print
from game.window.scoring import Verdict
from ledger.api.treasury import Upgrade, buy_request, claim_request
from ledger.cards import LedgerCard
from ledger.certificates import NoteCertificate
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.clients.conftest import (
    CZ,
    PASSPHRASE,
    Player,
    on_terminal,
    one_line_failure,
    wallet_with,
)
from tests.harness.league import InProcessLeague
from tests.ledger.factories import make_league

COMMANDS = (
    "key",
    "save",
    "load",
    "collection",
    "card",
    "league",
    "stamp",
    "send",
    "import",
    "sync",
    "provenance",
)
LEAVES = (
    ("key", "strike"),
    ("key", "show"),
    ("save",),
    ("load",),
    ("collection",),
    ("card",),
    ("league", "set"),
    ("stamp",),
    ("send",),
    ("import",),
    ("sync",),
    ("provenance",),
)


def test_help_teaches_every_command(tmp_path: Path) -> None:
    """cz --help names every wallet and league command; each one's --help explains it and
    offers --json for scripts."""
    player = Player(tmp_path / "p")
    top = player.ok("--help")
    for command in COMMANDS:
        assert f"    {command}" in top, command
    assert "CZ_HOME" in top
    assert "CZ_PASSPHRASE" in top
    for leaf in LEAVES:
        text = player.ok(*leaf, "--help")
        assert "--json" in text, leaf
    assert "no custodian" in player.ok("key", "strike", "--help")


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    player = Player(tmp_path / "p")
    assert "--to" in one_line_failure(player.run("send", "CZ-MODEL-A-0001"))
    one_line_failure(player.run("league"))
    one_line_failure(player.run("provenance"))


def test_strike_on_a_terminal_shows_the_warning_and_asks_twice(tmp_path: Path) -> None:
    """The V.2 warning, then the passphrase typed twice without echo; the wallet then opens
    with that passphrase and no other."""
    player = Player(tmp_path / "p")
    env = {k: v for k, v in player.env().items() if k != "CZ_PASSPHRASE"}
    status, shown = on_terminal(
        ["key", "strike"],
        env,
        [("choose a passphrase: ", "tulip fever"), ("the same passphrase again: ", "tulip fever")],
    )
    assert status == 0, shown
    assert "Lose the passphrase, lose the\r\nkey, lose the collection" in shown
    assert "tulip fever" not in shown  # never echoed
    assert "struck CZ-" in shown
    assert player.wallet_file.stat().st_mode & 0o777 == 0o600
    shown_key = player.run("key", "show", passphrase="tulip fever")
    assert shown_key.returncode == 0, shown_key.stderr
    assert shown_key.stdout.startswith("CZ-")
    assert "wrong passphrase" in one_line_failure(player.run("save"))


def test_strike_refuses_two_different_passphrases(tmp_path: Path) -> None:
    player = Player(tmp_path / "p")
    env = {k: v for k, v in player.env().items() if k != "CZ_PASSPHRASE"}
    status, shown = on_terminal(
        ["key", "strike"],
        env,
        [("choose a passphrase: ", "one"), ("the same passphrase again: ", "two")],
    )
    assert status == 2, shown
    assert "the two passphrases differ" in shown
    assert not player.wallet_file.exists()


def test_no_terminal_and_no_passphrase_is_one_line(tmp_path: Path) -> None:
    """A command that needs the key, with no terminal and no CZ_PASSPHRASE: one line."""
    player = Player(tmp_path / "p")
    player.strike()
    env = {k: v for k, v in player.env().items() if k != "CZ_PASSPHRASE"}
    result = subprocess.run(
        [str(CZ), "save"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
        start_new_session=True,
    )  # no controlling terminal either
    assert "CZ_PASSPHRASE" in one_line_failure(result)


def test_strike_never_replaces_a_wallet_unasked(tmp_path: Path) -> None:
    """A second strike is refused (the wallet untouched); with --replace the old code is kept
    as the .bak and a new key is struck."""
    player = Player(tmp_path / "p")
    first = player.strike()
    before = player.wallet_file.read_bytes()
    assert "--replace" in one_line_failure(player.run("key", "strike"))
    assert player.wallet_file.read_bytes() == before
    second = player.json("key", "strike", "--replace")
    assert second["address"] != first
    player.ok("collection")  # two writes later, the replaced wallet is still kept
    player.json("key", "strike", "--replace")
    kept = Path(second["replaced"])
    assert kept.parent == player.home / "replaced"
    assert kept.read_bytes() == before
    assert kept.stat().st_mode & 0o777 == 0o600
    assert len(list(kept.parent.iterdir())) == 2


def test_save_load_and_card(tmp_path: Path) -> None:
    """A save code written to stdout loads on another device (asking its passphrase on the
    terminal), and is refused over an existing wallet without --replace; the ledger card
    holds the public key and address only."""
    player, other = Player(tmp_path / "p"), Player(tmp_path / "q")
    address = player.strike()
    code = player.ok("save")
    assert code.startswith("-----BEGIN CZ SAVE CODE-----")
    (tmp_path / "p.code").write_text(code, encoding="ascii")
    env = {k: v for k, v in other.env().items() if k != "CZ_PASSPHRASE"}
    status, shown = on_terminal(
        ["load", str(tmp_path / "p.code")],
        env,
        [("the save code's passphrase: ", player.passphrase)],
    )
    assert status == 0, shown
    assert f"loaded {address}" in shown
    assert other.json("key", "show")["address"] == address
    assert "--replace" in one_line_failure(other.run("load", str(tmp_path / "p.code")))
    card = LedgerCard.from_armor(player.ok("card"))
    assert card.address == address
    assert set(card.to_wire()) == {"kind", "key", "address"}
    assert player.json("collection")["prints"] == []
    assert "no league set" in player.ok("collection")
    assert "no league is set" in one_line_failure(player.run("stamp"))


def test_collection_shows_campaign_progress(tmp_path: Path) -> None:
    """A save code carries progress (V.3): the record per venue, wins, losses and Balances
    apart (IV.6), and what the tables paid."""
    wallet = Wallet.new()
    wallet.campaign, _ = settle(wallet.campaign, clerk(1), Verdict.WIN)
    wallet.campaign, _ = settle(wallet.campaign, clerk(2), Verdict.BALANCE)
    code = tmp_path / "w.code"
    code.write_text(seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF), encoding="ascii")
    player = Player(tmp_path / "p")
    player.ok("load", str(code))
    text = player.ok("collection")
    assert "clerk-1 1 won, 0 lost, 0 Balanced" in text
    assert "clerk-2 0 won, 0 lost, 1 Balanced" in text
    shown = player.json("collection")
    assert shown["marks"] == 20
    assert shown["campaign"]["clerk-2"] == {"wins": 0, "losses": 0, "balances": 1}


def keep_unsent(player: Player) -> tuple[str, str, list[str]]:
    """What cz stamp, cz notes claim and cz buy keep in the wallet before sending, kept here
    and never sent, as when the league went down mid-request: a stamp of the wallet's ⧗
    print, a claim of M10, a Tally paid with the wallet's notes (which leave it with the
    request). Returns the claim's and the purchase's ids and the notes paid."""
    home = WalletHome(player.home)
    wallet = home.read(player.passphrase)
    assert wallet.league is not None
    manifest = wallet.league.manifest
    now = int(time.time())
    wallet.pending = stamp_request(wallet.key, manifest, wallet.unstamped(), at=now)
    wallet.pending_claim = claim_request(
        wallet.key, manifest, 10, request_id=new_request_id(), at=now
    )
    notes = choose_notes(
        [
            c.certificate
            for c in wallet.notes.values()
            if isinstance(c.certificate, NoteCertificate)
        ],
        30,
    )
    treasury = PublicKey.from_text(manifest.treasury)
    payment = [endorse(wallet.notes.pop(n.serial), wallet.key, treasury, now) for n in notes]
    wallet.pending_buy = buy_request(
        wallet.key, manifest, "Tally", payment, purchase_id=new_request_id(), at=now
    )
    home.write_code(seal_save_code(wallet.to_payload(), player.passphrase, MINIMUM_KDF))
    return (
        wallet.pending_claim.request_id,
        wallet.pending_buy.purchase_id,
        [n.serial for n in notes],
    )


# V.4, V.5: a request kept before it is sent
def test_collection_shows_what_is_pending_until_it_is_finished(
    served: InProcessLeague, tmp_path: Path
) -> None:
    """A stamp, a claim and a purchase sent and never answered are shown by cz collection
    (and --json): what each asked for, what it took with it, the command that finishes it;
    each command run again finishes its own, and nothing is pending after."""
    player = Player(tmp_path / "p")
    player.ok("load", str(wallet_with(tmp_path / "w.code", [Print("Model-A")], marks=100)))
    player.ok("league", "set", served.url)
    player.ok("notes", "claim", "40")
    claim, purchase, paid = keep_unsent(player)
    held = player.json("collection")
    assert held["pending_stamp"] is True
    assert held["pending_claim"] == {
        "request_id": claim,
        "marks": 10,
        "time": held["pending_claim"]["time"],
    }
    assert {k: held["pending_buy"][k] for k in ("purchase_id", "title", "paid_notes")} == {
        "purchase_id": purchase,
        "title": "Tally",
        "paid_notes": paid,
    }
    assert held["pending_buy"]["paid"] >= 30
    assert not set(paid) & {n["serial"] for n in held["note_list"]}  # they left with it
    assert held["marks"] == 60  # a claim's marks leave only with its answer
    text = player.ok("collection")
    assert "pending: 1 print presented for stamping at" in text
    assert f"pending: a claim of M10 of marks for notes (claim {claim})" in text
    assert "cz notes claim finishes it" in text
    assert f"pending: a purchase of Tally (purchase {purchase})" in text
    assert f"{', '.join(paid)}: cz buy Tally finishes it" in text

    assert player.json("stamp")["stamped"][0]["title"] == "Model-A"
    assert player.json("notes", "claim")["resumed"] is True
    (bought,) = player.json("buy", "Tally")["purchases"]
    assert (bought["purchase_id"], bought["outcome"]) == (purchase, "delivered")
    done = player.json("collection")
    assert (done["pending_stamp"], done["pending_claim"], done["pending_buy"]) == (
        False,
        None,
        None,
    )
    assert done["marks"] == 50
    assert sorted(p["title"] for p in done["prints"]) == ["Model-A", "Tally"]
    assert "pending" not in player.ok("collection")


# V.5, L-20
def test_a_pending_upgrade_names_the_print_it_returned(tmp_path: Path) -> None:
    """A finish upgrade kept unanswered: the standard print returned to the mint has left the
    collection with the request, so cz collection names it and how to finish."""
    league = make_league()
    wallet = Wallet.new()
    mint, treasury = league.mint.public, league.treasury.public
    returned = league.print_certificate(wallet.key, "CZ-TALLY-0001", title="Tally", card_set="base")
    paid = ["CZ-M25-000001", "CZ-M25-000002", "CZ-M25-000003", "CZ-M5-000004"]  # M80: gilt
    notes = [league.note_certificate(wallet.key, s) for s in paid]
    wallet.pending_buy = buy_request(
        wallet.key,
        league.manifest,
        "Tally",
        [
            endorse(Chain(certificate=n, endorsements=()), wallet.key, treasury, 1_800_000_000)
            for n in notes
        ],
        purchase_id="upgrade-kept-01",
        at=1_800_000_000,
        upgrade=Upgrade(
            finish="gilt",
            returned=endorse(
                Chain(certificate=returned, endorsements=()), wallet.key, mint, 1_800_000_000
            ),
        ),
    )
    code = tmp_path / "w.code"
    code.write_text(seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF), encoding="ascii")
    player = Player(tmp_path / "p")
    player.ok("load", str(code))
    held = player.json("collection")
    assert held["pending_buy"] == {
        "purchase_id": "upgrade-kept-01",
        "title": "Tally",
        "time": 1_800_000_000,
        "finish": "gilt",
        "returned_print": "CZ-TALLY-0001",
        "paid": 80,
        "paid_notes": paid,
    }
    assert (held["prints"], held["pending_claim"]) == ([], None)
    assert (
        "pending: a gilt upgrade of Tally, CZ-TALLY-0001 returned to the mint, (purchase "
        "upgrade-kept-01) sent at 2027-01-15 08:00:00Z, not answered yet, paid M80 with "
        f"{', '.join(paid)}: cz buy --upgrade CZ-TALLY-0001 --finish gilt finishes it"
    ) in player.ok("collection")
