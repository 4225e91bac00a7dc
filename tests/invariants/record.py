"""The record of every verdict the tool gives on the two corpus trees, for issue 45's moves.

A move of code must not change a verdict: for every shipped config, the classes it picks, the
world size, the problems, the warnings and the rule sites it could not decide; for every
campaign launch, the same; for each tree, the audit's findings. `python -m
tests.invariants.record` writes the record; `test_invariants.py` compares today's answers
with it. Only what a verdict says is kept, in the form the JSON output gives it, with the
corpus folder written as `<tree>` in keys and values, so the record does not depend on where
the corpus lies (CI's clone is not this machine's). Each command runs in a new interpreter
with a fixed environment (`KEPT_VARIABLES`), as the tree's rules read it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.corpus import CORPORA

# Resolved, so `<tree>` replaces the path the tool prints even where a worktree reaches the
# corpus through a symlink.
CORPUS = CORPORA.resolve()
TREES = {"2026-08": CORPUS / "nemo-rl", "2025-09": CORPUS / "nemo-rl-2025-09"}
REPO = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("verdicts.json")
CAMPAIGNS = ("nightly.txt", "release.txt")

Json = Any


# The environment every verdict is made in: the tree's rules read `os.environ` (lm_policy's
# `'TORCH_CUDA_ARCH_LIST' not in os.environ`), and a test process's holds what Ray, torch
# or an earlier test put there. Only what finds Python and the tool is kept.
KEPT_VARIABLES = ("PATH", "PYTHONPATH", "HOME", "NEMO_RL_WORKERS_STRICT")


def _run(argv: list[str]) -> Json:
    """`nemo-rl-workers ARGV` in a new interpreter with the kept variables alone."""
    env = {name: os.environ[name] for name in KEPT_VARIABLES if name in os.environ}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-m", "nemo_rl_workers", *argv], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"nemo-rl-workers {' '.join(argv)}: exit {done.returncode}: "
                           f"{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _relative(root: Path) -> Callable[[Json], Json]:
    prefix = str(root)

    def strip(value: Json) -> Json:
        if isinstance(value, str):
            return value.replace(prefix, "<tree>")
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dict):
            return {strip(k): strip(v) for k, v in value.items()}
        return value

    return strip


def _verdict(report: Json) -> Json:
    """What a config's report says, without how the tool found the tree."""
    return {
        "workers": [[w["section"], w["fqn"], w["backend"], w["mode"], w["quantized"],
                     w["warnings"]] for w in report["workers"]],
        "world_size": report["world_size"],
        "world_size_from": report["world_size_from"],
        "problems": report["problems"],
        "warnings": report["warnings"],
        "undecided": report["skipped"],
        "error": report["error"],
        "entry": report["entry"],
        "judged": report["judged"],
    }


def _configs(root: Path) -> Json:
    reports = _run(["check", "--json", "--no-verify", "--no-cache",
                    str(root / "examples" / "configs")])["configs"]
    return {report["config"]: _verdict(report) for report in reports}


def _launches(root: Path) -> Json:
    suites = root / "tests" / "test_suites"
    lists = [str(suites / name) for name in CAMPAIGNS if (suites / name).is_file()]
    if not lists:
        return {}
    reports = _run(["check", "--json", "--no-verify", "--no-cache", *lists])["configs"]
    return {f"{report['launch']}": _verdict(report) for report in reports}


def _audit(root: Path) -> Json:
    answer = _run(["audit", "--json", "--show-guarded", "--no-cache", "--nemo-rl", str(root)])
    return {"findings": answer["findings"], "undecided": answer["undecided"],
            "problems": answer["problems"]}


def record_of(root: Path) -> Json:
    strip = _relative(root)
    return strip({"configs": _configs(root), "launches": _launches(root), "audit": _audit(root)})


def main_record() -> None:
    record = {name: record_of(root) for name, root in TREES.items() if (root / "nemo_rl").is_dir()}
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main_record()
