"""One audit of one tree: read it once, find its drivers and workers, apply the rules."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from nemo_rl_workers.checks.audit.call_chain import CallChains, Chain
from nemo_rl_workers.checks.audit.context import AuditContext
from nemo_rl_workers.checks.audit.interfaces import (
    check_interface_calls,
    interface_calls,
    interfaces_of,
)
from nemo_rl_workers.checks.audit.reach import Reachability
from nemo_rl_workers.checks.audit.rules import (
    Finding,
    Undecided,
    check,
    group_causes,
)
from nemo_rl_workers.checks.audit.subclasses import audit_subclasses, model_mentioning
from nemo_rl_workers.checks.audit.vllm_extensions import EXTENSION_KEY, named_classes
from nemo_rl_workers.interpret.conditions import Origin
from nemo_rl_workers.tree.checkout import PACKAGE, UnusableCheckout, checkout_folder
from nemo_rl_workers.tree.drivers import (
    Dispatch,
    Driver,
    DriverReader,
    DriverSide,
    Unresolved,
    WorkerChoice,
)
from nemo_rl_workers.tree.knowledge import driver_side
from nemo_rl_workers.tree.revision_build import selects_through_library
from nemo_rl_workers.tree.source import (
    CallSite,
    Function,
    ImportRoots,
    Resolver,
    SourceProblem,
    SourceTree,
    read_tree,
    resolve_fqn,
)
from nemo_rl_workers.tree.source.gc_pause import collector_paused
from nemo_rl_workers.tree.source_kept import let_go

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.extensions import ExtensionSection

ENTRY_SCRIPTS = "examples"  # the checkout's folder of entry scripts, read beside the package


class UnusableTree(ValueError):
    """The path cannot be audited at all; `str()` is one line."""


@dataclass(frozen=True)
class WorkerClass:
    fqn: str
    definition: str | None  # file:line, None when the tree does not define it
    drivers: tuple[str, ...]
    environment: str | None


@dataclass
class AuditReport:
    root: str
    findings: list[Finding] = field(default_factory=list)  # one per cause
    # The same findings, one per (cause, class): what a baseline records and matches.
    per_class: list[Finding] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)
    sites: int = 0
    unresolved: list[Unresolved] = field(default_factory=list)
    drivers: list[Driver] = field(default_factory=list)  # every class that starts or calls workers
    # Driver class name -> the drivers whose workers it calls (itself, or e.g. "Policy").
    calls_workers_of: dict[str, set[str]] = field(default_factory=dict)
    workers: list[WorkerClass] = field(default_factory=list)
    problems: list[SourceProblem] = field(default_factory=list)
    files_read: int = 0
    suppressed: int = 0  # causes the baseline already records (every class of them)
    # Baseline entries no finding matches any more (rule, driver, method, worker).
    stale: list[tuple[str, str, str, str]] = field(default_factory=list)
    extensions: ExtensionSection | None = None  # the extension side, when it ran
    # File (as findings' callers name it) -> the top-level config keys its entry functions
    # require (`entry_configs`), for each calling module that declares them.
    entry_configs: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def resolved(self) -> int:
        return self.sites - len({u.call for u in self.unresolved})

    def apply_baseline(self, known: set[tuple[str, str, str, str]]) -> None:
        """Report only what `known` does not record: a cause keeps the classes the
        baseline lacks; entries that match nothing are `stale`."""
        current = {f.key for f in self.per_class}
        self.stale = sorted(known - current)
        kept = [f for f in self.per_class if f.key not in known]
        self.suppressed = sum(set(f.keys) <= known for f in self.findings)
        self.findings = group_causes(kept)


def stub_roots() -> list[Path]:
    """Stub packages installed beside this interpreter (`vllm-stubs`), for bases
    outside the audited tree."""
    found: list[Path] = []
    for entry in ImportRoots.of_this_interpreter().paths:
        candidate = Path(entry) / "vllm-stubs"
        if candidate.is_dir() and candidate not in found:
            found.append(candidate)
    return found


def checkout_root(path: Path) -> Path:
    """The folder holding the `nemo_rl` package: PATH itself, or its parent when PATH
    is the package folder (`tree.checkout.checkout_folder`); UnusableTree when neither
    is."""
    try:
        return checkout_folder(path, str(path))
    except UnusableCheckout as err:
        raise UnusableTree(str(err)) from err


def _relative(where: str, root: Path) -> str:
    try:
        return os.path.relpath(where, root)
    except ValueError:
        return where


EXTENSION_MARKERS = ("worker_extension_cls", "worker_cls", "collective_rpc")


def _extension_side(text: str) -> bool:
    """Modules the extension side reads in full (what generation workers hand vLLM)."""
    return driver_side(text) or any(marker in text for marker in EXTENSION_MARKERS)


def _under(where: str, roots: list[str]) -> bool:
    file = str(Path(where.rpartition(":")[0] or where).resolve())
    return any(file == r or file.startswith(r + os.sep) for r in roots)


def _order(where: str) -> tuple[str, int]:
    file, _, line = where.rpartition(":")
    return (file, int(line)) if line.isdigit() else (where, 0)


def _tree_subclasses(tree: SourceTree, resolver: Resolver, side: DriverSide) -> list[Finding]:
    """The tree's own subclasses of its workers and of what it hands vLLM, judged as
    extensions (see `subclasses`)."""
    workers = {c.fqn for d in side.drivers.values() for c in d.choices}
    model_mentioning(tree, [*(w.rsplit(".", 1)[-1] for w in workers), EXTENSION_KEY])
    handed = {n.fqn for n in named_classes(tree, EXTENSION_KEY, [])}
    model_mentioning(tree, [h.rsplit(".", 1)[-1] for h in handed])
    return audit_subclasses(tree, resolver, workers | handed)


def _script_choices(
    resolver: Resolver, choices: dict[str, tuple[Driver | None, list[WorkerChoice]]],
    section: ExtensionSection | None, dispatch: Dispatch,
) -> dict[str, tuple[Driver | None, list[WorkerChoice]]]:
    """What a script's call reaches: for a role an extension on the command line stands
    for, that extension; for any other, the driver's own workers. A method the extension
    overrides itself is left to the extension side's override rules."""
    audits = [a for a in (section.audits if section is not None else ())
              if a.role == dispatch.owner and a.info is not None]
    if not audits:
        return choices
    kept: list[WorkerChoice] = []
    for item in audits:
        assert item.info is not None
        found = resolver.find_method(item.info, dispatch.method)
        if found is None or found[1].fqn not in item.own:
            kept.append(WorkerChoice(item.fqn, frozenset(), item.where))
    return {**choices, dispatch.owner: (None, kept)}


