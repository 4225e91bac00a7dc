"""`nemo-rl-workers`: the entry point. Parses the command line (`options`), runs the one
command asked for, importing only what that command needs, and keeps every stream safe.

Exit codes (also in `--help`): 0 no problem, 1 problems found, 2 unusable input,
70 internal error, 74 output cannot be written, 130 interrupted, 141 output pipe closed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO, cast

from nemo_rl_workers.commands.config_reports import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_UNUSABLE,
    check_recipe,
    config_revisions,
    emit_reports,
)
from nemo_rl_workers.commands.options import build_parser, chosen_format
from nemo_rl_workers.commands.streams import OutputFailed, SafeStream, silence_stdout
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.formats import STRUCTURED

if TYPE_CHECKING:
    from nemo_rl_workers.checks.config_check import ConfigReport
    from nemo_rl_workers.commands.verify_tree import Judged

EXIT_INTERNAL = 70  # sysexits' EX_SOFTWARE: a bug in this program, never a verdict on the input
EXIT_OUTPUT = 74  # sysexits' EX_IOERR: stdout or stderr cannot be written (a full disk, closed)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader went away (`| head`); nothing more is written
INTERNAL_ERROR_PREFIX = "nemo-rl-workers-internal-error-"
TREE_NOT_CHECKED = ("the constructor binding and the required base class: the tree's "
                    "builder is not modelled (--base requires one)")


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """The command, with every stream made safe and a safety net under it. `run` is the
    user's program: its own streams, exceptions and exit status (commands.run)."""
    if out is None and err is None:
        given = list(sys.argv[1:] if argv is None else argv)
        if given[:1] == ["run"]:
            from nemo_rl_workers.commands.run import run_command

            return run_command(given[1:], preflight=check_recipe)
        from nemo_rl_workers.tree.source_kept import freeze_kept_models

        freeze_kept_models()  # the process is the command's own (see tree.source_kept)
    # SafeStream is a TextIOBase; the commands only write, print and ask isatty.
    safe_out = cast(TextIO, SafeStream(out if out is not None else sys.stdout))
    safe_err = cast(TextIO, SafeStream(err if err is not None else sys.stderr))
    try:
        code = _run(argv, safe_out, safe_err)
        safe_out.flush()
        safe_err.flush()
        checked = sys.modules.get("nemo_rl_workers.checks.contract_check")
        if out is None and checked is not None and checked.ABANDONED:
            # A verification still runs past its bound; interpreter shutdown could wait on
            # it (an import lock, a non-daemon thread it started): end the process now.
            os._exit(code)
        return code
    except BrokenPipeError:
        if out is None:
            silence_stdout()
        return EXIT_BROKEN_PIPE
    except OutputFailed as failed:
        if out is None:
            silence_stdout()
        with contextlib.suppress(OutputFailed, BrokenPipeError):  # stderr may be the one
            print(f"nemo-rl-workers: cannot write the output: {failed.reason}", file=safe_err)
            safe_err.flush()
        return EXIT_OUTPUT
    except KeyboardInterrupt:
        print("nemo-rl-workers: interrupted", file=safe_err)
        return EXIT_INTERRUPTED
    except BaseException as error:  # noqa: BLE001 - the safety net: a bug, reported as such
        return _internal_error(error, safe_err, sys.argv[1:] if argv is None else argv)


def _internal_error(error: BaseException, err: TextIO, argv: Sequence[str]) -> int:
    """One line naming the exception and the file holding its traceback; never a traceback.
    The file goes to the tool's cache folder (`--cache-dir`, else the user's), else, where
    that cannot be written, to the temporary folder, the line saying why."""
    from nemo_rl_workers.commands.cache import report_dir

    text = "".join(traceback.format_exception(error))
    folder = report_dir(argv)
    try:
        where = f"the traceback is in {_save_traceback(text, folder)}"
    except OSError as unwritable:
        why = f"{folder} cannot be written: {unwritable.strerror or unwritable}"
        try:
            where = f"the traceback is in {_save_traceback(text, None)} ({why})"
        except OSError as e:
            where = f"the traceback could not be saved ({why}; nor in {tempfile.gettempdir()}" \
                    f": {e.strerror or e})"
    print(
        f"nemo-rl-workers: internal error ({type(error).__name__}); {one_line(where)}; "
        "please report it with that file",
        file=err,
    )
    return EXIT_INTERNAL


