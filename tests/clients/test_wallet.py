"""The wallet (Book V.2, V.3, V.6) without a league: its payload, stamping credit, sending and
admitting, and its home on disk (atomic, 0600, the previous code kept)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clients.wallet import FORMAT, Wallet, WalletError, WalletHome, unseal
from game.window.economy.prints import MISPRINT, Finish, Print
from ledger.api.mint import Allowance, Refused, StampAnswer, Stamped
from ledger.catalog import BY_NAME
from ledger.endorsements import Chain
from ledger.errors import SchemaError, WrongPassphraseError
from ledger.keys import SigningKey
from ledger.savecode import MINIMUM_KDF, seal_save_code
from ledger.slips import receive_slip
from tests.ledger.factories import League, make_league

ALLOWANCE = Allowance(per_day=50, used_today=0, remaining_today=50, day="2026-12-03", resets_at=0)


@pytest.fixture(autouse=True)
def cheap_kdf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CZ_KDF", "minimum")


@pytest.fixture
def league() -> League:
    return make_league()


def stamp(league: League, holder: SigningKey, title: str, number: int = 1) -> Chain:
    """A standard print of ``title`` as the test league's mint signs it to ``holder``."""
    certificate = league.print_certificate(
        holder,
        f"CZ-{title.upper()}-{number:04d}",
        title=title,
        card_set=BY_NAME[title].card_set.value,
    )
    return Chain(certificate=certificate, endorsements=())


def stamped_wallet(league: League, *titles: str) -> tuple[Wallet, list[Chain]]:
    """A wallet whose unstamped prints of ``titles`` the test league's mint stamped."""
    wallet = Wallet.new()
    wallet.give(prints=[Print(t) for t in titles])
    chains = [stamp(league, wallet.key, t) for t in titles]
    answer = StampAnswer(
        request_id="r" * 16,
        replayed=False,
        allowance=ALLOWANCE,
        items=[
            Stamped(title=c.certificate.title, finish="standard", certificate=c.certificate)
            for c in chains
        ],
    )
    wallet.credit(answer)
    return wallet, chains


def test_a_payload_round_trips(league: League) -> None:
    """Everything V.3 names comes back from the payload: key, progress and collection, held
    chains, seen-registry, fraud proofs."""
    wallet, _ = stamped_wallet(league, "Model-A", "Faithful")
    wallet.give(marks=30, prints=[Print("Tally", Finish.GILT), MISPRINT], bundles=2)
    again = Wallet.from_payload(wallet.to_payload())
    assert again.to_payload() == wallet.to_payload()
    assert again.public == wallet.public
    assert again.collection.marks == 30
    assert again.unstamped() == [("Tally", "gilt")]  # the Misprint is never presented (L-03)


def test_credit_turns_presented_prints_stamped_and_keeps_refusals(league: League) -> None:
    """A stamped item replaces one ⧗ print of its title and finish with the ✓ print and
    keeps its chain; a refused item leaves its print unstamped (V.4, L-04)."""
    wallet = Wallet.new()
    wallet.give(prints=[Print("Model-A"), Print("Faithful")])
    chain = stamp(league, wallet.key, "Model-A")
    answer = StampAnswer(
        request_id="r" * 16,
        replayed=False,
        allowance=ALLOWANCE,
        items=[
            Stamped(title="Model-A", finish="standard", certificate=chain.certificate),
            Refused(
                title="Faithful",
                finish="standard",
                problem="run-exhausted",
                reason="the run is exhausted",
            ),
        ],
    )
    credit = wallet.credit(answer)
    assert [c.serial for c in credit.stamped] == [chain.serial]
    assert credit.refused == (("Faithful", "standard", "the run is exhausted"),)
    assert wallet.unstamped() == [("Faithful", "standard")]
    assert wallet.prints == {chain.serial: chain}
    assert wallet.credit(answer).stamped == ()  # a replayed answer credits nothing twice
    before = wallet.to_payload()
    stray = StampAnswer(
        request_id="s" * 16,
        replayed=False,
        allowance=ALLOWANCE,
        items=[
            Stamped(
                title="Faithful",
                finish="standard",
                certificate=stamp(league, wallet.key, "Faithful").certificate,
            ),
            Stamped(
                title="Tally",
                finish="standard",
                certificate=stamp(league, wallet.key, "Tally").certificate,
            ),
        ],
    )
    with pytest.raises(WalletError, match="did not present"):
        wallet.credit(stray)
    assert wallet.to_payload() == before  # none of a bad answer is credited


def test_send_endorses_removes_and_remembers(league: League) -> None:
    """The items leave at the instant the slip is written, the hop joins the seen-registry,
    and the receiver's import verifies and admits them (V.6)."""
    wallet, (chain,) = stamped_wallet(league, "Model-A")
    friend = Wallet.new()
    slip = wallet.send([chain.serial], friend.public, 1_800_000_000)
    assert wallet.prints == {}
    assert wallet.collection.prints == ()
    assert len(wallet.seen) == 1
    admitted = receive_slip(slip, league.manifest, friend.public, friend.seen)
    friend.admit(admitted)
    assert list(friend.prints) == [chain.serial]
    assert friend.collection.prints[0].label().startswith("✓ Model-A (standard) CZ-MODEL-A-")
    with pytest.raises(WalletError, match="already in this wallet"):
        friend.admit(admitted)


