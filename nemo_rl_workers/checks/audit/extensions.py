"""The extension side of `audit`: extensions given on the command line (FQNs found as
source under `--path`, or configs whose `worker_extension_cls_fqn` fields name them),
judged against the revision the tree is, and vLLM's extension rule for every class the
tree (or the command line) hands vLLM as `worker_extension_cls`.

It reads the model `audit` already built (`AuditContext`): nothing is parsed again,
nothing imported. Findings have the driver side's shape (`Finding`), so the text, the
JSON and the baseline treat them alike.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from nemo_rl_workers.checks.audit.extension_rules import (
    DriverCall,
    ExtensionAudit,
    RoleWorker,
    audit_extension,
)
from nemo_rl_workers.checks.audit.extension_setup import setup_findings
from nemo_rl_workers.checks.audit.rules import Finding
from nemo_rl_workers.checks.audit.vllm_extensions import (
    EXTENSION_KEY,
    VllmTreeReport,
    audit_vllm,
    extension_names,
    named_classes,
)
from nemo_rl_workers.checks.vllm.vllm_extension_rule import ExtensionRule
from nemo_rl_workers.findings import registry as said
from nemo_rl_workers.tree.conditions import either
from nemo_rl_workers.tree.source import resolve_fqn

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.context import AuditContext

CONFIG_FIELD = "worker_extension_cls_fqn"
CONFIG_SUFFIXES = (".yaml", ".yml")


class UnusableExtension(ValueError):
    """An EXTENSION argument that names nothing auditable; `str()` is one line."""


@dataclass(frozen=True)
class Extension:
    """One extension to audit and where the command line got it."""

    fqn: str
    origin: str  # "command line", or "<config>: <path>"


@dataclass
class ExtensionSection:
    """What the report says about extensions and vLLM, besides the findings."""

    vllm_version: str
    vllm_worker: str
    root: str = "."  # the checkout; paths print relative to it, as findings do
    audits: list[ExtensionAudit] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)
    vllm: VllmTreeReport | None = None
    vllm_extensions: list[str] = field(default_factory=list)  # judged by vLLM's rule
    vllm_pinned: str | None = None  # the vLLM version the tree's pyproject.toml pins

    def rel(self, where: str) -> str:
        """`file:line` (or a file) relative to the checkout."""
        file, sep, line = where.rpartition(":")
        if not sep or not line.isdigit():
            file, line = where, ""
        try:
            relative = os.path.relpath(file, self.root)
        except ValueError:
            relative = file
        return f"{relative}:{line}" if line else relative


def _exists(path: Path) -> bool:
    """Whether `path` names something; a name the system refuses (too long, a NUL) does
    not, and is then judged as an FQN."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def extensions_from_args(values: Sequence[str]) -> list[Extension]:
    """Each argument as FQNs: a config file's `worker_extension_cls_fqn` fields, or an FQN.
    Raises UnusableExtension (one line) for a config that cannot be read or a bad name."""
    from nemo_rl_workers.model.fqn import fqn_problem

    out: list[Extension] = []
    for value in values:
        path = Path(value)
        if value.endswith(CONFIG_SUFFIXES) or _exists(path):
            out.extend(_from_config(path))
            continue
        problem = fqn_problem(value, "EXTENSION")
        if problem is not None:
            raise UnusableExtension(problem.message)
        out.append(Extension(value, "command line"))
    return out


def _from_config(path: Path) -> list[Extension]:
    from nemo_rl_workers.reading.loader import load_config

    try:
        config = load_config(path)
    except (ValueError, OSError, RecursionError) as err:
        raise UnusableExtension(f"{path}: cannot be read as a config: {err}") from err
    found = [
        Extension(fqn, f"{path}: {where}")
        for where, fqn in _fields(config, "")
    ]
    if not found:
        raise UnusableExtension(f"{path}: names no extension (no {CONFIG_FIELD} field)")
    return found


