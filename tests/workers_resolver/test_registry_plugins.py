"""Entry-point plugins: a real distribution on disk adds rows and environments."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from nemo_rl_workers import resolve_generation, resolve_policy
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import (
    ENTRY_POINT_GROUP,
    RegistryError,
    build_registry,
    default_registry,
)

PLUGIN_MODULE = """
from nemo_rl_workers.model.registry import ActorEnvironment, WorkerPlugin, WorkerRow

RESEARCH_ENV = ActorEnvironment(name="research", py_executable={python!r})

PLUGIN = WorkerPlugin(
    rows=(
        WorkerRow(
            role="generation",
            backend="toygen",
            mode="sync",
            default_fqn="toy_plugin.workers.ToyGenerationWorker",
            quantized_fqn=None,
            protocol="GenerationWorker",
            quant_protocol=None,
            env=RESEARCH_ENV,
        ),
    ),
    environments={{"toy_plugin.workers.MyPolicyWorker": RESEARCH_ENV}},
)
"""


@pytest.fixture(autouse=True)
def forget_toy_plugin() -> Iterator[None]:
    """Each test installs its own toy_plugin; drop the previous one's modules."""
    yield
    for name in [m for m in sys.modules if m == "toy_plugin" or m.startswith("toy_plugin.")]:
        del sys.modules[name]


def install_distribution(site: Path, name: str, entry_value: str, module_source: str) -> None:
    """Lay out an installed distribution (module + dist-info) the way pip would."""
    package = site / "toy_plugin"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "registration.py").write_text(module_source)
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ntoy = {entry_value}\n")


def test_plugin_rows_and_environments_are_used_by_the_resolver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    process_wide = default_registry()  # built (or recalled) before the plugin is on the path
    install_distribution(
        tmp_path,
        "toy_plugin",
        "toy_plugin.registration:PLUGIN",
        PLUGIN_MODULE.format(python=sys.executable),
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = build_registry()

    env = registry.environment_of("toy_plugin.workers.MyPolicyWorker")
    assert env is not None and env.name == "research"
    policy = {
        "megatron_cfg": {"enabled": True},
        "worker_extension_cls_fqn": "toy_plugin.workers.MyPolicyWorker",
    }
    res = resolve_policy(policy, registry=registry)
    assert (res.rule, res.fqn, res.env.name) == (
        "R2",
        "toy_plugin.workers.MyPolicyWorker",
        "research",
    )
    assert (
        res.base_fqn == "nemo_rl.models.policy.workers.megatron_policy_worker.MegatronPolicyWorker"
    )

    gen = resolve_generation({"backend": "toygen"}, registry=registry)
    assert gen is not None and gen.fqn == "toy_plugin.workers.ToyGenerationWorker"

    # A registry built without entry points does not have the plugin's FQN, and building
    # one with the plugin left the process-wide registry as it was.
    with pytest.raises(WorkerConfigError, match="not registered"):
        resolve_policy(policy, registry=build_registry(entry_points=False))
    assert default_registry() is process_wide
    assert process_wide.environment_of("toy_plugin.workers.MyPolicyWorker") is None
    with pytest.raises(WorkerConfigError, match="not registered"):
        resolve_policy(policy)


def test_plugin_factory_function_is_called(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = PLUGIN_MODULE.format(python=sys.executable) + "\ndef make():\n    return PLUGIN\n"
    install_distribution(tmp_path, "toy_plugin", "toy_plugin.registration:make", source)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert build_registry().row("generation", "toygen", "sync") is not None


def test_plugin_of_the_wrong_type_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_distribution(tmp_path, "toy_plugin", "toy_plugin.registration:ROWS", "ROWS = [1, 2]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RegistryError, match="must be a WorkerPlugin or return one, but gave list"):
        build_registry()


def test_plugin_clashing_with_a_builtin_row_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = textwrap.dedent("""
        from nemo_rl_workers.model.registry import WorkerPlugin, WorkerRow
        PLUGIN = WorkerPlugin(rows=(WorkerRow("policy", "megatron", None, "x.Y", None,
                                              "PolicyWorker", None),))
    """)
    install_distribution(tmp_path, "toy_plugin", "toy_plugin.registration:PLUGIN", source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RegistryError, match="second worker row for policy megatron backend"):
        build_registry()


def test_resolver_module_imports_nothing_heavy() -> None:
    code = (
        "import sys, nemo_rl_workers, nemo_rl_workers.model.sections\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'torch', 'ray', 'vllm', 'modelopt', 'transformers'})\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
