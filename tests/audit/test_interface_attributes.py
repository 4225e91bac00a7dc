"""#34 item 4 (3): a call on a generation interface a class holds as an attribute
(`self.policy_generation = policy_generation`, the parameter typed as the interface),
against every implementation; each as a pair (found, fixed tree clean)."""

from __future__ import annotations

from pathlib import Path

from nemo_rl_workers.checks.audit import AuditReport
from tests.audit.tree import DRIVER_HEAD, audited, keys

WORKERS = '''
class SyncWorker:
    def generate(self, data):
        return data
'''

NO_CALLS = '''
def nothing(self):
    return None
'''

INTERFACE = '''
from abc import ABC, abstractmethod


class GenerationInterface(ABC):
    @abstractmethod
    def update_weights_from_collective(self, refit_timeout_s=None):
        ...
'''

BACKENDS = '''
from nemo_rl.interfaces import GenerationInterface


class VllmGeneration(GenerationInterface):
    def update_weights_from_collective(self, refit_timeout_s=None):
        return []


class SGLangGeneration(GenerationInterface):
    def update_weights_from_collective(self{params}):
        return []
'''

HOLDER = '''
from typing import Optional

from nemo_rl.interfaces import GenerationInterface


class Refitter:
    def __init__(self, policy_generation: Optional[GenerationInterface]):
        self.policy_generation = policy_generation

    def refit(self, timeout):
        return self.policy_generation.update_weights_from_collective(refit_timeout_s=timeout)


class Untyped:
    def __init__(self, generation):
        self.generation = generation

    def refit(self):
        return self.generation.update_weights_from_collective(timeout=1)
'''


def _interface_tree(tmp_path: Path, params: str) -> AuditReport:
    return audited(tmp_path, workers=WORKERS, driver_body=NO_CALLS,
                   extra={"nemo_rl/interfaces.py": INTERFACE,
                          "nemo_rl/backends.py": BACKENDS.format(params=params),
                          "nemo_rl/refit.py": HOLDER,
                          "nemo_rl/driver.py": "from nemo_rl.backends import VllmGeneration\n"
                          + open_driver()})


def open_driver() -> str:
    """The driver as an implementation of the interface (through a backend)."""
    return DRIVER_HEAD.replace("class Gen:", "class Gen(VllmGeneration):")


def test_an_interface_attribute_call_is_checked_against_every_backend(tmp_path: Path) -> None:
    bad = _interface_tree(tmp_path / "bad", "")
    assert keys(bad) == {("unknown-keyword", "Refitter.refit",
                          "update_weights_from_collective", "SGLangGeneration")}
    (finding,) = bad.findings
    assert finding.call == "nemo_rl/refit.py:12"
    assert "SGLangGeneration" in finding.message and "refit_timeout_s=" in finding.message
    good = _interface_tree(tmp_path / "good", ", refit_timeout_s=None")
    assert good.findings == []


UNDECLARED = '''
from nemo_rl.interfaces import GenerationInterface


class Rollout:
    def __init__(self, policy_generation: GenerationInterface):
        self._policy_generation = policy_generation

    async def turn(self, data):
        async for item in self._policy_generation.{method}(data):
            return item
'''


def test_a_method_outside_the_interface_is_judged_only_where_no_backend_has_it(
        tmp_path: Path) -> None:
    """`generate_async` is not on the interface; a caller that holds a backend having it
    is one the source does not type (upstream's rollout manager), so it is not judged;
    a method no backend has is a finding naming every one."""
    backends = BACKENDS.format(params=", refit_timeout_s=None") + '''
    async def generate_async(self, data):
        yield data
'''
    files = {"nemo_rl/interfaces.py": INTERFACE, "nemo_rl/backends.py": backends,
             "nemo_rl/driver.py": "from nemo_rl.backends import VllmGeneration\n"
             + open_driver()}
    some = audited(tmp_path / "some", workers=WORKERS,
                   driver_body=NO_CALLS,
                   extra={**files, "nemo_rl/rollout.py": UNDECLARED.format(
                       method="generate_async")})
    assert some.findings == []
    none = audited(tmp_path / "none", workers=WORKERS,
                   driver_body=NO_CALLS,
                   extra={**files, "nemo_rl/rollout.py": UNDECLARED.format(
                       method="generate_stream")})
    assert keys(none) == {("missing-method", "Rollout.turn", "generate_stream", name)
                          for name in ("VllmGeneration", "SGLangGeneration", "Gen")}
    assert none.findings[0].call == "nemo_rl/rollout.py:10"


def test_an_isinstance_guard_on_the_attribute_narrows_the_backends(tmp_path: Path) -> None:
    """`if isinstance(self.policy_generation, SGLangGeneration): raise` before the call:
    SGLang's lacking keyword is not reached."""
    guarded = HOLDER.replace(
        "    def refit(self, timeout):\n",
        "    def refit(self, timeout):\n"
        "        if isinstance(self.policy_generation, SGLangGeneration):\n"
        "            raise NotImplementedError\n").replace(
        "from nemo_rl.interfaces import GenerationInterface\n",
        "from nemo_rl.backends import SGLangGeneration\n"
        "from nemo_rl.interfaces import GenerationInterface\n")
    assert guarded.count("isinstance") == 1
    report = audited(tmp_path, workers=WORKERS, driver_body=NO_CALLS, extra={
        "nemo_rl/interfaces.py": INTERFACE, "nemo_rl/backends.py": BACKENDS.format(params=""),
        "nemo_rl/refit.py": guarded,
        "nemo_rl/driver.py": "from nemo_rl.backends import VllmGeneration\n" + open_driver()})
    assert report.findings == []
