"""Witnessed campaigns: what a league's witnessed table pays its player (Book IV.1–IV.6, V.5;
docs/economy.md "Witnessed tables: rewards paid for real"; docs/rulings.md L-25…L-28).

A player key's **witnessed campaign** is the offline campaign (``game.window.campaign``) fed
the key's closed witnessed tables in the tables log's order: a table's reward is what
:func:`~game.window.campaign.settle` pays for it given the tables before it — the marks per
result, the Registrars' first and repeat settlements, a sealed bundle at every second
first-clearing of a Chair, the holofoil Zenoseal for the first clearing of Chair XII (the
Misprint stays the mint's award, L-24). The readings:

- L-25: a table at a venue the campaign had not opened when it closed ("Beat Chair n to unlock
  Chair n+1", the market seal) is played and recorded, and settles nothing: no record, no pay;
- L-26: a sealed bundle is opened at once into its three prints with the published odds (V.5,
  ``game.window.economy.bundles``) under the table's deal seed (unknown to anyone before the
  table was dealt, public once it closed), and each print is stamped by the mint inside its run;
- L-28: a table whose open request does not carry the proof of work of its venue
  (:func:`table_work`) settles nothing either;
- L-41: the league's one Misprint goes to the first *settling* Balance at Chair VI or above
  in the tables log (:meth:`WitnessedCampaigns.settles`, the one judgement of both).

:class:`WitnessedCampaigns` is the ``ledger.rewards.Campaigns`` the tables service pays by and
the auditor checks by.
"""

from __future__ import annotations

from game.window.campaign import (
    ASSESSOR_MARKS,
    CHAIR_MARKS,
    CLERK_MARKS,
    REGISTRAR_FIRST_MARKS,
    Campaign,
    Venue,
    all_venues,
    settle,
)
from game.window.economy.bundles import open_bundle
from game.window.economy.prints import Finish
from game.window.scoring import Verdict
from ledger.api.rewards import RewardDue, RewardPrint
from ledger.errors import InsufficientWork
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest, Policies
from ledger.print_runs import RunFinish
from ledger.tables import TableOpen
from ledger.work import challenge, meets, solve

#: A paid print's finish as its run names it: a reward is stamped inside a run, so never the
#: Misprint (which is awarded apart, IV.6).
RUN_FINISH: dict[Finish, RunFinish] = {
    Finish.STANDARD: "standard",
    Finish.GILT: "gilt",
    Finish.HOLOFOIL: "holofoil",
}

#: Every venue by its name (``clerk-2``, ``chair-VI``, ``registrar-lettered``).
VENUES: dict[str, Venue] = {venue.name: venue for venue in all_venues()}
#: The campaign seed of every witnessed campaign: it draws only which of a Registrar's seven
#: prints is the holofoil, which the player may know beforehand (all seven are struck).
CAMPAIGN_SEED = 0


def most_marks(venue: Venue) -> int:
    """The most marks one table at ``venue`` pays (either verdict, first settlement)."""
    if venue.kind == "clerk":
        table = CLERK_MARKS
    elif venue.kind == "assessor":
        table = ASSESSOR_MARKS
    elif venue.kind == "registrar":
        table = REGISTRAR_FIRST_MARKS
    else:
        table = CHAIR_MARKS[venue.number]
    return max(table.values())


def table_work(policies: Policies, venue: str) -> int:
    """Expected hashes of proof of work a table's open request carries for its reward (L-28):
    the manifest's ``table_work_per_mark`` per mark the venue pays at most."""
    return policies.table_work_per_mark * max(1, most_marks(VENUES[venue]))


def carries_work(policies: Policies, request: TableOpen) -> bool:
    """Whether ``request`` carries its venue's proof of work, bound to it."""
    if request.work is None:
        return False
    price = table_work(policies, request.venue)
    return meets(challenge(request.to_wire()), 0, request.work, price)


def check_work(policies: Policies, request: TableOpen) -> None:
    """Refuse (:class:`InsufficientWork`) an open request whose work does not meet its venue's
    price: a request without work is a table that pays nothing (L-28), one with too little
    is a player's mistake, said before the table is played."""
    if request.work is not None and not carries_work(policies, request):
        raise InsufficientWork(
            f"work: the nonce is not worth the {table_work(policies, request.venue)} expected "
            f"hashes a rewarded table at {request.venue} costs (game.window.rewards.table_work)"
        )


def table_open(
    key: SigningKey,
    manifest: LeagueManifest,
    *,
    venue: str,
    request_id: str,
    at: int,
    worked: bool = True,
) -> TableOpen:
    """``key``'s signed request to open a table at ``venue``: carrying the venue's proof of
    work, solved here (``ledger.work.solve``: ``table_work`` hashes on average), or without
    any when ``worked`` is false (a table that settles nothing, L-28)."""
    fields: dict[str, object] = {
        "league": manifest.league,
        "manifest": manifest.hash_text(),
        "request_id": request_id,
        "time": at,
        "player": key.public.to_text(),
        "venue": venue,
    }
    if not worked:
        return TableOpen.sign(key, **fields)
    bound = challenge({"kind": TableOpen.KIND, **fields})
    nonce = solve(bound, 0, table_work(manifest.policies, venue))
    return TableOpen.sign(key, **fields, work=nonce)


def bundle_seed(seed: int, n: int) -> str:
    """The seed the ``n``-th bundle of a table dealt from ``seed`` opens under (L-26)."""
    return f"witnessed:{seed}:{n}"


class WitnessedCampaigns:
    """Every player's witnessed campaign, fed closes in the tables log's order."""

    def __init__(self, policies: Policies) -> None:
        self.policies = policies
        self.campaigns: dict[str, Campaign] = {}

    def state(self, player: str) -> Campaign:
        """``player``'s witnessed campaign so far."""
        return self.campaigns.get(player) or Campaign(CAMPAIGN_SEED)

    def restore(self, player: str, campaign: Campaign) -> None:
        """Go on from ``campaign``, ``player``'s witnessed campaign up to some close."""
        self.campaigns[player] = campaign

    def settles(self, opened: TableOpen) -> bool:
        """Whether the table ``opened`` opened settles when it closes next in its player's
        witnessed campaign: its venue is one the campaign has opened (L-25) and its open
        request carries the venue's proof of work (L-28). A table that does not settles
        nothing: no pay, no count in the record, and no Misprint (L-41)."""
        venue = VENUES.get(opened.venue)
        return (
            venue is not None
            and carries_work(self.policies, opened)
            and self.state(opened.player).is_open(venue)
        )

    def settle(self, opened: TableOpen, verdict: str, seed: int) -> RewardDue:
        """Settle the table ``opened`` opened, closed with the player's ``verdict`` and dealt
        from ``seed``; its due (nothing unless it :meth:`settles`)."""
        if not self.settles(opened):
            return RewardDue()
        venue = VENUES[opened.venue]
        state = self.state(opened.player)
        state, reward = settle(state, venue, Verdict(verdict))
        # Only the record and the draws are kept: the collection is the league's logs'.
        self.campaigns[opened.player] = Campaign(
            state.seed, state.record, misprint_paid=state.misprint_paid, draws=state.draws
        )
        prints = [RewardPrint(title=p.title, finish=RUN_FINISH[p.finish]) for p in reward.prints]
        for n in range(reward.bundles):
            prints += [
                RewardPrint(title=p.title, finish=RUN_FINISH[p.finish])
                for p in open_bundle(bundle_seed(seed, n))
            ]
        return RewardDue(marks=reward.marks, prints=tuple(prints), bundles=reward.bundles)
