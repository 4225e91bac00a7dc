#!/usr/bin/env bash
# `make test-floor`: the tool with every requirement at its declared floor (constraints/floors.py:
# omegaconf 2.3, PyYAML 6.0, wrapt 1.14, ruamel.yaml 0.18.6, beartype 0.22, ray 2.49, ...) on
# this machine's Python, running the tests that need only the tool (as `make test-py313`), and
# upstream NeMo-RL's worker groups under the guard (torch's CPU build lies on disk here).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-floor
stamp=$VENV/.installed
if [ ! -f "$stamp" ] || [ -n "$(find pyproject.toml constraints/floors.py constraints/ci.txt .ci/test-floor.sh stubs -newer "$stamp" -print -quit)" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip packaging
  "$VENV/bin/python" constraints/floors.py static ci runtime:ray > "$VENV/floors.txt"
  PIP=(env PIP_CONSTRAINT="$VENV/floors.txt" "$VENV/bin/python" -m pip install -q)
  "${PIP[@]}" -e '.[static,ci]' --config-settings editable_mode=compat
  # upstream NeMo-RL as the guard tests run it (its nemo_rl.distributed imports these)
  "${PIP[@]}" ./stubs ray pytest hypothesis jsonschema typeguard setuptools torch==2.13.0 tqdm numpy rich
  # The suite's oracles: mypy and pyrefly read this repository's pyproject.toml (its pyrefly
  # sub-configs and error codes), written for the versions CI pins; the floors are pyrefly 0.24 and mypy 2.3,
  # which cannot read it. So the checkers run at CI's pins here, and `check --static` under
  # those other versions is not what these runs test (the README says so).
  "$VENV/bin/python" -m pip install -q $(grep -E '^(pyrefly|mypy)==' constraints/ci.txt)
  rm -rf stubs/build stubs/*.egg-info
  touch "$stamp"
fi
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md
from packaging.version import Version
floors = {}
for line in open(".venv-floor/floors.txt"):
    if "==" in line and not line.startswith("#"):
        name, version = line.strip().split("==")
        floors[name] = version
oracles = {"pyrefly", "mypy"}  # at CI's pins: see above
wrong = {n: (md.version(n), v) for n, v in floors.items()
         if n not in oracles and Version(md.version(n)) != Version(v)}
assert not wrong, f"not at the declared floor: {wrong}"
print("test-floor:", ", ".join(f"{n} {md.version(n)}" for n in sorted(floors)))
PY
rc=0; NEMO_RL_WORKERS_TOOL_ONLY=1 "$VENV/bin/python" -m pytest -p no:cacheprovider "$@" || rc=$?
if [ "$rc" -eq 5 ]; then echo "make test-floor: pytest ran no test; failing" >&2; exit 1; fi
exit "$rc"
