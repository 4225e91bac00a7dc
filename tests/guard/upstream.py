"""Running upstream NeMo-RL (the shared corpus) as the user's `nemo_rl`, in a subprocess.

The corpus tree goes first on the subprocess's PYTHONPATH, never on this process's path
(where it would shadow the reference runtime). The subprocess is this project's
interpreter (ray, tqdm, numpy, rich and torch are in it), starts its own local Ray cluster
(`ray.init(num_cpus=2)`) in its own RAY_TMPDIR and shuts it down at its end.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT
from tests.corpus import CORPORA

CORPUS = CORPORA
TREE = CORPUS / "nemo-rl"  # the 2026-08 commit
OLD_TREE = CORPUS / "nemo-rl-2025-09"
USER = Path(__file__).resolve().parent / "user"  # the user's own workers and script
SCRIPT = USER / "guard_script.py"
CLI = str(Path(sys.executable).parent / "nemo-rl-workers")
GUARD_ENV = ("NEMO_RL_WORKERS_GUARD", "NEMO_RL_WORKERS_GUARD_STRICT")
# What upstream's nemo_rl.distributed imports (the corpus README). `make test-py313` has no
# torch (no build for Python 3.13 lies on disk here; PyPI's is a multi-GB CUDA build): there
# these tests skip, saying so, and run in `make test` and `make test-floor`.
UPSTREAM_NEEDS = ("ray", "tqdm", "numpy", "rich", "torch")
# The guard's tree models go to one folder of this test session, never the user's cache.
MODEL_CACHE = tempfile.mkdtemp(prefix="nrw-guard-cache-")
atexit.register(shutil.rmtree, MODEL_CACHE, ignore_errors=True)


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def scenarios(self) -> dict[str, dict[str, Any]]:
        """Scenario -> what the script printed for it (one JSON object a line)."""
        out: dict[str, dict[str, Any]] = {}
        for line in self.stdout.splitlines():
            if line.startswith("{"):
                found = json.loads(line)
                out[found["scenario"]] = found
        return out

    def guard_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines()
                if line.startswith("nemo-rl-workers guard:")]


def run_upstream(command: list[str], *, tree: Path = TREE, env: dict[str, str] | None = None,
                 extra_path: tuple[Path, ...] = (), timeout: float = 300) -> Run:
    """Run `command` (argv after the interpreter or the CLI) with `tree` as `nemo_rl`."""
    lacking = [name for name in UPSTREAM_NEEDS if find_spec(name) is None]
    if lacking:
        pytest.skip(f"upstream's nemo_rl.distributed needs {', '.join(lacking)}, "
                    "which this interpreter lacks")
    base = {k: v for k, v in os.environ.items() if k not in GUARD_ENV}
    with tempfile.TemporaryDirectory(prefix="rg", dir="/tmp") as ray_tmp:
        full_env = {
            **base,
            # The tool from this checkout (after the user's nemo_rl and workers): the one
            # under test, whichever checkout the environment's editable install names.
            "PYTHONPATH": os.pathsep.join([str(tree), str(USER), *map(str, extra_path),
                                           REPO_ROOT]),
            "RAY_TMPDIR": ray_tmp,
            "RAY_USAGE_STATS_ENABLED": "0",
            "PYTHONUNBUFFERED": "1",
            # Importing the corpus tree must write nothing into it (it is shared, read-only).
            "PYTHONDONTWRITEBYTECODE": "1",
            "NEMO_RL_WORKERS_CACHE_DIR": MODEL_CACHE,
            **(env or {}),
        }
        done = subprocess.run(command, capture_output=True, text=True, env=full_env,
                              timeout=timeout, cwd=ray_tmp, check=False)
    return Run(done.returncode, done.stdout, done.stderr)
