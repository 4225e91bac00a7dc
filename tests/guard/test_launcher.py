"""`nemo-rl-workers run` runs the entry point exactly as `python` would, guard armed.

Compared side by side with `python SCRIPT` / `python -m MODULE`: argv, `__name__`,
`sys.path[0]`, the exit status, an uncaught exception's last line; and the variable the
launcher sets for what the program starts (Ray's workers get the driver's environment).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.guard.upstream import CLI

PROGRAM = """\
import json, os, sys
print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                  "guard": os.environ.get("NEMO_RL_WORKERS_GUARD"),
                  "armed": any(type(f).__name__ == "_Trigger" for f in sys.meta_path)}))
if "--fail" in sys.argv:
    raise KeyError("the program's own error")
sys.exit(int(sys.argv[-1]))
"""


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEMO_RL_WORKERS_GUARD")}
    env["PYTHONPATH"] = str(cwd / "pkg_root")
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=60, check=False)


@pytest.fixture
def program(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "train.py"
    script.write_text(PROGRAM)
    (tmp_path / "pkg_root" / "trainpkg").mkdir(parents=True)
    (tmp_path / "pkg_root" / "trainpkg" / "__init__.py").write_text("")
    (tmp_path / "pkg_root" / "trainpkg" / "main.py").write_text(PROGRAM)
    return script


def test_a_script_runs_as_python_runs_it(program: Path) -> None:
    cwd = program.parent.parent
    plain = _run([sys.executable, "scripts/train.py", "--lr", "0.1", "3"], cwd)
    guarded = _run([CLI, "run", "scripts/train.py", "--lr", "0.1", "3"], cwd)
    assert plain.returncode == guarded.returncode == 3
    seen, ours = json.loads(plain.stdout), json.loads(guarded.stdout)
    assert ours["argv"] == seen["argv"] == ["scripts/train.py", "--lr", "0.1", "3"]
    assert ours["name"] == seen["name"] == "__main__"
    assert ours["path0"] == seen["path0"] == str(program.parent)
    assert (seen["guard"], seen["armed"]) == (None, False)
    assert (ours["guard"], ours["armed"]) == ("1", True)
    assert guarded.stderr == plain.stderr == ""


def test_a_module_runs_as_python_m_runs_it(program: Path) -> None:
    cwd = program.parent.parent
    plain = _run([sys.executable, "-m", "trainpkg.main", "0"], cwd)
    guarded = _run([CLI, "run", "-m", "trainpkg.main", "0"], cwd)
    assert plain.returncode == guarded.returncode == 0
    seen, ours = json.loads(plain.stdout), json.loads(guarded.stdout)
    for key in ("argv", "name", "path0"):
        assert ours[key] == seen[key]
    assert ours["armed"] is True


def test_an_uncaught_exception_ends_the_output_as_under_python(program: Path) -> None:
    cwd = program.parent.parent
    plain = _run([sys.executable, "scripts/train.py", "--fail", "0"], cwd)
    guarded = _run([CLI, "run", "scripts/train.py", "--fail", "0"], cwd)
    assert plain.returncode == guarded.returncode == 1
    last = "KeyError: \"the program's own error\""
    assert plain.stderr.strip().splitlines()[-1] == last
    assert guarded.stderr.strip().splitlines()[-1] == last


def test_usage_problems_are_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _run([CLI, "run"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "nemo-rl-workers run: give a SCRIPT or -m MODULE"
    done = _run([CLI, "run", "--bogus", "x.py"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "nemo-rl-workers run: unknown option --bogus"
