"""Corpus throughput: `nemo-rl-workers check` over every migrated upstream config, in one process.

A temporary copy of the corpus (`../shared/corpus/nemo-rl/examples/configs`) is migrated
in place with `nemo_rl.config.migrate`, then one `check --json` process reads every file,
with and without `--no-verify` (verification imports each resolved worker class, torch
included). Figures: configs per second, total wall and the check process's peak memory.
Skipped, with a note, when the corpus is absent. Run with `python -m bench.bench_corpus`.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.bench_support import CORPUS, child_env, print_table, run_child
from nemo_rl.config.migrate import run_migrate

MODES = (("check --no-verify", ("--no-verify",)), ("check (verify)", ()))


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


def _check(files: list[Path], flags: tuple[str, ...], hf_home: Path) -> dict[str, object]:
    argv = [sys.executable, "-m", "nemo_rl.workers", "check", "--json", *flags,
            *map(str, files)]
    run = run_child(argv, env=child_env(HF_HOME=str(hf_home)), timeout_s=300)
    if run.timed_out or run.returncode not in (0, 1, 2):
        raise RuntimeError(f"check failed ({run.returncode}): {run.stderr[-500:]}")
    payload = json.loads(run.stdout)
    reports = payload["configs"] if "configs" in payload else [payload]
    outcome = Counter(
        "unusable" if r["error"] else ("problems" if r["problems"] else "ok") for r in reports
    )
    return {
        "configs": len(reports),
        "wall_s": round(run.wall_s, 2),
        "configs_per_s": round(len(reports) / run.wall_s, 1),
        "max_rss_mb": round(run.max_rss_mb, 1),
        "ok": outcome["ok"],
        "problems": outcome["problems"],
        "unusable": outcome["unusable"],
        "workers_resolved": sum(len(r["workers"]) for r in reports),
    }


def main() -> dict[str, object]:
    """Migrate a copy of the corpus, check it in one process per mode; print and return it."""
    if not CORPUS.is_dir():
        note = f"skipped: corpus not present at {CORPUS.resolve()}"
        print(f"Corpus throughput: {note}")
        return {"name": "corpus", "skipped": note}
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        files, migrate_s = _migrated_copy(Path(tmp))
        rows = {mode: _check(files, flags, Path(tmp) / "hf_home") for mode, flags in MODES}
    print(f"Corpus throughput: {len(files)} migrated configs (migration took {migrate_s:.2f} s), "
          "one check process each")
    print_table(
        ("mode", "configs", "wall s", "configs/s", "peak RSS MB", "ok", "problems", "unusable"),
        [(mode, r["configs"], r["wall_s"], r["configs_per_s"], r["max_rss_mb"], r["ok"],
          r["problems"], r["unusable"]) for mode, r in rows.items()],
    )
    print("(unusable: a defaults chain that leaves the corpus snapshot)")
    return {"name": "corpus", "files": len(files), "migrate_s": round(migrate_s, 2),
            "modes": rows}


if __name__ == "__main__":
    main()
