"""No import circle in the repository's packages outside one engine's core: a module that imports
another which (directly or not, a ``TYPE_CHECKING`` import too) imports it back is allowed only
inside THE WINDOW's rules engine (the modules import-linter's contract names in pyproject.toml,
whose state and its rules are one idea) or inside the charter engine (``game.charter``);
everywhere else imports run one way: in the protocol, the API client, the player's client and
the services too."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ledger", "game", "apiclient", "clients", "services")
WINDOW_ENGINE_CONTRACT = "THE WINDOW's rules engine knows nothing"


def window_engine() -> frozenset[str]:
    """THE WINDOW's rules engine, as the import-linter contract in pyproject.toml lists it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = (
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"].startswith(WINDOW_ENGINE_CONTRACT)
    )
    return frozenset(contract["source_modules"])


def circles(imports: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import circles of a module graph (``imports[m]``: what ``m`` imports): each strongly
    connected set of two or more modules (or one importing itself), sorted."""
    graph = {m: sorted(set(targets) & imports.keys()) for m, targets in imports.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        # Tarjan's algorithm, iteratively: (module, its next edge to follow).
        work = [(root, 0)]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, edge = work.pop()
            if edge < len(graph[module]):
                work.append((module, edge + 1))
                target = graph[module][edge]
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, 0))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == module:
                        break
                if len(members) > 1 or module in graph[module]:
                    found.append(sorted(members))
    return sorted(found)


def allowed(circle: list[str], engine: frozenset[str]) -> bool:
    """A circle inside one engine's core."""
    return set(circle) <= engine or all(m.startswith("game.charter.") for m in circle)


def test_no_import_circle_outside_an_engine_core() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    ours = {m: t for m, t in imports.items() if m.split(".")[0] in PACKAGES}
    engine = window_engine()
    assert [c for c in circles(ours) if not allowed(c, engine)] == []


def test_circles_finds_every_circle_and_only_circles() -> None:
    """A two-module circle, a three-module one through a chain, a module importing itself;
    a diamond and a chain are no circle."""
    imports = {
        "a": ["b"],
        "b": ["a", "c"],
        "c": ["d"],
        "d": ["e"],
        "e": ["c"],
        "s": ["s"],
        "x": ["y", "z"],
        "y": ["w"],
        "z": ["w"],
        "w": [],
    }
    assert circles(imports) == [["a", "b"], ["c", "d", "e"], ["s"]]


def test_only_an_engine_core_may_hold_a_circle() -> None:
    engine = frozenset({"game.window.state", "game.window.scoring"})
    assert allowed(["game.window.scoring", "game.window.state"], engine)
    assert allowed(["game.charter.state", "game.charter.turns"], engine)
    assert not allowed(["game.window.state", "game.window.tables"], engine)
    assert not allowed(["clients.cz", "clients.cz_table"], engine)
    assert not allowed(["game.charter.state", "game.window.state"], engine)
