"""`nemo-rl-workers`: resolve, check, verify and migrate worker configs from a shell or CI.

Exit codes: 0 no problem, 1 problems found, 2 unusable input. Unusable input is
always one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from nemo_rl.workers.report import ConfigReport, render_text, report_json, use_color

EXIT_OK, EXIT_PROBLEMS, EXIT_UNUSABLE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_UNUSABLE, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="nemo-rl-workers", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    resolve = sub.add_parser("resolve", help="show which worker class runs each section")
    resolve.add_argument("config")
    resolve.add_argument(
        "overrides",
        nargs="*",
        metavar="OVERRIDE",
        help="dotted overrides, e.g. policy.quant_cfg=FP8_DEFAULT_CFG",
    )
    resolve.add_argument("--json", action="store_true", help="one JSON object on stdout")

    check = sub.add_parser("check", help="run every pre-allocation rule on many configs")
    check.add_argument("configs", nargs="+", metavar="CONFIG")
    check.add_argument("--json", action="store_true")
    size_help = "overrides the world size the config's cluster: section gives"
    check.add_argument("--world-size", type=int, default=None, help=size_help)
    check.add_argument("--nodes", type=int, default=None, help=size_help)
    check.add_argument("--gpus-per-node", type=int, default=None, help=size_help)
    check.add_argument(
        "--no-verify", action="store_true", help="skip importing and verifying the resolved classes"
    )

    verify = sub.add_parser("verify", help="verify one class against a contract Protocol")
    verify.add_argument("fqn")
    verify.add_argument("--protocol", required=True)
    verify.add_argument(
        "--base", default=None,
        help="FQN of a required base class (default: inferred from --protocol's rows)")
    verify.add_argument(
        "--role",
        choices=("policy", "generation"),
        default=None,
        help="the role whose builder arguments the constructor must bind "
        "(default: inferred from --protocol)",
    )
    verify.add_argument("--json", action="store_true")

    listing = sub.add_parser("list", help="show every worker row and registered extension")
    listing.add_argument("--json", action="store_true", help="one JSON object on stdout")

    sub.add_parser("migrate", help="rewrite outdated configs (see migrate --help)", add_help=False)
    return parser


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["migrate"]:
        from nemo_rl.config.migrate import run_migrate

        return run_migrate(args_list[1:], out, err)
    try:
        # argparse writes usage errors and --help to the process streams; keep them ours.
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = _parser().parse_args(args_list)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_UNUSABLE
    if args.command == "resolve":
        return _resolve(args, out, err)
    if args.command == "check":
        return _check(args, out, err)
    if args.command == "list":
        from nemo_rl.workers.listing import run_list

        return run_list(args.json, out, err)
    return _verify(args, out, err)


def _emit(reports: list[ConfigReport], as_json: bool, out: TextIO, err: TextIO) -> int:
    for report in reports:
        if report.unusable is not None:
            print(f"nemo-rl-workers: {report.config}: {report.unusable}", file=err)
    if as_json:
        payload: dict[str, Any] = (
            report_json(reports[0])
            if len(reports) == 1
            else {"configs": [report_json(r) for r in reports]}
        )
        json.dump(payload, out, indent=2)
        out.write("\n")
    else:
        color = use_color(out)
        usable = [render_text(r, color=color) for r in reports if r.unusable is None]
        if usable:
            print("\n\n".join(usable), file=out)
    if any(r.unusable is not None for r in reports):
        return EXIT_UNUSABLE
    return EXIT_PROBLEMS if any(r.problems for r in reports) else EXIT_OK


def _resolve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl.workers.analysis import analyze_file

    report = analyze_file(
        args.config, args.overrides, world_size=None, verify=False, preflight=False
    )
    return _emit([report], args.json, out, err)


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl.config.preflight import world_size_from
    from nemo_rl.workers.analysis import analyze_file

    try:
        world_size = world_size_from(args.nodes, args.gpus_per_node, args.world_size)
    except ValueError as bad:
        print(f"nemo-rl-workers: {bad}", file=err)
        return EXIT_UNUSABLE
    flags_given = world_size is not None
    reports = [
        analyze_file(path, (), world_size=world_size, verify=not args.no_verify, preflight=True,
                     world_size_from_config=not flags_given)
        for path in args.configs
    ]
    return _emit(reports, args.json, out, err)


def _verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from contracts import PROTOCOLS
    from contracts import check as check_contract
    from nemo_rl.workers.builder_defaults import builder_defaults
    from nemo_rl.workers.contract_check import import_class
    from nemo_rl.workers.fqn import fqn_problem
    from nemo_rl.workers.registry import RegistryError, default_registry

    protocol = PROTOCOLS.get(args.protocol)
    if protocol is None:
        print(
            f"nemo-rl-workers: unknown protocol {args.protocol!r}; "
            f"known: {', '.join(sorted(PROTOCOLS))}",
            file=err,
        )
        return EXIT_UNUSABLE
    for value, what in ((args.fqn, "FQN"), (args.base, "--base")):
        if value is not None and (problem := fqn_problem(value, what)) is not None:
            print(f"nemo-rl-workers: {problem.message}", file=err)
            return EXIT_UNUSABLE
    cls, failure = import_class(args.fqn, "FQN", "a class")
    base, base_failure = import_class(args.base, "--base", "a class") if args.base else (None, None)
    for found in (failure, base_failure):
        if found is not None:  # (path, expected, given, message, rule)
            print(f"nemo-rl-workers: {found[3]}", file=err)
            return EXIT_UNUSABLE
    assert cls is not None
    try:
        registry = default_registry()
    except RegistryError as bad:
        print(f"nemo-rl-workers: {bad}", file=err)
        return EXIT_UNUSABLE
    # What the builder will require, where --role / --base do not say (the Protocol's rows).
    builder = builder_defaults(cls, args.fqn, args.protocol, role=args.role, base=base,
                               base_fqn=args.base, registry=registry)
    checked = check_contract(cls, protocol, base=builder.base, init_call=builder.init_call)
    report = dataclasses.replace(checked, violations=checked.violations + builder.violations)
    if args.json:
        json.dump(
            {
                "class": args.fqn,
                "protocol": args.protocol,
                "ok": report.ok,
                "violations": [
                    {"member": v.member, "rule": v.rule, "message": str(v)}
                    for v in report.violations
                ],
                "skipped": list(report.skipped),
                "role": builder.role,
                "base": builder.base_fqn,
                "inferred": list(builder.inferred),
                "not_checked": list(builder.not_checked),
            },
            out,
            indent=2,
        )
        out.write("\n")
    else:
        if report.ok:
            print(f"{args.fqn} implements {args.protocol}", file=out)
        for violation in report.violations:
            print(str(violation), file=out)
        for note in report.skipped:
            print(f"skipped: {note}", file=out)
        if builder.inferred:
            print(f"checked as the builder will run it: {'; '.join(builder.inferred)}", file=out)
        for note in builder.not_checked:
            print(f"not checked: {note}", file=out)
    return EXIT_OK if report.ok else EXIT_PROBLEMS
