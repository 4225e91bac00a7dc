"""One config file through the driver-side rules, for `resolve` and `check`.

The order is the pre-allocation order of `Policy` (outdated rules, preflight,
resolver, contract verification), minus the allocation. Problems are collected,
never raised, and located at the file and line where their key is set.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.model.resolver import resolve_sections
from nemo_rl_workers.model.sections import read_by_checks, section_at
from nemo_rl_workers.reading.origin import Lines, locate
from nemo_rl_workers.reading.recorded_reads import ENVIRON, Exported
from nemo_rl_workers.tree.source.gc_pause import collector_paused

if TYPE_CHECKING:
    from nemo_rl_workers.checks.config.kept_reports import Asked
    from nemo_rl_workers.checks.config.tree_rules import ClusterSizes
    from nemo_rl_workers.interpret.expressions import Read
    from nemo_rl_workers.reading.load_answers import LoadAnswers
    from nemo_rl_workers.reading.loader import LoadedConfig
    from nemo_rl_workers.tree.launch import Launch
    from nemo_rl_workers.tree.revision import Revision


def analyze_file(
    path: str,
    overrides: Sequence[str],
    *,
    world_size: int | None,
    verify: bool,
    preflight: bool,
    world_size_from_config: bool = False,
    only_read_env: bool = False,
    revision: Revision | None = None,
    launch: Launch | None = None,
) -> ConfigReport:
    """`world_size_from_config`: without a `world_size`, take it from the `cluster:` section.
    `only_read_env`: an unset `${oc.env:...}` fails the load only where the rules read the
    value (`load_for_check`). `revision`: the NeMo-RL to judge against (None: the
    reference). `launch`: how the config is launched (its entry script, the variables its
    launch exports); against a tree, the config is judged as that entry hands it to
    `setup` (`launch_entry`). Against a tree with a cache, the whole report is kept and
    used again while everything it read reads the same (`kept_reports`)."""
    from nemo_rl_workers.checks.config.kept_reports import Asked, kept_report

    asked = Asked(tuple(overrides), world_size, verify, preflight, world_size_from_config,
                  only_read_env, launch)
    # One config's judging allocates no garbage worth collecting mid-way; the collector
    # would traverse the tree's model over and over (see tree.source.gc_pause).
    with collector_paused():
        return kept_report(path, asked, revision, lambda: _judged_file(path, asked, revision))


def _judged_file(path: str, asked: Asked, revision: Revision | None) -> ConfigReport:
    """`analyze_file`'s report, made."""
    from nemo_rl_workers.checks.config.derived_answers import KeptLoads
    from nemo_rl_workers.reading.loader import ConfigLoadError, load_config_located

    overrides, world_size, verify, preflight, launch = (
        asked.overrides, asked.world_size, asked.verify, asked.preflight, asked.launch)
    world_size_from_config, only_read_env = asked.world_size_from_config, asked.only_read_env

    report = ConfigReport(config=path, revision=revision)
    kept = KeptLoads.of(revision)
    try:
        if only_read_env:
            config, lines = load_for_check(path, overrides, kept)
        else:
            config, lines = load_config_located(path, overrides)
    except ConfigLoadError as err:
        # The line already names `path`; a fault in a file down its `defaults:` chain must
        # name that file too, or the user is sent to the wrong one.
        same_file = err.file is None or err.file == os.path.normpath(path)
        report.unusable = err.reason if same_file else str(err)
        return report
    if kept is not None:
        report.cache_notes.extend(kept.notes)
    if revision is not None and not revision.is_reference and revision.root is not None:
        with _as_launched(path, config, report, revision, launch) as launched:
            if launched is None:
                return report
            _analyzed(path, launched, lines, report, revision, launch,
                      world_size=world_size, verify=verify, preflight=preflight,
                      world_size_from_config=world_size_from_config)
        if launch is None and report.problems and report.suite is not None and \
                report.suite.environ and report.suite.undecided is None:
            _as_the_suite_launches(report, overrides, world_size=world_size, verify=verify,
                                   only_read_env=only_read_env, revision=revision)
        return report
    return _analyzed(path, config, lines, report, revision, launch, world_size=world_size,
                     verify=verify, preflight=preflight,
                     world_size_from_config=world_size_from_config)


