"""`nemo-rl-workers list`: every row and every registered extension, as a table and JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nemo_rl_workers.commands.listing import render_listing, worker_listing
from nemo_rl_workers.model.registry import (
    DRIVER_ENV,
    ActorEnvironment,
    WorkerPlugin,
    WorkerRegistry,
)
from nemo_rl_workers.model.table import BUILTIN_ROWS
from tests.cli_run import run_cli as run

TEMPLATE_FQN = "template_project.workers.TemplateAutomodelPolicyWorker"
REPO = Path(__file__).resolve().parents[2]


def test_json_lists_every_row_and_the_installed_extension() -> None:
    code, out, err = run("list", "--json")
    assert (code, err) == (0, "")
    listed = json.loads(out)
    rows = [(r["role"], r["backend"], r["mode"], r["default"], r["quantized"], r["protocol"],
             r["quant_protocol"], r["env"]) for r in listed["rows"]]
    assert rows == [(r.role, r.backend, r.mode, r.default_fqn, r.quantized_fqn, r.protocol,
                     r.quant_protocol, r.env.name) for r in BUILTIN_ROWS]
    (template,) = [e for e in listed["extensions"] if e["fqn"] == TEMPLATE_FQN]
    assert template == {
        "fqn": TEMPLATE_FQN,
        "env": "driver",
        "python": None,
        "source": "entry point 'template_project' (template_project.registration:PLUGIN)",
        "protocol": "template_project.protocols.WeightNormWorker",
    }
    # A row's own classes are rows, not extensions.
    row_classes = {r.default_fqn for r in BUILTIN_ROWS} | {r.quantized_fqn for r in BUILTIN_ROWS}
    assert not row_classes & {e["fqn"] for e in listed["extensions"]}


def test_table_shows_rows_protocols_and_extensions() -> None:
    code, out, _ = run("list")
    assert code == 0
    first, *lines = out.splitlines()  # the first line names the NeMo-RL judged
    assert first.startswith("NeMo-RL: reference: upstream NeMo-RL after PR #4176")
    assert lines[0] == "worker rows"
    assert lines[1].split() == ["role", "backend", "protocol", "quant", "protocol", "env",
                                "default", "quantized"]
    async_row = next(line for line in lines if "vllm/async" in line).split()
    assert async_row == ["generation", "vllm/async", "AsyncGenerationWorker",
                         "QuantAsyncGenerationWorker", "driver", BUILTIN_ROWS[3].default_fqn,
                         BUILTIN_ROWS[3].quantized_fqn]
    template = next(line for line in lines if line.strip().startswith(TEMPLATE_FQN)).split()
    assert template[:3] == [TEMPLATE_FQN, "template_project.protocols.WeightNormWorker", "driver"]


def test_an_extension_in_its_own_environment_and_an_empty_registry() -> None:
    registry = WorkerRegistry(BUILTIN_ROWS)
    env = ActorEnvironment("research", "/opt/research/.venv/bin/python")
    registry.add(WorkerPlugin(environments={"pkg.mod.W": env, "pkg.mod.V": DRIVER_ENV}),
                 source="entry point 'pkg' (pkg:PLUGIN)")
    listing = worker_listing(registry)
    assert [(e.fqn, e.env, e.python, e.source) for e in listing.extensions] == [
        ("pkg.mod.V", "driver", None, "entry point 'pkg' (pkg:PLUGIN)"),
        ("pkg.mod.W", "research", "/opt/research/.venv/bin/python",
         "entry point 'pkg' (pkg:PLUGIN)"),
    ]
    empty = worker_listing(WorkerRegistry(BUILTIN_ROWS))
    assert empty.extensions == ()
    assert render_listing(empty).splitlines()[-1].startswith("registered extensions: none")


def test_hostile_arguments_are_one_line_exit_2() -> None:
    for argv in (["list", "extra"], ["list", "--jsn"]):
        code, out, err = run(*argv)
        assert (code, out) == (2, "")
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_broken_entry_point_is_one_line_exit_2(tmp_path: Path) -> None:
    """A plugin that is no WorkerPlugin: `list` and `verify` name it, in one line."""
    (tmp_path / "broken_plugin.py").write_text("PLUGIN = 42\n")
    info = tmp_path / "broken_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[nemo_rl.workers]\nbroken = broken_plugin:PLUGIN\n")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(tmp_path)
    for argv in (["list"], ["verify", TEMPLATE_FQN, "--protocol", "PolicyWorker"]):
        done = subprocess.run([sys.executable, "-m", "nemo_rl_workers", *argv], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr.splitlines() == [
            "nemo-rl-workers: entry point 'broken' (broken_plugin:PLUGIN) of group "
            "'nemo_rl.workers' must be a WorkerPlugin or return one, but gave int."]


@pytest.mark.parametrize("module", ["", "raise RuntimeError('plugin module is broken')\n"])
def test_a_registration_that_cannot_load_is_one_line_exit_2(tmp_path: Path, module: str) -> None:
    """A stale registration (its package gone) or a module that raises on import: every
    command that reads the table says so in one line, exit 2 (it crashed before), and
    `pytest --nemo-rl-workers` fails the item with that line, not an INTERNALERROR."""
    if module:
        (tmp_path / "gone_package.py").write_text(module)
    info = tmp_path / "stale_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stale-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[nemo_rl.workers]\nstale = gone_package:PLUGIN\n")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(tmp_path)
    cause = ("RuntimeError: plugin module is broken" if module
             else "ModuleNotFoundError: No module named 'gone_package'")
    line = (f"nemo-rl-workers: entry point 'stale' (gone_package:PLUGIN) of group "
            f"'nemo_rl.workers' cannot be loaded: {cause}; reinstall or uninstall the "
            "package that registers it.")
    config = str(REPO / "examples" / "configs" / "grpo_tiny.yaml")
    for argv in (["list"], ["check", "--no-verify", config], ["resolve", config],
                 ["migrate", "--check", config]):
        done = subprocess.run([sys.executable, "-m", "nemo_rl_workers", *argv], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert (done.returncode, done.stdout, done.stderr.splitlines()) == (2, "", [line]), argv
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nemo-rl-workers", config, "-p", "no:cacheprovider",
         "-o", "nemo_rl_workers_check_args=--no-verify", "-q"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert line in done.stdout
