"""A config's verdicts against a NeMo-RL tree other than the reference: what that tree does.

For each worker section (`policy`, `teacher`, `teachers[i]`, `value`,
`env.reward_model`, and `policy.generation` by its `backend`): the driver the tree
starts it with, the row whose switches the section's values (or the tree's defaults)
select, and under `quant_cfg` that row's quantized counterpart from the tree's override
maps. A `worker_extension_cls_fqn` field the tree never reads from the config is
reported as ignored; one it does read is the class, and must be in the tree's
actor-environment registry (R2 as that tree has it). What the model cannot decide
(no driver for the section, a switch unset with no default, two rows at once) is
*undecided*: a problem naming the reason, never a pass.

The config rules run on the tree's own schema: an older tree's `dtensor_cfg` with `_v2`
is current there, so the outdated-key rules are not applied; the preflight and key rules
read its `dtensor_cfg` where they read `automodel_cfg`, and their findings name the
config's own keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from nemo_rl_workers.errors import Problem, show
from nemo_rl_workers.interpret.conditions import Origin, first_failed
from nemo_rl_workers.model.registry import ActorEnvironment
from nemo_rl_workers.model.resolver import Resolution, Source
from nemo_rl_workers.model.sections import as_mapping, model_sections, quant_cfg_of
from nemo_rl_workers.model.suggest import closest, did_you_mean
from nemo_rl_workers.reading.plain_data import plain_copy
from nemo_rl_workers.tree.entry_builds import EntryBuild
from nemo_rl_workers.tree.knowledge import EXTENSION_FIELD, SECTION_ROLES, SWITCHES
from nemo_rl_workers.tree.revision import (
    NEW_SCHEMA,
    OLD_SCHEMA,
    Revision,
    TreeRow,
    serves_backend,
)

GENERATION = "generation"


@dataclass
class TreeVerdict:
    resolutions: list[Resolution] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # (section path, the section's switch values) per resolved section, for the audit scope
    switches: dict[str, dict[str, bool]] = field(default_factory=dict)
    # The driver that starts each section's workers, by section path.
    drivers: dict[str, str] = field(default_factory=dict)
    # Sections whose workers are another section's (the policy's workers generate).
    shared: set[str] = field(default_factory=set)
    # Sections of drivers built through a function of the tree, by their name in the
    # report ("policy (TeacherWorkerGroup)"): the build.
    through: dict[str, EntryBuild] = field(default_factory=dict)


def tree_sections(config: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """(path, section, kind): each model section, then `<section>.generation` under one."""
    for path, value in model_sections(config):
        section = as_mapping(value)
        if section is None:
            continue
        yield path, section, path.split("[")[0]
        generation = as_mapping(section.get(GENERATION))
        if generation is not None and path == "policy":
            yield f"{path}.{GENERATION}", generation, GENERATION


def switch_value(section: Mapping[str, Any], name: str,
                 prefer: str | None = None) -> tuple[bool | None, str | None]:
    """(value, the key path it was read at) of a switch in a section: at its keys, or one
    level below (`vllm_cfg.async_engine`), in the block `prefer` first (a generation
    section's `<backend>_cfg`: `trtllm_cfg.async_engine`, not `vllm_cfg`'s); (None, None)
    when the section does not set it."""
    keys = SWITCHES[name].keys if name in SWITCHES else tuple(name.split("."))
    candidates: list[tuple[object, str]] = []
    for prefix, node in [("", section), *[(f"{k}.", v) for k, v in section.items()
                                          if as_mapping(v) is not None]]:
        current: object = node
        for key in keys:
            mapping = as_mapping(current)
            if mapping is None or key not in mapping:
                current = _MISSING
                break
            current = mapping[key]
        if current is not _MISSING:
            candidates.append((current, prefix + ".".join(keys)))
    if not candidates:
        return None, None
    preferred = [c for c in candidates if prefer is not None and c[1].startswith(f"{prefer}.")]
    value, where = (preferred or candidates)[0]
    return (value if isinstance(value, bool) else None), where


_MISSING = object()


def judge_sections(config: Mapping[str, Any], revision: Revision) -> TreeVerdict:
    """Every worker section of `config` as `revision`'s drivers would start it."""
    from nemo_rl_workers.checks.config.entry_sections import entry_sections

    verdict = TreeVerdict()
    judged: set[str] = set()
    for path, section, kind in tree_sections(config):
        judged.add(path)
        _judge(path, section, kind, revision, verdict)
    # Blocks the config's entry builds a driver on besides (the evaluation's generation).
    for path, section, kind in entry_sections(config, revision, judged):
        _judge(path, section, kind, revision, verdict)
    _judge_through(config, revision, verdict)
    return verdict


