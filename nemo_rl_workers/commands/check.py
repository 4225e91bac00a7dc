"""`nemo-rl-workers check CONFIG... [KEY=VALUE...]`: every pre-allocation rule on many
configs (files, or folders of them), each judged against the NeMo-RL it belongs to.

Exit codes: 0 no problem, 1 problems found (with a baseline: problems it does not record,
`commands.check_baseline`), 2 unusable input (a bad size flag, cluster, baseline, tree or
config).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.check_output import config_revisions, emit_reports
from nemo_rl_workers.findings.exit_codes import EXIT_UNUSABLE, verdict
from nemo_rl_workers.findings.formats import STRUCTURED
from nemo_rl_workers.findings.reporter import Reporter

if TYPE_CHECKING:
    from nemo_rl_workers.checks.config.config_report import ConfigReport
    from nemo_rl_workers.tree.launch import Launch


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.checks.config.config_check import analyze_file
    from nemo_rl_workers.checks.config.config_report import ConfigReport
    from nemo_rl_workers.commands.launch_inputs import launch_inputs, undecided_launch
    from nemo_rl_workers.model.preflight import world_size_from
    from nemo_rl_workers.tree.launch import NAMED, Launch

    say = Reporter(out, err)
    try:
        world_size = world_size_from(args.nodes, args.gpus_per_node, args.world_size)
    except ValueError as bad:
        return say.unusable(str(bad))
    verify = not (args.no_verify or args.static)
    flags_given = world_size is not None
    nodes: list[dict[str, float]] | None = None
    if args.cluster_resources is not None or args.address is not None:
        from nemo_rl_workers.checks.cluster.cluster_check import (
            ClusterUnusable,
            nodes_at_address,
            nodes_from_file,
        )

        try:
            nodes = (nodes_from_file(args.cluster_resources) if args.cluster_resources is not None
                     else nodes_at_address(args.address))
        except ClusterUnusable as bad:
            return say.unusable(str(bad))
    baseline = None
    if wants_baseline(args):
        from nemo_rl_workers.commands.check_baseline import CheckBaseline

        baseline = CheckBaseline.start(args, say)
        if baseline is None:
            return EXIT_UNUSABLE
    given, overrides = split_overrides(args.configs)
    if not given:
        return say.unusable("check needs a config file or folder, not only overrides")
    named = getattr(args, "entry", None)
    items = [Launch(item, tuple(overrides), entry=named, entry_why=NAMED)
             if isinstance(item, str) and named else item
             for item in launch_inputs(_config_inputs(given))]
    files = [item if isinstance(item, str) else item.config for item in items
             if not isinstance(item, ConfigReport) and not _undecided(item)]
    revisions = config_revisions(args, files, err)
    if revisions is None:
        return EXIT_UNUSABLE
    # Against another tree, "verify" is the audit's findings on the classes a section
    # starts, read from source: --static asks for it too.
    audit_too = args.static and not args.no_verify

    def judged(item: str | Launch) -> ConfigReport:
        if isinstance(item, Launch) and item.undecided is not None:
            return undecided_launch(item)
        config = item if isinstance(item, str) else item.config
        given = overrides if isinstance(item, str) or item.script is None else [
            *item.overrides, *overrides]
        return analyze_file(config, given, world_size=world_size,
                            verify=verify or (audit_too and not revisions[config].is_reference),
                            preflight=True, world_size_from_config=not flags_given,
                            only_read_env=True, revision=revisions[config],
                            launch=item if isinstance(item, Launch) else None)

    reports = [item if isinstance(item, ConfigReport) else judged(item) for item in items]
    if nodes is not None:
        _add_fit_findings(reports, nodes, args, overrides)
    if args.static and not args.no_verify:
        from nemo_rl_workers.commands.static import add_static_problems

        if not add_static_problems(reports, args.checker, err, args):
            return EXIT_UNUSABLE
    if baseline is not None and not baseline.settle(reports, say):
        return EXIT_UNUSABLE
    if args.output_format in STRUCTURED:
        code = _emit_structured(reports, args.output_format, say)
    else:
        code = emit_reports(reports, args.json, out, err, quiet=not args.verbose,
                            summary=not args.verbose)
    return code if baseline is None else baseline.exit_code(code, say)


def _emit_structured(reports: Sequence[ConfigReport], fmt: str, say: Reporter) -> int:
    """`check --output-format github|sarif|junit`: the reports in `fmt`, the same exit code."""
    from nemo_rl_workers.findings.adapters import check_results
    from nemo_rl_workers.findings.check_output import say_cache_notes

    say_cache_notes(reports, say.err)
    for report in reports:
        if report.unusable is not None:
            say.notice(f"{report.config}: {report.unusable}")
    if not say.results(check_results(reports), fmt):
        return EXIT_UNUSABLE
    if any(r.unusable is not None for r in reports):
        return EXIT_UNUSABLE
    return verdict(any(r.problems for r in reports))


def _undecided(item: object) -> bool:
    return getattr(item, "undecided", None) is not None


def wants_baseline(args: argparse.Namespace) -> bool:
    """Whether `check` was given a baseline option (a caller's namespace may lack them)."""
    return any(getattr(args, name, None) for name in
               ("baseline", "write_baseline", "fail_on_stale", "prune_baseline"))


def _config_inputs(configs: Sequence[str]) -> list[str | ConfigReport]:
    """Each file as given; a folder stands for its *.yaml / *.yml files, as for `migrate`
    (sorted, dot-files skipped, symlinked folders not entered; one already named is not
    checked twice). A folder without any is unusable input: a report saying so."""
    from pathlib import Path

    from nemo_rl_workers.checks.config.config_report import ConfigReport
    from nemo_rl_workers.reading.migrate_files import expand_inputs, is_dir, real_path
    from nemo_rl_workers.reading.yaml_edits import MigrationError

    items: list[str | ConfigReport] = []
    seen: set[Path] = set()
    for given in configs:
        if not is_dir(Path(given)):
            items.append(given)
            seen.add(real_path(Path(given)))
            continue
        try:
            found = [str(file) for file, _ in expand_inputs([Path(given)])]
        except MigrationError as too_big:
            items.append(ConfigReport(config=given, unusable=str(too_big)))
            continue
        if not found:
            items.append(ConfigReport(
                config=given, unusable="no config files (*.yaml, *.yml) in this folder"))
        for file in found:
            if real_path(Path(file)) not in seen:
                seen.add(real_path(Path(file)))
                items.append(file)
    return items


def split_overrides(arguments: Sequence[str]) -> tuple[list[str], list[str]]:
    """(configs, overrides): an argument shaped `dotted.key=value` (what `resolve` takes)
    that names no existing path is an override, applied to every config in turn."""
    from nemo_rl_workers.reading.loader import is_override

    configs: list[str] = []
    overrides: list[str] = []
    for argument in arguments:
        if is_override(argument) and not os.path.lexists(argument):
            overrides.append(argument)
        else:
            configs.append(argument)
    return configs, overrides


def _add_fit_findings(
    reports: list[ConfigReport], nodes: list[dict[str, float]], args: argparse.Namespace,
    overrides: Sequence[str] = (),
) -> None:
    from nemo_rl_workers.checks.cluster.cluster_check import fit_findings
    from nemo_rl_workers.checks.config.config_check import load_for_check
    from nemo_rl_workers.reading.loader import ConfigLoadError

    described = (f"the cluster at {args.address}" if args.address is not None
                 else f"the {len(nodes)} node(s) of {args.cluster_resources}")
    for report in reports:
        if report.unusable is not None:
            continue
        try:
            config = load_for_check(report.config, overrides).config
        except ConfigLoadError:  # analyze_file loaded it already; nothing new to say
            continue
        problems, note = fit_findings(config, nodes, num_nodes=args.nodes,
                                      gpus_per_node=args.gpus_per_node,
                                      described_as=one_line(described))
        report.problems.extend(problems)
        if note is not None:
            report.skipped.append(note)