def _fields(node: object, prefix: str) -> Iterable[tuple[str, str]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            where = f"{prefix}.{key}" if prefix else str(key)
            if key == CONFIG_FIELD and isinstance(value, str):
                yield where, value
            else:
                yield from _fields(value, where)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _fields(item, f"{prefix}[{index}]")


def extension_side(
    values: Sequence[str], paths: Sequence[str], vllm_version: str | None,
    pinned: str | None = None,
) -> tuple[Callable[[AuditContext], tuple[list[Finding], ExtensionSection]], str]:
    """The `extend` hook of `run.audit` for the command line's arguments, and a note for
    stderr ("" when none). Raises UnusableExtension for arguments that cannot be used.

    Without `--vllm-version`, vLLM's rule is the one of the version the tree pins
    (`pinned`) where stubs of it are installed; otherwise the installed stubs' own, and
    the note names both versions."""
    from nemo_rl_workers.checks.vllm.vllm_extension_rule import (
        ExtensionRuleUnavailable,
        installed_manifests,
        load_rule,
    )

    for path in paths:
        if not Path(path).is_dir():
            raise UnusableExtension(f"--path {path}: is not a folder")
    extensions = extensions_from_args(values)
    note = ""
    rule: ExtensionRule | None
    wanted = vllm_version
    if wanted is None and pinned is not None and pinned in installed_manifests():
        wanted = pinned
    try:
        rule = load_rule(wanted)
    except ExtensionRuleUnavailable as missing:
        if vllm_version is not None:
            raise UnusableExtension(str(missing)) from missing
        rule, note = None, f"vLLM's extension rule not applied: {missing}"
    if rule is not None and vllm_version is None and pinned is not None \
            and rule.version != pinned:
        note = (f"the tree pins vLLM {pinned}, for which no vllm-stubs is installed; vLLM's "
                f"extension rule is judged against the installed vllm-stubs {rule.version}")

    def extend(ctx: AuditContext) -> tuple[list[Finding], ExtensionSection]:
        findings, section = audit_extensions(ctx, extensions, rule)
        section.vllm_pinned = pinned
        return findings, section

    return extend, note


def audit_extensions(
    ctx: AuditContext, extensions: Sequence[Extension], rule: ExtensionRule | None
) -> tuple[list[Finding], ExtensionSection]:
    """Findings and the section for the report."""
    tree, resolver = ctx.tree, ctx.resolver
    section = ExtensionSection(
        rule.version if rule is not None else "", rule.default_worker if rule is not None else "",
        str(ctx.root))
    workers = [
        RoleWorker(driver, choice.fqn, choice.condition)
        for driver, (_, choices) in sorted(ctx.choices.items())
        for choice in choices
        if not choice.quantized
    ]
    calls = [
        DriverCall(d.function, d.owner, d.method, d.keywords, d.open_keywords, d.positional,
                   d.call, d.condition)
        for d in ctx.side.dispatches
    ]
    findings: list[Finding] = []
    vllm_given: list[str] = []
    unresolved: list[str] = []
    passed_at = named_classes(tree, EXTENSION_KEY, unresolved)
    passed = {n.fqn for n in passed_at}
    for extension in extensions:
        section.origins.setdefault(extension.fqn, extension.origin)
        findings.extend(_import_findings(ctx, extension.fqn))
        if _is_vllm_extension(ctx, extension.fqn, passed):
            vllm_given.append(extension.fqn)
            continue
        if resolve_fqn(tree, extension.fqn) is None:
            # Judging nothing is no pass: the command stops, naming the closest classes.
            from nemo_rl_workers.tree.class_names import class_suggestions, no_such_class

            where = ("the command line" if extension.origin == "command line"
                     else extension.origin)
            raise UnusableExtension(no_such_class(
                extension.fqn, f"not in the tree or under --path; given by {where}",
                class_suggestions(extension.fqn, (), [tree])))
        audit = audit_extension(tree, resolver, extension.fqn, workers, calls)
        audit.findings.extend(setup_findings(tree, resolver, ctx.side, audit))
        section.audits.append(audit)
        findings.extend(conditioned(audit.findings, calls))
    if rule is None:
        return findings, section
    vllm = audit_vllm(tree, resolver, rule, vllm_given, passed_at, ctx.sent)
    vllm.unresolved[:0] = unresolved
    section.vllm = vllm
    section.vllm_extensions = sorted(vllm.names)
    for named, clash in vllm.clashes:
        ext = vllm.names.get(named.fqn)
        owner = tree.classes.get(clash.extension_owner) if ext is not None else None
        definition = owner.where if owner is not None else named.where
        if owner is not None and clash.name in owner.methods:
            definition = owner.methods[clash.name].where
        findings.append(Finding(
            said.CLASHES_WITH_VLLM, _short(named.by), clash.name, named.fqn,
            named.where if named.where != "(command line)" else definition, definition,
            (("clash", clash.message()),)))
    for call, name, lacking in vllm.rpc_missing:
        # One cause per call site, name and lacking extensions: the driver is the function
        # the call is written in (a mixin's, for every worker that has it).
        missing_in = tree.classes.get(lacking[0])
        findings.append(Finding(
            said.NO_RPC_TARGET, call.function, name, call.cls.fqn, call.where,
            missing_in.where if missing_in is not None else call.cls.where,
            (("via", f" {call.via}" if call.via else ""), ("version", rule.version),
             ("lacking", ", ".join(lacking)))))
    return findings, section


def _import_findings(ctx: AuditContext, fqn: str) -> list[Finding]:
    """The imports of the tree's package its own modules (the class's, and those of its
    bases outside the tree) run and the tree cannot satisfy: one finding each."""
    from nemo_rl_workers.checks.static.tree_imports import missing_tree_imports

    info = resolve_fqn(ctx.tree, fqn)
    modules = [fqn.rpartition(".")[0]] if info is None else [
        c.module for c in ctx.resolver.mro(info).classes]
    return [Finding(said.IMPORT_FAILS, info.name if info is not None else fqn, missing.name,
                    fqn, missing.where, missing.where,
                    missing.args)
            for missing in missing_tree_imports(ctx.tree, modules)]


def _short(by: str) -> str:
    """`module.Class.method` -> `Class.method` (the driver field's spelling)."""
    parts = by.split(".")
    for index, part in enumerate(parts):
        if part[:1].isupper():
            return ".".join(parts[index:])
    return parts[-1]


def conditioned(findings: list[Finding], calls: list[DriverCall]) -> list[Finding]:
    """Each finding under the condition of the driver call it is at (a finding at no
    driver call is unconditional), all else kept."""
    by_call = {c.call: c for c in calls}
    return [replace(f, condition=either([call.condition]) if call is not None else ())
            for f, call in ((f, by_call.get(f.call)) for f in findings)]


def _is_vllm_extension(ctx: AuditContext, fqn: str, passed: set[str]) -> bool:
    """An extension given on the command line is a vLLM extension when its MRO holds a
    class the tree hands vLLM (a subclass of NeMo-RL's internal extension)."""
    names = extension_names(ctx.tree, ctx.resolver, fqn)
    if names.info is None:
        return False
    return any(c.fqn in passed for c in ctx.resolver.mro(names.info).classes)
