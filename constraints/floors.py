"""Write pip constraints pinning each of the tool's requirements at its declared floor.

    python constraints/floors.py EXTRA[:NAME]... > FILE

For the core requirements and those of each EXTRA named (pyproject.toml; `runtime:ray` takes
that extra's `ray` alone), `name>=X` becomes `name==X`; a requirement with no lower bound is
left free. `make test-floor` installs the
tool under these constraints, so each range is tested at its floor as well as at the
versions NeMo-RL locks (`make test-py313`) and at this repository's pins (`make test`).
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def floors(extras: list[str]) -> str:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(r) for r in project["dependencies"]]
    for item in extras:
        extra, _, only = item.partition(":")
        requirements += [Requirement(r) for r in project["optional-dependencies"][extra]
                         if not only or Requirement(r).name == only]
    lines = ["# pip constraints: the tool's declared floors (constraints/floors.py)"]
    for req in requirements:
        low = [s.version for s in req.specifier if s.operator == ">="]
        if low:
            lines.append(f"{req.name}=={low[0]}")
    return "\n".join(sorted(set(lines), key=lambda line: (not line.startswith("#"), line))) + "\n"


if __name__ == "__main__":
    sys.stdout.write(floors(sys.argv[1:]))
