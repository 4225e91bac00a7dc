"""The `.pth` start-up line: installed, does nothing unarmed, arms with the variable.

Each case is a fresh interpreter of this project's environment (where `make setup`
installed the tool editable, compat mode); the wheel case builds the wheel and looks in it.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

PTH = "nemo_rl_workers_guard.pth"
LOADED = ("import sys, json; print(json.dumps(sorted(m for m in sys.modules if "
          "m.split('.')[0] in ('nemo_rl_workers', 'wrapt', 'nemo_rl', 'contracts'))))")


def _loaded(env: dict[str, str]) -> list[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("NEMO_RL_WORKERS_GUARD")}
    done = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True,
                          env={**base, **env}, timeout=60, check=True, cwd="/")
    assert done.stderr == ""
    found: list[str] = json.loads(done.stdout)
    return found


def test_the_editable_install_holds_the_line() -> None:
    installed = [Path(p) / PTH for p in site.getsitepackages() if (Path(p) / PTH).is_file()]
    assert installed, "make setup installs nemo_rl_workers_guard.pth into site-packages"
    assert installed[0].read_text() == (Path(REPO_ROOT) / PTH).read_text()


@pytest.mark.parametrize("value", [None, "", "0"])
def test_unarmed_it_imports_nothing(value: str | None) -> None:
    assert _loaded({} if value is None else {"NEMO_RL_WORKERS_GUARD": value}) == []


def test_armed_it_waits_for_upstream_and_imports_nothing_else() -> None:
    """Armed, start-up imports the tool's start-up module alone: wrapt and the hooks come
    with upstream's worker groups (tests/guard/test_upstream_worker_groups.py)."""
    loaded = _loaded({"NEMO_RL_WORKERS_GUARD": "1"})
    assert "nemo_rl_workers.guard.startup" in loaded
    assert not [m for m in loaded if m.split(".")[0] in ("nemo_rl", "contracts", "wrapt")]
    assert "nemo_rl_workers.guard.hooks" not in loaded


@pytest.mark.slow
def test_the_wheel_ships_the_line_at_its_root(tmp_path: Path) -> None:
    source = tmp_path / "src"  # a copy: building writes build/ and egg-info beside it
    for name in ("pyproject.toml", "setup.py", "README.md", PTH):
        source.mkdir(exist_ok=True)
        shutil.copy(Path(REPO_ROOT) / name, source / name)
    for package in ("nemo_rl_workers", "contracts"):
        shutil.copytree(Path(REPO_ROOT) / package, source / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), str(source)], check=True, timeout=300, capture_output=True,
        cwd=tmp_path)
    [wheel] = tmp_path.glob("nemo_rl_worker_contracts-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(PTH).decode() == (Path(REPO_ROOT) / PTH).read_text()
