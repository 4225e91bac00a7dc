"""Every dispatch form of #28 item 1, as a pair: the defect found on a tree written for it,
and the fixed tree clean."""

from __future__ import annotations

from pathlib import Path

from tests.audit.tree import audited, keys

WORKERS = '''
class SyncWorker:
    def update_weights(self, refit_timeout_s=None):
        return True

    def offload(self):
        return True


class AsyncWorker:
    async def update_weights_async(self{async_params}):
        return True

    def offload(self):
        return True
'''

ENVIRONMENT = '''
import ray


@ray.remote
class NemoGym:
    def health_check(self):
        return True

    def shutdown(self):
        return None
'''


def _env_user(method: str) -> str:
    return f'''
import ray

from nemo_rl.environments.nemo_gym import NemoGym


def setup_and_check(cfg):
    nemo_gym = NemoGym.options(num_cpus=1).remote()
    ray.get(nemo_gym.{method}.remote())
    return nemo_gym
'''


NO_CALLS = '''
def nothing(self):
    return None
'''


def test_an_environment_actor_called_by_a_renamed_method_is_found(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS.format(async_params=", refit_timeout_s=None"),
                     driver_body=NO_CALLS, extra={
                         "nemo_rl/environments/__init__.py": "",
                         "nemo_rl/environments/nemo_gym.py": ENVIRONMENT,
                         "nemo_rl/algorithms/grpo.py": _env_user("health"),
                     })
    assert keys(report) == {("missing-method", "setup_and_check", "health", "NemoGym")}
    (finding,) = report.findings
    assert finding.call == "nemo_rl/algorithms/grpo.py:9"


def test_an_environment_actor_called_by_its_method_is_clean(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS.format(async_params=", refit_timeout_s=None"),
                     driver_body=NO_CALLS, extra={
                         "nemo_rl/environments/__init__.py": "",
                         "nemo_rl/environments/nemo_gym.py": ENVIRONMENT,
                         "nemo_rl/algorithms/grpo.py": _env_user("health_check"),
                     })
    assert report.findings == []
    assert report.sites == report.resolved == 1


def test_an_entry_script_under_examples_is_read(tmp_path: Path) -> None:
    files = {"nemo_rl/environments/__init__.py": "",
             "nemo_rl/environments/nemo_gym.py": ENVIRONMENT}
    bad = audited(tmp_path / "bad", workers=WORKERS.format(async_params=""),
                  driver_body=NO_CALLS, extra={**files, "examples/run_grpo.py": _env_user("helth")})
    assert keys(bad) == {("missing-method", "setup_and_check", "helth", "NemoGym")}
    assert bad.findings[0].call == "examples/run_grpo.py:9"
    good = audited(tmp_path / "good", workers=WORKERS.format(async_params=""),
                   driver_body=NO_CALLS,
                   extra={**files, "examples/run_grpo.py": _env_user("health_check")})
    assert good.findings == [] and good.sites == 1


GETATTR_BODY = '''
def update(self, timeout):
    method_name = (
        "update_weights_async" if self.cfg["vllm_cfg"]["async_engine"] else "update_weights")
    futures = [getattr(worker, method_name).remote(refit_timeout_s=timeout)
               for worker in self.worker_group.workers]
    return futures
'''


def test_getattr_over_worker_handles_with_a_local_name(tmp_path: Path) -> None:
    """`getattr(worker, method_name).remote(refit_timeout_s=...)`: the keyword was fanned
    out and only the sync worker was updated."""
    report = audited(tmp_path, workers=WORKERS.format(async_params=""), driver_body=GETATTR_BODY)
    assert keys(report) == {
        ("unknown-keyword", "Gen.update", "update_weights_async", "AsyncWorker")}
    assert report.findings[0].condition == (frozenset({("async_engine", True)}),)


def test_getattr_over_worker_handles_fixed(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS.format(async_params=", refit_timeout_s=None"),
                     driver_body=GETATTR_BODY)
    assert report.findings == []
    assert report.sites == report.resolved == 1


HELPER_BODY = '''
def _handles(self):
    return self.worker_group.workers

def offload_all(self):
    return [w.{method}.remote() for w in self._handles()]

def offload_listed(self):
    handles = [w for w in self.worker_group.workers]
    return [getattr(h, "{method}").remote() for h in handles]
'''


def test_handles_from_a_helper_and_a_comprehension(tmp_path: Path) -> None:
    bad = audited(tmp_path / "bad", workers=WORKERS.format(async_params=""),
                  driver_body=HELPER_BODY.format(method="ofload"))
    assert keys(bad) == {("missing-method", f, "ofload", w)
                         for f in ("Gen.offload_all", "Gen.offload_listed")
                         for w in ("SyncWorker", "AsyncWorker")}
    good = audited(tmp_path / "good", workers=WORKERS.format(async_params=""),
                   driver_body=HELPER_BODY.format(method="offload"))
    assert good.findings == [] and good.sites == good.resolved == 2


def test_a_getattr_name_the_source_cannot_tell_is_listed_unresolved(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS.format(async_params=""), driver_body='''
        def run(self):
            return [getattr(w, self.cfg["method"]).remote() for w in self.worker_group.workers]
    ''')
    assert report.findings == []
    assert report.sites == 1 and report.resolved == 0
    (site,) = report.unresolved
    assert site.function == "Gen.run" and "is not a literal" in site.reason
