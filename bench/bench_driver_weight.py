"""Driver weight: what importing the resolver and running `resolve` cost, next to torch and ray.

Each case runs in a fresh interpreter (the median of several), so nothing is cached in
the process: wall time, modules loaded, peak memory, and whether torch or ray came
along. `nemo-rl-workers resolve` is timed as the installed command; its module count
comes from the same CLI entry called in a fresh interpreter that then counts.
Run with `python -m bench.bench_driver_weight`.
"""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import dataclass

from bench.bench_support import CONFIGS, VENV_BIN, child_env, print_table, ratio, run_child

RUNS = 5
CONFIG = CONFIGS / "grpo_tiny_int8.yaml"
# Printed on stdout by each probe, after the measured work: what it pulled in.
_PROBE_TAIL = (
    "import json as _j, sys as _s; "
    "print(_j.dumps({'modules': len(_s.modules), 'torch': 'torch' in _s.modules, "
    "'ray': 'ray' in _s.modules}))"
)


@dataclass(frozen=True)
class Case:
    name: str
    code: str  # Python run with -c, then _PROBE_TAIL; "" for the installed CLI command
    timed_argv: tuple[str, ...] = ()  # run instead of `python -c code` for the wall time


CASES = (
    Case("python -c pass (interpreter start)", "pass"),
    Case("import nemo_rl_workers.model.resolver", "import nemo_rl_workers.model.resolver"),
    Case(
        "nemo-rl-workers resolve",
        "import io; from nemo_rl_workers.commands.cli import main; "
        f"main(['resolve', {str(CONFIG)!r}], out=io.StringIO())",
        (str(VENV_BIN / "nemo-rl-workers"), "resolve", str(CONFIG)),
    ),
    Case("import torch", "import torch"),
    Case("import ray", "import ray"),
)


def measure(case: Case) -> dict[str, object]:
    env = child_env(HF_HOME="/tmp/bench-hf-home")
    probe = run_child([sys.executable, "-c", f"{case.code}\n{_PROBE_TAIL}"], env=env)
    if probe.returncode != 0:
        raise RuntimeError(f"{case.name} failed: {probe.stderr.strip()[-500:]}")
    facts = json.loads(probe.stdout.strip().splitlines()[-1])
    argv = list(case.timed_argv) or [sys.executable, "-c", case.code]
    runs = [run_child(argv, env=env) for _ in range(RUNS)]
    failed = [r for r in runs if r.returncode != 0]
    if failed:
        raise RuntimeError(f"{case.name} failed: {failed[0].stderr.strip()[-500:]}")
    return {
        "case": case.name,
        "wall_s": round(statistics.median(r.wall_s for r in runs), 3),
        "modules": facts["modules"],
        "max_rss_mb": round(statistics.median(r.max_rss_mb for r in runs), 1),
        "imports_torch": facts["torch"],
        "imports_ray": facts["ray"],
    }


def main() -> dict[str, object]:
    """Measure each case in fresh interpreters; print and return the figures."""
    rows = [measure(case) for case in CASES]
    by_name = {str(r["case"]): r for r in rows}

    def wall(name: str) -> float:
        value = by_name[name]["wall_s"]
        assert isinstance(value, float)
        return value

    resolver, cli = wall("import nemo_rl_workers.model.resolver"), wall("nemo-rl-workers resolve")
    torch, ray = wall("import torch"), wall("import ray")
    ratios = {
        "resolver_vs_torch": round(ratio(resolver, torch), 3),
        "resolver_vs_ray": round(ratio(resolver, ray), 3),
        "resolve_cli_vs_torch": round(ratio(cli, torch), 3),
        "resolve_cli_vs_ray": round(ratio(cli, ray), 3),
    }
    print(f"Driver weight (fresh interpreters, median of {RUNS})")
    print_table(
        ("case", "wall s", "modules", "peak RSS MB", "torch?", "ray?"),
        [(r["case"], r["wall_s"], r["modules"], r["max_rss_mb"], r["imports_torch"],
          r["imports_ray"]) for r in rows],
    )
    print("ratios: " + ", ".join(f"{k} {v}" for k, v in ratios.items()))
    return {"name": "driver_weight", "runs": RUNS, "rows": rows, "ratios": ratios}


if __name__ == "__main__":
    main()
