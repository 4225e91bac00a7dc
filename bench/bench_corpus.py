"""Corpus throughput: `nemo-rl-workers check` over every migrated upstream config, in one process.

A temporary copy of the corpus (`../shared/corpus/nemo-rl/examples/configs`) is migrated
in place with `nemo_rl_workers.commands.migrate`, then one `check --json` process reads every file,
with and without `--no-verify` (verification imports each resolved worker class, torch
included), side by side with `python -c "import torch"`, round after round. Figures:
configs per second, wall and CPU seconds (medians), the check process's peak memory, and
each mode's ratio to `import torch` (goals: `--no-verify` <= 2.5, with verification <= 4);
then the guarded reader's cost over a bare YAML load of the same files (goal <= 10%;
`python -m bench.bench_corpus --guard` runs only that part).
Skipped, with a note, when the corpus is absent. Run with `python -m bench.bench_corpus`.
"""

from __future__ import annotations

import io
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.bench_support import CORPUS, ChildRun, child_env, print_table, ratio, run_child
from nemo_rl_workers.commands.migrate import run_migrate

MODES = (("check --no-verify", ("--no-verify",)), ("check (verify)", ()))
GOALS = {"check --no-verify": 2.5, "check (verify)": 4.0}
ROUNDS = 3


def _migrated_copy(tmp: Path) -> tuple[list[Path], float]:
    copy = tmp / "configs"
    shutil.copytree(CORPUS, copy)
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    code = run_migrate([str(copy), "--in-place"], out, err)
    seconds = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"migrating the corpus copy failed ({code}): {err.getvalue()[-500:]}")
    return sorted(copy.rglob("*.yaml")), seconds


def _check(
    files: list[Path], flags: tuple[str, ...], hf_home: Path
) -> tuple[ChildRun, dict[str, object]]:
    argv = [sys.executable, "-m", "nemo_rl_workers", "check", "--json", *flags,
            *map(str, files)]
    run = run_child(argv, env=child_env(HF_HOME=str(hf_home)), timeout_s=300)
    if run.timed_out or run.returncode not in (0, 1, 2):
        raise RuntimeError(f"check failed ({run.returncode}): {run.stderr[-500:]}")
    payload = json.loads(run.stdout)
    reports = payload["configs"] if "configs" in payload else [payload]
    outcome = Counter(
        "unusable" if r["error"] else ("problems" if r["problems"] else "ok") for r in reports
    )
    return run, {
        "configs": len(reports),
        "ok": outcome["ok"],
        "problems": outcome["problems"],
        "unusable": outcome["unusable"],
        "workers_resolved": sum(len(r["workers"]) for r in reports),
    }


def _import_torch() -> ChildRun:
    run = run_child([sys.executable, "-c", "import torch"], env=child_env(), timeout_s=120)
    if run.returncode != 0:
        raise RuntimeError(f"import torch failed: {run.stderr[-500:]}")
    return run


GUARD_ROUNDS = 7
GUARD_GOAL = 0.10  # the guarded reader may cost at most 10% over the bare YAML load


def guard_cost() -> dict[str, object]:
    """What the guarded reader (`safe_read`: regular-file and size checks, depth, what
    aliases add) costs over reading and composing the same files with OmegaConf's own YAML
    loader alone, for every corpus YAML file, in one process, interleaved rounds."""
    import yaml
    from omegaconf._yaml import get_yaml_loader

    from nemo_rl_workers.reading.safe_read import parse_yaml, read_text

    files = sorted(CORPUS.rglob("*.yaml"))

    def guarded() -> None:
        for f in files:
            parse_yaml(read_text(f, str(f)), str(f))

    def load(limits: bool) -> None:
        for f in files:
            make = get_yaml_loader() if limits else get_yaml_loader(max_yaml_expanded_nodes=None)
            loader = make(f.read_text(encoding="utf-8"))
            try:
                loader.construct_document(loader.get_single_node())
            finally:
                loader.dispose()

    def bare() -> None:  # what OmegaConf.load reads with (its alias count on)
        load(True)

    def unlimited() -> None:  # the same loader with no limit at all
        load(False)

    seconds: dict[str, list[float]] = {"unlimited": [], "bare": [], "guarded": []}
    for _ in range(GUARD_ROUNDS):
        for name, fn in (("unlimited", unlimited), ("bare", bare), ("guarded", guarded)):
            start = time.perf_counter()
            fn()
            seconds[name].append(time.perf_counter() - start)
    med = {k: statistics.median(v) for k, v in seconds.items()}
    cost = ratio(med["guarded"], med["bare"]) - 1
    over_unlimited = ratio(med["guarded"], med["unlimited"]) - 1
    print(f"Guarded reader: {len(files)} corpus files, median of {GUARD_ROUNDS} interleaved "
          f"rounds (PyYAML {yaml.__version__})")
    print_table(("case", "ms per round", "ms per file"),
                [(k, round(v * 1000, 1), round(v * 1000 / len(files), 3)) for k, v in med.items()])
    print(f"guard cost {cost:+.1%} over OmegaConf's own load (goal <= {GUARD_GOAL:.0%}): "
          + ("met" if cost <= GUARD_GOAL else "NOT met")
          + f"; {over_unlimited:+.1%} over a load with no limit at all")
    return {"files": len(files), "unlimited_ms": round(med["unlimited"] * 1000, 1),
            "bare_ms": round(med["bare"] * 1000, 1),
            "guarded_ms": round(med["guarded"] * 1000, 1), "guard_cost": round(cost, 3),
            "over_unlimited": round(over_unlimited, 3)}