@contextlib.contextmanager
def _as_launched(path: str, config: dict[str, Any], report: ConfigReport,
                 revision: Revision, launch: Launch | None
                 ) -> Generator[dict[str, Any] | None]:
    """The config as its entry script hands it to `setup`, with that entry's algorithm
    chosen for every rule while judged (None: the named entry is unusable, said)."""
    from nemo_rl_workers.checks.config.entry_sections import entry_chosen
    from nemo_rl_workers.checks.config.launch_entry import (
        choose_entry,
        shown_entry,
        shown_entry_path,
        walk_entry,
    )

    chosen = choose_entry(path, launch, revision)
    if chosen.unusable is not None:
        report.unusable = chosen.unusable
        yield None
        return
    report.entry = shown_entry(chosen, revision.root)
    report.entry_path = shown_entry_path(chosen, revision.root)
    report.suite = chosen.suite
    report.launch_script = launch.script if launch is not None else None
    report.skipped.extend(chosen.notes)
    run = walk_entry(chosen, config, revision, _environ(launch))
    if run is None:
        yield config
        return
    report.problems.extend(r.problem("config") for r in run.rules if r.verdict == "refuses")
    report.skipped.extend(r.line() for r in run.rules if r.verdict == "undecided")
    if run.config is None:
        report.skipped.append(f"entry: undecided: {run.undecided}; the config is judged as "
                              "loaded, before the entry's edits")
    with entry_chosen(run.algorithm):
        yield run.config if run.config is not None else config


def _as_the_suite_launches(report: ConfigReport, overrides: Sequence[str], *,
                           world_size: int | None, verify: bool, only_read_env: bool,
                           revision: Revision) -> None:
    """A bare recipe's refusal that upstream's own launch of it escapes (its suite script
    exports the variable the rule reads: `NRL_IGNORE_TP_ACCURACY_CHECK=1`) keeps the tree's
    whole message, and gains a note naming that launch and the variables that clear it."""
    import dataclasses

    from nemo_rl_workers.checks.config.launch_entry import shown_path

    suite = report.suite
    assert suite is not None

    def held(environ: Mapping[str, str]) -> set[tuple[str, str]]:
        launched = analyze_file(report.config, [*suite.overrides, *overrides],
                                world_size=world_size, verify=verify, preflight=True,
                                world_size_from_config=world_size is None,
                                only_read_env=only_read_env, revision=revision,
                                launch=dataclasses.replace(suite, environ=environ))
        return {(p.rule, p.message) for p in launched.problems}

    refused = [p for p in report.problems if p.rule == "tree.refuses"]
    if not refused:
        return
    as_launched = held(suite.environ)
    cleared = [p for p in refused if (p.rule, p.message) not in as_launched]
    if not cleared:
        return
    # The exported variables that clear it each alone (`PYTHONPATH` does not).
    alone = [name for name in sorted(suite.environ) if any(
        (p.rule, p.message) not in held({name: suite.environ[name]}) for p in cleared)]
    names = alone or sorted(suite.environ)
    exported = ", ".join(f"{name}={suite.environ[name]}" for name in names)
    script = shown_path(suite.script or "", report.config)
    for problem in cleared:
        report.warnings.append(
            f"{problem.path}: {script} launches this recipe with {exported} exported, and "
            f"as launched the tree does not refuse it (nemo-rl-workers check {script})")


def _environ(launch: Launch | None) -> Mapping[str, str]:
    """What the run's code reads from `os.environ`: this process's, with what the launch
    exports."""
    if launch is None or not launch.environ:
        return ENVIRON
    return Exported(launch.environ)


