"""Start-up: what a command costs before it does anything, next to the interpreter's own.

Each case is the installed command in a fresh process, alternating with the others round
by round (the machine is shared: side by side in one run, medians), with wall and CPU time:

- `python -c pass`: the interpreter's start, a floor no command can go under;
- `nemo-rl-workers --help` and `--version` (goal: `--help` <= 0.15 s): the grammar only,
  no check, YAML library or registry imported;
- `check --static` of the four example configs (examples/configs and the template's),
  the first run on an empty cache folder, then the same folder again (goal: the cached
  run <= 15% of the uncached one). A new folder each round.

Run with `python -m bench.bench_startup`.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from bench.bench_support import REPO, VENV_BIN, child_env, print_table, ratio, run_child

ROUNDS = 7
STATIC_ROUNDS = 3
HELP_GOAL_S = 0.15
CACHED_GOAL = 0.15
CONFIGS = (
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "examples" / "configs").glob("*.yaml")),
    "research/template_project/configs/single_update.yaml",
)
CLI = str(VENV_BIN / "nemo-rl-workers")
PY = str(VENV_BIN / "python")
QUICK = {
    "python -c pass": [PY, "-c", "pass"],
    "nemo-rl-workers --help": [CLI, "--help"],
    "nemo-rl-workers --version": [CLI, "--version"],
}


def _env() -> dict[str, str]:
    """As a user runs it: bytecode cached (a session may set PYTHONDONTWRITEBYTECODE,
    which would compile every module on every start and measure that instead)."""
    env = child_env(NO_COLOR="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _quick() -> dict[str, tuple[list[float], list[float]]]:
    env = _env()
    for argv in QUICK.values():  # warm: the bytecode is written once, before timing
        run_child(argv, env=env, cwd=REPO, timeout_s=60)
    samples: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in QUICK}
    for _ in range(ROUNDS):
        for name, argv in QUICK.items():
            done = run_child(argv, env=env, cwd=REPO, timeout_s=60)
            assert done.returncode == 0, f"{name}: exit {done.returncode}: {done.stderr}"
            samples[name][0].append(done.wall_s)
            samples[name][1].append(done.cpu_s)
    return samples


def _static() -> tuple[list[float], list[float]]:
    env = _env()
    uncached: list[float] = []
    cached: list[float] = []
    outputs: set[str] = set()
    for _ in range(STATIC_ROUNDS):
        with tempfile.TemporaryDirectory(prefix="bench-startup-") as folder:
            argv = [CLI, "check", "--static", "--cache-dir", str(Path(folder) / "cache"),
                    *CONFIGS]
            for bucket in (uncached, cached):
                done = run_child(argv, env=env, cwd=REPO, timeout_s=300)
                assert done.returncode in (0, 1), f"check --static: {done.stderr}"
                outputs.add(done.stdout)
                bucket.append(done.wall_s)
    assert len(outputs) == 1, "the cached run printed something else than the uncached one"
    return uncached, cached


def main() -> dict[str, object]:
    figures: dict[str, object] = {"name": "startup"}
    quick = _quick()
    floor = statistics.median(quick["python -c pass"][0])
    rows = []
    for name, (walls, cpus) in quick.items():
        wall = statistics.median(walls)
        goal = "" if name != "nemo-rl-workers --help" else (
            f"<= {HELP_GOAL_S} s: {'yes' if wall <= HELP_GOAL_S else 'NO'}")
        rows.append((name, f"{wall:.3f}", f"{statistics.median(cpus):.3f}",
                     f"{ratio(wall, floor):.1f}", goal))
        figures[name] = {"wall_s": wall, "cpu_s": statistics.median(cpus)}
    uncached, cached = _static()
    share = ratio(statistics.median(cached), statistics.median(uncached))
    figures["check_static"] = {"uncached_s": statistics.median(uncached),
                               "cached_s": statistics.median(cached), "cached_over_uncached": share}
    label = f"check --static, {len(CONFIGS)} configs"
    rows.append((f"{label}: uncached", f"{statistics.median(uncached):.3f}", "",
                 f"{ratio(statistics.median(uncached), floor):.1f}", ""))
    rows.append((f"{label}: cached", f"{statistics.median(cached):.3f}", "",
                 f"{ratio(statistics.median(cached), floor):.1f}",
                 f"{share:.1%} of uncached (<= {CACHED_GOAL:.0%}): "
                 f"{'yes' if share <= CACHED_GOAL else 'NO'}"))
    print(f"Fresh processes, alternating; medians of {ROUNDS} rounds "
          f"({STATIC_ROUNDS} for check --static)")
    print_table(("command", "wall s", "cpu s", "x python -c pass", "goal"), rows)
    return figures


if __name__ == "__main__":
    main()