def _judge_through(config: Mapping[str, Any], revision: Revision,
                   verdict: TreeVerdict) -> None:
    """The drivers the entry builds through a function of its tree (on-policy
    distillation's teacher groups), where this config runs the call that builds them."""
    from nemo_rl_workers.checks.config.entry_reach import through_builds

    for through in through_builds(config, revision):
        build = through.build
        if through.reach.reached:
            verdict.through[through.label] = build
            _judge(through.label, through.section, revision.drivers.get(build.driver, ""),
                   revision, verdict, driver=build.driver)
        elif through.reach.reached is None:
            verdict.notes.append(
                f"{through.label}: not shown: {build.driver} is built at {build.where}, "
                f"through the call at {build.via}, and whether this config runs that call "
                f"is undecided: {through.reach.why}")


def _drivers_for(kind: str, section: Mapping[str, Any], revision: Revision,
                 path: str) -> tuple[str | None, str | None]:
    """(driver, why not) for a section."""
    if kind == GENERATION:
        backend = section.get("backend")
        if not isinstance(backend, str):
            return None, f"{path}.backend is not set, and the tree gives no default backend"
        for driver in revision.drivers_of(GENERATION):
            if serves_backend(driver, backend):
                return driver, None
        known = ", ".join(revision.drivers_of(GENERATION)) or "none"
        return None, (f"{path}.backend={backend}: no generation driver of this tree starts "
                      f"workers for it (its generation drivers: {known})")
    roles = SECTION_ROLES.get(kind, ())
    for role in roles:
        drivers = revision.drivers_of(role)
        if drivers:
            return drivers[0], None
    if "policy" in roles:  # every NeMo-RL starts a policy: not finding its driver decides nothing
        return None, (f"no driver of this tree starts {kind} workers that the source names "
                      "(no class calls a worker builder with a worker class's name)")
    return None, None  # a section this older tree has no workers for (value): nothing to judge


def unread_reason(revision: Revision) -> str | None:
    """Why no section's class is decided while modules of the tree are unread: each file
    and its cause (the first three, then how many more)."""
    files = revision.unread_files()
    if files is None:
        return None
    which = "it" if len(revision.unread) == 1 else "they"
    return (f"the tree could not be read whole ({files}), and {which} may hold the "
            "driver that decides this section's worker class")