def _analyzed(path: str, config: dict[str, Any], lines: Lines, report: ConfigReport,
              revision: Revision | None, launch: Launch | None, *, world_size: int | None,
              verify: bool, preflight: bool, world_size_from_config: bool) -> ConfigReport:
    """The rules on the config as its run holds it."""
    exported = launch is not None and bool(launch.environ)
    if world_size is None and world_size_from_config and revision is not None and \
            not revision.is_reference:
        from nemo_rl_workers.checks.config.derived_answers import cached_world_size

        if exported:  # the launch's own variables: not this process's, not kept
            world_size, report.world_size_from = _tree_world_size(config, revision,
                                                                  _environ(launch))
        else:
            (world_size, report.world_size_from), said = cached_world_size(
                revision, config, functools.partial(_tree_world_size, config, revision))
            report.cache_notes.extend(said)
    elif world_size is None and world_size_from_config:
        from nemo_rl_workers.model.cluster_size import policy_world_size

        size = policy_world_size(config)
        world_size, report.world_size_from = size.world_size, size.how
        report.problems.extend(size.problems)
    report.world_size = world_size
    if revision is not None and not revision.is_reference:
        analyze_for_tree(config, report, revision, world_size=world_size, verify=verify,
                         preflight=preflight,
                         environ=_environ(launch) if exported else None)
    else:
        analyze_config(config, report, world_size=world_size, verify=verify,
                       preflight=preflight)
    from nemo_rl_workers.reading.loader import defaults_line

    report.problems = [locate(path, lines, p) for p in report.problems]
    report.lines, report.defaults_line = lines, defaults_line(path)
    # -- the user's driver as the entry (issue 44, item 3): the class it hands a driver of
    # a tree that takes it only in code, judged as a config-selected one; its problems are
    # located at the driver's lines, so this runs after the config's are located.
    from nemo_rl_workers.tree.launch import NAMED

    if launch is not None and launch.entry is not None and launch.entry_why == NAMED and \
            revision is not None and not revision.is_reference:
        from nemo_rl_workers.checks.config.driver_extension import judge_driver

        judge_driver(launch.entry, config, report, revision)
    # A rule met on two sections (a student's and a teacher's Policy) is one line.
    report.skipped = list(dict.fromkeys(report.skipped))
    report.warnings = list(dict.fromkeys(report.warnings))
    return report


def _tree_world_size(config: dict[str, Any], revision: Revision,
                     environ: Mapping[str, str]) -> tuple[int | None, str | None]:
    """The world size a tree's own setup computes for the config, and how (or
    "undecided: why"); (None, None) where its entry builds no cluster the model records.
    The reference's `cluster:` arithmetic is the reference's, not the tree's. `environ`:
    what the setup's code reads from `os.environ`."""
    from nemo_rl_workers.checks.config.tree_world_size import tree_world_size

    size = tree_world_size(config, revision, environ)
    if size is None:
        return None, None
    return size.size, size.how if size.size is not None else f"undecided: {size.how}"


def load_for_check(path: str, overrides: Sequence[str] = (),
                   kept: LoadAnswers | None = None) -> LoadedConfig:
    """The config as `check` loads it: an interpolation of an unset environment variable
    outside the parts the rules read (a recipe's `data:` paths under `$HF_HOME`) keeps its
    text instead of failing the load; where a rule reads it, the load fails as before.
    `kept`: where parses and resolutions made before are kept (the tree model's cache)."""
    from nemo_rl_workers.reading.loader import load_config_located

    return load_config_located(path, overrides, needed=read_by_checks, kept=kept)


def analyze_config(
    config: dict[str, Any],
    report: ConfigReport,
    *,
    world_size: int | None,
    verify: bool,
    preflight: bool,
) -> None:
    """Fill `report` with every problem of every rule for a loaded config."""
    from nemo_rl_workers.model.config_rules import config_rules

    rules = config_rules(config, world_size=world_size, preflight=preflight)
    report.problems.extend(rules.problems)
    report.warnings.extend(rules.warnings)
    report.skipped.extend(rules.skipped)
    resolutions, problems = resolve_sections(config)
    # A section the outdated rules reject (renamed keys, no single backend) cannot be
    # resolved meaningfully; their problems say enough.
    stale = {p.path.split(".")[0] for p in rules.problems if not p.rule.startswith("preflight")}
    report.problems.extend(p for p in problems if p.path.split(".")[0] not in stale)
    report.workers.extend(resolutions)
    for res in resolutions:
        report.warnings.extend(res.warnings)
    if not verify:
        return
    from nemo_rl_workers.checks.contract.contract_check import resolution_problems

    for res in resolutions:
        section = section_at(config, res.section)
        report.problems.extend(resolution_problems(res, section or {}, report.skipped))


