"""The resolver: which worker class runs a section, by the rules R0-R7 of DESIGN.md.

Pure: it reads a config section and returns a Resolution or raises
WorkerConfigError. It imports no worker module and never mutates its input; the
caller writes the resolved FQN back (`apply_resolution`) only after every other
check has passed.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

from nemo_rl_workers.errors import Problem, WorkerConfigError, raise_if_any, show
from nemo_rl_workers.model.fqn import fqn_problem
from nemo_rl_workers.model.protocols import extends, load_protocol, protocol_ref
from nemo_rl_workers.model.registry import (
    ActorEnvironment,
    WorkerRegistry,
    WorkerRow,
    default_registry,
)
from nemo_rl_workers.model.sections import (
    as_mapping,
    policy_backend,
    quant_cfg_of,
    section_problem,
    worker_sections,
)
from nemo_rl_workers.model.suggest import closest, did_you_mean

Source = Literal["default", "quant-auto", "config", "constructor"]
FIELD = "worker_extension_cls_fqn"


def quant_auto_warning(quantized_fqn: str) -> str:
    """The exact R3 warning text."""
    return (
        f"quant_cfg requires {FIELD}={quantized_fqn}; setting it automatically. "
        "Set this field explicitly to silence this warning."
    )


@dataclass(frozen=True)
class Resolution:
    """Which class runs a section, why, and what it must satisfy."""

    section: str
    role: str
    backend: str
    mode: str | None
    quantized: bool
    fqn: str
    rule: str
    source: Source
    protocol: str
    env: ActorEnvironment
    warnings: tuple[str, ...] = ()
    # R2: a custom class must subclass the backend's default worker.
    base_fqn: str | None = None

    @property
    def field_path(self) -> str:
        return f"{self.section}.{FIELD}"


def resolve_policy(
    section: Mapping[str, Any],
    *,
    path: str = "policy",
    constructor_fqn: object = None,
    registry: WorkerRegistry | None = None,
) -> Resolution:
    """Resolve the training worker of a policy (or teacher) section."""
    registry = registry or default_registry()
    backend, problems = policy_backend(section, path)
    raise_if_any(problems)
    assert backend is not None
    row = registry.row("policy", backend)
    if row is None:
        raise WorkerConfigError([_unknown_row(path, "policy", backend, registry)])
    configured, source = _configured_fqn(section, path, constructor_fqn)
    return _select(row, section, path, configured, source, registry)


def resolve_generation(
    section: Mapping[str, Any],
    *,
    path: str = "policy.generation",
    registry: WorkerRegistry | None = None,
) -> Resolution | None:
    """Resolve a generation section; None for a backend this project does not run."""
    registry = registry or default_registry()
    backend = section.get("backend")
    if not isinstance(backend, str):
        raise WorkerConfigError(
            [
                Problem(
                    f"{path}.backend",
                    "a backend name such as 'vllm'",
                    show(backend),
                    f"{path}.backend must be a backend name such as 'vllm', "
                    f"but is {show(backend)}.",
                    rule="schema",
                )
            ]
        )
    configured = section.get(FIELD)
    if backend not in registry.backends("generation"):
        if configured is not None:  # R7
            raise WorkerConfigError(
                [
                    Problem(
                        f"{path}.{FIELD}",
                        f"unset (backend {backend!r} has no worker extensions)",
                        show(configured),
                        f"{path}.{FIELD} is set to {show(configured)}, but generation backend "
                        f"{backend!r} does not use worker extensions and would silently ignore it; "
                        f"remove the field or use backend 'vllm'.",
                        rule="R7",
                    )
                ]
            )
        return None
    mode, problems = _vllm_mode(section, path)
    raise_if_any(problems)
    row = registry.row("generation", backend, mode)
    if row is None:
        raise WorkerConfigError([_unknown_row(path, "generation", f"{backend} {mode}", registry)])
    fqn, source = _configured_fqn(section, path, None)
    return _select(row, section, path, fqn, source, registry)


def resolve_sections(
    config: Mapping[str, Any], *, registry: WorkerRegistry | None = None
) -> tuple[list[Resolution], list[Problem]]:
    """Resolve every worker-bearing section; what resolved, and every problem of the rest."""
    registry = registry or default_registry()
    resolutions: list[Resolution] = []
    problems: list[Problem] = []
    for path, raw in worker_sections(config):
        section = as_mapping(raw)
        if section is None:
            problems.extend(p for p in [section_problem(raw, path)] if p)
            continue
        try:
            resolutions.append(resolve_policy(section, path=path, registry=registry))
        except WorkerConfigError as err:
            problems.extend(err.problems)
        generation = section.get("generation")
        if generation is None:
            continue
        gen_path = f"{path}.generation"
        gen_section = as_mapping(generation)
        if gen_section is None:
            problems.extend(p for p in [section_problem(generation, gen_path)] if p)
            continue
        try:
            resolved = resolve_generation(gen_section, path=gen_path, registry=registry)
        except WorkerConfigError as err:
            problems.extend(err.problems)
        else:
            if resolved is not None:
                resolutions.append(resolved)
    return resolutions, problems


def resolve_config(
    config: Mapping[str, Any], *, registry: WorkerRegistry | None = None
) -> list[Resolution]:
    """Resolve every worker-bearing section; raise all problems of all sections at once."""
    resolutions, problems = resolve_sections(config, registry=registry)
    raise_if_any(problems)
    return resolutions


def apply_resolution(section: MutableMapping[str, Any], resolution: Resolution) -> None:
    """Write the resolved FQN back, so resolving the same config again is silent (R3)."""
    section[FIELD] = resolution.fqn


def _configured_fqn(
    section: Mapping[str, Any], path: str, constructor_fqn: object
) -> tuple[object, Source]:
    """X of the rules, and where it came from (R0 folds the constructor argument in)."""
    configured = section.get(FIELD)
    if constructor_fqn is None:
        return configured, "config"
    if configured is not None and configured != constructor_fqn:
        raise WorkerConfigError(
            [
                Problem(
                    f"{path}.{FIELD}",
                    show(configured),
                    show(constructor_fqn),
                    f"Policy(worker_extension_cls_fqn={show(constructor_fqn)}) conflicts with "
                    f"{path}.{FIELD}={show(configured)}; remove the deprecated constructor "
                    "argument and keep only the config field.",
                    rule="R0",
                )
            ]
        )
    return constructor_fqn, "constructor"


def _select(
    row: WorkerRow,
    section: Mapping[str, Any],
    path: str,
    configured: object,
    source: Source,
    registry: WorkerRegistry,
) -> Resolution:
    field_path = f"{path}.{FIELD}"
    quant = quant_cfg_of(section)
    if quant is not None and not isinstance(quant, str):
        raise WorkerConfigError(
            [
                Problem(
                    f"{path}.quant_cfg",
                    "a ModelOpt config name or a path to a YAML recipe",
                    show(quant),
                    f"{path}.quant_cfg must be a ModelOpt config name (e.g. FP8_DEFAULT_CFG) or a "
                    f"path to a YAML recipe, but is {show(quant)}.",
                    rule="schema",
                )
            ]
        )
    if configured is not None:
        malformed = fqn_problem(configured, field_path)
        if malformed is not None:
            raise WorkerConfigError([malformed])
    assert configured is None or isinstance(configured, str)

    def done(
        fqn: str, rule: str, src: Source, warnings: tuple[str, ...] = (), base: str | None = None
    ) -> Resolution:
        protocol = row.quant_protocol if quant is not None and row.quant_protocol else row.protocol
        extension = registry.protocol_of(fqn)
        if extension is not None:
            protocol = _extension_protocol(extension, protocol, path, fqn)
        env = registry.environment_of(fqn)
        assert env is not None
        return Resolution(
            path,
            row.role,
            row.backend,
            row.mode,
            quant is not None,
            fqn,
            rule,
            src,
            protocol,
            env,
            warnings,
            base,
        )

    if quant is not None:
        expected = row.quantized_fqn
        if expected is None:
            raise WorkerConfigError(
                [
                    Problem(
                        f"{path}.quant_cfg",
                        "null (no quantized worker exists)",
                        show(quant),
                        f"{path}.quant_cfg is set, but the {row.label} has no quantized worker; "
                        "remove quant_cfg.",
                        rule="R6",
                    )
                ]
            )
        if configured is None:  # R3
            return done(expected, "R3", "quant-auto", (quant_auto_warning(expected),))
        if configured == expected:  # R4
            return done(expected, "R4", source)
        raise WorkerConfigError([_mismatch(row, field_path, expected, configured, registry)])  # R5
    if configured is None or configured == row.default_fqn:  # R1
        return done(
            row.default_fqn,
            "R1" if configured is None else "R2",
            "default" if configured is None else source,
        )
    owner = registry.owner_of(configured)
    if owner is not None and owner[0] is not row:
        other, is_quant = owner
        kind = "quantized worker" if is_quant else "default worker"
        raise WorkerConfigError(
            [
                Problem(
                    field_path,
                    f"a subclass of {row.default_fqn}",
                    configured,
                    f"{field_path}={configured} is the {kind} of the {other.role} {other.label}, "
                    f"but this section uses the {row.label}; use {row.default_fqn} or a subclass "
                    "of it.",
                    rule="R2",
                )
            ]
        )
    if registry.environment_of(configured) is None:
        raise WorkerConfigError([_unregistered(field_path, configured, registry)])
    return done(configured, "R2", source, base=row.default_fqn)


def _extension_protocol(extension: type, required: str, path: str, fqn: str) -> str:
    """The registered extension Protocol's reference, if it extends the one this section
    requires (a policy extension's Protocol is no use to a generation section)."""
    role, _ = load_protocol(required)
    ref = protocol_ref(extension)
    if role is None or not extends(extension, role):
        raise WorkerConfigError(
            [
                Problem(
                    f"{path}.{FIELD}",
                    f"a class whose registered Protocol extends {required}",
                    fqn,
                    f"{path}.{FIELD}={fqn} is registered with Protocol {ref}, which does not "
                    f"extend {required} that this section requires; use the class in a section "
                    f"of its role, or register a Protocol derived from {required}.",
                    rule="R2",
                )
            ]
        )
    return ref


def _unregistered(field_path: str, configured: str, registry: WorkerRegistry) -> Problem:
    """R2 for an unregistered class: the closest registered names first, if any are close."""
    hint = did_you_mean(closest(configured, registry.environments()))
    register = "register it through the 'nemo_rl.workers' entry-point group of its package"
    advice = f"{hint} Otherwise {register}" if hint else register
    return Problem(
        field_path,
        "a worker class registered with an actor environment",
        configured,
        f"{field_path}={configured} is not registered with an actor environment; {advice} "
        "(nemo-rl-workers list shows what is registered).",
        rule="R2",
    )


def _mismatch(
    row: WorkerRow, field_path: str, expected: str, given: str, registry: WorkerRegistry
) -> Problem:
    # Upstream's sentence first, verbatim, so logs and scripts written for it still match.
    upstream = f"quant_cfg requires {FIELD}={expected}, got {given}."
    why = (
        f"At {field_path}: quant_cfg is set and this section uses the {row.label}, whose "
        "quantized worker is the expected class;"
    )
    owner = registry.owner_of(given)
    if owner is not None:
        other, is_quant = owner
        kind = "quantized worker" if is_quant else "default (unquantized) worker"
        fix = (
            f" the given one is the {kind} of the {other.role} {other.label}. Set the field "
            "to the expected class or remove it to have it filled in."
        )
    else:
        section = field_path.rpartition(".")[0]
        fix = (
            " the given one is not a built-in worker. Quantized workers are the built-in ones "
            "and a plugin cannot replace them, so an extension cannot run quantized: set the "
            "field to the expected class (or remove it) to quantize, or remove "
            f"{section}.quant_cfg to run the extension unquantized."
        )
    return Problem(field_path, expected, given, f"{upstream} {why}{fix}", rule="R5")


def _vllm_mode(section: Mapping[str, Any], path: str) -> tuple[str, list[Problem]]:
    vllm_cfg = section.get("vllm_cfg")
    if vllm_cfg is None:
        return "sync", []
    mapping = as_mapping(vllm_cfg)
    if mapping is None:
        return "sync", [p for p in [section_problem(vllm_cfg, f"{path}.vllm_cfg")] if p]
    flag = mapping.get("async_engine", False)
    if flag is None:
        return "sync", []
    if not isinstance(flag, bool):
        return "sync", [
            Problem(
                f"{path}.vllm_cfg.async_engine",
                "true or false",
                show(flag),
                f"{path}.vllm_cfg.async_engine must be true or false, but is {show(flag)}.",
                rule="schema",
            )
        ]
    return ("async" if flag else "sync"), []


def _unknown_row(path: str, role: str, backend: str, registry: WorkerRegistry) -> Problem:
    known = ", ".join(registry.backends(role)) or "none"
    return Problem(
        path,
        f"a registered {role} backend ({known})",
        backend,
        f"{path}: no {role} worker is registered for {backend!r}; known: {known}.",
        rule="registry",
    )