def _judge(path: str, section: Mapping[str, Any], kind: str, revision: Revision,
           verdict: TreeVerdict, driver: str | None = None) -> None:
    """The section's worker as its driver (the one `kind` selects, else `driver`) starts
    it, into `verdict`."""
    unread = unread_reason(revision)
    if unread is not None:
        verdict.problems.append(_undecided(path, unread))
        return
    why_not: str | None = None
    if driver is None:
        driver, why_not = _drivers_for(kind, section, revision, path)
    if driver is None:
        if kind == GENERATION and _by_the_policy(path, section, None, revision, verdict):
            return
        if why_not is not None:
            verdict.problems.append(_undecided(path, why_not))
        return
    verdict.drivers[path] = driver
    values: dict[str, bool] = {}
    unset: list[str] = []
    rows = revision.rows_of(driver)
    if not rows:
        if kind == GENERATION and _by_the_policy(path, section, driver, revision, verdict):
            return
        verdict.notes.append(f"{path}: {driver} starts no worker class of its own")
        return
    prefer = f"{section.get('backend')}_cfg" if kind == GENERATION else None
    for name in sorted({n for row in rows for n, _ in row.condition}):
        value, where = switch_value(section, name, prefer)
        if where is not None and value is None:
            verdict.problems.append(Problem(
                path=f"{path}.{where}", expected="true or false",
                given=show(_at(section, where)),
                message=f"{path}.{where} must be true or false to choose {driver}'s worker, "
                        f"but is {show(_at(section, where))}.", rule="tree.switch"))
            return
        if value is None:
            if name in revision.defaults:
                value = revision.defaults[name]
            else:
                unset.append(name)
                continue
        values[name] = value
    chosen = [row for row in rows if all(
        values.get(name) == want for name, want in row.condition)]
    if unset and not chosen:
        verdict.problems.append(_undecided(
            path, f"{', '.join(unset)} not set in {path}, and {driver} reads "
                  f"{'it' if len(unset) == 1 else 'them'} with no default"))
        return
    if not chosen:
        set_to = ", ".join(f"{n}={'true' if v else 'false'}" for n, v in sorted(values.items()))
        verdict.problems.append(Problem(
            path=path, expected=" or ".join(r.switches for r in rows), given=set_to,
            message=f"{path}: {driver} starts no worker under {set_to}; this tree selects "
                    f"{'; '.join(f'{r.default_fqn} when {r.switches}' for r in rows)}.",
            rule="tree.no-worker"))
        return
    if len(chosen) > 1:
        verdict.problems.append(_undecided(
            path, f"{driver} would start {' or '.join(r.default_fqn for r in chosen)} "
                  "under the same switches"))
        return
    verdict.switches[path] = values
    verdict.resolutions.append(
        _resolution(path, section, kind, chosen[0], values, revision, verdict))


def _by_the_policy(path: str, section: Mapping[str, Any], driver: str | None,
                   revision: Revision, verdict: TreeVerdict) -> bool:
    """A generation section whose backend the tree runs on the policy's own workers
    (`policy_generation`): the policy's class, shown for this section too; no generation
    worker group. False where the source does not say so."""
    from nemo_rl_workers.checks.config.policy_generation import policy_generates

    parent = path.rpartition(".")[0]
    policy = next((r for r in verdict.resolutions if r.section == parent), None)
    policy_driver = verdict.drivers.get(parent)
    backend = section.get("backend")
    if policy is None or policy_driver is None or not isinstance(backend, str):
        return False
    why = policy_generates(revision, backend, driver, policy_driver)
    if why is None:
        return False
    verdict.shared.add(path)
    verdict.notes.append(f"{path}: no generation worker group: with backend={backend} the "
                         f"policy's workers generate ({why})")
    verdict.resolutions.append(dataclasses.replace(
        policy, section=path, role=GENERATION, backend=backend, mode=None, warnings=()))
    return True


def _resolution(path: str, section: Mapping[str, Any], kind: str, row: TreeRow,
                values: Mapping[str, bool], revision: Revision,
                verdict: TreeVerdict) -> Resolution:
    section = _as_driver_keeps(path, section, row.driver, revision, verdict)
    quantized = quant_cfg_of(section) is not None
    fqn: str = row.default_fqn
    source: Source = "default"
    if quantized:
        if row.quantized_fqn is not None:
            fqn, source = row.quantized_fqn, "quant-auto"
        else:
            verdict.notes.append(
                f"{path}: quant_cfg is set, and this tree has no quantized counterpart of "
                f"{row.default_fqn}; it starts that class")
    configured = section.get(EXTENSION_FIELD)
    if configured is not None:
        field_path = f"{path}.{EXTENSION_FIELD}"
        if "config" not in revision.extension_field:
            verdict.warnings.append(
                f"{field_path}={configured} is ignored by this NeMo-RL: it reads no "
                f"{EXTENSION_FIELD} from the config{_extension_taken(row.driver, revision)}"
                f", so {row.driver} starts {fqn}.")
        elif isinstance(configured, str):
            fqn, source = configured, "config"
            if configured not in revision.environments and revision.registry_problems:
                verdict.problems.append(_undecided(
                    field_path, f"whether {configured} is registered with an actor "
                                f"environment: {revision.registry_problems[0]}"))
            elif configured not in revision.environments:
                # A misspelt class is told the registered one it is closest to, as the
                # reference's R2 does.
                hint = did_you_mean(closest(configured, revision.environments))
                verdict.problems.append(Problem(
                    path=field_path, expected="a class in the tree's actor-environment registry",
                    given=configured,
                    message=f"{field_path}={configured} is not registered with an actor "
                            "environment in this tree's registry (ACTOR_ENVIRONMENT_REGISTRY); "
                            + (f"{hint} Otherwise add it there" if hint else "add it there")
                            + ", or Ray cannot tell which Python runs it.",
                    rule="R2"))
    if fqn in revision.class_problems:
        verdict.problems.append(_undecided(
            path, f"{fqn} cannot be modelled: {revision.class_problems[fqn]}"))
    backend, mode = _labels(row, kind, section)
    env = ActorEnvironment(name=revision.environments.get(fqn, "unregistered"))
    return Resolution(
        section=path, role=row.role, backend=backend, mode=mode, quantized=quantized, fqn=fqn,
        rule="tree", source=source,
        protocol=f"{row.driver}'s calls", env=env, base_fqn=row.default_fqn)


