"""mypy and pyrefly, run in an extension project outside the repository, find `contracts`
and `nemo_rl` (the compat editable install of `make setup`) with the guide's pyproject block."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.docs.snippets import REPO, VENV_BIN, read_blocks

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"

GOOD = '''\
from __future__ import annotations

from typing import TYPE_CHECKING

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class CountingWorker(AutomodelPolicyWorker):
    def count_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


if TYPE_CHECKING:
    from contracts.protocols import PolicyWorker

    _contract: type[PolicyWorker] = CountingWorker
'''

# The same, drifted from the contract: `save_checkpoint` needs an argument no caller passes.
DRIFTED = GOOD.replace("CountingWorker", "DriftedWorker").replace(
    "    def count_parameters(self) -> int:\n        return sum(p.numel() for p in "
    "self.model.parameters())\n",
    "    def save_checkpoint(self, path: str, step: int) -> None:\n        del path, step\n",
)


def _guide_block() -> str:
    (block,) = [b.text for b in read_blocks(GUIDE) if b.lang == "toml" and "tool.mypy" in b.text]
    return block


@pytest.mark.slow
def test_both_checkers_resolve_the_project_from_another_folder(tmp_path: Path) -> None:
    project = tmp_path / "my_extension"
    package = project / "my_extension"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "workers.py").write_text(GOOD)
    (package / "drifted.py").write_text(DRIFTED)
    block = _guide_block().replace("template_project", "my_extension")
    (project / "pyproject.toml").write_text(block)
    assert tomllib.loads(block)["tool"]["mypy"]["files"] == ["my_extension"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    found: dict[str, str] = {}
    for checker in (["mypy", "--cache-dir", str(tmp_path / "cache")], ["pyrefly", "check"]):
        done = subprocess.run(checker, cwd=project, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        output = done.stdout + done.stderr
        # Nothing unresolved; the errors are the drifted class's, so the contract was read.
        assert "Cannot find" not in output and "missing-import" not in output, output
        assert done.returncode == 1, output
        found[checker[0]] = output
    assert re.search(r"my_extension/drifted\.py:\d+: error: ", found["mypy"]), found["mypy"]
    assert re.search(r"--> my_extension/drifted\.py:\d+", found["pyrefly"]), found["pyrefly"]
    assert "my_extension/workers.py" not in found["mypy"] + found["pyrefly"]