def main() -> dict[str, object]:
    """Migrate a copy of the corpus, check it beside `import torch`; print and return it."""
    if not CORPUS.is_dir():
        note = f"skipped: corpus not present at {CORPUS}"
        print(f"Corpus throughput: {note}")
        return {"name": "corpus", "skipped": note}
    runs: dict[str, list[ChildRun]] = {"import torch": [], **{mode: [] for mode, _ in MODES}}
    outcomes: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        files, migrate_s = _migrated_copy(Path(tmp))
        for _ in range(ROUNDS):  # interleaved, so a busy spell hits every case alike
            runs["import torch"].append(_import_torch())
            for mode, flags in MODES:
                run, outcome = _check(files, flags, Path(tmp) / "hf_home")
                runs[mode].append(run)
                outcomes[mode] = outcome
    wall = {case: statistics.median(r.wall_s for r in rs) for case, rs in runs.items()}
    cpu = {case: statistics.median(r.cpu_s for r in rs) for case, rs in runs.items()}
    rss = {case: max(r.max_rss_mb for r in rs) for case, rs in runs.items()}
    rows: dict[str, dict[str, object]] = {}
    for case in runs:
        row: dict[str, object] = {
            "wall_s": round(wall[case], 2),
            "cpu_s": round(cpu[case], 2),
            "max_rss_mb": round(rss[case], 1),
            "vs_torch_wall": round(ratio(wall[case], wall["import torch"]), 2),
            "vs_torch_cpu": round(ratio(cpu[case], cpu["import torch"]), 2),
        }
        if case in outcomes:
            row.update(outcomes[case])
            row["configs_per_s"] = round(len(files) / wall[case], 1)
        rows[case] = row
    print(f"Corpus throughput: {len(files)} migrated configs (migration took {migrate_s:.2f} s), "
          f"one check process each, median of {ROUNDS} interleaved rounds")
    print_table(
        ("case", "configs", "wall s", "CPU s", "configs/s", "peak RSS MB", "vs torch (wall)",
         "vs torch (CPU)", "ok", "problems", "unusable"),
        [(case, r.get("configs", "-"), r["wall_s"], r["cpu_s"], r.get("configs_per_s", "-"),
          r["max_rss_mb"], r["vs_torch_wall"], r["vs_torch_cpu"], r.get("ok", "-"),
          r.get("problems", "-"), r.get("unusable", "-")) for case, r in rows.items()],
    )
    print("(unusable: a defaults chain that leaves the corpus snapshot)")
    verdicts = [
        f"{mode} {rows[mode]['vs_torch_wall']}x wall (goal <= {goal}x): "
        + ("met" if float(str(rows[mode]["vs_torch_wall"])) <= goal else "NOT met")
        for mode, goal in GOALS.items()
    ]
    print("; ".join(verdicts))
    print()
    guard = guard_cost()
    return {"name": "corpus", "files": len(files), "migrate_s": round(migrate_s, 2),
            "rounds": ROUNDS, "cases": rows, "guard": guard}


if __name__ == "__main__":
    if "--guard" in sys.argv[1:]:  # only the guarded reader's cost (seconds, not minutes)
        if CORPUS.is_dir():
            guard_cost()
        else:
            print(f"Guarded reader: skipped: corpus not present at {CORPUS}")
    else:
        main()