def _extension_taken(driver: str, revision: Revision) -> str:
    """How the driver takes an extension class instead, as the tree's source has it."""
    where = revision.extension_params.get(driver)
    if where is not None:
        return f"; {driver} takes it only as a constructor argument ({where})"
    others = ", ".join(f"{name}'s: {at}" for name, at in sorted(
        revision.extension_params.items()))
    return (f", and {driver}'s constructor has no such parameter"
            + (f" (only {others})" if others else ""))


def _as_driver_keeps(path: str, section: Mapping[str, Any], driver: str, revision: Revision,
                     verdict: TreeVerdict) -> Mapping[str, Any]:
    """The section as the driver builds its workers from it: without the keys it clears on
    its own copy (a frozen group's `quant_cfg`, `worker_extension_cls_fqn`), each one the
    section sets said in a note."""
    cleared = [key for key in revision.clears.get(driver, ()) if _at(section, key) is not None]
    if not cleared:
        return section
    kept: dict[str, Any] = plain_copy(dict(section))
    for key in cleared:
        *parents, last = key.split(".")
        node: object = kept
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)
        verdict.notes.append(f"{path}.{key}: {driver} clears it on its own copy of the config "
                             "before it starts its workers, so it has no effect there")
    return kept


def _labels(row: TreeRow, kind: str, section: Mapping[str, Any]) -> tuple[str, str | None]:
    """A short backend (and mode) for the table: the enabled block's name, with v1/v2."""
    mode: str | None = None
    if kind == GENERATION:
        backend = str(section.get("backend"))
        for name, value in row.condition:
            if name.split(".")[-1] == "async_engine":
                mode = "async" if value else "sync"
        return backend, mode
    enabled = [n.split(".")[0].removesuffix("_cfg") for n, v in sorted(row.condition)
               if v and n.endswith(".enabled")]
    backend = enabled[0] if enabled else row.driver
    for name, value in row.condition:
        if name.endswith("._v2"):
            backend += " v2" if value else " v1"
    return backend, mode


def _at(section: Mapping[str, Any], where: str) -> object:
    node: object = section
    for key in where.split("."):
        mapping = as_mapping(node)
        node = mapping.get(key) if mapping is not None else None
    return node


def _undecided(path: str, reason: str) -> Problem:
    return Problem(path=path, expected="a worker class the tree's source decides", given="",
                   message=f"{path}: undecided: {reason}.", rule="tree.undecided")


# -- the config rules on the tree's own schema ------------------------------------------


def schema_view(config: Mapping[str, Any], revision: Revision) -> dict[str, Any]:
    """The config as the rules read it: on an older tree, each `dtensor_cfg` read as
    `automodel_cfg` and its `_v2` (a switch of that tree, not a stale key) left out."""
    view: dict[str, Any] = plain_copy(dict(config))
    if revision.schema != OLD_SCHEMA:
        return view
    for _, value in model_sections(view):
        section = value if isinstance(value, dict) else None
        if section is None or OLD_SCHEMA not in section or NEW_SCHEMA in section:
            continue
        block = section.pop(OLD_SCHEMA)
        if isinstance(block, dict):
            block = {k: v for k, v in block.items() if k != "_v2"}
        section[NEW_SCHEMA] = block
    return view