def _interface_side(tree: SourceTree, resolver: Resolver, side: DriverSide) -> list[Finding]:
    """Calls on the interfaces the drivers implement, against every implementation (see
    `interfaces`)."""
    found = interfaces_of(tree, resolver, side.drivers)
    model_mentioning(tree, [i.name for i in found.values()])
    workers = {c.fqn for d in side.drivers.values() for c in d.choices}
    return check_interface_calls(resolver, interface_calls(tree, resolver, side.drivers, workers))


def audit(
    path: Path,
    *,
    stubs: list[Path] | None = None,
    paths: Sequence[Path] = (),
    extend: Callable[[AuditContext], tuple[list[Finding], ExtensionSection]] | None = None,
    origins: bool = False,
) -> AuditReport:
    """Audit the NeMo-RL checkout at `path` (see the guide's "Auditing a NeMo-RL checkout").

    `paths`: more import roots read with it (a user's own packages, `--path`); `extend`:
    more rules on the same model, whose findings join the report's; `origins`: follow each
    reachable finding's callers to where they come from, with the config tests on the
    way (`Finding.callers`, `AuditReport.entry_configs`), for a config-scoped run."""
    with collector_paused():
        return _audit(path, stubs=stubs, paths=paths, extend=extend, origins=origins)


def _audit(
    path: Path,
    *,
    stubs: list[Path] | None,
    paths: Sequence[Path],
    extend: Callable[[AuditContext], tuple[list[Finding], ExtensionSection]] | None,
    origins: bool,
) -> AuditReport:
    root = checkout_root(path)
    # Import roots other than the checkout are read like stub roots: every module under
    # each, named from that root, in the same one-pass model. The extension side needs
    # every module modelled (it looks for what generation workers hand vLLM anywhere).
    # Entry scripts (`examples/**/*.py`) start actors and call them by name too.
    scripts = [ENTRY_SCRIPTS] if (root / ENTRY_SCRIPTS).is_dir() else []
    let_go()  # the revision's narrower model of this tree: never two alive at once
    tree = read_tree(root, packages=[PACKAGE, *scripts],
                     stub_roots=[*paths, *(stub_roots() if stubs is None else stubs)],
                     eager=driver_side if extend is None else _extension_side)
    resolver = Resolver(tree)
    reader = DriverReader(tree, resolver)
    side = reader.read()
    if not side.drivers and not side.dispatches and not tree.problems and \
            not selects_through_library(root):  # a tree built on this library calls typed
        raise UnusableTree(
            f"{path}: is not a NeMo-RL tree the tool can judge: no module of its {PACKAGE} "
            "package starts workers or calls them by name, and none failed to read")
    owners = {d.name for d in side.drivers.values()}
    owners |= {d.owner for d in side.dispatches}
    choices = {name: reader.choices_of(name) for name in owners}
    # A script under --path calls the workers of the extension it selects: its calls by
    # name are judged against that extension, once the extension side has told each
    # extension's role (below); the tree's own calls against the defaults.
    roots = [str(Path(p).resolve()) for p in paths]
    # Callers of the drivers (algorithms, environments, entry scripts) name them: model
    # those modules before the calls are indexed for reachability.
    model_mentioning(tree, [d.name for d in side.drivers.values()])
    from_path = [d for d in side.dispatches if roots and _under(d.call, roots)]
    reachability = Reachability(tree, side, origins)
    findings, undecided = check(tree, resolver, [d for d in side.dispatches
                                                 if d not in from_path], choices,
                                reachability.classify)
    if origins:  # a config-scoped run judges reach along calls that resolve
        findings = _with_chains(findings, CallChains(tree, resolver, reachability.runs_on))
    findings.extend(_tree_subclasses(tree, resolver, side))
    findings.extend(_interface_side(tree, resolver, side))
    section: ExtensionSection | None = None
    if extend is not None:
        more, section = extend(AuditContext(root, tree, resolver, side, choices, reader.sent))
        findings = [*findings, *more]
    for dispatch in from_path:
        found, more_undecided = check(tree, resolver, [dispatch],
                                      _script_choices(resolver, choices, section, dispatch))
        findings.extend(found)
        undecided.extend(more_undecided)

    def rel(where: str) -> str:
        file, _, line = where.rpartition(":")
        return f"{_relative(file, root)}:{line}" if file else _relative(where, root)

    report = AuditReport(str(path))
    report.per_class = sorted(
        (replace(f, call=rel(f.call), definition=rel(f.definition), workers=(),
                 reach=f.reach or "reachable", guard=rel(f.guard) if f.guard else "",
                 callers=tuple(Origin(rel(o.where), tuple(replace(t, where=rel(t.where))
                                                          for t in o.tests))
                               for o in f.callers),
                 chains=tuple(_relative_chain(c, rel) for c in f.chains),
                 chain_gap=_relative_gap(f.chain_gap, root))
         for f in findings),
        key=lambda f: (_order(f.call), f.worker, f.rule))
    report.findings = group_causes(report.per_class)
    # The config each calling module runs on, for a config-scoped run (`check`).
    for module, keys in sorted(reachability.entry_keys.items()):
        calling = tree.module(module)
        if keys is not None and calling is not None:
            report.entry_configs[_relative(calling.file, root)] = keys
    report.undecided = [Undecided(u.driver, u.method, u.worker, rel(u.call), u.reason)
                        for u in undecided]
    report.sites = side.sites
    report.unresolved = [Unresolved(u.driver, u.function, rel(u.call), u.helper, u.reason)
                         for u in side.unresolved]
    report.drivers = sorted(side.drivers.values(), key=lambda d: d.fqn)
    for dispatch in side.dispatches:
        report.calls_workers_of.setdefault(dispatch.driver, set()).add(dispatch.owner)
    by_worker: dict[str, list[str]] = {}
    for driver in report.drivers:
        for choice in driver.choices:
            by_worker.setdefault(choice.fqn, []).append(driver.name)
    for fqn, names in sorted(by_worker.items()):
        info = resolve_fqn(tree, fqn)
        report.workers.append(WorkerClass(
            fqn, rel(info.where) if info is not None else None,
            tuple(dict.fromkeys(names)), side.environments.get(fqn)))
    report.problems = [
        SourceProblem(_relative(p.file, root), p.message, p.line) for p in tree.problems]
    report.files_read = tree.files_read
    report.extensions = section
    return report


