"""Plain `check` where the workers' heavy dependencies are missing (issue 27, item 8).

A worker module that cannot be imported for lack of a third-party package (torch, Ray,
vLLM) is skipped with the reason, and `--static` named as the way to judge it; the
class's own package missing a module stays a problem. An unset `${oc.env:...}` outside
the sections `check` reads does not stop it; where a read value needs it, it does.

"Torch is not installed" is a fake injected on purpose: the CLI runs in a subprocess whose
first act is a meta-path finder that refuses torch, ray and vllm as Python refuses a
missing module (ModuleNotFoundError with its name), so no light virtualenv is needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nemo_rl_workers.model.registry import ENTRY_POINT_GROUP
from tests.corpus import NEMO_RL

REPO = Path(__file__).resolve().parents[2]
CORPUS_RECIPE = (NEMO_RL / "examples" / "configs" / "recipes" / "llm"
                 / "mopd-qwen3-1.7b-3n8g-megatron-pack.yaml").resolve()
AUTOMODEL = "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"
TEMPLATE = "template_project.workers.TemplateAutomodelPolicyWorker"
HIDE_HEAVY = '''\
import importlib.abc
import sys


class FakeNotInstalled(importlib.abc.MetaPathFinder):
    """Injected on purpose: torch, ray and vllm are not installed here."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {"torch", "ray", "vllm"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, FakeNotInstalled())
from nemo_rl_workers.commands.cli import main  # noqa: E402

code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "ray", "vllm"})
print("HEAVY=" + ",".join(heavy))
raise SystemExit(code)
'''


def _check(*args: str, cwd: Path = REPO, pythonpath: str = "",
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    paths = [p for p in (pythonpath, str(REPO), str(REPO / "runtime"),
                         str(REPO / "research" / "template_project")) if p]
    full = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(paths), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", HIDE_HEAVY, "check", *args], cwd=cwd,
                          env=full, capture_output=True, text=True, timeout=300, check=False)


def _output(done: subprocess.CompletedProcess[str]) -> str:
    text, _, heavy = done.stdout.rpartition("HEAVY=")
    assert heavy.strip() == "", f"imported {heavy.strip()}"
    return text


def test_a_worker_needing_torch_is_skipped_with_the_reason() -> None:
    done = _check("-v", "examples/configs/grpo_tiny.yaml",
                  "research/template_project/configs/single_update.yaml")
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    lines = _output(done).splitlines()
    assert "  problem:" not in "\n".join(lines)
    skipped = [line for line in lines if line.startswith("  skipped: ")]
    assert skipped == [
        f"  skipped: policy: {AUTOMODEL} was not verified: importing "
        f"{AUTOMODEL.rpartition('.')[0]} needs 'torch', which is not installed in this "
        "environment; check --static judges the class from its source without it",
        f"  skipped: policy: {TEMPLATE} was not verified: importing template_project.workers "
        "needs 'torch', which is not installed in this environment; check --static judges "
        "the class from its source without it",
    ]
    assert lines.count("  ok") == 2


def test_json_lists_it_as_skipped_not_as_a_problem() -> None:
    done = _check("--json", "examples/configs/grpo_tiny.yaml")
    report = json.loads(_output(done))
    assert (done.returncode, report["problems"]) == (0, [])
    assert any(s.startswith(f"policy: {AUTOMODEL} was not verified") for s in report["skipped"])


REGISTRATION = '''\
from nemo_rl_workers.model.registry import DRIVER_ENV, WorkerPlugin

PLUGIN = WorkerPlugin(rows=(), environments={
    "light_ext.heavy.HeavyWorker": DRIVER_ENV, "light_ext.broken.BrokenWorker": DRIVER_ENV,
})
'''
HEAVY_WORKER = f'''\
import torch  # noqa: F401

from {AUTOMODEL.rpartition(".")[0]} import AutomodelPolicyWorker


class HeavyWorker(AutomodelPolicyWorker):
    pass
'''
BROKEN_WORKER = '''\
from light_ext.helpers_not_written_yet import Helper  # the package's own module is missing


class BrokenWorker(Helper):
    pass