def own_schema(problem: Problem, revision: Revision) -> Problem:
    """A rule's finding on the view, named by the config's own keys."""
    if revision.schema != OLD_SCHEMA:
        return problem

    def back(text: str) -> str:
        return text.replace(NEW_SCHEMA, OLD_SCHEMA)

    return Problem(path=back(problem.path), expected=back(problem.expected),
                   given=back(problem.given), message=back(problem.message),
                   rule=problem.rule, file=problem.file, line=problem.line)


# -- what the tree's drivers call on the class a section starts --------------------------


def scoped_findings(revision: Revision, verdict: TreeVerdict,
                    config: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The audit's findings this config reaches: those on the class each section starts,
    under switches the section's values do not exclude, less those every caller guards
    against (the audit's `guarded`) and those every call they are reached from is out of
    this config's way: in a module whose entry config it is not (a recipe without `ppo:`
    does not run PPO's loop: `entry_configs`), or behind a test this config's values fail
    (`if backend == "megatron":` with `policy.generation.backend: vllm`: `config_tests`).
    One line each, as warnings, saying where it is reached from, or that a caller
    declares no config. Second: one note per finding left out, with the reason."""
    from nemo_rl_workers.checks.audit.chain_verdict import chain_verdict
    from nemo_rl_workers.checks.audit.rules import message_for
    from nemo_rl_workers.checks.audit.run import audit_of
    from nemo_rl_workers.tree.conditions import compatible

    if revision.root is None or revision.is_reference:
        return [], []
    report = audit_of(revision.root)
    lines: list[str] = []
    notes: list[str] = []
    for res in verdict.resolutions:
        if res.section in verdict.shared:  # the same workers as another section's
            continue
        values = verdict.switches.get(res.section, {})
        for finding in report.findings:
            if (res.fqn not in finding.classes or finding.reach == "guarded"
                    or not compatible(finding.condition, values)):
                continue
            head = f"{res.section}: {finding.call}: {finding.severity}[{finding.rule}]"
            runs, why = chain_verdict(finding.chains, report.entry_configs, config,
                                      finding.chain_gap)
            if runs is None:  # no chain tells: the callers by name may still rule it out
                by_name, why_not = _run_by(finding.callers, report.entry_configs, config)
                if by_name is False:
                    runs, why = False, why_not
            if runs is False:
                notes.append(f"audit: {head}: not reached by this config: {why}")
            elif runs is None:
                notes.append(f"audit: {head}: {why}")
            else:
                lines.append(f"{head} ({why}): {message_for(finding, res.fqn)}")
    return list(dict.fromkeys(lines)), list(dict.fromkeys(notes))


def _run_by(origins: tuple[Origin, ...], entry_configs: Mapping[str, tuple[str, ...]],
            config: Mapping[str, Any]) -> tuple[bool | None, str]:
    """Whether `config` runs one of the calls a finding is reached from (None: a caller
    it does not rule out declares no config), and why, in words."""
    if not origins:
        return None, "its callers cannot be followed"
    top = {str(key) for key in config}
    reached: list[str] = []
    unknown: list[str] = []
    out: list[str] = []
    for origin in origins:
        failed = first_failed(origin.tests, lambda t: t.verdict(config) is False)
        needs = entry_configs.get(_file(origin.where))
        if failed is not None:
            out.append(f"{origin.where} {failed.needs()}, and this config has "
                       f"{failed.given(config)}")
        elif needs is None:
            unknown.append(origin.where)
        elif set(needs) <= top:
            reached.append(origin.where)
        else:
            missing = ", ".join(sorted(set(needs) - top))
            out.append(f"{origin.where} runs on configs with {missing}")
    if reached:
        return True, f"reached by this config from {_some(reached)}"
    if unknown:
        return None, f"called from {_some(unknown)}, not known to run on this config or not"
    return False, "; ".join(sorted(set(out)))


def _some(wheres: list[str]) -> str:
    return wheres[0] + (f" and {len(wheres) - 1} more" if len(wheres) > 1 else "")


def _file(where: str) -> str:
    return where.rpartition(":")[0] or where
