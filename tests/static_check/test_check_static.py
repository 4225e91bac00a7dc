"""`check --static`: every config rule, then each resolved class judged from source.

Same output, problem format and exit codes as `check`; the worker modules (and torch,
Ray, vLLM) are never imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nemo_rl_workers.model.registry import ENTRY_POINT_GROUP

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(str(p.relative_to(REPO)) for p in (REPO / "examples" / "configs").glob("*.yaml"))
HEAVY = ("torch", "ray", "vllm", "modelopt", "transformers")

REGISTRATION = '''\
from nemo_rl_workers.model.registry import DRIVER_ENV, WorkerPlugin

PLUGIN = WorkerPlugin(rows=(), environments={"toy_ext.workers.BrokenPolicy": DRIVER_ENV})
'''
WORKERS = '''\
from pathlib import Path

Path(__file__).with_name("IMPORTED").write_text("the module was imported")

import heavy_framework_not_installed  # noqa: E402,F401

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class BrokenPolicy(AutomodelPolicyWorker):
    def save_checkpoint(self, directory: str, step: int) -> None:
        return None

    def shutdown(self) -> str:
        return "done"
'''
CONFIG = """\
policy:
  model_name: tiny
  automodel_cfg:
    enabled: true
  megatron_cfg:
    enabled: false
  worker_extension_cls_fqn: toy_ext.workers.BrokenPolicy
"""


def _run(args: list[str], pythonpath: str = "") -> subprocess.CompletedProcess[str]:
    # Runs `main` and then reports which heavy or worker modules the process imported.
    code = (
        "import sys\n"
        "from nemo_rl_workers.commands.cli import main\n"
        f"code = main({args!r})\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{HEAVY!r} or '.workers.' in m and m.startswith(('nemo_rl.models', "
        "'nemo_rl.modelopt', 'toy_ext')))\n"
        "print('LOADED=' + ','.join(loaded))\n"
        "raise SystemExit(code)\n"
    )
    env = {**os.environ, "PYTHONPATH": pythonpath, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _loaded(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout.rsplit("LOADED=", 1)[1].strip()


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_examples_check_statically_as_they_do_at_runtime() -> None:
    static = _run(["check", "--static", "--json", *EXAMPLES])
    runtime = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "check", "--json", *EXAMPLES],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )
    assert static.returncode == runtime.returncode == 1  # mismatched_quant.yaml: R5
    static_json = json.loads(static.stdout.rsplit("LOADED=", 1)[0])
    runtime_json = json.loads(runtime.stdout)
    for mine, theirs in zip(static_json["configs"], runtime_json["configs"], strict=True):
        assert mine["workers"] == theirs["workers"]
        assert mine["problems"] == theirs["problems"]
    assert _loaded(static) == ""


@pytest.fixture
def extension(tmp_path: Path) -> Path:
    (tmp_path / "toy_ext").mkdir()
    (tmp_path / "toy_ext" / "__init__.py").write_text("")
    (tmp_path / "toy_ext" / "workers.py").write_text(WORKERS)
    (tmp_path / "toy_ext_registration.py").write_text(REGISTRATION)
    info = tmp_path / "toy_ext-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-ext\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ntoy = toy_ext_registration:PLUGIN\n"
    )
    (tmp_path / "job.yaml").write_text(CONFIG)
    return tmp_path


@pytest.mark.runtime  # the reference runtime's or the template's workers
def test_a_broken_extension_is_reported_at_its_config_line(extension: Path) -> None:
    config = str(extension / "job.yaml")
    done = _run(["check", "--static", "--json", config], pythonpath=str(extension))
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout.rsplit("LOADED=", 1)[0])
    problems = report["problems"]
    path = "policy.worker_extension_cls_fqn"
    prefix = (
        f"{path}=toy_ext.workers.BrokenPolicy does not satisfy the PolicyWorker contract: "
        "toy_ext.workers.BrokenPolicy does not implement PolicyWorker."
    )
    assert {p["message"][len(prefix):].split(":")[0] for p in problems} == {
        "save_checkpoint", "shutdown"
    }
    for problem in problems:
        assert problem["message"].startswith(prefix)
        assert (problem["path"], problem["given"], problem["rule"]) == (
            path, "toy_ext.workers.BrokenPolicy", "contract"
        )
        assert (problem["file"], problem["line"]) == (config, 7)
    assert any("heavy_framework_not_installed" in s for s in report["skipped"])
    assert not (extension / "toy_ext" / "IMPORTED").exists()
    assert _loaded(done) == ""


OTHER_PYTHON = Path("/usr/bin/python3")


@pytest.mark.skipif(not OTHER_PYTHON.is_file(), reason="needs a second interpreter")
def test_a_class_in_another_environment_is_located_with_its_interpreter(
    extension: Path,
) -> None:
    """The class's environment is another Python: its import path is asked of that
    interpreter (which runs, imports nothing of ours), the Protocols are the driver's."""
    (extension / "toy_ext_registration.py").write_text(
        "from nemo_rl_workers.model.registry import ActorEnvironment, WorkerPlugin\n\n"
        f"OTHER = ActorEnvironment(name='other', py_executable={str(OTHER_PYTHON)!r})\n"
        "PLUGIN = WorkerPlugin(rows=(), environments={'toy_ext.workers.BrokenPolicy': OTHER})\n"
    )
    config = str(extension / "job.yaml")
    done = _run(["check", "--static", "--json", config],
                pythonpath=os.pathsep.join(map(str, (extension, REPO, REPO / "runtime"))))
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout.rsplit("LOADED=", 1)[0])
    assert report["workers"][0]["env"] == "other"
    members = {
        p["message"].split("does not implement PolicyWorker.", 1)[1].split(":")[0]
        for p in report["problems"]
    }
    assert members == {"save_checkpoint", "shutdown"}
    assert not (extension / "toy_ext" / "IMPORTED").exists()


def test_no_verify_wins_over_static(extension: Path) -> None:
    done = _run(["check", "--static", "--no-verify", str(extension / "job.yaml")],
                pythonpath=str(extension))
    assert done.returncode == 0, done.stdout
    assert not (extension / "toy_ext" / "IMPORTED").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["check", "--static", "examples/configs/no_such.yaml"], "no_such.yaml"),
        (["check", "--static", "--checker", "pyright", "examples/configs/grpo_tiny.yaml"],
         "invalid choice: 'pyright'"),
        (["verify", "a.B", "--protocol", "PolicyWorker", "--static", "--checker"],
         "expected one argument"),
    ],
)
def test_hostile_static_arguments_are_one_line_and_exit_2(args: list[str], says: str) -> None:
    from io import StringIO

    from nemo_rl_workers.commands.cli import main

    out, err = StringIO(), StringIO()
    code = main(args, out, err)
    assert code == 2
    (line,) = err.getvalue().splitlines()
    assert says in line
