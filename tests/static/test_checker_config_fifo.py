"""The files a type checker reads on its own in a tree it searches go through the guarded
reader first (issue 45, item 1): `verify --static --nemo-rl TREE` where the tree's
`pyproject.toml` is a FIFO hung until killed; it is one line and exit 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nemo_rl_workers.checks.static.checker_files import refused_config
from nemo_rl_workers.checks.static.static_check import checker_command
from tests.corpus import NEMO_RL


@pytest.mark.parametrize("name", ["pyproject.toml", "pyrefly.toml", "mypy.ini"])
def test_a_fifo_config_is_refused_at_once(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / name)
    assert refused_config([tmp_path]) == (
        f"{tmp_path / name} is not a regular file: the type checker would read it; not run")
    (tmp_path / name).unlink()
    (tmp_path / name).write_text("")
    assert refused_config([tmp_path]) is None


CORPUS = NEMO_RL


@pytest.mark.slow
@pytest.mark.skipif(checker_command("pyrefly") is None, reason="pyrefly is not installed")
@pytest.mark.skipif(not (CORPUS / "nemo_rl").is_dir(), reason="the corpus tree is absent")
def test_verify_static_with_a_fifo_pyproject_is_one_line_and_exit_2(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(CORPUS / "nemo_rl", tree / "nemo_rl")
    os.mkfifo(tree / "pyproject.toml")
    # In a subprocess with a timeout: the bug was a hang, which must fail, not stall.
    done = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "verify", "--static", "--no-cache",
         "--nemo-rl", str(tree),
         "nemo_rl.models.policy.workers.dtensor_policy_worker.DTensorPolicyWorker",
         "--protocol", "PolicyWorker"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"nemo-rl-workers: {tree / 'pyproject.toml'} is not a regular file: the type checker "
        "would read it; not run")
