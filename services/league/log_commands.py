"""``league verify`` and ``league rebuild``: every service's log verified and its projection
folded from it afresh, compared (verify, rebuild --check) or written (rebuild)."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from ledger.errors import LedgerError
from services.kernel.errors import LeagueError
from services.league.context import kept_checkpoint, settings_of, store_of

if TYPE_CHECKING:
    from ledger.keys import SigningKey
    from ledger.manifest import LeagueManifest
    from services.kernel.projections import RebuildReport
    from services.kernel.settings import LeagueSettings


def cmd_verify(args: argparse.Namespace) -> None:
    from services.kernel.founding import load_manifest, load_service_key, read_passphrase
    from services.league.registry import PROJECTIONS, keyed

    settings = settings_of(args).with_database()
    manifest = load_manifest(settings)
    passphrase = read_passphrase(settings)
    keys = {
        name: load_service_key(settings, manifest, name, passphrase)
        for name in keyed(manifest, PROJECTIONS)  # an older league's tables are not kept
    }
    for line in asyncio.run(_verify(settings, manifest, keys)):
        print(line)


async def _verify(
    settings: LeagueSettings, manifest: LeagueManifest, keys: dict[str, SigningKey]
) -> list[str]:
    """Every service's log (leaves, signatures, subtrees, checkpoints, the checkpoint kept
    outside the database) and its projection folded from it afresh and compared (rolled
    back); the mint's census too. The first failure is raised naming its service, and
    nothing is printed then (the lines are returned once everything passed)."""
    import asyncpg

    from ledger.encoding import encode_b64
    from ledger.words import plural
    from services.kernel.projections import rebuild
    from services.league.registry import PROJECTIONS
    from services.mint.audit import audit_census
    from services.mint.mint import Mint

    lines = []
    async with asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool:
        for name, key in keys.items():
            store = store_of(pool, manifest, name, key)
            try:
                await kept_checkpoint(settings, name, key, manifest).check(store)
                summary = await store.verify_all(database_url=settings.database)
            except LedgerError as exc:
                raise LeagueError(f"{name} log: {exc.diagnostics()}") from None
            lines.append(
                f"{name} log: {plural(summary.events, 'event')}, "
                f"{plural(summary.subtrees, 'subtree')} and "
                f"{plural(summary.checkpoints, 'checkpoint')} verified "
                f"(root {encode_b64(summary.root)})"
            )
            if name == "mint":
                census = await audit_census(Mint(manifest, key, store))
                lines.append(
                    f"mint census: {plural(census.prints, 'print')} in "
                    f"{plural(census.runs, 'run')} to {plural(census.owners, 'key')}; its "
                    f"{plural(census.rows, 'projection row')} as folded from the log"
                )
            report = await rebuild(store, PROJECTIONS[name], commit=False)
            if report.differences:
                raise LeagueError(
                    f"{name} projection differs from what its log folds to: "
                    f"{report.differences[0].describe()} (league rebuild "
                    f"--check lists every difference)"
                )
            lines.append(
                f"{name} projection: {plural(report.rows, 'row')} as folded from "
                f"its {plural(report.events, 'event')}"
            )
    return lines


def cmd_rebuild(args: argparse.Namespace) -> None:
    from ledger.words import plural
    from services.kernel.founding import load_manifest, load_service_key, read_passphrase
    from services.league.registry import PROJECTIONS, keyed

    names = args.services or list(PROJECTIONS)
    unknown = [name for name in names if name not in PROJECTIONS]
    if unknown:
        raise LeagueError(
            f"no service is called {unknown[0]!r} (choose from {', '.join(PROJECTIONS)})"
        )
    settings = settings_of(args).with_database()
    manifest = load_manifest(settings)
    passphrase = read_passphrase(settings)
    if not args.services:  # an older league's tables are not kept
        names = keyed(manifest, names)
    keys = {name: load_service_key(settings, manifest, name, passphrase) for name in names}
    reports = asyncio.run(_rebuild(settings.database, manifest, keys, commit=not args.check))
    differed = False
    for report in reports:
        done = "checked" if args.check else "rebuilt"
        print(
            f"{report.projection}: {done} {plural(report.rows, 'row')} from "
            f"{plural(report.events, 'event')}"
        )
        for difference in report.differences:
            differed = True
            print(f"  differed: {difference.describe()}")
    if differed and args.check:
        raise LeagueError("the projections differ from what their logs fold to (see above)")


async def _rebuild(
    database_url: str, manifest: LeagueManifest, keys: dict[str, SigningKey], *, commit: bool
) -> list[RebuildReport]:
    import asyncpg

    from services.kernel.projections import rebuild
    from services.league.registry import PROJECTIONS

    async with asyncpg.create_pool(database_url, min_size=1, max_size=2) as pool:
        return [
            await rebuild(store_of(pool, manifest, name, key), PROJECTIONS[name], commit=commit)
            for name, key in keys.items()
        ]
