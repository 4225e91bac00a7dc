"""An output that cannot be written is exit 74 and one line (issue 35), in every command:
stdout on a full device (`/dev/full`) or closed (`>&-`), never an internal error (70) nor a
traceback. Each case is the installed command in its own process, as a shell runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bench_support import child_env

COMMAND = shutil.which("nemo-rl-workers", path=str(Path(sys.executable).parent))
REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "examples" / "configs" / "grpo_tiny.yaml")
OUTDATED = str(REPO / "docs" / "examples" / "outdated_grpo.yaml")
ARGS = {
    "explain": ["explain"],
    "explain R1": ["explain", "R1", "--json"],
    "list": ["list"],
    "resolve": ["resolve", TINY],
    "check": ["check", "--no-verify", TINY],
    "verify": ["verify", "collections.OrderedDict", "--protocol", "PolicyWorker"],
    "migrate": ["migrate", OUTDATED],
    "help": ["--help"],
    "audit": ["audit", "--nemo-rl", "runtime", "--no-cache"],
}


def run(argv: list[str], stdout: str) -> subprocess.CompletedProcess[str]:
    """`nemo-rl-workers ARGV` with stdout sent to `/dev/full`, or closed (`stdout="closed"`)."""
    assert COMMAND is not None
    if stdout == "closed":
        def close_stdout() -> None:
            os.close(1)

        return subprocess.run([COMMAND, *argv], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=120, env=child_env(NO_COLOR="1"), cwd=REPO,
                              preexec_fn=close_stdout, check=False)
    with open(stdout, "w") as out:
        return subprocess.run([COMMAND, *argv], stdin=subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              env=child_env(NO_COLOR="1"), cwd=REPO, check=False)


@pytest.mark.parametrize("stdout", ["/dev/full", "closed"])
@pytest.mark.parametrize("name", sorted(ARGS))
def test_an_output_that_cannot_be_written_is_exit_74(name: str, stdout: str) -> None:
    if stdout == "/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("this system has no /dev/full")
    done = run(ARGS[name], stdout)
    reason = "No space left on device" if stdout == "/dev/full" else "the stream is closed"
    assert (done.returncode, done.stderr) == (
        74, f"nemo-rl-workers: cannot write the output: {reason}\n")


def test_a_full_stderr_is_still_exit_74_and_nothing_else() -> None:
    assert COMMAND is not None
    with open("/dev/full", "w") as full:
        done = subprocess.run([COMMAND, "explain"], stdout=full, stderr=full, timeout=120,
                              env=child_env(), cwd=REPO, check=False)
    assert done.returncode == 74
