"""``cz play --league``: a witnessed table at a served league, played through ``cz`` to its close
(docs/formats.md, "Witnessed tables"): every move signed and kept before it is sent, the
reveal checked at the close (the secret against the commitment, the seed derived, the whole
table replayed), an interrupted table resumed by sending the very same signed move again
(docs/rulings.md L-35)."""

from __future__ import annotations

import asyncio
import json
import stat
from datetime import timedelta
from pathlib import Path

import pytest

from apiclient.league import LeagueClient, LeagueProblem
from clients.wallet import WalletHome
from clients.witnessed import KeptTable, Unfair, check_reveal, kept_dir
from game.window.economy.prints import Print
from ledger.catalog import BASE_SIX, FOLDED_SEVEN
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.manifest import LeagueManifest
from ledger.tables import TableAbandoned, TableClosed, TableMove, table_secret
from ledger.wire import hash_text
from services.kernel.keyring import read_key
from tests.clients.conftest import (
    PASSPHRASE,
    Player,
    on_terminal,
    one_line_failure,
    wallet_with,
)
from tests.harness.forger import Forger, Forgery
from tests.harness.league import InProcessLeague

ACTION_PROMPT = "your action (number or notation; q leaves): "


def kept_tables(player: Player) -> list[KeptTable]:
    directory = kept_dir(player.home)
    return [KeptTable.load(p) for p in sorted(directory.glob("*.json"))]


async def events_of(url: str, table: str) -> tuple[LeagueManifest, list[Event]]:
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
        served = await client.table_events(table)
    assert manifest.tables is not None
    key = PublicKey.from_text(manifest.tables)
    return manifest, [e.verified(key) for e in served.events]


