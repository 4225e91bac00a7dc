"""Installing the tool (any extra) into a NeMo-RL environment changes none of its locked versions.

The subject is the 2026-08 corpus's `uv.lock` (the exact versions a NeMo-RL environment of
that commit holds: omegaconf 2.3.1, wrapt 2.2.2, ...). Two checks:
- every requirement of the distribution, in every extra, that names a package the lock
  holds admits the lock's version (read from pyproject.toml with `packaging`);
- `pip install --dry-run` of the tool with its core, `static` and `ci` extras, constrained
  to the lock's versions of everything the lock holds, resolves: pip itself says the
  ranges fit. (The `runtime` extra's locked torch is a CUDA build no index here serves;
  the first check covers it.) Skipped where no package index can be reached.

Skipped where the corpus (../shared/corpus) is absent, as in a plain clone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO_ROOT
from tests.corpus import NEMO_RL

LOCK = NEMO_RL / "uv.lock"
PYPROJECT = Path(REPO_ROOT) / "pyproject.toml"
SELF = "nemo-rl-worker-contracts"

pytestmark = pytest.mark.skipif(not LOCK.is_file(), reason="the shared corpus is absent")


def _locked() -> dict[str, str]:
    """Package name -> the one version the lock holds (packages locked at several
    versions, per Python or platform, keep their first)."""
    data = tomllib.loads(LOCK.read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for package in data.get("package", []):
        if "version" in package:  # workspace members and git sources may have none
            out.setdefault(canonicalize_name(package["name"]), str(package["version"]))
    return out


def _requirements() -> dict[str, list[Requirement]]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    groups = {"core": [Requirement(r) for r in project["dependencies"]]}
    for extra, reqs in project["optional-dependencies"].items():
        groups[extra] = [Requirement(r) for r in reqs]
    return groups


def test_every_requirement_admits_the_locked_version() -> None:
    locked = _locked()
    assert locked.get("omegaconf") == "2.3.1"  # the lock is the one the issue names
    refused = []
    checked = 0
    for extra, reqs in _requirements().items():
        for req in reqs:
            name = canonicalize_name(req.name)
            if name == SELF or name not in locked:
                continue
            checked += 1
            # A locked pre-release (nvidia-modelopt 0.46.0.dev86) is what is installed.
            if not req.specifier.contains(Version(locked[name]), prereleases=True):
                refused.append(f"{extra}: {req} refuses the locked {name} {locked[name]}")
    assert checked >= 10
    assert refused == []


def test_ci_pins_live_in_the_constraints_file() -> None:
    """The distribution pins nothing exactly; CI's exact versions are constraints."""
    pinned = [str(r) for reqs in _requirements().values() for r in reqs
              if any(s.operator in ("==", "===") for s in r.specifier)]
    assert pinned == []
    constraints = (Path(REPO_ROOT) / "constraints" / "ci.txt").read_text(encoding="utf-8")
    assert "omegaconf==2.4.0" in constraints
    assert "-c constraints/ci.txt" in (Path(REPO_ROOT) / "Makefile").read_text(encoding="utf-8")


@pytest.mark.slow
def test_pip_dry_run_under_the_locked_versions(tmp_path: Path) -> None:
    locked = _locked()
    wanted = {canonicalize_name(r.name) for extra in ("core", "static", "ci")
              for r in _requirements()[extra]}
    constraints = tmp_path / "lock.txt"
    constraints.write_text(
        "".join(f"{name}=={locked[name]}\n" for name in sorted(wanted) if name in locked),
        encoding="utf-8")
    env = {**os.environ, "PIP_CONSTRAINT": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
         "-c", str(constraints), f"{REPO_ROOT}[static,ci]"],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path, check=False)
    out = done.stdout + done.stderr
    if done.returncode != 0 and any(word in out for word in (
            "NewConnectionError", "Network is unreachable", "Temporary failure in name",
            "No matching distribution found")):
        pytest.skip(f"no index serves the locked versions here: {out.strip().splitlines()[-1]}")
    assert done.returncode == 0, out
    assert "ResolutionImpossible" not in out


def test_the_lock_constraints_file_is_the_lock_s() -> None:
    """`make test-py313` installs under constraints/nemo-rl-lock.txt: it must say what the
    corpus's uv.lock holds (regenerate it with constraints/nemo_rl_lock.py)."""
    import importlib.util

    script = Path(REPO_ROOT) / "constraints" / "nemo_rl_lock.py"
    spec = importlib.util.spec_from_file_location("nemo_rl_lock", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (Path(REPO_ROOT) / "constraints" / "nemo-rl-lock.txt").read_text(encoding="utf-8")
    assert committed == module.constraints(LOCK)
    for shared in ("omegaconf==2.3.1", "wrapt==2.2.2", "ray==2.56.1", "pyyaml==6.0.3"):
        assert shared in committed.splitlines()
