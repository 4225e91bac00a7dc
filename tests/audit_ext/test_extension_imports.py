"""Issue 43, item 9e: an extension that imports from the tree's `nemo_rl` a module or a name
that tree does not define fails only when its worker's module is imported, in the worker's
process. `audit` and `verify --static` say so from source, one line each naming the module,
the import and its line; imports the module does not always run (inside `try`, `if` or a
function) and names the tree does define are not flagged. Both commands as a user runs
them: a fresh process, from the extension's folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.audit.tree import write_tree
from tests.corpus import CORPORA

REPO = Path(__file__).resolve().parents[2]

WORKERS = '''
class PolicyWorkerImpl:
    def train(self, data):
        return data


class SyncWorker(PolicyWorkerImpl):
    pass


class AsyncWorker(PolicyWorkerImpl):
    pass
'''

EXTENSION = '''\
from nemo_rl.workers import PolicyWorkerImpl
from nemo_rl.utils.nsys import other, wrap_with_nvtx_name
from nemo_rl.gone import helper

try:
    from nemo_rl.workers import MaybeThere
except ImportError:
    MaybeThere = None


class RankWorker(PolicyWorkerImpl):
    def get_worker_rank(self):
        from nemo_rl.workers import OnlyWhenCalled
        return OnlyWhenCalled
'''
FQN = "myext.worker.RankWorker"
BOTH = "def other():\n    pass\n\n\nwrap_with_nvtx_name = None\n"


def _tree(root: Path, nsys: str) -> Path:
    return write_tree(root, driver_body="", workers=WORKERS, extra={
        "nemo_rl/utils/__init__.py": "", "nemo_rl/utils/nsys.py": nsys,
        "nemo_rl/gone/__init__.py": "helper = None\n"})


def _user(root: Path, text: str = EXTENSION) -> Path:
    (root / "myext").mkdir(parents=True)
    (root / "myext" / "__init__.py").write_text("")
    (root / "myext" / "worker.py").write_text(text)
    return root


def _cli(user: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(user), *os.environ.get("PYTHONPATH", "").split(os.pathsep)])
    return subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", *argv], capture_output=True, text=True,
        cwd=user, timeout=300, check=False, env={**os.environ, "PYTHONPATH": path,
                                                 "NO_COLOR": "1"})


def _audit(tree: Path, user: Path, fqn: str = FQN) -> tuple[int, dict[str, Any]]:
    done = _cli(user, "audit", "--no-cache", "--json", "--nemo-rl", str(tree), "--path", ".",
                fqn)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _imports(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == "extension-import-missing"]


def _verify(tree: Path, user: Path, fqn: str = FQN) -> list[str]:
    done = _cli(user, "verify", "--static", "--no-cache", "--nemo-rl", str(tree), fqn,
                "--protocol", "contracts.PolicyWorker")
    assert done.returncode in (0, 1), done.stderr
    return [line for line in done.stdout.splitlines() if "cannot be imported" in line]


def test_audit_names_each_import_the_tree_cannot_satisfy(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "checkout", nsys="def other():\n    pass\n")
    user = _user(tmp_path / "user")
    code, report = _audit(tree, user)
    assert code == 1
    found = [(f["call"].rpartition("/")[2], f["method"], f["worker"], f["message"])
             for f in _imports(report)]
    assert found == [
        ("worker.py:2", "nemo_rl.utils.nsys.wrap_with_nvtx_name", FQN,
         "myext.worker runs `from nemo_rl.utils.nsys import wrap_with_nvtx_name` (line 2), "
         "but this NeMo-RL's nemo_rl.utils.nsys defines no wrap_with_nvtx_name "
         "(nemo_rl/utils/nsys.py): importing the module fails in the worker's process")]


def test_a_module_the_tree_lacks_is_named(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "checkout", nsys=BOTH)
    shutil.rmtree(tree / "nemo_rl" / "gone")
    code, report = _audit(tree, _user(tmp_path / "user"))
    assert code == 1
    (finding,) = _imports(report)
    assert finding["call"].endswith("myext/worker.py:3")
    assert "but this NeMo-RL has no module nemo_rl.gone" in finding["message"]


def test_imports_the_tree_satisfies_are_clean(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "checkout", nsys=BOTH)
    code, report = _audit(tree, _user(tmp_path / "user"))
    assert (code, _imports(report), report["findings"]) == (0, [], [])


def test_verify_static_names_the_import(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "checkout", nsys="def other():\n    pass\n")
    user = _user(tmp_path / "user")
    (line,) = _verify(tree, user)
    assert line == (
        f"{FQN} cannot be imported: {user / 'myext' / 'worker.py'}:2: myext.worker runs "
        "`from nemo_rl.utils.nsys import wrap_with_nvtx_name` (line 2), but this NeMo-RL's "
        "nemo_rl.utils.nsys defines no wrap_with_nvtx_name (nemo_rl/utils/nsys.py): "
        "importing the module fails in the worker's process")
    fixed = _tree(tmp_path / "fixed", nsys=BOTH)
    assert _verify(fixed, user) == []


def _corpus(name: str) -> Path:
    root = CORPORA / name
    if not (root / "nemo_rl" / "__init__.py").is_file():
        pytest.skip(f"corpus absent: {root}")
    return root


TEMPLATE_EXT = "template_project.worker_extension.DTensorPolicyWorkerV2Extension"


def test_the_issue_s_nsys_import_on_the_2026_tree(tmp_path: Path) -> None:
    """The issue's example: upstream's own template, with an import of nsys the tree's
    nemo_rl/utils/nsys.py does not define."""
    corpus = _corpus("nemo-rl")
    user = tmp_path / "template_project"
    shutil.copytree(corpus / "research" / "template_project", user)
    module = user / "template_project" / "worker_extension.py"
    text = module.read_text()
    module.write_text(text.replace("import torch\n", "import torch\n"
                                   "from nemo_rl.utils.nsys import wrap_with_nvtx\n", 1))
    line = text[: text.index("import torch\n")].count("\n") + 2
    _, report = _audit(corpus, user, TEMPLATE_EXT)
    (finding,) = _imports(report)
    assert finding["call"].endswith(f"template_project/worker_extension.py:{line}")
    assert "nemo_rl.utils.nsys defines no wrap_with_nvtx (nemo_rl/utils/nsys.py)" in (
        finding["message"])
    (said,) = _verify(corpus, user, TEMPLATE_EXT)
    assert f"worker_extension.py:{line}: template_project.worker_extension runs " \
           "`from nemo_rl.utils.nsys import wrap_with_nvtx`" in said
    module.write_text(text)  # upstream's own template imports only what its tree defines
    assert _imports(_audit(corpus, user, TEMPLATE_EXT)[1]) == []


def test_the_2026_template_against_the_2025_tree(tmp_path: Path) -> None:
    """Upstream's 2026 template imports DTensorPolicyWorkerV2Impl from a package the
    2025-09 tree does not have yet (its workers lived in nemo_rl/models/policy/)."""
    old = _corpus("nemo-rl-2025-09")
    user = tmp_path / "template_project"
    shutil.copytree(_corpus("nemo-rl") / "research" / "template_project", user)
    _, report = _audit(old, user, TEMPLATE_EXT)
    (finding,) = _imports(report)
    assert "`from nemo_rl.models.policy.workers.dtensor_policy_worker_v2 import " \
           "DTensorPolicyWorkerV2Impl`" in finding["message"]
    assert "but this NeMo-RL has no module nemo_rl.models.policy.workers" in (
        finding["message"])
    assert finding["call"].endswith("worker_extension.py:21")
