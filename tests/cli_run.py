"""The CLI runners every test shares: `nemo-rl-workers ARGV` through the real entry point
(`nemo_rl_workers.commands.cli.main`) with its own output buffers, as users and CI call
it; in this process (`run_cli`: the `cli` fixture of tests/conftest.py hands it to a
test, helpers outside a test import it), or in a fresh interpreter (`run_cli_process`),
where nothing an earlier run left in this process's memory can answer."""

from __future__ import annotations

import io
import subprocess
import sys
from typing import NamedTuple, TextIO

from nemo_rl_workers.commands.cli import main


class Ran(NamedTuple):
    """One invocation: its exit code and everything it wrote (a tuple, so `code, out, err =`
    and comparing two runs both work)."""

    code: int
    out: str
    err: str


def run_cli(*argv: str, stdout: TextIO | None = None) -> Ran:
    """Run `nemo-rl-workers *argv` in this process. `stdout`: a stream of the test's own (a
    terminal's stand-in, say) instead of a fresh buffer; its text is returned if it is one."""
    out = io.StringIO() if stdout is None else stdout
    err = io.StringIO()
    code = main(list(argv), out, err)
    return Ran(code, out.getvalue() if isinstance(out, io.StringIO) else "", err.getvalue())


def run_cli_process(*argv: str, timeout: float = 300) -> Ran:
    """Run `python -m nemo_rl_workers *argv` in a new interpreter, with this environment."""
    done = subprocess.run([sys.executable, "-m", "nemo_rl_workers", *argv], capture_output=True,
                          text=True, timeout=timeout, check=False)
    return Ran(done.returncode, done.stdout, done.stderr)
