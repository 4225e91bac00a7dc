"""Write pip constraints holding the versions a NeMo-RL environment locks.

    python constraints/nemo_rl_lock.py [UV_LOCK] > constraints/nemo-rl-lock.txt

The source is NeMo-RL's `uv.lock` (default: the 2026-08 corpus's). Every package the lock
holds at one version becomes `name==version`; a package locked at several versions (uv's
conflicting extras: hydra-core 1.3.2 and 1.3.4, ...) takes its lowest that is not a local
build, and local builds (`+cu130`, CUDA wheels no index here serves) are left out.
`make test-py313` installs the tool under these constraints, so its tests run with what
NeMo-RL users have (omegaconf 2.3.1, wrapt 2.2.2, ray 2.56.1, pydantic 2.13.4, ...);
tests/install/test_lock_versions.py holds the committed file to the lock.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

DEFAULT_LOCK = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "nemo-rl" / "uv.lock"


def _release(version: str) -> tuple[int, ...]:
    out = []
    for part in version.split("+")[0].split("."):
        digits = "".join(c for c in part if c.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def constraints(lock: Path) -> str:
    """The constraints file's text for `lock`."""
    data = tomllib.loads(lock.read_text(encoding="utf-8"))
    versions: dict[str, set[str]] = {}
    for package in data.get("package", []):
        version = package.get("version")
        if version is None or "+" in str(version):
            continue  # a workspace member, or a local (CUDA) build
        versions.setdefault(str(package["name"]), set()).add(str(version))
    lines = [f"# pip constraints from {lock.parent.name}/uv.lock (constraints/nemo_rl_lock.py)"]
    for name in sorted(versions):
        lines.append(f"{name}=={min(versions[name], key=_release)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(constraints(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_LOCK))
