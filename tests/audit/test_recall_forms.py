"""Dispatch forms of #34 item 4, each as a pair: the defect found on a tree written for it,
and the fixed tree clean. (1) a `.remote()` call on an actor handle an entry script
creates (`ray.remote(Cls).remote()` at module level, a class made an actor through a
local); (2) `getattr(worker, name)` bound to a local, then `.remote(...)`, whose name an
if/else on the config chooses. (3), calls on an interface held as an attribute, is in
test_interface_attributes."""

from __future__ import annotations

from pathlib import Path

from nemo_rl_workers.checks.audit import AuditReport
from tests.audit.tree import audited, keys
from tests.cli_run import run_cli

WORKERS = '''
class SyncWorker:
    def generate(self, data, greedy=False):
        return data


class AsyncWorker:
    async def generate_async(self, data{async_params}):
        return data
'''

NO_CALLS = '''
def nothing(self):
    return None
'''

# -- (1) actor handles an entry script creates -----------------------------------------

GYM = '''
class NemoGym:
    def health_check(self, timeout_s=10.0):
        return True
'''

SCRIPT_MODULE_LEVEL = '''
import ray

from nemo_rl.environments.nemo_gym import NemoGym

gym = ray.remote(NemoGym).options(num_cpus=1).remote()
ray.get(gym.{method}.remote({keywords}))
'''

SCRIPT_ALIAS = '''
import ray

from nemo_rl.environments.nemo_gym import NemoGym


def main():
    actor_cls = ray.remote(num_cpus=1)(NemoGym)
    handle = actor_cls.remote()
    return ray.get(handle.{method}.remote({keywords}))
'''


def _script(tmp_path: Path, template: str, method: str, keywords: str = "") -> AuditReport:
    return audited(tmp_path, workers=WORKERS.format(async_params=""), driver_body=NO_CALLS,
                   extra={"nemo_rl/environments/__init__.py": "",
                          "nemo_rl/environments/nemo_gym.py": GYM,
                          "examples/run_gym.py": template.format(method=method,
                                                                 keywords=keywords)})


def test_a_module_level_handle_of_ray_remote_of_a_class_is_found(tmp_path: Path) -> None:
    bad = _script(tmp_path / "bad", SCRIPT_MODULE_LEVEL, "health")
    assert keys(bad) == {("missing-method", "<module>", "health", "NemoGym")}
    (finding,) = bad.findings
    assert finding.call == "examples/run_gym.py:7"
    assert "NemoGym" in finding.message
    good = _script(tmp_path / "good", SCRIPT_MODULE_LEVEL, "health_check")
    assert good.findings == [] and good.sites == good.resolved == 1


def test_a_handle_of_a_class_made_an_actor_through_a_local_is_found(tmp_path: Path) -> None:
    bad = _script(tmp_path / "bad", SCRIPT_ALIAS, "health_check", "timeout=5")
    assert keys(bad) == {("unknown-keyword", "main", "health_check", "NemoGym")}
    (finding,) = bad.findings
    assert finding.call == "examples/run_gym.py:10" and "timeout=" in finding.message
    good = _script(tmp_path / "good", SCRIPT_ALIAS, "health_check", "timeout_s=5")
    assert good.findings == [] and good.sites == good.resolved == 1


def test_a_script_handle_of_a_class_the_tree_lacks_is_no_finding(tmp_path: Path) -> None:
    """Its class cannot be read, so nothing is said about its calls (not a site)."""
    report = _script(tmp_path, SCRIPT_MODULE_LEVEL.replace(
        "from nemo_rl.environments.nemo_gym import NemoGym", "from elsewhere import NemoGym"),
        "health")
    assert report.findings == []


# -- (2) getattr with a name the config chooses -----------------------------------------

GETATTR_IF_ELSE = '''
def generate(self, data):
    if self.cfg["vllm_cfg"]["async_engine"]:
        method_name = "generate_async"
    else:
        method_name = "generate"
    method = getattr(self.worker_group.workers[0], method_name)
    return method.remote(data=data, greedy=True)
'''


def test_getattr_name_chosen_by_an_if_else_checks_each_side(tmp_path: Path) -> None:
    bad = audited(tmp_path / "bad", workers=WORKERS.format(async_params=""),
                  driver_body=GETATTR_IF_ELSE)
    assert keys(bad) == {("unknown-keyword", "Gen.generate", "generate_async", "AsyncWorker")}
    (finding,) = bad.findings
    assert finding.condition == (frozenset({("async_engine", True)}),)
    assert finding.call == "nemo_rl/driver.py:21" and "greedy=" in finding.message
    good = audited(tmp_path / "good", workers=WORKERS.format(async_params=", greedy=False"),
                   driver_body=GETATTR_IF_ELSE)
    assert good.findings == [] and good.sites == good.resolved == 1


def test_an_edited_entry_script_is_a_new_cached_audit(tmp_path: Path) -> None:
    """The audit reads the tree's entry scripts, so its cache is keyed by them too: a
    script whose call goes wrong is audited afresh, not answered from the entry."""

    from tests.audit.tree import write_tree

    root = write_tree(tmp_path / "tree", workers=WORKERS.format(async_params=""),
                      driver_body=NO_CALLS, extra={
                          "nemo_rl/environments/__init__.py": "",
                          "nemo_rl/environments/nemo_gym.py": GYM,
                          "examples/run_gym.py": SCRIPT_MODULE_LEVEL.format(
                              method="health_check", keywords="")})
    argv = ["audit", "--nemo-rl", str(root), "--cache-dir", str(tmp_path / "cache")]

    def audit() -> tuple[int, str]:
        return run_cli(*argv)[:2]

    assert audit()[0] == 0
    script = root / "examples/run_gym.py"
    script.write_text(script.read_text().replace("gym.health_check", "gym.health"))
    code, out = audit()
    assert code == 1 and "examples/run_gym.py:7" in out and "health" in out
