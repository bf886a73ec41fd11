"""The audit of witnessed tables' rewards (``ledger.rewards``; docs/economy.md "Witnessed
tables: rewards paid for real").

Two halves, paired by table:

- the treasury's (:class:`RewardsChecker`, a checker of :class:`ledger.audit.Auditor`): every
  ``reward-paid`` event is the tables key's signed order for this league, at version 1 of
  stream ``reward/<table>`` (one payment a table), its notes exactly the order's marks made out
  to the order's player and each issued after it as ``note-issued`` reason ``reward`` with the
  table's id, and its mint orders signed by the treasury, one per print of the due in order,
  to the player (``reward.<table>.<k>``); a ``note-issued`` of reason ``reward`` that no
  ``reward-paid`` listed fails, and so does a print the mint stamped on a reward's order id
  (``reward.<table>.<k>``) that no ``reward-paid`` ordered, or stamped twice. The payments
  found are :attr:`~RewardsChecker.rewards_paid`;
- the tables' (:class:`RewardsAudit`, fed by :class:`ledger.audit.tables.TablesChecker`): each
  closed table's due, by the player's witnessed campaign replayed (the game's, handed in as
  the referee is); every ``table-rewarded`` of a closed table, once, its due exactly the
  replayed one, naming the treasury's payment when something was due; at the end, every
  closed table settled (an unpaid reward fails), and, given the treasury's payments, each
  table's payment exactly its due and no payment in the name of a table that did not earn it
  (an overpaid reward fails); and, given the mint's award of the Misprint, that it went to the
  log's first *settling* Balance at Chair VI or above, by its player (L-41: a table at a venue
  its player's campaign had not opened, or opened without its work, cannot win it, and no
  table but the first settling one may have it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ledger.api.rewards import RewardDue, reward_stream, rewarded_table
from ledger.audit.facts import AuditFailure, Issued, Stamped
from ledger.audit.reward_facts import MisprintAwarded, PaidReward, Rewarded
from ledger.audit.state import _Log, _State
from ledger.errors import LedgerError
from ledger.rewards import Campaigns, TableRewarded
from ledger.tables import TableOpen, wins_misprint


class RewardsChecker(_State):
    """The treasury's rewards (see the module)."""

    @property
    def rewards_paid(self) -> dict[str, PaidReward]:
        """Each table's payment in the treasury's log, by table."""
        return self._rewards

    def _rewarded(self, log: _Log, fact: Rewarded) -> None:
        if fact.early is not None:
            raise log.fail(fact.seq, fact.early)
        if (fact.stream, fact.version) != (reward_stream(fact.table), 1):
            raise log.fail(
                fact.seq,
                f"table {fact.table}'s reward is version {fact.version} of {fact.stream!r}, "
                f"not the first of {reward_stream(fact.table)!r}: a table is paid once",
            )
        if fact.table in self._rewards:
            raise log.fail(fact.seq, f"table {fact.table}'s reward is paid twice")
        marks = sum(denomination for _, _, denomination, _, _ in fact.notes)
        if marks != fact.due.marks or any(to != fact.player for *_, to, _ in fact.notes):
            raise log.fail(
                fact.seq,
                f"table {fact.table}'s reward pays {marks} marks in notes "
                f"to {sorted({to for *_, to, _ in fact.notes})}; its due is {fact.due.marks} "
                f"marks to {fact.player}",
            )
        for serial, issue, _, _, digest in fact.notes:
            self._reward_notes[(serial, issue)] = (fact.table, digest)
        for order_id, owner, title, finish in fact.orders:
            self._reward_orders[order_id] = (owner, title, finish)
        self._rewards[fact.table] = PaidReward(fact.seq, fact.player, fact.due)

    def _reward_issued(self, log: _Log, fact: Issued) -> None:
        """A ``note-issued`` of reason ``reward``: one its table's ``reward-paid`` listed."""
        listed = self._reward_notes.pop((fact.serial, fact.issue), None)
        if listed != (fact.request_id, fact.certificate):
            raise log.fail(
                fact.seq,
                f"{fact.serial} issue {fact.issue} is issued as table {fact.request_id}'s "
                f"reward, which no reward-paid event lists",
            )

    def _reward_stamped(self, log: _Log, fact: Stamped) -> None:
        """A print the mint stamped on a treasury order: one of a reward's, once."""
        if fact.ordered is None or rewarded_table(fact.ordered) is None:
            return
        if fact.ordered in self._reward_stamps:
            raise log.fail(fact.seq, f"the reward print {fact.ordered} is stamped twice")
        self._reward_stamps[fact.ordered] = (fact.issued_to, fact.title, fact.finish, fact.seq)

    def _check_rewards(self) -> None:
        for order_id, (owner, title, finish, seq) in self._reward_stamps.items():
            if self._reward_orders.get(order_id) != (owner, title, finish):
                raise AuditFailure(
                    "mint",
                    seq,
                    f"a {finish} {title} is stamped to {owner} on order {order_id}, in table "
                    f"{rewarded_table(order_id)}'s name, and no reward-paid of the treasury "
                    f"ordered it",
                )
        if self._reward_notes:
            (serial, issue), (table, _) = next(iter(self._reward_notes.items()))
            raise AuditFailure(
                "treasury",
                None,
                f"table {table}'s reward lists {serial} issue {issue}, never issued",
            )


