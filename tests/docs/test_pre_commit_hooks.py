"""`.pre-commit-hooks.yaml`: the hooks users get, run the way pre-commit runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.docs.snippets import GOOD_CONFIGS, REPO, run_hook

HOOKS = REPO / ".pre-commit-hooks.yaml"
# pre-commit's manifest: these keys are required, and these are the ones we rely on.
REQUIRED = {"id", "name", "entry", "language"}


def all_hooks() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    return loaded


def hooks() -> list[dict[str, Any]]:
    """The hooks that take config files (the audit hook takes the tree; tests/audit)."""
    return [h for h in all_hooks() if h.get("pass_filenames") is not False]


def test_the_hooks_and_their_manifest_keys() -> None:
    found = {h["id"]: h for h in all_hooks()}
    assert sorted(found) == ["nemo-rl-audit", "nemo-rl-check-config", "nemo-rl-migrate-check"]
    for hook in found.values():
        assert REQUIRED <= set(hook), hook
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is (hook["id"] != "nemo-rl-audit")
    assert found["nemo-rl-audit"]["entry"] == "nemo-rl-workers audit --nemo-rl ."
    # The audit hook's environment has vllm-stubs, as the command's has (pre-commit runs
    # `pip install . ./stubs` in its clone of this repository).
    (stubs,) = found["nemo-rl-audit"]["additional_dependencies"]
    assert (REPO / stubs / "pyproject.toml").is_file()
    assert 'name = "vllm-stubs"' in (REPO / stubs / "pyproject.toml").read_text(encoding="utf-8")
    assert all("additional_dependencies" not in h for h in found.values()
               if h["id"] != "nemo-rl-audit")
    assert found["nemo-rl-check-config"]["entry"] == "nemo-rl-workers check --no-verify"
    assert found["nemo-rl-migrate-check"]["entry"] == "nemo-rl-workers migrate --check"


@pytest.mark.slow
@pytest.mark.parametrize("hook", hooks(), ids=lambda h: str(h["id"]))
def test_hook_passes_good_configs_and_fails_bad_ones(hook: dict[str, Any], tmp_path: Path) -> None:
    run_hook(hook, tmp_path)


@pytest.mark.parametrize("hook", hooks(), ids=lambda h: str(h["id"]))
def test_hook_needs_only_the_core_dependencies(hook: dict[str, Any]) -> None:
    """pre-commit installs the package without the runtime extra: no torch, Ray or ModelOpt."""
    args = [*hook["entry"].split()[1:], *GOOD_CONFIGS]
    script = (
        "import sys\n"
        "for name in ('torch', 'ray', 'modelopt', 'transformers', 'vllm'):\n"
        "    sys.modules[name] = None  # importing it now raises ImportError\n"
        "from nemo_rl_workers.commands.cli import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