def test_an_old_slip_of_an_item_sent_on_is_refused_offline_and_never_signed_twice(
    league: League,
) -> None:
    """# L-05, L-23: A sends a print to B, B sends it on to C; B's copy of A's old slip,
    imported again with no league to ask (--offline), is refused: the seen-registry knows the
    hop B signed after it. And a wallet holding a chain it has already signed on (a copy
    planted in it) refuses to sign that hop again. Before, both passed, and C's import then
    convicted B of a double endorsement."""
    a, (chain,) = stamped_wallet(league, "Model-A")
    b, c = Wallet.new(), Wallet.new()
    old_slip = a.send([chain.serial], b.public, 1_800_000_000)
    b.admit(receive_slip(old_slip, league.manifest, b.public, b.seen))
    b.send([chain.serial], c.public, 1_800_000_100)
    (again,) = receive_slip(old_slip, league.manifest, b.public, b.seen)
    with pytest.raises(WalletError, match="has moved on since this slip"):
        b.admit([again])
    assert b.prints == {}
    b.prints[chain.serial] = again  # held again behind the checks' back
    with pytest.raises(WalletError, match="already signed away from here at hop 2"):
        b.send([chain.serial], a.public, 1_800_000_200)


def test_send_refuses_what_cannot_be_sent(league: League) -> None:
    wallet, (chain,) = stamped_wallet(league, "Model-A")
    wallet.give(prints=[Print("Faithful")])
    other = SigningKey.generate().public
    with pytest.raises(WalletError, match="by its serial"):
        wallet.send(["faithful"], other, 0)
    with pytest.raises(WalletError, match="holds no stamped print"):
        wallet.send(["CZ-MODEL-A-0999"], other, 0)
    with pytest.raises(WalletError, match="your own"):
        wallet.send([chain.serial], wallet.public, 0)
    with pytest.raises(WalletError, match="each serial once"):
        wallet.send([chain.serial, chain.serial], other, 0)
    assert wallet.prints == {chain.serial: chain}  # nothing left on a refusal


def test_a_payload_that_disagrees_with_itself_is_refused(league: League) -> None:
    wallet, (_chain,) = stamped_wallet(league, "Model-A")
    payload = wallet.to_payload()
    for broken in (
        {**payload, "format": "cz-wallet/0"},
        {**payload, "prints": []},  # a ✓ print without its chain
        {**payload, "extra": 1},
        {**payload, "key": Wallet.new().to_payload()["key"]},  # chains endorsed to another key
    ):
        with pytest.raises(SchemaError):
            Wallet.from_payload(broken)
    assert payload["format"] == FORMAT


def test_the_home_writes_atomically_and_keeps_the_previous_code(tmp_path: Path) -> None:
    """Each write leaves a whole code (0600) in place, the previous one as .bak; a wrong
    passphrase opens nothing."""
    home = WalletHome(tmp_path / "home")
    with pytest.raises(WalletError, match="cz key strike"):
        home.read_code()
    first = Wallet.new()
    home.write(first, "one")
    assert home.path.stat().st_mode & 0o777 == 0o600
    assert home.directory.stat().st_mode & 0o777 == 0o700
    assert not home.backup.exists()
    old = home.read_code()
    first.give(marks=5)
    home.write(first, "one")
    assert home.backup.read_text(encoding="ascii") == old
    assert home.read("one").collection.marks == 5
    assert unseal(home.backup.read_text(encoding="ascii"), "one").collection.marks == 0
    with pytest.raises(WrongPassphraseError):
        home.read("two")
    assert sorted(p.name for p in home.directory.iterdir()) == [
        "wallet.czsave",
        "wallet.czsave.bak",
    ]


def test_the_home_moves_with_cz_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CZ_HOME", str(tmp_path / "elsewhere"))
    assert WalletHome.default().path == tmp_path / "elsewhere" / "wallet.czsave"
    monkeypatch.delenv("CZ_HOME")
    assert WalletHome.default().directory.name == "cz"


def test_a_save_code_of_something_else_is_refused(tmp_path: Path) -> None:
    code = seal_save_code({"hello": "world"}, "pw", MINIMUM_KDF)
    with pytest.raises(SchemaError, match="cz-wallet/1"):
        unseal(code, "pw")


WRITER = """
import sys
from pathlib import Path
from clients.wallet import Wallet, WalletHome
home = WalletHome(Path(sys.argv[1]))
wallet = Wallet.new()
print("ready", flush=True)
while True:
    wallet.give(marks=1)
    home.write(wallet, "pw")
"""


def test_a_killed_writer_never_leaves_a_half_written_wallet(tmp_path: Path) -> None:
    """A process writing the wallet over and over, killed (SIGKILL) at whatever moment: the
    wallet file always opens whole, with a count of marks it really wrote (docs/architecture.md
    §3)."""
    home = WalletHome(tmp_path / "home")
    env = {**os.environ, "CZ_KDF": "minimum"}
    counts = []
    for round_ in range(12):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home.directory)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
        time.sleep(0.01 * round_)  # a different moment each round, not an assertion
        writer.kill()
        writer.wait(timeout=60)
        if home.exists():
            counts.append(home.read("pw").collection.marks)
            if home.backup.exists():
                assert home.backup.read_text(encoding="ascii").endswith("-----\n")
    assert counts
    assert all(n >= 1 for n in counts)
