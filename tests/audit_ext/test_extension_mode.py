"""#28 item 9, extension mode: calls by name from `--path` scripts are judged against the
extension on the command line; an extension that subclasses a `@ray.remote` class is an
error naming the class to subclass. Each as a pair (found, fixed clean)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

from tests.audit.tree import write_tree
from tests.cli_run import run_cli

WORKERS = '''
import ray


class PolicyWorkerImpl:
    def train(self, data):
        return data


@ray.remote(num_gpus=1)
class SyncWorker(PolicyWorkerImpl):
    pass


class AsyncWorker(PolicyWorkerImpl):
    pass
'''

# A public pass-through, as upstream's Policy has: the name comes from its callers.
PASS_THROUGH = '''
def run_all_workers_single_data(self, method_name, **kwargs):
    return self.worker_group.run_all_workers_single_data(method_name, **kwargs)
'''


def _user(root: Path, base: str, called: str) -> Path:
    files = {
        "myext/__init__.py": "",
        "myext/worker.py": f'''
from nemo_rl.workers import {base}


class RankWorker({base}):
    def get_worker_rank(self):
        return 0
''',
        "run.py": f'''
def main(gen):
    return gen.run_all_workers_single_data("{called}")
''',
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def audit_json(tree: Path, user: Path, *extensions: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run_cli("audit", "--no-cache", "--nemo-rl", str(tree), "--path", str(user),
                           "--json", *extensions)
    return code, json.loads(out)


def rules(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["rule"], f["method"], f["worker"]) for f in report["findings"]}


def _tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "checkout", driver_body=PASS_THROUGH, workers=WORKERS)


def test_a_misspelt_name_from_a_path_script_is_found_on_the_extension(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    user = _user(tmp_path / "user", "PolicyWorkerImpl", "get_worker_rnak")
    code, report = audit_json(tree, user, "myext.worker.RankWorker")
    assert code == 1
    assert rules(report) == {("missing-method", "get_worker_rnak", "myext.worker.RankWorker")}
    (finding,) = report["findings"]
    assert finding["call"].endswith("user/run.py:3")


def test_the_path_scripts_name_the_extension_has_is_clean(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    user = _user(tmp_path / "user", "PolicyWorkerImpl", "get_worker_rank")
    code, report = audit_json(tree, user, "myext.worker.RankWorker")
    assert (code, report["findings"]) == (0, [])
    assert report["call_sites"]["unresolved"] == 0


def test_a_subclass_of_a_ray_remote_class_names_the_class_to_subclass(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    user = _user(tmp_path / "user", "SyncWorker", "get_worker_rank")
    code, report = audit_json(tree, user, "myext.worker.RankWorker")
    assert code == 1
    assert rules(report) == {("extension-subclasses-actor", "__init__",
                              "myext.worker.RankWorker")}
    (finding,) = report["findings"]
    assert "nemo_rl.workers.SyncWorker, which is decorated @ray.remote" in finding["message"]
    assert "subclass nemo_rl.workers.PolicyWorkerImpl, the undecorated class it wraps" in (
        finding["message"])


def test_the_template_projects_script_misspelt_in_a_copy(upstream: Path, tmp_path: Path) -> None:
    """Upstream's own research/template_project: a name its script calls, misspelt, is
    one finding on the extension (it vanished before)."""
    user = tmp_path / "template_project"
    shutil.copytree(upstream / "research" / "template_project", user)
    script = user / "single_update.py"
    text = script.read_text(encoding="utf-8")
    script.write_text(text.replace('"get_worker_rank"', '"get_worker_rnak"'), encoding="utf-8")
    ext = "template_project.worker_extension.DTensorPolicyWorkerV2Extension"
    _, before = audit_json(upstream, upstream / "research" / "template_project", ext)
    code, after = audit_json(upstream, user, ext)
    new = rules(after) - rules(before)
    assert code == 1 and new == {("missing-method", "get_worker_rnak", ext)}
