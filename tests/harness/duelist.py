"""A duel's second player in a process of its own: ``python -m tests.harness.duelist URL
MANIFEST CODE`` joins the duel of ``CODE`` at the tables service at ``URL`` with a key of its
own, brings its seed, and plays each of its turns (the first legal action; a drill's pattern at
once) until the duel closes; it prints the closed view as one JSON line and exits 0."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from tests.harness.served import GUARD_SECONDS
from tests.harness.tables import Player, next_action

#: Seconds between two reads of the table while the other seat decides.
POLL_SECONDS = 0.05


async def duel(url: str, manifest: LeagueManifest, code: str) -> dict[str, object]:
    player = Player(SigningKey.generate(), manifest, url)
    me = player.key.public.to_text()
    joined = await player.join(code)
    assert joined.status == 200, joined
    seeded = await player.seed()
    assert seeded.status == 200, seeded
    view = seeded.body
    while view["waiting"] not in ("closed", "abandoned"):
        if view["turn"] == me and view["waiting"] in ("move", "drill"):
            answer = await player.move(view["ply"], next_action(view))
            assert answer.status == 200, answer
            view = answer.body
            continue
        await asyncio.sleep(POLL_SECONDS)
        shown = await player.get(f"/tables/table/{player.table}")
        assert shown.status == 200, shown
        view = shown.body
    return view


def main() -> None:
    url, manifest_path, code = sys.argv[1:4]
    manifest = LeagueManifest.from_wire(Path(manifest_path).read_text(encoding="utf-8"))
    view = asyncio.run(asyncio.wait_for(duel(url, manifest, code), GUARD_SECONDS))
    print(json.dumps(view))


if __name__ == "__main__":
    main()
