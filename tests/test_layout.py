"""The test tree's layout: no test imports another test module (``test_*``) or the conftest
of another directory; what tests share lives in tests/harness/ (or a helper module beside
them). A helper kept in a test module makes its importers collect and depend on that module's
tests and fixtures, and pytest may import a conftest under another name than the importer's."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def offences(source: str, package: str) -> list[str]:
    """The modules that code of the package ``package`` (e.g. ``tests.services.mint``) imports,
    at any depth, from another test module or another directory's conftest."""
    imported: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    bad = []
    for module in imported:
        parent, _, last = module.rpartition(".")
        if module.startswith("tests.") and (
            last.startswith("test_") or (last == "conftest" and parent != package)
        ):
            bad.append(module)
    return bad


def test_no_test_imports_another_test_module_or_a_foreign_conftest() -> None:
    found = {}
    for path in sorted(TESTS.rglob("*.py")):
        package = ".".join(path.relative_to(TESTS.parent).parent.parts)
        if bad := offences(path.read_text(encoding="utf-8"), package):
            found[str(path.relative_to(TESTS.parent))] = bad
    assert found == {}


def test_the_check_catches_each_kind_of_reach() -> None:
    """A test module (by name or whole, inside a function too) and another directory's
    conftest are caught; the own directory's conftest, helper modules and harness are not."""
    source = (
        "from tests.services.mint.conftest import serve\n"
        "from tests.harness.founding import make_settings\n"
        "from tests.ledger.factories import make_league\n"
        "from tests.services.notary.conftest import T0\n"
        "import tests.services.league.test_cli\n"
        "def f():\n"
        "    from tests.services.http import test_problems\n"
    )
    assert offences(source, "tests.services.mint") == [
        "tests.services.notary.conftest",
        "tests.services.league.test_cli",
        "tests.services.http.test_problems",
    ]
