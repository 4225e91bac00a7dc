"""A NeMo-RL tree's own pre-allocation rules, read from its source and run on one config.

What refuses a config before any worker starts is the tree's own code: the `assert`s
and the `raise`s that the algorithm's `setup` and its drivers' constructors (`Policy`,
`VllmGeneration`, ...: the classes the driver reader finds) run on config values
before their first worker starts. This module walks those bodies in statement order
from the source model (never importing the tree), evaluates each test on the loaded
config (`interpret.expressions`, with the tree's small helpers run: `interpret.helpers`),
and stops where workers start: a statement that
builds a driver, or stores the driver's worker group (`self.worker_group = ...`).
`setup` runs first, so what it sets in `os.environ` (upstream's
`NRL_IGNORE_TP_ACCURACY_CHECK` under `loss_fn.force_on_policy_ratio`) is what the
constructors read; the rest of the environment is this process's, as the run's would be.

Each rule reached comes out as one verdict: it refuses the config (a problem quoting the
tree's condition, message and file:line), it passes, or it is undecided with the reason
(a test on a value that is not the config, a cluster size the tree computes at run time,
a branch the config does not decide); undecided is never a problem. A test that reads no
config value (`"TORCH_CUDA_ARCH_LIST" not in os.environ`) is about the machine the run
is on, not the config: undecided. No rule is known by name: a tree that adds an
assertion has it checked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from nemo_rl_workers.checks.config.entry_sections import chosen_algorithm, fitting_entries
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.interpret.expressions import ClusterSize, Environ, Known, Read, Value
from nemo_rl_workers.interpret.models import config_model, model_field
from nemo_rl_workers.interpret.walk import (
    MAX_STATEMENTS,
    SetupWalk,
    TreeRule,
    walk_scope,
    worker_stops,
)
from nemo_rl_workers.reading.plain_data import plain_copy
from nemo_rl_workers.tree.entry_builds import CLUSTER_KEYWORD
from nemo_rl_workers.tree.knowledge import SETUP
from nemo_rl_workers.tree.source.gc_pause import collector_paused
from nemo_rl_workers.tree.source_kept import tree_source

if TYPE_CHECKING:
    from nemo_rl_workers.tree.revision import Revision
    from nemo_rl_workers.tree.source import ClassInfo, Function, Module, SourceTree

CONFIG_PARAMS = ("config", "cfg")  # a constructor's config parameter, where not annotated


@dataclass
class TreeRuleReport:
    problems: list[Problem] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    rules: list[TreeRule] = field(default_factory=list)  # empty when read from the cache
    notes: list[str] = field(default_factory=list)  # a cache entry not trusted


# (driver, environ) -> the size of the cluster the entry's setup builds that driver on,
# with the config values it was computed from; None where undecided (`tree_world_size`).
ClusterSizes: TypeAlias = Callable[[str, Mapping[str, str]],
                                   tuple[int, tuple[Read, ...]] | None]


def tree_rule_report(config: Mapping[str, Any], revision: Revision,
                     sections: Sequence[tuple[str, str]],
                     environ: Mapping[str, str] | None = None,
                     sizes: ClusterSizes | None = None) -> TreeRuleReport:
    """The tree's own rules for `config`: its algorithm's `setup` (the one whose entry
    config this is), then each (section path, driver) constructor, in that order.
    `environ` (default: the process's) is what the tree's code reads from `os.environ`;
    with the process's, the verdicts are kept with the tree's model (`derived_answers`).
    `sizes`: what a constructor's `cluster.world_size()` is, where decided."""
    from nemo_rl_workers.checks.config.derived_answers import Verdicts, cached_verdicts

    if revision.root is None:
        return TreeRuleReport()
    if environ is not None:
        return _judged(config, revision, sections, environ, sizes)
    walked: list[TreeRuleReport] = []

    def judge(env: Mapping[str, str]) -> tuple[Verdicts, list[str]]:
        walked.append(_judged(config, revision, sections, env, sizes))
        report = walked[0]
        # A refusal's sentence says whether the variables its test read are set.
        return Verdicts(report.problems, report.undecided), [
            name for rule in report.rules for name in rule.env]

    verdicts, notes = cached_verdicts(revision, config, sections, judge)
    report = walked[0] if walked else TreeRuleReport(problems=verdicts.problems,
                                                     undecided=verdicts.undecided)
    report.notes.extend(notes)
    return report


def _judged(config: Mapping[str, Any], revision: Revision,
            sections: Sequence[tuple[str, str]], environ: Mapping[str, str],
            sizes: ClusterSizes | None) -> TreeRuleReport:
    with collector_paused():  # it models the modules it walks (see tree.source.gc_pause)
        return _tree_rule_report(config, revision, sections, environ, sizes)


def _tree_rule_report(config: Mapping[str, Any], revision: Revision,
                      sections: Sequence[tuple[str, str]],
                      environ: Mapping[str, str],
                      sizes: ClusterSizes | None) -> TreeRuleReport:
    report = TreeRuleReport()
    if revision.root is None:
        return report
    tree = tree_source(revision.root)  # the one the revision was just built from, if so
    env = Environ(environ)
    root = Path(revision.root)
    setups, why = _setups(tree, config, revision)
    if why:
        report.undecided.append(why)
    unread = revision.unread_files()
    if unread is not None:  # their rules are missing from the walks, not passed
        report.undecided.append(f"the tree rules of the modules the tree could not read "
                                f"({unread}): not checked")
    fields = functools.partial(model_field, tree)
    for function, module in setups:
        model = config_model(tree, module, function.params[0].annotation)
        scope = walk_scope(function, module, env, {function.params[0].name: Known(
            plain_copy(dict(config)), "", model=model)})
        scope.fields = fields
        _collect(report, SetupWalk(function, scope, root,
                                   worker_stops(tree, revision, function), tree),
                 "")
    annotations: dict[str, str | None] = {}
    for path, driver in sections:
        found = _constructor(tree, revision, driver)
        if found is None:
            continue
        function, module = found
        param = _config_param(function)
        annotations[path] = _annotation(function, param)
        parent = path.rpartition(".")[0]
        # A driver of a nested section that takes its parent's config (MegatronGeneration
        # takes the PolicyConfig, as Policy does) reads the parent section.
        if parent in annotations and annotations[path] is not None and \
                annotations[path] == annotations[parent]:
            path = parent
        section = _section(config, path)
        if section is None or param is None:
            report.undecided.append(f"tree rules of {driver}.__init__: undecided: it takes no "
                                    "config parameter this check can bind" if param is None
                                    else f"{path} is not a mapping")
            continue
        bound: dict[str, Value] = {param: Known(plain_copy(dict(section)), path)}
        bound.update(_cluster(function, driver, environ, sizes))
        scope = walk_scope(function, module, env, bound)
        _collect(report, SetupWalk(function, scope, root,
                                   worker_stops(tree, revision, function), tree),
                 path)
    return report


def _cluster(function: Function, driver: str, environ: Mapping[str, str],
             sizes: ClusterSizes | None) -> dict[str, Value]:
    """The constructor's cluster parameter, where the entry's `setup` decides the size of
    the cluster it builds this driver on: `cluster.world_size()` is that size, read from
    the config values the walk read."""
    if sizes is None or not any(p.name == CLUSTER_KEYWORD for p in function.bound_params()):
        return {}
    size = sizes(driver, environ)
    if size is None:
        return {}
    return {CLUSTER_KEYWORD: Known(ClusterSize(size[0]), None, size[1])}


def _collect(report: TreeRuleReport, walk: SetupWalk, section: str) -> None:
    try:
        walk.run()
    except (RecursionError, MemoryError):  # hostile source: what it holds is not judged
        report.undecided.append(f"tree rules of {walk.name}: undecided: its code is nested "
                                "too deeply to follow")
        return
    if walk.cut is not None:  # what it holds past there is not judged: said, not passed
        report.undecided.append(f"tree rules of {walk.name} from {walk.file}:{walk.cut}: "
                                f"undecided: the walk stops after {MAX_STATEMENTS} statements "
                                "(its loops run that many)")
    for rule in walk.rules:
        report.rules.append(rule)
        if rule.verdict == "refuses":
            report.problems.append(rule.problem(section or "config"))
        elif rule.verdict == "undecided":
            report.undecided.append(rule.line())


def _section(config: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    from nemo_rl_workers.model.sections import section_at

    found = section_at(dict(config), path)
    return found if isinstance(found, Mapping) else None


def _annotation(function: Function, param: str | None) -> str | None:
    found = next((p.annotation for p in function.params if p.name == param), None)
    return found.strip("'\" ") if found else None


def _config_param(function: Function) -> str | None:
    params = function.bound_params()
    for param in params:
        if param.annotation is not None and param.annotation.split(".")[-1].strip(
                "'\"").endswith("Config"):
            return param.name
    return next((p.name for p in params if p.name in CONFIG_PARAMS), None)


def _constructor(tree: SourceTree, revision: Revision,
                 driver: str) -> tuple[Function, Module | None] | None:
    fqn = revision.driver_fqns.get(driver)
    if fqn is None:
        return None
    module_name, _, name = fqn.rpartition(".")
    module = tree.module(module_name)
    info: ClassInfo | None = module.classes.get(name) if module is not None else None
    if info is None or "__init__" not in info.methods:
        return None
    return info.methods["__init__"], module


def _setups(tree: SourceTree, config: Mapping[str, Any], revision: Revision
            ) -> tuple[list[tuple[Function, Module | None]], str]:
    """The `setup` of the algorithm module whose entry config `config` is: the one whose
    required top-level keys the config has, the most specific if several; none (and
    why) when no module's keys fit or two fit equally. The keys come from the tree's model
    (`Revision.setups`, cached with it): only the chosen module is modelled here."""
    fits: list[tuple[int, Function, Module]] = []
    chosen = chosen_algorithm()
    candidates = [(0, chosen)] if chosen is not None else fitting_entries(
        config, _entry_keys(tree, revision))
    for count, name in candidates:
        module = tree.module(name)
        if module is None or SETUP not in module.functions:
            continue
        function = module.functions[SETUP]
        if function.params:
            fits.append((count, function, module))
    if not fits:
        return [], ""
    fits.sort(key=lambda fit: (-fit[0], fit[1].module))
    if len(fits) > 1 and fits[0][0] == fits[1][0]:
        names = ", ".join(f.module for n, f, _ in fits if n == fits[0][0])
        return [], (f"tree rules of the algorithm's setup: undecided: the config fits the "
                    f"entry config of {names} alike")
    return [(fits[0][1], fits[0][2])], ""


def _entry_keys(tree: SourceTree, revision: Revision) -> dict[str, tuple[str, ...] | None]:
    """Algorithm module -> the top-level keys its `setup`'s config requires: from the model
    where it holds them, else read now (a model built without them)."""
    if revision.setups:
        return dict(revision.setups)
    from nemo_rl_workers.tree.entry_configs import setup_keys

    return setup_keys(tree)

