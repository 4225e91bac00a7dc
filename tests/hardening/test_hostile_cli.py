"""Hostile YAML through `nemo-rl-workers check`, end to end, as a user's shell sees it.

The loader's own handling of each file is tested in tests/config/test_loader_hostile.py;
here each goes through the installed command in a subprocess: exit status 2, exactly
one line on stderr, no traceback, in bounded time and memory.
"""

from __future__ import annotations

import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.bench_support import child_env, run_child

# The CLI itself peaks near 30 MB on a usable config (bench_driver_weight); an alias bomb
# expanded in full, or a 50 MB file read, would take hundreds of MB to GBs.
MAX_RSS_MB = 150.0
# Generous: a loaded shared machine; every case below is refused after bounded work.
TIMEOUT_S = 60.0
COMMAND = shutil.which("nemo-rl-workers", path=str(Path(sys.executable).parent))


def alias_bomb(folder: Path) -> Path:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    path = folder / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def fifty_megabytes(folder: Path) -> Path:
    path = folder / "big.yaml"
    line = b"key_%08d: value\n"
    with path.open("wb") as f:  # real bytes, not a sparse file: 50 MB of valid YAML
        chunk = b"".join(line % i for i in range(65536))
        while f.tell() < 50 * 1024 * 1024:
            f.write(chunk)
    return path


def defaults_cycle(folder: Path) -> Path:
    (folder / "b.yaml").write_text("defaults: a.yaml\npolicy: {}\n")
    path = folder / "a.yaml"
    path.write_text("defaults: b.yaml\npolicy: {}\n")
    return path


def defaults_outside_missing(folder: Path) -> Path:
    path = folder / "escape.yaml"
    path.write_text("defaults: ../../../../../../nonexistent/base.yaml\npolicy: {}\n")
    return path


def defaults_system_file(folder: Path) -> Path:
    path = folder / "passwd.yaml"
    path.write_text("defaults: /etc/passwd\n")
    return path


def defaults_device(folder: Path) -> Path:
    path = folder / "zero.yaml"
    path.write_text("defaults: /dev/zero\n")
    return path


def defaults_nul_byte(folder: Path) -> Path:
    path = folder / "nul.yaml"
    path.write_text('defaults: "base\\0.yaml"\n')  # YAML's \0 escape: a NUL in the name
    return path


def binary_garbage(folder: Path) -> Path:
    path = folder / "garbage.yaml"
    path.write_bytes(random.Random(0).randbytes(64 * 1024))
    return path


# case -> (how to write it, what its one line must say)
CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "alias bomb": (alias_bomb, "YAML aliases expand past"),
    "50 MB file": (fifty_megabytes, "over the 8388608-byte limit"),
    "defaults cycle": (defaults_cycle, "defaults cycle: "),
    "defaults outside the tree, missing": (
        defaults_outside_missing, "names /nonexistent/base.yaml, which does not exist"),
    # The fault lies in the parent: the line must send the user there, not to the child.
    "defaults outside the tree, /etc/passwd": (
        defaults_system_file, "/etc/passwd: must hold a mapping of keys to values"),
    "defaults naming a device": (defaults_device, "/dev/zero: is not a regular file"),
    "defaults naming a NUL byte": (defaults_nul_byte, "holds a NUL character"),
    "binary garbage": (binary_garbage, "is not UTF-8 text"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_file_is_one_line_and_exit_2(case: str, tmp_path: Path) -> None:
    assert COMMAND is not None, "nemo-rl-workers is not installed in the venv"
    write, says = CASES[case]
    config = write(tmp_path)
    run = run_child([COMMAND, "check", str(config)], env=child_env(), timeout_s=TIMEOUT_S)
    assert not run.timed_out
    assert run.returncode == 2, (run.stdout, run.stderr)
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"nemo-rl-workers: {config}: "), lines[0]
    assert says in lines[0], lines[0]
    assert "Traceback" not in run.stderr + run.stdout
    assert run.max_rss_mb < MAX_RSS_MB, f"{run.max_rss_mb:.0f} MB"