def _with_chains(findings: list[Finding], chains: CallChains) -> list[Finding]:
    """Each reachable finding with the chains of resolved calls that lead to its driver's
    call from an entry (`call_chain`)."""
    out: list[Finding] = []
    wanted = {f.call for f in findings}
    by_where: dict[str, list[CallSite]] = {}
    for call in chains.tree.calls:
        if f"{call.file}:{call.line}" in wanted:
            by_where.setdefault(call.where, []).append(call)
    for finding in findings:
        function = _driver_function(chains.tree, finding)
        if finding.reach not in ("", "reachable") or function is None:
            out.append(finding)
            continue
        dispatch = next((c for c in by_where.get(finding.call, [])
                         if c.function == function.qualname
                         and c.module == function.module), None)
        found, gap = chains.chains(function, dispatch)
        out.append(replace(finding, chains=found, chain_gap=gap))
    return out


def _driver_function(tree: SourceTree, finding: Finding) -> Function | None:
    """The driver function a finding is in: by its qualname, in the file of its call
    where that file defines it, else the one function of that qualname in the tree."""
    file = finding.call.rpartition(":")[0]
    named = [f for (_, qualname), f in tree.functions.items() if qualname == finding.driver]
    return next((f for f in named if f.file == file), named[0] if len(named) == 1 else None)