def _save_traceback(text: str, folder: str | None) -> str:
    """The file `text` was written to, a new one in `folder` (made, for the user alone,
    where missing; None: the temporary folder)."""
    if folder is not None:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", prefix=INTERNAL_ERROR_PREFIX, suffix=".txt", dir=folder, delete=False,
        encoding="utf-8", errors="backslashreplace",
    ) as f:
        f.write(text)
    return f.name


def _run(argv: Sequence[str] | None, out: TextIO, err: TextIO) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["migrate"]:
        if _registry_unusable(err):
            return EXIT_UNUSABLE
        from nemo_rl_workers.commands.migrate import run_migrate
        from nemo_rl_workers.commands.structured import run_migrate_check, wants_format

        if wants_format(args_list[1:]):
            return run_migrate_check(args_list[1:], out, err)

        return run_migrate(args_list[1:], out, err)
    try:
        # argparse writes usage errors and --help to the process streams; keep them ours.
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = build_parser().parse_args(args_list)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_UNUSABLE
    if args.command in ("check", "verify", "audit"):
        from nemo_rl_workers.findings.formats import unavailable

        fmt = chosen_format(args)
        problem = (f"--json and --output-format {args.output_format} disagree; give one"
                   if fmt is None else unavailable(fmt))
        if problem is not None:
            print(f"nemo-rl-workers: {problem}", file=err)
            return EXIT_UNUSABLE
    if args.command in ("resolve", "check") and _registry_unusable(err):
        return EXIT_UNUSABLE
    if args.command == "resolve":
        return _resolve(args, out, err)
    if args.command == "check":
        return _check(args, out, err)
    if args.command == "explain":
        from nemo_rl_workers.commands.explain import run_explain

        return run_explain(args.rule, args.json, out, err)
    if args.command == "list":
        from nemo_rl_workers.commands.listing import run_list

        return run_list(args, out, err)
    if args.command == "audit":
        from nemo_rl_workers.commands.audit_cache import run_audit_cached

        return run_audit_cached(args, out, err)
    return _verify(args, out, err)


def _registry_unusable(err: TextIO) -> bool:
    """A registration that cannot be loaded (a stale entry point) stops a command that
    resolves: one line naming it, exit 2, rather than verdicts from a partial table."""
    from nemo_rl_workers.model.registry import RegistryError, default_registry

    try:
        default_registry()
    except RegistryError as bad:
        print(f"nemo-rl-workers: {bad}", file=err)
        return True
    return False


