"""Repository scale: `check --no-verify` of every corpus config against one `pyrefly check`.

Issue 45's goals, as ratios measured in one run on the 2026-08 corpus tree
(`../shared/corpus/nemo-rl`): `check --no-verify` of every shipped config cold (a fresh
cache folder) at most 2x one `pyrefly check` of the tree; the same check warm (the cache
it filled) at most 15% of cold; a second `check` of one recipe at most 15% of its first
(a fresh cache folder each time). Each figure is the child's CPU seconds (user plus
system: steadier than wall time on a shared machine), the median of three runs (each cold
or first run on a fresh cache folder, each warm or second run on the folder its cold or
first run filled), so that one run slowed by the machine's other jobs does not decide a
ratio; wall seconds are shown beside it.
Skipped, with a note, when the corpus is absent. Run with `python -m bench.bench_interpret`.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from bench.bench_support import CORPUS, ChildRun, child_env, print_table, ratio, run_child

TREE = CORPUS.parent.parent
RECIPE = CORPUS / "grpo_math_1B.yaml"
GOALS = {"cold / pyrefly": 2.0, "warm / cold": 0.15, "second / first recipe": 0.15}
RUNS = 3  # each figure is the median of this many runs


def _median(runs: list[ChildRun]) -> ChildRun:
    """The run of median CPU time."""
    return sorted(runs, key=lambda run: run.cpu_s)[len(runs) // 2]


def _check(paths: list[Path], cache: Path) -> ChildRun:
    argv = [sys.executable, "-m", "nemo_rl_workers", "check", "--no-verify", "--json",
            "--cache-dir", str(cache), *map(str, paths)]
    run = run_child(argv, env=child_env(), timeout_s=600)
    if run.timed_out or run.returncode not in (0, 1):
        raise RuntimeError(f"check failed ({run.returncode}): {run.stderr[-500:]}")
    return run


def _pyrefly() -> ChildRun:
    pyrefly = shutil.which("pyrefly", path=str(Path(sys.executable).parent)) or "pyrefly"
    run = run_child([pyrefly, "check"], env=child_env(), cwd=TREE, timeout_s=600)
    if run.timed_out:
        raise RuntimeError("pyrefly check timed out")
    return run  # the tree's own type errors make it exit 1: the time is what counts


def main() -> dict[str, object]:
    if not (TREE / "nemo_rl").is_dir():
        print(f"corpus absent ({TREE}): skipped")
        return {"name": "interpret", "skipped": True}
    configs = [CORPUS]
    pyrefly: list[ChildRun] = []
    cold: list[ChildRun] = []
    warm: list[ChildRun] = []
    first: list[ChildRun] = []
    second: list[ChildRun] = []
    with tempfile.TemporaryDirectory(prefix="bench-interpret-") as tmp:
        for turn in range(RUNS):
            work = Path(tmp) / str(turn)
            pyrefly.append(_pyrefly())
            cold.append(_check(configs, work / "all"))
            warm.append(_check(configs, work / "all"))
            first.append(_check([RECIPE], work / "one"))
            second.append(_check([RECIPE], work / "one"))
    runs = {"pyrefly check (tree)": _median(pyrefly),
            "check cold (every config)": _median(cold),
            "check warm (every config)": _median(warm),
            "check one recipe, first": _median(first),
            "check one recipe, second": _median(second)}
    print_table(["run", "CPU s", "wall s"],
                [[name, f"{run.cpu_s:.2f}", f"{run.wall_s:.2f}"] for name, run in runs.items()])
    cpu = {name: run.cpu_s for name, run in runs.items()}
    found = {"cold / pyrefly": ratio(cpu["check cold (every config)"],
                                     cpu["pyrefly check (tree)"]),
             "warm / cold": ratio(cpu["check warm (every config)"],
                                  cpu["check cold (every config)"]),
             "second / first recipe": ratio(cpu["check one recipe, second"],
                                            cpu["check one recipe, first"])}
    print()
    print_table(["ratio (CPU)", "measured", "goal", "met"],
                [[name, f"{value:.2f}", f"<= {GOALS[name]}", "yes" if value <= GOALS[name]
                  else "no"] for name, value in found.items()])
    return {"name": "interpret", **{k: round(v, 3) for k, v in found.items()},
            **{f"{k} cpu_s": round(r.cpu_s, 2) for k, r in runs.items()}}


if __name__ == "__main__":
    main()
