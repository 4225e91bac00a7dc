"""Small NeMo-RL-shaped trees for the audit tests, written into a tmp folder."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from nemo_rl_workers.checks.audit import AuditReport, audit

# A dispatching driver like upstream's VllmGeneration: it picks its worker by
# `vllm_cfg.async_engine` and calls worker methods by name through its worker group.
DRIVER_HEAD = '''
import ray
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class Gen:
    def __init__(self, cfg):
        self.cfg = cfg
        if self.cfg["vllm_cfg"]["async_engine"]:
            worker_cls = "nemo_rl.workers.AsyncWorker"
        else:
            worker_cls = "nemo_rl.workers.SyncWorker"
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(worker_cls, cfg))
'''

WORKER_GROUPS = '''
class RayWorkerBuilder:
    def __init__(self, fqn, *args, **kwargs): ...

class RayWorkerGroup:
    def __init__(self, builder): ...
'''


def write_tree(root: Path, *, driver_body: str, workers: str,
               extra: dict[str, str] | None = None) -> Path:
    """A checkout at `root` with `nemo_rl/driver.py` (DRIVER_HEAD + body) and
    `nemo_rl/workers.py`."""
    files = {
        "nemo_rl/__init__.py": "",
        "nemo_rl/distributed/__init__.py": "",
        "nemo_rl/distributed/worker_groups.py": WORKER_GROUPS,
        "nemo_rl/driver.py": DRIVER_HEAD + textwrap.indent(textwrap.dedent(driver_body), "    "),
        "nemo_rl/workers.py": textwrap.dedent(workers),
        **(extra or {}),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def audited(root: Path, *, driver_body: str, workers: str,
            extra: dict[str, str] | None = None) -> AuditReport:
    return audit(write_tree(root, driver_body=driver_body, workers=workers, extra=extra),
                 stubs=[])


def keys(report: AuditReport) -> set[tuple[str, str, str, str]]:
    """(rule, driver function, worker method, worker class name) of each finding, for
    every class it lists."""
    return {(f.rule, f.driver, f.method, w.rsplit(".", 1)[-1])
            for f in report.findings for w in f.classes}


def mutated_copy(corpus: Path, tmp_path: Path, file: str, old: str, new: str) -> Path:
    """A copy of a corpus tree's `nemo_rl` in which `file` has `old` replaced once by
    `new`; a mutation that finds nothing to replace fails the test that asked for it."""
    copy = tmp_path / "nemo-rl"
    shutil.copytree(corpus / "nemo_rl", copy / "nemo_rl", symlinks=True)
    target = copy / file
    text = target.read_text(encoding="utf-8")
    changed = text.replace(old, new, 1)
    assert changed != text, f"{file}: {old!r} is not there to mutate"
    target.write_text(changed, encoding="utf-8")
    return copy
