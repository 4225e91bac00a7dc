"""`contracts` loads its API on first use (beartype comes with the verifier, not with the
Protocols), and its names stay what they were when it imported them eagerly."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.strip()


def test_the_protocols_load_without_beartype() -> None:
    assert _run("import sys, contracts.protocols; print('beartype' in sys.modules)") == "False"


def test_verify_is_the_function_after_its_module_was_imported() -> None:
    """The import system binds `contracts.verify` to the submodule once it is loaded; the
    name stays the function (a driver got the module and called it)."""
    code = ("import contracts.verify\n"
            "from contracts import verify\n"
            "import contracts\n"
            "print(callable(verify), contracts.verify is verify, verify.__module__)")
    assert _run(code) == "True True contracts.verify"


def test_every_public_name_resolves() -> None:
    code = ("import contracts\n"
            "print(all(getattr(contracts, n) is not None for n in contracts.__all__))")
    assert _run(code) == "True"
