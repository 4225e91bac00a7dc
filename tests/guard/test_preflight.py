"""At launch, the recipe: `nemo-rl-workers run SCRIPT --config FILE [key=value ...]` runs
`check`'s verdicts on it before the program starts (the same lines as `check`); problems
refuse the run (exit 1), `--warn` only warns, `--no-preflight` skips it.

The program is a script that says it ran. Configs of this repository are judged against
the reference; the corpus's against its own tree (skipped where it is absent).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.guard.upstream import CLI, TREE

BAD = str(Path(REPO_ROOT) / "examples" / "configs" / "mismatched_quant.yaml")
GOOD = str(Path(REPO_ROOT) / "examples" / "configs" / "grpo_tiny.yaml")
RAN = "PROGRAM RAN"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "train.py"
    program.write_text(f"print({RAN!r})\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEMO_RL_WORKERS_GUARD")}
    env["NO_COLOR"] = "1"
    options = [a for a in args if a in ("--warn", "--no-preflight")]
    rest = [a for a in args if a not in options]
    return subprocess.run([CLI, "run", *options, str(program), *rest], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=300, check=False)


def test_a_recipe_with_problems_refuses_the_run(tmp_path: Path) -> None:
    done = _run(tmp_path, "--config", BAD)
    assert done.returncode == 1
    assert RAN not in done.stdout
    assert f"  problem: {BAD}:6: quant_cfg requires worker_extension_cls_fqn=" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == (
        f"nemo-rl-workers run: {BAD}: the recipe has problems (above); the program was not "
        "started (--warn: start it anyway; --no-preflight: skip the check)")


def test_warn_only_warns_and_no_preflight_skips(tmp_path: Path) -> None:
    warned = _run(tmp_path, "--warn", f"--config={BAD}")
    assert warned.returncode == 0
    assert "  problem: " in warned.stdout and warned.stdout.rstrip().endswith(RAN)
    skipped = _run(tmp_path, "--no-preflight", "--config", BAD)
    assert (skipped.returncode, skipped.stdout) == (0, f"{RAN}\n")


def test_a_good_recipe_with_overrides_runs(tmp_path: Path) -> None:
    done = _run(tmp_path, "--config", GOOD, "policy.model_name=tiny-other")
    assert done.returncode == 0
    assert done.stdout.rstrip().endswith(f"  ok\n{RAN}")


@pytest.mark.slow
@pytest.mark.skipif(not TREE.is_dir(), reason="the shared corpus is absent")
def test_an_upstream_recipe_is_judged_against_its_own_tree(tmp_path: Path) -> None:
    config = str(TREE / "examples" / "configs" / "grpo_math_1B.yaml")
    done = _run(tmp_path, "--config", config, "policy.megatron_cfg.enabled=true")
    assert done.returncode == 1
    assert done.stdout.startswith(f"NeMo-RL: {TREE}, version 0.6.0 (dtensor_cfg schema with "
                                  "_v2; the config's checkout)")
    assert ("policy: Megatron and Automodel are both enabled; set exactly one of "
            "policy.megatron_cfg.enabled or policy.dtensor_cfg.enabled to true.") in done.stdout
    assert RAN not in done.stdout
