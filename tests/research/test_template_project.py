"""The research template: its extension, selected from YAML, trains and answers on every rank."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest
from nemo_rl.distributed.inventory import ray_resources_snapshot

from nemo_rl_workers.model.registry import default_registry
from nemo_rl_workers.model.resolver import resolve_config

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "research" / "template_project"
SCRIPT = TEMPLATE / "single_update.py"
CONFIG = TEMPLATE / "configs" / "single_update.yaml"
WORKER_FQN = "template_project.workers.TemplateAutomodelPolicyWorker"
NORM_LINE = re.compile(r"^rank (\d+): get_weight_norm\(\) ([\d.]+) -> ([\d.]+) ")


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("template_single_update", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


def test_the_config_selects_the_extension_through_the_entry_point() -> None:
    from nemo_rl_workers.reading.loader import load_config

    (policy,) = resolve_config(load_config(str(CONFIG)))
    assert (policy.fqn, policy.rule, policy.source) == (WORKER_FQN, "R2", "config")
    assert policy.base_fqn == (
        "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"
    )
    # Registered by template_project.registration:PLUGIN, not by the project's own table.
    assert default_registry().environment_of(WORKER_FQN) is not None


def test_the_script_never_passes_the_deprecated_argument() -> None:
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    keywords = [kw.arg for node in ast.walk(tree) if isinstance(node, ast.Call)
                for kw in node.keywords]
    assert "worker_extension_cls_fqn" not in keywords


@pytest.mark.ray
@pytest.mark.slow
def test_one_update_changes_the_weight_norm_on_every_worker(
    ray_cluster: None, capsys: pytest.CaptureFixture[str]
) -> None:
    import ray

    before = ray_resources_snapshot()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = load_script().main(["--config", str(CONFIG)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"worker class: {WORKER_FQN} (rule R2)" in out
    norms = [m.groups() for m in map(NORM_LINE.match, out.splitlines()) if m]
    assert [int(rank) for rank, _, _ in norms] == [0, 1]  # both data-parallel workers
    assert all(float(old) != float(new) for _, old, new in norms), out
    assert not [w for w in caught if issubclass(w.category, DeprecationWarning)
                and "worker_extension_cls_fqn" in str(w.message)]
    # main() reused the session's cluster and left it running, with nothing of its own behind.
    assert ray.is_initialized()
    assert ray_resources_snapshot() == before