def analyze_for_tree(
    config: dict[str, Any],
    report: ConfigReport,
    revision: Revision,
    *,
    world_size: int | None,
    verify: bool,
    preflight: bool,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Every rule for a loaded config, as the NeMo-RL tree `revision` has them: its own
    schema, its table and switches, its registry, and the audit's findings on the classes
    it would start (see `revision_rules`). `environ`: what the tree's code reads from
    `os.environ` (None: this process's)."""
    from nemo_rl_workers.checks.config.revision_rules import (
        judge_sections,
        own_schema,
        schema_view,
        scoped_findings,
    )
    from nemo_rl_workers.model.config_rules import config_rules, merge_problems
    from nemo_rl_workers.tree.revision import NEW_SCHEMA, OLD_SCHEMA

    known = revision.schema in (NEW_SCHEMA, OLD_SCHEMA)
    # The reference's preflight rules are the reference's: this tree's are its own.
    rules = config_rules(schema_view(config, revision), world_size=world_size,
                         preflight=False, outdated=known)
    report.problems.extend(own_schema(p, revision) for p in rules.problems)
    report.warnings.extend(rules.warnings)
    report.skipped.extend(rules.skipped)
    if not known:
        report.revision_notes.append("outdated-key rules: not applied, this NeMo-RL's schema "
                                     "is undecided (see its undecided reasons)")
    if revision.schema == OLD_SCHEMA:
        report.revision_notes.append(
            f"outdated-key rules: this NeMo-RL reads {OLD_SCHEMA}"
            f"{' with _v2' if revision.has_v2 else ''}, so its configs' keys are current")
    verdict = judge_sections(config, revision)
    merge_problems(report.problems, verdict.problems)  # one problem per path: the rules' first
    if preflight:
        from nemo_rl_workers.checks.config.tree_rules import tree_rule_report

        own = tree_rule_report(config, revision, [
            (path, driver) for path, driver in verdict.drivers.items()
            if path not in verdict.through], environ=environ,
            sizes=_cluster_sizes(config, revision))
        merge_problems(report.problems, own.problems)
        report.skipped.extend(own.undecided)
        report.skipped.extend(
            f"tree rules of {build.driver}.__init__: not run: it is built through a call "
            f"({build.via}) whose arguments these rules do not bind to its parameters"
            for build in verdict.through.values())
        report.cache_notes.extend(own.notes)
    report.workers.extend(verdict.resolutions)
    report.warnings.extend(verdict.warnings)
    report.skipped.extend(verdict.notes)
    if verify:
        from nemo_rl_workers.checks.config.derived_answers import cached_findings

        reached, not_run, said = cached_findings(
            revision, config, lambda: scoped_findings(revision, verdict, config))
        report.cache_notes.extend(said)
        report.warnings.extend(f"audit: {line}" for line in reached)
        report.skipped.extend(not_run)


def _cluster_sizes(config: Mapping[str, Any], revision: Revision) -> ClusterSizes:
    """What a driver's `cluster.world_size()` is: the size the entry's setup computes for
    the cluster it builds that driver on (`tree_world_size`), where decided."""
    from nemo_rl_workers.checks.config.tree_world_size import tree_world_size

    def size(driver: str, environ: Mapping[str, str]) -> tuple[int, tuple[Read, ...]] | None:
        found = tree_world_size(config, revision, environ, driver)
        return None if found is None or found.size is None else (found.size, found.reads)

    return size