@dataclass
class RewardsAudit:
    """The tables log's rewards (see the module): fed by the tables' checker."""

    #: The witnessed campaigns to replay (None: only the records' shape is checked).
    campaigns: Campaigns | None = None
    #: The treasury's payments, by table (None: the treasury's log was not audited with it).
    paid: Mapping[str, PaidReward] | None = None
    #: How many events of the treasury's log were audited for ``paid`` (None: all there are).
    paid_upto: int | None = None
    #: The mint's award of the Misprint (None: not awarded, or the mint's log not audited).
    misprint: MisprintAwarded | None = None
    #: Each closed table's player and due (its due None without campaigns).
    closed: dict[str, tuple[str, RewardDue | None]] = field(default_factory=dict)
    settled: dict[str, TableRewarded] = field(default_factory=dict)
    #: Each closed Balance at Chair VI or above: its venue, and whether it settled (None
    #: without campaigns); and the first that settled, in the log's order (L-41).
    balances: dict[str, tuple[str, bool | None]] = field(default_factory=dict)
    first_balance: str | None = None

    def close(self, opened: TableOpen, verdict: str, seed: int) -> None:
        """A table closed, in the log's order of closes."""
        table = opened.table_id()
        settles = None if self.campaigns is None else self.campaigns.settles(opened)
        due = None if self.campaigns is None else self.campaigns.settle(opened, verdict, seed)
        self.closed[table] = (opened.player, due)
        if wins_misprint(opened.venue, verdict):
            self.balances[table] = (opened.venue, settles)
            if settles and self.first_balance is None:
                self.first_balance = table

    def rewarded(self, body: TableRewarded) -> None:
        """A ``table-rewarded`` record (a :class:`LedgerError` saying what is wrong)."""
        table = body.table
        if table not in self.closed:
            raise LedgerError(f"table {table}'s reward is recorded before it closed")
        if table in self.settled:
            raise LedgerError(f"table {table}'s reward is recorded twice")
        player, due = self.closed[table]
        if body.player != player:
            raise LedgerError(f"table {table}'s reward names {body.player}, not {player}")
        if due is not None and body.due != due:
            raise LedgerError(
                f"table {table}'s reward is recorded as {_said(body.due)}; its player's "
                f"witnessed campaign replayed pays {_said(due)}"
            )
        if body.due.nothing != (body.paid is None):
            raise LedgerError(
                f"table {table}'s reward of {_said(body.due)} is recorded "
                + ("unpaid" if body.paid is None else f"paid at the treasury's {body.paid}")
            )
        self.settled[table] = body

    def finish(self) -> tuple[int, int]:
        """Every closed table settled, every payment its due; (tables paid, marks paid).

        The treasury's log is read before the tables log (by ``league audit``), so a league
        audited while it plays may show a table's record naming a payment past the treasury's
        log as audited (``paid_upto``: not checked this time), or a payment whose record the
        tables service has not appended yet (accepted when it is exactly the closed table's
        due); a closed table whose due is neither recorded nor paid is unpaid."""
        paid = self.paid
        for table, (_, due) in self.closed.items():
            if table in self.settled or (due is not None and due.nothing):
                continue
            if paid is not None and table in paid and due is not None:
                continue  # its record is on its way: the payment is checked below
            what = "its reward" if due is None else _said(due)
            raise LedgerError(f"table {table} closed and {what} is unpaid: no reward recorded")
        marks = 0
        if paid is not None:
            for table, payment in paid.items():
                record = self.settled.get(table)
                player, due = self.closed.get(table, (None, None))
                if record is None and (player, due) == (payment.player, payment.due):
                    marks += payment.due.marks  # the table's due, its record on its way
                    continue
                if record is None or record.paid != payment.seq:
                    raise LedgerError(
                        f"the treasury paid {_said(payment.due)} in table {table}'s name "
                        f"(its event {payment.seq}), which the tables log does not record as "
                        f"that table's reward"
                    )
                if (payment.player, payment.due) != (record.player, record.due):
                    raise LedgerError(
                        f"the treasury paid table {table}'s player {_said(payment.due)}; its "
                        f"reward is {_said(record.due)}"
                    )
                marks += payment.due.marks
            for table, record in self.settled.items():
                if record.paid is None or table in paid:
                    continue
                if self.paid_upto is not None and record.paid >= self.paid_upto:
                    continue  # paid after the treasury's log was read: the next audit checks it
                raise LedgerError(
                    f"table {table}'s reward is recorded paid at the treasury's event "
                    f"{record.paid}, which pays no such table"
                )
        self.check_misprint()
        count = sum(1 for record in self.settled.values() if record.paid is not None)
        return count, marks

    def check_misprint(self) -> None:
        """The Misprint's award, if the mint made one: to a table the log closed with a
        settling Balance at Chair VI or above, by the certificate's holder, the first such in
        the log (L-24, L-41). The mint's log is read before the tables log, so the table the
        award names closed in the log as read."""
        award = self.misprint
        if award is None:
            return
        said = f"the mint awarded the Misprint (its event {award.seq}) to table {award.table}"
        if award.table not in self.balances:
            raise LedgerError(
                f"{said}, which the tables log does not close with a Balance at Chair VI or "
                f"above (IV.6)"
            )
        venue, settles = self.balances[award.table]
        player, _ = self.closed[award.table]
        if player != award.player:
            raise LedgerError(f"{said}, to {award.player}; the table is {player}'s")
        if settles is False:
            raise LedgerError(
                f"{said}, whose Balance at {venue} settles nothing: a venue its player's "
                f"witnessed campaign had not opened, or a table opened without its proof of "
                f"work, cannot win it (L-25, L-28, L-41)"
            )
        if self.campaigns is not None and self.first_balance != award.table:
            raise LedgerError(
                f"{said}; the first settling Balance at Chair VI or above in the tables log "
                f"is table {self.first_balance}'s, which it goes to (L-41)"
            )


def _said(due: RewardDue) -> str:
    if due.nothing:
        return "nothing"
    prints = ", ".join(f"{p.finish} {p.title}" for p in due.prints)
    return f"{due.marks} marks" + (f" and {prints}" if prints else "")
