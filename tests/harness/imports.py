"""What a command's ``main`` imports: run in a fresh interpreter, the modules it left loaded."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence


def modules_loaded_after(
    module: str, argv: Sequence[str], packages: Sequence[str], prefixes: Sequence[str]
) -> list[str]:
    """The modules a fresh interpreter has loaded after running ``module.main(argv)`` (its
    output swallowed, its exit caught) that are of one of ``packages`` (top-level names) or
    start with one of ``prefixes``, sorted."""
    probe = (
        "import contextlib, io, sys\n"
        f"import {module}\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    {module}.main({list(argv)!r})\n"
        f"heavy, code = {tuple(packages)!r}, {tuple(prefixes)!r}\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in heavy\n"
        "    or m.startswith(code))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.split()