def _resolve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.checks.config_check import analyze_file

    revisions = config_revisions(args, [args.config], err)
    if revisions is None:
        return EXIT_UNUSABLE
    report = analyze_file(
        args.config, args.overrides, world_size=None, verify=False, preflight=False,
        revision=revisions[args.config],
    )
    return emit_reports([report], args.json, out, err)


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.checks.config_check import ConfigReport, analyze_file
    from nemo_rl_workers.commands.launch_inputs import launch_inputs, undecided_launch
    from nemo_rl_workers.model.preflight import world_size_from
    from nemo_rl_workers.tree.launch import NAMED, Launch

    try:
        world_size = world_size_from(args.nodes, args.gpus_per_node, args.world_size)
    except ValueError as bad:
        print(f"nemo-rl-workers: {bad}", file=err)
        return EXIT_UNUSABLE
    verify = not (args.no_verify or args.static)
    flags_given = world_size is not None
    nodes: list[dict[str, float]] | None = None
    if args.cluster_resources is not None or args.address is not None:
        from nemo_rl_workers.checks.cluster_check import (
            ClusterUnusable,
            nodes_at_address,
            nodes_from_file,
        )

        try:
            nodes = (nodes_from_file(args.cluster_resources) if args.cluster_resources is not None
                     else nodes_at_address(args.address))
        except ClusterUnusable as bad:
            print(f"nemo-rl-workers: {bad}", file=err)
            return EXIT_UNUSABLE
    baseline = None
    if wants_baseline(args):
        from nemo_rl_workers.commands.check_baseline import CheckBaseline

        baseline = CheckBaseline.start(args, err)
        if baseline is None:
            return EXIT_UNUSABLE
    given, overrides = split_overrides(args.configs)
    if not given:
        print("nemo-rl-workers: check needs a config file or folder, not only overrides",
              file=err)
        return EXIT_UNUSABLE
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
    if baseline is not None and not baseline.settle(reports, err):
        return EXIT_UNUSABLE
    if args.output_format in STRUCTURED:
        from nemo_rl_workers.commands.structured import emit_check

        code = emit_check(reports, args.output_format, out, err)
    else:
        code = emit_reports(reports, args.json, out, err, quiet=not args.verbose,
                            summary=not args.verbose)
    return code if baseline is None else baseline.exit_code(code, err)


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

    from nemo_rl_workers.checks.config_check import ConfigReport
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
    import os

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
    from nemo_rl_workers.checks.cluster_check import fit_findings
    from nemo_rl_workers.checks.config_check import load_for_check
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


def _verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.model.fqn import fqn_problem
    from nemo_rl_workers.model.protocols import load_protocol

    protocol, unknown = load_protocol(args.protocol)
    if protocol is None:
        print(
            f"nemo-rl-workers: unknown protocol {args.protocol!r}: {unknown}",
            file=err,
        )
        return EXIT_UNUSABLE
    for value, what in ((args.fqn, "FQN"), (args.base, "--base")):
        if value is not None and (problem := fqn_problem(value, what)) is not None:
            print(f"nemo-rl-workers: {problem.message}", file=err)
            return EXIT_UNUSABLE
    # The NeMo-RL judged (commands.verify_tree): the class (and its bases) are taken from
    # that tree first, and a built-in contract stands for that tree's Protocol of its role.
    from nemo_rl_workers.commands.verify_tree import judged_against

    judged = judged_against(args, err)
    if judged is None:
        return EXIT_UNUSABLE
    tree_root = judged.tree_root
    if args.static:
        from nemo_rl_workers.commands.static import verify_static

        return verify_static(args, out, err, judged)
    if tree_root is not None:
        # The tree's modules are imported for this verdict only: a process that runs the
        # command in-process (the pytest plugin) keeps its own `nemo_rl` afterwards.
        package = args.fqn.split(".")[0]
        kept = {name: module for name, module in sys.modules.items()
                if name == package or name.startswith(f"{package}.")}
        for name in kept:
            del sys.modules[name]
        sys.path.insert(0, tree_root)
        try:
            return _verify_imported(args, protocol, out, err, judged)
        finally:
            sys.path.remove(tree_root)
            for name in [n for n in sys.modules if n == package or n.startswith(f"{package}.")]:
                del sys.modules[name]
            sys.modules.update(kept)
    return _verify_imported(args, protocol, out, err, judged)


