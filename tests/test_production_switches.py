"""No test-only switch in production code: nothing in services/, clients/, ledger/ or game/
names an environment variable a test would set to stop a process at a point (``*_KILL_AT``,
like the treasury's former ``TREASURY_KILL_AT``), and nothing ends its process with
``os._exit`` but a forked child (a worker of ``league serve --workers``, in the function that
forks it: its one way out that runs none of its parent's clean-up). Tests crash services with
hooks they install themselves (tests/harness/crashed_saga.py, tests/reliability/crashing.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION = ("services", "clients", "apiclient", "ledger", "game")


def switches(source: str) -> list[str]:
    """What in ``source`` is a test switch: a string naming a ``*_KILL_AT`` variable, or a
    call of ``os._exit`` outside a function that calls ``os.fork``."""
    tree = ast.parse(source)
    forking = {
        id(inner)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(isinstance(n, ast.Attribute) and n.attr == "fork" for n in ast.walk(function))
        for inner in ast.walk(function)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "KILL_AT" in node.value.upper():
                found.append(node.value)
        elif isinstance(node, ast.Attribute) and node.attr == "_exit" and id(node) not in forking:
            found.append(f"{ast.unparse(node)}")
    return found


def test_no_production_module_holds_a_test_switch() -> None:
    found = {}
    for package in PRODUCTION:
        for path in sorted((ROOT / package).rglob("*.py")):
            if bad := switches(path.read_text(encoding="utf-8")):
                found[str(path.relative_to(ROOT))] = bad
    assert found == {}


def test_the_check_catches_a_kill_switch() -> None:
    """The former treasury's switch (an environment variable read, then ``os._exit``) is
    caught; a SIGKILL sent by a supervisor and ``sys.exit`` are not."""
    source = (
        "import os, signal, sys\n"
        "point = os.environ.get('TREASURY_KILL_AT')\n"
        "def reached(p):\n"
        "    if p == point:\n"
        "        os._exit(137)\n"
        "def stop(pid):\n"
        "    os.kill(pid, signal.SIGKILL)\n"
        "    sys.exit(1)\n"
    )
    assert switches(source) == ["TREASURY_KILL_AT", "os._exit"]


def test_a_forked_child_may_leave_by_os_exit() -> None:
    """The child of a fork leaves by ``os._exit`` in the function that forked it (a worker
    of ``league serve --workers``); the same call anywhere else is still a switch."""
    source = (
        "import os\n"
        "def start():\n"
        "    if os.fork() == 0:\n"
        "        os._exit(0)\n"
        "def elsewhere():\n"
        "    os._exit(3)\n"
    )
    assert switches(source) == ["os._exit"]