def _relative_chain(chain: Chain, rel: Callable[[str], str]) -> Chain:
    return Chain(tuple(replace(link, where=rel(link.where),
                               tests=tuple(replace(t, where=rel(t.where)) for t in link.tests),
                               undecided=tuple(_relative_text(u, rel) for u in link.undecided))
                       for link in chain.links))


def _relative_gap(text: str, root: Path) -> str:
    """A gap's text with the files it names relative to the checkout."""
    return text.replace(f"{root}{os.sep}", "")


def _relative_text(text: str, rel: Callable[[str], str]) -> str:
    """`file:line test` with the file made relative."""
    where, _, test = text.partition(" ")
    return f"{rel(where)} {test}"


def audit_inputs(checkout: Path, paths: Sequence[Path] = (),
                 problems: list[SourceProblem] | None = None) -> list[Path]:
    """Every file an audit of `checkout` reads (as `read_tree` lists them): the package,
    its entry scripts, each `--path` root (`paths`), the installed stubs; what could not be
    listed is added to `problems`. What a cache of its answers is keyed by."""
    from nemo_rl_workers.tree.source.reading import discover

    found: list[SourceProblem] = [] if problems is None else problems
    files = list(discover(checkout / PACKAGE, found, boundary=checkout))
    if (checkout / ENTRY_SCRIPTS).is_dir():
        files.extend(discover(checkout / ENTRY_SCRIPTS, found, boundary=checkout))
    for root in [*paths, *stub_roots()]:  # `_audit`'s stub roots, in its order
        files.extend(discover(root, found))
    return files


@functools.cache
def audit_of(root: str) -> AuditReport:
    """The audit of one tree, once per process: `check` scopes its findings to each
    config it judges against that tree."""
    return audit(Path(root), origins=True)