def test_a_witnessed_table_is_played_to_its_close_and_its_reveal_checked(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """A person at clerk-1 (every prompt answered 1, the first legal action; a drill of its
    own answered as typed): the table closes, the client says the league dealt fairly, the
    record replays offline, and every move it signed is kept (0600) and the one the log
    records at its ply."""
    you = players["A"]
    you.strike(served.url)
    result = you.run("play", "--league", "clerk-1", stdin="1\n" * 300)
    assert result.returncode == 0, result.stderr + result.stdout
    out = result.stdout
    assert "the league committed to its secret" in out
    assert "the league dealt fairly" in out
    assert "clerk-1: " in out
    (kept,) = kept_tables(you)
    assert (kept.closed, kept.checked, kept.venue) == (True, "fair", "clerk-1")
    assert kept.answered == len(kept.moves) > 0
    assert stat.S_IMODE(kept.path.stat().st_mode) == 0o600
    _, events = asyncio.run(events_of(served.url, kept.table))
    recorded = [e.body["request"] for e in events if e.type == "move-played"]
    assert recorded == [m.to_wire() for m in kept.moves]
    record = out.split("cz table replay ")[1].split("\n")[0]
    replayed = you.json("table", "replay", record)
    assert replayed["verdict"] is not None


def test_a_table_played_for_you_reports_json(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """``--auto`` lets this client's Chair choose the moves it signs; ``--json`` reports the
    close: the verdict, the columns the league reckoned, the seed, the check."""
    you = players["A"]
    you.strike(served.url)
    data = you.json("play", "--league", "clerk-2", "--auto")
    assert data["fair"] is True
    assert data["verdict"] in ("win", "loss", "balance")
    assert data["venue"] == "clerk-2"
    assert data["misprint"] is None


def test_a_tampered_reveal_is_reported_unfair(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """The checking function, given the table's own events with the close's secret replaced
    (or one opponent's action changed), says the league did not deal fairly; the true events
    check."""
    you = players["A"]
    you.strike(served.url)
    you.json("play", "--league", "clerk-1", "--auto")
    (kept,) = kept_tables(you)
    manifest, events = asyncio.run(events_of(served.url, kept.table))
    policies = manifest.policies
    actions = [a for e in events if e.type == "move-played" for a in e.body["actions"]]
    fair = check_reveal(kept, events, actions, policies)
    assert fair.table.closed

    closed = events[-1]
    wrong = TableClosed.from_wire({**closed.body, "secret": hash_text(b"\x07" * 32)})
    tampered = [*events[:-1], _with_body(closed, wrong.to_wire())]
    with pytest.raises(Unfair, match="commitment"):
        check_reveal(kept, tampered, actions, policies)

    moves = [i for i, e in enumerate(events) if e.type == "move-played"]
    first = events[moves[0]]
    changed = list(first.body["actions"])
    if len(changed) > 1:  # the opponent's first reply recorded as another one
        changed[1] = "pass"
        tampered = list(events)
        tampered[moves[0]] = _with_body(first, {**first.body, "actions": changed})
        with pytest.raises(Unfair):
            check_reveal(kept, tampered, actions, policies)


def _with_body(event: Event, body: dict[str, object]) -> Event:
    return Event(
        seq=event.seq,
        stream=event.stream,
        stream_version=event.stream_version,
        type=event.type,
        body=body,
        recorded_at=event.recorded_at,
        leaf_hash=event.leaf_hash,
        signature=event.signature,
    )


def test_an_interrupted_table_resends_the_same_signed_move(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """# L-35. A move kept and sent whose answer was lost (here: sent by hand, as the client
    would have, and the client stopped before it heard back): ``cz play --league --resume``
    sends those very bytes again, the service answers them as played already (409
    move-replayed), not as a second move, and the table goes on to its close; the log holds
    one move at that ply, the one kept."""
    you = players["A"]
    you.strike(served.url)
    left = you.run("play", "--league", "clerk-3", stdin="q\n")
    assert left.returncode == 0, left.stderr
    assert "--resume" in left.stdout
    (kept,) = kept_tables(you)
    assert kept.dealt
    assert not kept.moves

    async def send_and_lose() -> TableMove:
        async with LeagueClient(served.url) as client:
            view = await client.table(kept.table)
            wallet = WalletHome(you.home).read(PASSPHRASE)
            move = TableMove.sign(
                wallet.key,
                league=kept.league,
                manifest=kept.open.manifest,
                table=kept.table,
                time=kept.open.time,
                player=wallet.public.to_text(),
                ply=view.ply,
                action=view.legal[0],
            )
            kept.moves.append(move)
            kept.save()
            await client.move_table(move)  # recorded; its answer "lost"
            with pytest.raises(LeagueProblem) as again:
                await client.move_table(move)
            assert again.value.slug == "move-replayed"
            return move

    move = asyncio.run(send_and_lose())
    resumed = you.run("play", "--league", "--resume", kept.table, "--auto")
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert f"sending your kept move at ply {move.ply} again" in resumed.stdout
    assert "played already" in resumed.stdout
    assert "the league dealt fairly" in resumed.stdout
    _, events = asyncio.run(events_of(served.url, kept.table))
    at_ply = [e.body["request"] for e in events if e.type == "move-played"]
    assert at_ply[0] == move.to_wire()
    assert [e.body["ply"] for e in events if e.type == "move-played"].count(move.ply) == 1


def test_an_unfinished_table_is_resumed_before_a_new_one(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """A table left before its close is taken up by the next ``cz play --league``, even one
    naming another venue, so no kept move is ever left behind."""
    you = players["A"]
    you.strike(served.url)
    assert you.run("play", "--league", "clerk-1", stdin="q\n").returncode == 0
    (kept,) = kept_tables(you)
    out = you.ok("play", "--league", "clerk-4", "--auto")
    assert f"resuming your unfinished table {kept.table} at clerk-1" in out
    assert len(kept_tables(you)) == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("play", "--league", "clerk-9"), "no witnessed table sits at 'clerk-9'"),
        (("play", "--league"), "name a venue"),
        (("play", "--league", "registrar-lettered"), "8 stamped prints of distinct titles"),
        (("play", "--league", "clerk-1", "--seed", "3"), "--seed is for an offline table"),
        (("play", "--league", "--resume", "ab" * 16), "no table"),
    ],
)
def test_refusals_are_one_line(
    served: InProcessLeague, players: dict[str, Player], args: tuple[str, ...], says: str
) -> None:
    """A venue the league has no table at, no venue, an offline option, an unknown table."""
    you = players["A"]
    you.strike(served.url)
    assert says in one_line_failure(you.run(*args))


def test_no_league_pinned_is_one_line(players: dict[str, Player]) -> None:
    """Without a pinned league there is nobody to play: one line saying how to pin one."""
    you = players["A"]
    you.strike()
    assert "cz league set" in one_line_failure(you.run("play", "--league", "clerk-1"))


def test_a_kept_table_is_json_in_the_wallet_directory(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """The requests of a table left before its first move: its open and seed, kept."""
    you = players["A"]
    you.strike(served.url)
    you.run("play", "--league", "assessor", stdin="q\n")
    (path,) = kept_dir(you.home).glob("*.json")
    data = json.loads(path.read_text())
    assert data["format"] == "cz-witnessed-table/1"
    assert data["table"] == path.stem
    assert data["moves"] == []


def test_a_kept_move_too_old_to_send_is_signed_again_the_same(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """# L-35. A kept move never sent, now more than 300 s old: the service refuses it stale
    (it can never be recorded), the table is still at its ply, so the client signs the same
    action at the same ply with the time now, keeps it in its place and sends it: the log
    records that action at that ply, once."""
    you = players["A"]
    you.strike(served.url)
    assert you.run("play", "--league", "clerk-1", stdin="q\n").returncode == 0
    (kept,) = kept_tables(you)

    async def view_of() -> tuple[int, str]:
        async with LeagueClient(served.url) as client:
            view = await client.table(kept.table)
        return view.ply, view.legal[-1]

    ply, action = asyncio.run(view_of())
    wallet = WalletHome(you.home).read(PASSPHRASE)
    old = TableMove.sign(
        wallet.key,
        league=kept.league,
        manifest=kept.open.manifest,
        table=kept.table,
        time=kept.open.time - 1000,
        player=wallet.public.to_text(),
        ply=ply,
        action=action,
    )
    kept.moves.append(old)
    kept.save()
    resumed = you.run("play", "--league", "--resume", kept.table, "--auto")
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    _, events = asyncio.run(events_of(served.url, kept.table))
    first = next(e.body["request"] for e in events if e.type == "move-played")
    assert (first["ply"], first["action"]) == (ply, action)
    assert first["time"] != old.time
    (after,) = kept_tables(you)
    assert after.moves[0].to_wire() == first


def test_ctrl_c_at_the_prompt_leaves_the_table_at_once(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """On a terminal, Ctrl-C at the action prompt ends ``cz`` at once (status 130), saying how
    to resume; the table waits, unfinished, with nothing signed at its ply. (The league's calls
    once ran on an event loop held across the prompt, which swallowed Ctrl-C until the next
    move was typed, signed and sent.)"""
    you = players["A"]
    you.strike(served.url)
    status, shown = on_terminal(
        [str(a) for a in ("play", "--league", "clerk-1")], you.env(), [(ACTION_PROMPT, None)]
    )
    assert status == 130, shown
    assert "cz play --league --resume" in shown
    (kept,) = kept_tables(you)
    assert not kept.closed
    assert kept.moves == []


def test_the_reward_lands_in_the_wallet(
    served: InProcessLeague, players: dict[str, Player]
) -> None:
    """A win at clerk-1 (this client's Chair XII at the player's seat: a table or two) pays the
    witnessed campaign's due, M10, in notes issued by the treasury to the player's key: the
    close's answer carries them, ``cz`` checks each and puts it in the wallet, once; a loss
    pays nothing; the wallet holds exactly the notes the closes paid (docs/economy.md)."""
    you = players["A"]
    you.strike(served.url)
    paid: list[str] = []
    for _ in range(6):  # a guard: Chair XII beats the first clerk nearly always
        data = you.json("play", "--league", "clerk-1", "--auto", "XII")
        paid += data["reward"]["notes"]
        if data["verdict"] == "loss":
            assert data["reward"]["status"] == "nothing"
        if data["verdict"] == "win":
            break
    assert data["verdict"] == "win"
    reward = data["reward"]
    assert (reward["status"], reward["marks"]) == ("paid", 10)
    held = you.json("collection")["note_list"]
    assert sorted(n["serial"] for n in held) == sorted(paid)
    (kept, *_) = [k for k in kept_tables(you) if k.table == data["table"]]
    assert kept.rewarded
    you.json("play", "--league", "clerk-2", "--auto", "XII")  # nothing taken twice
    again = you.json("collection")["note_list"]
    assert {n["serial"] for n in held} <= {n["serial"] for n in again}


def test_a_registrars_table_is_played_with_eight_stamped_prints(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """# IV.3, L-39. At registrar-lettered the client brings eight stamped prints of distinct
    titles from the wallet (those outside the Registrar's own seven first); the table is dealt
    from both portfolios, played to its close and its reveal checked; its record (an explicit
    portfolio deal) replays offline. Without eight stamped titles: one line, nothing opened."""
    you = players["A"]
    titles = [c.name for c in BASE_SIX + FOLDED_SEVEN][:8]
    wallet_with(tmp_path / "eight.code", [Print(t) for t in titles])
    you.ok("load", str(tmp_path / "eight.code"))
    you.ok("league", "set", served.url)
    short = you.run("play", "--league", "registrar-lettered", "--auto")
    assert "8 stamped prints of distinct titles" in one_line_failure(short)
    assert not kept_dir(you.home).exists() or not list(kept_dir(you.home).glob("*.json"))
    you.ok("stamp")
    data = you.json("play", "--league", "registrar-lettered", "--auto")
    assert data["fair"] is True
    replayed = you.json("table", "replay", data["record"])
    assert replayed["verdict"] is not None
    (kept,) = kept_tables(you)
    assert kept.open.portfolio is not None
    assert sorted(c.title for c in kept.open.portfolio) == sorted(titles)


def _abandoned_at(events: list[Event], secret: bytes, after: float) -> list[Event]:
    """``events`` of a table left in play, with the ``table-abandoned`` the move clock's sweep
    records ``after`` seconds past the last of them (signatures are checked before this)."""
    last = events[-1]
    body = TableAbandoned(
        table=last.body["table"], secret=hash_text(secret), waiting="move", seat=None
    )
    return [
        *events,
        Event(
            seq=last.seq + 1,
            stream=last.stream,
            stream_version=last.stream_version + 1,
            type=TableAbandoned.TYPE,
            body=body.to_wire(),
            recorded_at=last.recorded_at + timedelta(seconds=after),
            leaf_hash=last.leaf_hash,
            signature=last.signature,
        ),
    ]


def test_an_abandoned_table_is_checked_as_far_as_it_went(
    served: InProcessLeague, league_env: dict[str, str], players: dict[str, Player]
) -> None:
    """# L-31. A table left after its first move and abandoned once its move clock ran out
    (300 s after its last event) checks: the secret opens the commitment and the moves replay.
    Abandoned within the clock (10 s after), it is reported unfair: a league that ends a
    player's table early, before its clock ran out, is caught."""
    you = players["A"]
    you.strike(served.url)
    assert you.run("play", "--league", "clerk-1", stdin="1\nq\n").returncode == 0
    (kept,) = kept_tables(you)
    manifest, events = asyncio.run(events_of(served.url, kept.table))
    home = Path(league_env["LEAGUE_HOME"])
    secret = table_secret(read_key(home / "keys", "tables"), manifest.league, kept.table)
    actions = [a for e in events if e.type == "move-played" for a in e.body["actions"]]
    fair = check_reveal(kept, _abandoned_at(events, secret, 301), actions, manifest.policies)
    assert fair.abandoned is not None
    assert fair.closed is None
    assert not fair.table.closed
    with pytest.raises(Unfair, match="within its 300 s move clock"):
        check_reveal(kept, _abandoned_at(events, secret, 10), actions, manifest.policies)
    with pytest.raises(Unfair, match="commitment"):
        check_reveal(kept, _abandoned_at(events, b"\x01" * 32, 301), actions, manifest.policies)


@pytest.mark.parametrize(
    ("forgery", "status", "slug"),
    [
        ("forge", 422, "illegal-move"),
        ("forward-then-forge", 422, "illegal-move"),
        ("forge", 409, "move-replayed"),
        ("forge", 409, "timed-out"),
        ("forge", 409, "out-of-turn"),
    ],
)
def test_a_forged_refusal_never_makes_the_client_sign_a_second_move_at_a_ply(
    served: InProcessLeague,
    players: dict[str, Player],
    forgery: Forgery,
    status: int,
    slug: str,
) -> None:
    """# L-35. Someone between the player and the league answers the first move with a
    refusal (the move not passed on, or passed on and recorded): 422 illegal-move for a move
    the rules allow on the board the log replays, or 409 move-replayed, timed-out (well
    before the table's deadline) or out-of-turn while the table still waits for that very
    move. The client believes none of them: it says so on one line and keeps the signed move;
    resumed, it sends those very bytes again, so the log's move at that ply is the one first
    signed and the table checks fair at its close. (Before, the 422 dropped the move and the
    409s marked it answered, and the client signed another move at the same ply, handing the
    man in the middle two signed moves to choose from.)"""
    moves = 0

    def decide(method: str, path: str) -> Forgery:
        nonlocal moves
        if method == "POST" and path == "/tables/move":
            moves += 1
            return forgery if moves == 1 else "pass"
        return "pass"

    forged = {
        "type": f"/problems/{slug}",
        "title": slug,
        "status": status,
        "detail": "forged",
        "instance": "/tables/move",
    }
    forger = Forger(served.url, decide, (status, forged))
    try:
        you = players["A"]
        you.strike(forger.url)
        first = you.run("play", "--league", "clerk-1", "--auto")
        assert forger.forged == [("POST", "/tables/move")]
        assert first.returncode != 0
        said = [line for line in first.stderr.splitlines() if line.strip()]
        assert len(said) == 1, first.stderr
        assert "your move at ply 0" in said[0]
        assert "is kept" in said[0]
        assert "--resume" in said[0]
        (kept,) = kept_tables(you)
        signed = kept.pending
        assert signed is not None
        assert signed.ply == 0
        resumed = you.run("play", "--league", "--resume", kept.table, "--auto")
        assert resumed.returncode == 0, resumed.stderr + resumed.stdout
        assert f"sending your kept move at ply 0 again: {signed.action}" in resumed.stdout
        assert "the league dealt fairly" in resumed.stdout
        (after,) = kept_tables(you)
        assert after.moves[0] == signed
        _, events = asyncio.run(events_of(served.url, kept.table))
        recorded = [e.body for e in events if e.type == "move-played"]
        assert recorded[0]["request"] == signed.to_wire()
        assert [body["ply"] for body in recorded].count(0) == 1
    finally:
        forger.stop()
