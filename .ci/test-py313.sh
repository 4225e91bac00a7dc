#!/usr/bin/env bash
# `make test-py313`: the tool on Python 3.13 (NeMo-RL's interpreter since v0.7.0) with the
# versions NeMo-RL's uv.lock holds (constraints/nemo-rl-lock.txt: omegaconf 2.3.1, wrapt 2.2.2,
# ray 2.56.1, pydantic 2.13.4, PyYAML 6.0.3, ...). Runs inside ../shared/tools/py313's Debian 13
# root, in the repository folder. No torch: the reference runtime and ModelOpt are not
# installed; the tests that need them are not run here (the README says which).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv313
PIP=(env PIP_CONSTRAINT=constraints/nemo-rl-lock.txt "$VENV/bin/python" -m pip install -q)
stamp=$VENV/.installed
if [ ! -f "$stamp" ] || [ -n "$(find pyproject.toml constraints/nemo-rl-lock.txt constraints/ci.txt .ci/test-py313.sh stubs -newer "$stamp" -print -quit)" ]; then
  rm -rf "$VENV"
  python3.13 -m venv "$VENV"
  # The tool with its light extras only, as a NeMo-RL CI image would take it, then what the
  # tests themselves import; every one at NeMo-RL's locked version where the lock holds it.
  "${PIP[@]}" -e '.[static,ci]' --config-settings editable_mode=compat
  "${PIP[@]}" ./stubs ray hydra-core pytest hypothesis jsonschema packaging typeguard setuptools
  # The suite's oracles: mypy and pyrefly read this repository's pyproject.toml (its pyrefly
  # sub-configs and error codes), written for the versions CI pins; NeMo-RL locks pyrefly 0.24.2 and mypy 2.3.0,
  # which cannot read it. So the checkers run at CI's pins here, and `check --static` under
  # those other versions is not what these runs test (the README says so).
  "$VENV/bin/python" -m pip install -q $(grep -E '^(pyrefly|mypy)==' constraints/ci.txt)
  rm -rf stubs/build stubs/*.egg-info
  touch "$stamp"
fi
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md, sys
assert sys.version_info[:2] == (3, 13), sys.version
want = {}
for line in open("constraints/nemo-rl-lock.txt"):
    if "==" in line and not line.startswith("#"):
        name, version = line.strip().split("==")
        want[name] = version
shared = ["omegaconf", "hydra-core", "pyyaml", "pydantic", "wrapt", "ray", "typing-extensions"]
got = {n: md.version(n) for n in shared}
wrong = {n: (got[n], want[n]) for n in shared if got[n] != want[n]}
assert not wrong, f"not NeMo-RL's locked versions: {wrong}"
print("test-py313: Python", sys.version.split()[0], "with", ", ".join(f"{n} {v}" for n, v in got.items()))
PY
# pytest exits 5 when it ran no test: a broken selection, not a pass.
rc=0; NEMO_RL_WORKERS_TOOL_ONLY=1 "$VENV/bin/python" -m pytest -p no:cacheprovider "$@" || rc=$?
if [ "$rc" -eq 5 ]; then echo "make test-py313: pytest ran no test; failing" >&2; exit 1; fi
exit "$rc"
