"""`verify` judges a class against the Protocols of the NeMo-RL it is written for (issue 43,
item 5): a correct extension of a corpus tree's policy worker, in a package outside the
tree, passes `verify --static --nemo-rl TREE` (and with the tree as the environment's
`nemo_rl`), and fails with the reference's Protocol only when `--reference` asks for it.

Run as the user runs it: `python -m nemo_rl_workers` in a fresh process whose import path
holds the extension's folder and the tree (the user's installed `nemo_rl`), never this
repository's runtime. Skipped where a corpus folder is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import CORPORA
from tests.revision.trees import old_tree, write

TOOL = Path(__file__).resolve().parents[2]
# Beside the checkout, as every corpus test finds it (or beside the folder of its git
# worktrees, for a worktree one folder deeper).

# (tree folder, the module of its DTensor policy worker, the class to subclass): the
# 2026-08 tree's actor class is `@ray.remote` over an `...Impl` (Ray refuses a subclass of
# an actor class); the 2025-09 tree's worker is the class itself.
TREES = {
    "2026-08": ("nemo-rl", "nemo_rl.models.policy.workers.dtensor_policy_worker",
                "DTensorPolicyWorkerImpl"),
    "2025-09": ("nemo-rl-2025-09", "nemo_rl.models.policy.dtensor_policy_worker",
                "DTensorPolicyWorker"),
}
# Both trees' save_checkpoint; the reference's (after PR #4176) is `(self, path: str)`.
EXTENSION = '''
from typing import Optional

from {module} import {base}


class MyVLMWorker({base}):
    def save_checkpoint(
        self,
        weights_path: {weights},
        optimizer_path: Optional[str] = None,
        tokenizer_path: Optional[str] = None,
    ) -> None:
        super().save_checkpoint(weights_path, optimizer_path, tokenizer_path)
'''
FQN = "myext.gen_workers.MyVLMWorker"


def cli(*argv: str, path: list[Path], cwd: Path) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, path), str(TOOL)]),
           "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "nemo_rl_workers", *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, done.stdout, done.stderr


def extension(folder: Path, module: str, base: str, weights: str = "str") -> Path:
    return write(folder, {"myext/__init__.py": "", "myext/gen_workers.py": EXTENSION.format(
        module=module, base=base, weights=weights)})


@pytest.mark.parametrize("era", sorted(TREES))
def test_a_correct_extension_passes_against_its_tree_and_not_the_reference(
    era: str, tmp_path: Path
) -> None:
    folder, module, base = TREES[era]
    tree = CORPORA / folder
    if not (tree / "nemo_rl").is_dir():
        pytest.skip(f"the corpus {tree} is absent")
    ext = extension(tmp_path / "ext", module, base)
    path = [ext, tree]
    verify = ("verify", "--static", "--no-cache", FQN, "--protocol", "PolicyWorker")

    code, out, err = cli(*verify, "--nemo-rl", str(tree), path=path, cwd=tmp_path)
    lines = out.splitlines()
    assert (code, err) == (0, ""), out + err
    assert lines[0].startswith(f"NeMo-RL: {tree}") and lines[0].endswith("; --nemo-rl)")
    assert lines[1].startswith(f"{FQN} implements PolicyWorker as this tree has it: ")
    assert f"(what Policy calls on {module}.DTensorPolicyWorker and its subclasses)" in lines[1]

    # The tree as the environment's nemo_rl: the same verdict, the tree named as such.
    code, out, err = cli(*verify, path=path, cwd=tmp_path)
    assert (code, err) == (0, ""), out + err
    assert out.splitlines()[0].endswith("; the environment's nemo_rl)")

    # The reference's Protocol only when asked for: its save_checkpoint is (path: str).
    code, out, err = cli(*verify, "--reference", path=path, cwd=tmp_path)
    assert code == 1, out + err
    assert not out.startswith("NeMo-RL:")
    assert (f"{FQN} does not implement PolicyWorker.save_checkpoint: pyrefly: "
            in out), out

    # Against the tree, a wrong signature is still found, by the tree's Protocol.
    wrong = extension(tmp_path / "wrong", module, base, weights="int")
    code, out, err = cli(*verify, "--nemo-rl", str(tree), "--json", path=[wrong, tree],
                         cwd=tmp_path)
    assert code == 1, out + err
    report = json.loads(out)
    assert report["nemo_rl"]["revision"] == "tree"
    protocol = report["tree_protocol"]["name"]
    assert report["tree_protocol"]["driver"] == "Policy"
    assert [v["member"] for v in report["violations"]] == ["save_checkpoint"]
    assert f"does not implement {protocol}.save_checkpoint" in report["violations"][0][
        "message"]


def test_the_runtime_verifier_imports_the_tree_s_protocol(tmp_path: Path) -> None:
    """`verify` (importing the class): against a fork whose workers import nothing heavy,
    the class is checked against the fork's Protocol (what its Policy calls: `train`), not
    the reference's (which the fork's classes lack: save_checkpoint, is_alive, ...)."""
    root = old_tree(tmp_path / "fork")
    good = write(tmp_path / "good", {"myext/__init__.py": "", "myext/gen_workers.py": (
        "from nemo_rl.models.policy.workers.dtensor import DTensorPolicyWorker\n\n\n"
        "class MyVLMWorker(DTensorPolicyWorker):\n"
        "    def train(self, data):\n        return data\n")})
    code, out, err = cli("verify", FQN, "--protocol", "PolicyWorker", "--nemo-rl", str(root),
                         path=[good], cwd=tmp_path)
    assert (code, err) == (0, ""), out + err
    lines = out.splitlines()
    assert lines[0].startswith(f"NeMo-RL: {root.resolve()}")
    assert lines[1] == (f"{FQN} implements PolicyWorker as this tree has it: "
                        "DTensorPolicyWorkerProtocol (what Policy calls on "
                        "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker and its "
                        "subclasses)")
    bad = write(tmp_path / "bad", {"myext/__init__.py": "", "myext/gen_workers.py": (
        "from nemo_rl.models.policy.workers.dtensor import DTensorPolicyWorker\n\n\n"
        "class MyVLMWorker(DTensorPolicyWorker):\n"
        "    def train(self):\n        return None\n")})
    code, out, err = cli("verify", FQN, "--protocol", "PolicyWorker", "--nemo-rl", str(root),
                         path=[bad], cwd=tmp_path)
    assert code == 1, out + err
    assert "DTensorPolicyWorkerProtocol.train" in out
