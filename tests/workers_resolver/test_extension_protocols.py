"""Extension Protocols: registered with their class through `nemo_rl.workers`, checked at
registration, and reported by the resolver as the contract the class must satisfy."""

from __future__ import annotations

import io
import json
from typing import Protocol

import pytest
from template_project.protocols import WeightNormWorker

from contracts import GenerationWorker, PolicyWorker
from nemo_rl_workers import resolve_config, resolve_generation
from nemo_rl_workers.commands.cli import main
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import (
    DRIVER_ENV,
    RegistryError,
    WorkerPlugin,
    build_registry,
    default_registry,
)
from nemo_rl_workers.reading.loader import load_config
from tests.research.test_template_project import CONFIG, WORKER_FQN

WEIGHT_NORM = "template_project.protocols.WeightNormWorker"
ROLES = (
    "PolicyWorker, QuantPolicyWorker, GenerationWorker, QuantGenerationWorker, "
    "AsyncGenerationWorker, QuantAsyncGenerationWorker"
)


class Unrelated(Protocol):
    def get_weight_norm(self) -> float: ...


class NotAProtocol:
    pass


def test_the_template_entry_point_registers_its_protocol() -> None:
    assert default_registry().protocol_of(WORKER_FQN) is WeightNormWorker
    (policy,) = resolve_config(load_config(str(CONFIG)))
    assert (policy.fqn, policy.protocol) == (WORKER_FQN, WEIGHT_NORM)


def test_resolve_json_reports_the_extension_protocol_fqn() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["resolve", str(CONFIG), "--json"], out, err) == 0, err.getvalue()
    report = json.loads(out.getvalue())
    assert [w["protocol"] for w in report["workers"]] == [WEIGHT_NORM]


@pytest.mark.parametrize(
    ("protocol", "message"),
    [
        (Unrelated, f"test-plugin registers Protocol {__name__}.Unrelated for my.Worker, but it "
                    f"does not extend a role's Protocol ({ROLES}); declare it as "
                    "`class Unrelated(<the role's Protocol>, Protocol)`."),
        (NotAProtocol, f"test-plugin registers {NotAProtocol!r} as the Protocol of my.Worker, but "
                       "it is not a typing.Protocol class."),
    ],
    ids=["does-not-extend", "not-a-protocol"],
)
def test_registration_refuses_a_protocol_that_is_not_a_role_extension(
    protocol: type, message: str
) -> None:
    registry = build_registry(entry_points=False)
    plugin = WorkerPlugin(environments={"my.Worker": DRIVER_ENV}, protocols={"my.Worker": protocol})
    with pytest.raises(RegistryError) as info:
        registry.add(plugin, source="test-plugin")
    assert str(info.value) == message
    # Refused as a whole: not even the environment was added.
    assert registry.environment_of("my.Worker") is None
    assert registry.protocol_of("my.Worker") is None


def test_registration_refuses_a_protocol_for_a_class_without_environment() -> None:
    registry = build_registry(entry_points=False)
    with pytest.raises(RegistryError, match="my.Worker, which has no actor environment"):
        registry.add(WorkerPlugin(protocols={"my.Worker": WeightNormWorker}), source="p")


def test_a_second_protocol_for_the_same_class_names_both() -> None:
    class Other(PolicyWorker, Protocol):
        def other(self) -> int: ...

    registry = build_registry(entry_points=False)
    registry.add(WorkerPlugin(environments={"my.Worker": DRIVER_ENV},
                              protocols={"my.Worker": WeightNormWorker}), source="a")
    with pytest.raises(RegistryError, match=f"already registered with {WEIGHT_NORM}"):
        registry.add(WorkerPlugin(protocols={"my.Worker": Other}), source="b")


class MyGeneration(GenerationWorker, Protocol):
    def extra(self) -> int: ...


def test_a_policy_extension_protocol_is_refused_in_a_generation_section() -> None:
    registry = build_registry(entry_points=False)
    registry.add(WorkerPlugin(environments={"my.Worker": DRIVER_ENV, "my.Gen": DRIVER_ENV},
                              protocols={"my.Worker": WeightNormWorker, "my.Gen": MyGeneration}),
                 source="p")
    section = {"backend": "vllm", "worker_extension_cls_fqn": "my.Worker"}
    before = dict(section)
    with pytest.raises(WorkerConfigError) as info:
        resolve_generation(section, registry=registry)
    assert info.value.problems[0].rule == "R2"
    assert str(info.value) == (
        f"policy.generation.worker_extension_cls_fqn=my.Worker is registered with Protocol "
        f"{WEIGHT_NORM}, which does not extend GenerationWorker that this section requires; "
        "use the class in a section of its role, or register a Protocol derived from "
        "GenerationWorker."
    )
    assert section == before
    ok = resolve_generation({"backend": "vllm", "worker_extension_cls_fqn": "my.Gen"},
                            registry=registry)
    assert ok is not None and ok.protocol == f"{__name__}.MyGeneration"
