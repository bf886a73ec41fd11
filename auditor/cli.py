"""``league audit``'s command (docs/operations.md "Auditing a running league"): the audit its
options ask for, and the report printed. ``league`` parses the options and calls :func:`audit`;
every refusal is an :class:`~auditor.errors.AuditorError` (one line, exit status 2 from
``league``) and a league that fails raises :class:`~ledger.audit.AuditFailure`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import platformdirs

from auditor.errors import AuditorError
from auditor.run import AuditProgress, audit_offline, audit_url, service_urls
from auditor.tables import audit_tables
from ledger.address import address_of
from ledger.audit.tables import Referee, TablesReport
from ledger.keys import PublicKey
from ledger.manifest import Policies
from ledger.rewards import Campaigns


def default_audit_dir() -> Path:
    """Where ``league audit`` keeps what it pinned and saw (the user's data directory)."""
    return Path(platformdirs.user_data_dir("the-window-league-audit", appauthor=False))


def audit(
    args: argparse.Namespace,
    referee: Referee | None = None,
    campaigns: Callable[[Policies], Campaigns] | None = None,
) -> None:
    """Run the audit ``args`` ask for (``league audit``'s options) and print its report on
    stdout, its progress on stderr; raise at the first violation or bad input. With a
    ``referee`` (the game's), a league served at a URL has its witnessed tables replayed too
    (:mod:`auditor.tables`), and with ``campaigns`` (the game's witnessed campaigns) each
    table's reward checked against the treasury's payments."""
    given = {"mint": args.mint, "treasury": args.treasury, "notary": args.notary}
    online = args.url is not None or any(given.values())
    if online == (args.offline is not None):
        raise AuditorError(
            "give the league's URL (or its services' URLs), or --offline DIR "
            "(not both; see league audit --help)"
        )
    if args.offline is not None and args.save is not None:
        raise AuditorError("--save writes what is downloaded from a URL; --offline reads it")
    state_dir = args.state or default_audit_dir()
    root = PublicKey.from_text(args.root) if args.root else None
    progress = AuditProgress(sys.stderr)
    if args.offline is not None:
        outcome = audit_offline(
            args.offline, state_dir, root=root, workers=args.workers, progress=progress
        )
        what = f"{args.offline} (saved from {outcome.url})"
    else:
        url, services = service_urls(args.url, given)
        outcome = asyncio.run(
            audit_url(
                url,
                state_dir,
                root=root,
                save=args.save,
                workers=args.workers,
                progress=progress,
                services=services,
            )
        )
        what = outcome.url
    pinned = "pinned now (first use)" if outcome.first_use else "as pinned"
    print(f"audited {what}: root key {address_of(outcome.root)} {pinned}")
    for service, at in sorted(outcome.read_at.items()):
        print(f"  the {service} read at {at}")
    if outcome.moved_from:
        print(
            f"  the same league (its root) was audited before at {', '.join(outcome.moved_from)}"
            f": its history is kept"
        )
    for line in outcome.report.lines():
        print(f"  {line}")
    if referee is not None and args.offline is None:
        report = outcome.report
        treasury = next((s.events for s in report.services if s.service == "treasury"), None)
        tables = asyncio.run(
            audit_tables(
                outcome.url,
                outcome.root,
                referee,
                campaigns,
                report.rewards,
                treasury,
                report.misprint,
            )
        )
        for line in tables.lines() if isinstance(tables, TablesReport) else [f"tables: {tables}"]:
            print(f"  {line}")
    if args.save is not None:
        print(
            f"saved every answer in {args.save} (audit it again with "
            f"`league audit --offline {args.save}`)"
        )
    print(f"passed; checkpoints kept in {outcome.state} for the next audit")