'''


def _config(fqn: str) -> str:
    return (f"policy:\n  model_name: tiny\n  automodel_cfg: {{enabled: true}}\n"
            f"  megatron_cfg: {{enabled: false}}\n  worker_extension_cls_fqn: {fqn}\n")


@pytest.fixture
def extension(tmp_path: Path) -> Path:
    (tmp_path / "light_ext").mkdir()
    (tmp_path / "light_ext" / "__init__.py").write_text("")
    (tmp_path / "light_ext" / "heavy.py").write_text(HEAVY_WORKER)
    (tmp_path / "light_ext" / "broken.py").write_text(BROKEN_WORKER)
    (tmp_path / "light_ext_registration.py").write_text(REGISTRATION)
    info = tmp_path / "light_ext-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: light-ext\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nlight = light_ext_registration:PLUGIN\n")
    (tmp_path / "heavy.yaml").write_text(_config("light_ext.heavy.HeavyWorker"))
    (tmp_path / "broken.yaml").write_text(_config("light_ext.broken.BrokenWorker"))
    return tmp_path


def test_the_workers_own_missing_module_stays_a_problem(extension: Path) -> None:
    heavy = _check("--json", "--world-size", "2", "heavy.yaml", cwd=extension,
                   pythonpath=str(extension))
    assert heavy.returncode == 0, heavy.stdout + heavy.stderr
    report = json.loads(_output(heavy))
    assert report["problems"] == []
    assert report["skipped"] == [
        "policy: light_ext.heavy.HeavyWorker was not verified: importing light_ext.heavy "
        "needs 'torch', which is not installed in this environment; check --static judges "
        "the class from its source without it"]

    broken = _check("--json", "--world-size", "2", "broken.yaml", cwd=extension,
                    pythonpath=str(extension))
    assert broken.returncode == 1
    (problem,) = json.loads(_output(broken))["problems"]
    assert problem["rule"] == "import"
    assert problem["message"].startswith(
        "policy.worker_extension_cls_fqn=light_ext.broken.BrokenWorker cannot be imported: "
        "importing light_ext.broken raised ModuleNotFoundError: No module named "
        "'light_ext.helpers_not_written_yet'")


RECIPE = """\
policy:
  model_name: tiny
  automodel_cfg: {enabled: true}
  megatron_cfg: {enabled: false}
data:
  train:
    data_path: ${oc.env:NEMO_RL_T27_UNSET_HOME}/superv3_data/train-split.jsonl
  validation: ${data.train.data_path}
"""


def test_an_unset_variable_outside_the_checked_sections_is_not_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NEMO_RL_T27_UNSET_HOME", raising=False)
    (tmp_path / "recipe.yaml").write_text(RECIPE)
    done = _check("-v", "--no-verify", "--world-size", "2", "recipe.yaml", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert _output(done).splitlines()[-1] == "  ok"
    # Where a value the rules read is built from it, the file is unusable as before.
    (tmp_path / "reads.yaml").write_text(
        RECIPE.replace("  model_name: tiny\n", "  model_name: tiny\n  cache: ${data.train}\n"))
    done = _check("--no-verify", "--world-size", "2", "reads.yaml", cwd=tmp_path)
    assert (done.returncode, _output(done)) == (2, "")
    assert done.stderr == (
        "nemo-rl-workers: reads.yaml: interpolation failed at policy.cache.data_path: "
        "environment variable 'NEMO_RL_T27_UNSET_HOME' is not set "
        "(${oc.env:NEMO_RL_T27_UNSET_HOME}), and check reads this key\n")
    # `resolve` still needs every variable, as upstream's loader does.
    resolve = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "resolve", "recipe.yaml"], cwd=tmp_path,
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'runtime'}"})
    assert resolve.returncode == 2 and "NEMO_RL_T27_UNSET_HOME" in resolve.stderr


@pytest.mark.skipif(not CORPUS_RECIPE.is_file(), reason="the upstream corpus is not here")
def test_a_corpus_recipe_reading_hf_home_in_data_is_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HF_HOME", raising=False)
    # Toward the reference, so that it has findings of its own: dtensor_cfg is outdated.
    done = _check("--no-verify", "--reference", str(CORPUS_RECIPE), cwd=CORPUS_RECIPE.parents[3])
    assert done.stderr == ""
    assert done.returncode == 1
    assert "  problem: " in _output(done)
