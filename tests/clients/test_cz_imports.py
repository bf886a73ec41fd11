"""``cz`` imports what the command it runs uses: ``cz --help`` loads no command group's module
(the league client, the wallet, the engines), ``cz table`` not the league client; and the
listing ``cz --help`` shows without the groups is the one the groups themselves add."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import pytest

from clients import cz
from tests.harness.imports import modules_loaded_after

#: Packages whose modules are heavy to import (or belong to the servers): none of them is
#: needed to print cz's help.
HEAVY = ("aiohttp", "alembic", "sqlalchemy", "asyncpg", "pydantic", "services", "game")
#: cz's own command groups' modules.
GROUP_MODULES = ("clients.cz_", "apiclient.league", "clients.wallet")


def loaded_after(argv: Sequence[str]) -> list[str]:
    """The heavy modules (and cz's own group modules) a fresh interpreter has loaded after
    running ``cz.main(argv)``."""
    return modules_loaded_after("clients.cz", argv, HEAVY, GROUP_MODULES)


def test_help_loads_no_command_group() -> None:
    """``cz --help`` (and ``cz`` with no command, or an unknown one) imports none of the
    command groups, nor aiohttp, pydantic, the engines or any server code."""
    assert loaded_after(["--help"]) == []
    assert loaded_after([]) == []
    assert loaded_after(["no-such-command"]) == []


def test_a_command_loads_only_its_group() -> None:
    """``cz table new`` imports the rules engine and nothing of the league client (aiohttp),
    the charter game or the campaign's commands."""
    loaded = loaded_after(["table", "new", "--kind", "base", "--seed", "1"])
    assert "game.window" in loaded
    for absent in ("aiohttp", "apiclient.league", "game.charter", "clients.cz_play"):
        assert absent not in loaded


def added_by(groups: Sequence[str]) -> dict[str, tuple[str, str | None]]:
    """Each top-level command the groups add, in order: its group and its help line."""
    found: dict[str, tuple[str, str | None]] = {}
    for group in groups:
        parser = argparse.ArgumentParser()
        commands = parser.add_subparsers()
        cz.load_group(group)(commands)
        for action in commands._choices_actions:
            found[action.dest] = (group, action.help)
    return found


def test_the_command_table_is_what_the_groups_add() -> None:
    """cz.COMMANDS names every command each group adds, with the group's help line, in the
    order the groups add them (a command added to a group and not to the table fails)."""
    assert list(added_by(cz.GROUPS).items()) == list(cz.COMMANDS.items())


def test_the_help_is_the_same_with_or_without_the_groups() -> None:
    """``cz --help`` built from the table alone prints what the fully built parser prints."""
    assert cz.build_parser([]).format_help() == cz.build_parser().format_help()


def subcommand(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of one top-level command."""
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = commands.choices[command]
    return found


@pytest.mark.parametrize("command", sorted(cz.COMMANDS))
def test_each_command_parses_with_only_its_group(command: str) -> None:
    """Each command's own help is there, whole, when only its group is built (the parser
    ``main`` builds for it)."""
    alone = subcommand(cz.build_parser([cz.COMMANDS[command][0]]), command)
    assert alone.format_help() == subcommand(cz.build_parser(), command).format_help()