def _verify_imported(args: argparse.Namespace, protocol: type, out: TextIO,
                     err: TextIO, judged: Judged) -> int:
    """`verify` by importing the class (in its own thread, bounded); against a tree's
    Protocol (`judged.protocol`), run from its text once the class is imported."""
    from contracts import check as check_contract
    from nemo_rl_workers.checks.builder_defaults import BuilderDefaults, builder_defaults
    from nemo_rl_workers.checks.contract_check import (
        import_class,
        isolated,
        vllm_extension_problems,
    )
    from nemo_rl_workers.model.registry import RegistryError, default_registry
    try:
        registry = default_registry()
    except RegistryError as bad:
        print(f"nemo-rl-workers: {bad}", file=err)
        return EXIT_UNUSABLE

    def examine() -> tuple[str | None, dict[str, Any]]:
        """Import and verify, as plain data: runs isolated, the class is untrusted code."""
        cls, failure = import_class(args.fqn, "FQN", "a class")
        base, base_failure = (
            import_class(args.base, "--base", "a class") if args.base else (None, None)
        )
        for found in (failure, base_failure):
            if found is not None:  # (path, expected, given, message, rule)
                return found[3], {}
        assert cls is not None
        if judged.protocol is not None:  # the tree's Protocol; its builder is not modelled
            from nemo_rl_workers.guard.worker_check import loaded_protocol

            builder = BuilderDefaults(args.role, None, base, args.base, (), (TREE_NOT_CHECKED,))
            with loaded_protocol(judged.protocol.text, judged.protocol.name) as tree_protocol:
                report = check_contract(cls, tree_protocol, base=base)
        else:
            # What the builder will require, where --role / --base do not say (the
            # Protocol's rows).
            builder = builder_defaults(cls, args.fqn, args.protocol, role=args.role, base=base,
                                       base_fqn=args.base, registry=registry)
            report = check_contract(cls, protocol, base=builder.base,
                                    init_call=builder.init_call)
        violations = report.violations + builder.violations
        # The extension it hands vLLM, by vLLM's own clash rule (installed vllm-stubs).
        clashes = vllm_extension_problems(cls, args.fqn, "")
        return None, {
            "class": args.fqn,
            "protocol": args.protocol,
            "ok": bool(report.ok) and not builder.violations and not clashes,
            "violations": [
                {"member": str(v.member), "rule": str(v.rule), "message": str(v)}
                for v in violations
            ] + [
                {"member": clash[2], "rule": clash[4], "message": clash[3]}
                for clash in clashes
            ],
            "undecidable": [
                {"member": str(v.member), "rule": str(v.rule), "message": str(v)}
                for v in report.undecidable
            ],
            "skipped": [str(note) for note in report.skipped],
            "role": builder.role,
            "base": builder.base_fqn,
            "inferred": list(builder.inferred),
            "not_checked": list(builder.not_checked),
        }

    done, why = isolated(examine)
    if done is None:  # raised past the verifier, or still running at the time bound
        message = f"{args.fqn} could not be verified against {args.protocol}: {why}"
        failed: dict[str, Any] = {
            "class": args.fqn, "protocol": args.protocol, "ok": False,
            "violations": [{"member": "", "rule": "isolation", "message": message}],
            "undecidable": [], "skipped": [], "role": args.role, "base": args.base,
            "inferred": [], "not_checked": [],
        }
        done = None, failed
    unusable, payload = done
    if unusable is not None:
        print(f"nemo-rl-workers: {unusable}", file=err)
        return EXIT_UNUSABLE
    if args.output_format in STRUCTURED:
        from nemo_rl_workers.commands.structured import emit_verify

        return emit_verify(payload, args.output_format, out, err)
    if args.json:
        json.dump(payload | judged.as_json(), out, indent=2)
        out.write("\n")
    else:
        if judged.line is not None:
            print(judged.line, file=out)
        if payload["ok"]:
            contract = (judged.protocol.described() if judged.protocol is not None
                        else args.protocol)
            print(f"{args.fqn} implements {contract}", file=out)
        for violation in payload["violations"]:
            print(one_line(violation["message"]), file=out)
        for line in payload["undecidable"]:
            print(f"undecidable: {one_line(line['message'])}", file=out)
        for note in payload["skipped"]:
            print(f"skipped: {one_line(note)}", file=out)
        if payload["inferred"]:
            inferred = "; ".join(payload["inferred"])
            print(f"checked as the builder will run it: {inferred}", file=out)
        for note in payload["not_checked"]:
            print(f"not checked: {one_line(note)}", file=out)
    return EXIT_OK if payload["ok"] else EXIT_PROBLEMS
