"""The command line's grammar: every subcommand, its arguments and its help, the options
commands share (`--nemo-rl`, the cache, the baseline, `--output-format`), and `migrate`'s
own grammar (`migrate_parser`), parsed once.

Built from argparse alone, importing no check, no YAML library and no registry, so
`nemo-rl-workers --help`, `--version` and a usage error cost only the interpreter's start;
each command's module is imported when that command runs (`cli`).
"""

from __future__ import annotations

import argparse
import contextlib
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO, TypeVar

from nemo_rl_workers import __version__
from nemo_rl_workers.findings import exit_codes
from nemo_rl_workers.findings.exit_codes import EXIT_UNUSABLE
from nemo_rl_workers.findings.formats import FORMATS

_DESCRIPTION = f"""`nemo-rl-workers`: resolve, check, verify and migrate worker configs, audit a
NeMo-RL checkout, and explain what a rule means, from a shell or CI.

Exit codes: {exit_codes.summary()}. Unusable input is
always one line on stderr, never a traceback; an internal error (a bug) is one line
naming the file that holds its traceback (in the cache folder, see --cache-dir).
"""


class Formatter(argparse.HelpFormatter):
    """argparse's help, its lines broken at spaces only: a path or a flag in a help text
    stays whole, to be copied (argparse's own also breaks at hyphens)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False,
                             break_long_words=False)


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2; `note` ends the
    line (what the grammar in force accepts, where it is not the command's whole one)."""

    def __init__(self, *args: Any, note: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)
        self.note = note

    def error(self, message: str) -> Any:
        self.exit(EXIT_UNUSABLE, f"{self.prog}: error: {message}{self.note}\n")


def parse(parser: argparse.ArgumentParser, argv: Sequence[str], out: TextIO,
          err: TextIO) -> argparse.Namespace | int:
    """`argv` parsed, or the exit code after argparse's own output (`--help`, `--version`,
    a usage error), written to `out` and `err`, never to the process's streams."""
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            return parser.parse_args(list(argv))
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_UNUSABLE


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="nemo-rl-workers", description=_DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"nemo-rl-workers {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    resolve = sub.add_parser("resolve", help="show which worker class runs each section")
    resolve.add_argument("config", metavar="CONFIG", help="the config file (YAML)")
    resolve.add_argument(
        "overrides",
        nargs="*",
        metavar="OVERRIDE",
        help="dotted overrides, e.g. policy.quant_cfg=FP8_DEFAULT_CFG",
    )
    resolve.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_nemo_rl_flag(resolve)
    add_cache_flags(resolve, TREE_MODELS)

    check = sub.add_parser("check", help="run every pre-allocation rule on many configs")
    check.add_argument("configs", nargs="+", metavar="CONFIG",
                       help="config files, or folders of them (searched for *.yaml, *.yml); "
                            "dotted overrides (key=value, as for resolve) apply to each")
    check.add_argument("--json", action="store_true", help="one JSON object on stdout")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="text: each config's table of workers and every rule it left "
                       "undecided (default: one line per config, its problems and warnings, "
                       "the undecided rules counted once)")
    add_output_format(check)
    size_help = "overrides the world size the config's cluster: section gives"
    check.add_argument("--world-size", type=int, default=None, help=size_help)
    check.add_argument("--nodes", type=int, default=None, help=size_help)
    check.add_argument("--gpus-per-node", type=int, default=None, help=size_help)
    check.add_argument(
        "--no-verify", action="store_true", help="skip importing and verifying the resolved classes"
    )
    fit = check.add_mutually_exclusive_group()
    fit.add_argument(
        "--cluster-resources", metavar="FILE", default=None,
        help="judge whether a cluster of these nodes can ever hold the config's cluster: "
        'shape (JSON: [{"CPU": 64, "GPU": 8}, ...] or json.dumps(ray.nodes()))',
    )
    fit.add_argument(
        "--address", default=None,
        help="the same, for the live nodes of the Ray cluster at this address",
    )
    check.add_argument(
        "--entry", metavar="SCRIPT", default=None,
        help="the entry script or driver that runs the configs (default: the one upstream's "
        "suite script for the recipe runs, else the one the config's shape selects)")
    _static_flags(check, TREE_MODELS, STATIC_VERDICTS)
    add_nemo_rl_flag(check)
    # Entries are (rule, recipe, config key); a recipe is named relative to the file.
    add_baseline_flags(check, "problems", "problem")

    verify = sub.add_parser("verify", help="verify one class against a contract Protocol")
    verify.add_argument(
        "fqn", metavar="FQN",
        help="the dotted name of the class to verify, module.Class (imported in this "
        "environment, or read from source with --static)")
    verify.add_argument(
        "--protocol", required=True, metavar="PROTOCOL",
        help="the contract it must implement: a built-in one's name (PolicyWorker, "
        "GenerationWorker, ...; a name that is none lists them) or the dotted name of a "
        "typing.Protocol class, module.Protocol")
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
    verify.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_output_format(verify)
    _static_flags(verify, STATIC_VERDICTS)
    add_nemo_rl_flag(
        verify,
        "take the class and its bases from this NeMo-RL checkout, ahead of the nemo_rl "
        "this environment imports (default: the environment's)",
        "take them from the nemo_rl this environment imports (the default)")

    listing = sub.add_parser("list", help="show every worker row and registered extension")
    listing.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_nemo_rl_flag(listing, "the NeMo-RL checkout whose table to show (default: the "
                     "nemo_rl this environment imports, else the reference)")
    add_cache_flags(listing, TREE_MODELS)

    sub.add_parser("migrate", help="rewrite outdated configs (see migrate --help)", add_help=False)
    sub.add_parser("run", help="run a NeMo-RL entry point with the runtime guard armed "
                   "(see run --help)", add_help=False)

    explain = sub.add_parser(
        "explain", help="what a rule means: its entries in the guide's catalogue")
    explain.add_argument(
        "rule", nargs="?", default=None, metavar="RULE",
        help="a selection rule (R0-R8), problem rule, contract violation, static or audit "
        "finding, guard refusal, output-format rule or config load error: any rule name a "
        "command prints; without it, every rule")
    explain.add_argument("--json", action="store_true", help="one JSON object on stdout")

    add_audit(sub)
    add_output_format(sub.choices["audit"])
    add_cache_flags(sub.choices["audit"], AUDIT_ANSWERS)
    return parser


# With --output-format or --json, migrate's grammar is --check's alone (nothing is written).
MIGRATE_FORMAT_NOTE = " (--output-format goes with --check only)"
_MIGRATE_DESCRIPTION = ("Rewrite outdated NeMo-RL configs to the current schema, keeping "
                        "comments. Without --in-place or -o, show what would change.")


def migrate_parser(*, formatted: bool = False) -> Parser:
    """`migrate`'s grammar (its own: `migrate --help` is migrate's). `formatted`: the one in
    force when a format is asked for (`wants_format`): the files, --check, --explicit-workers
    and the format; the other options keep their defaults."""
    from nemo_rl_workers.model.resolver import FIELD

    parser = Parser(prog="nemo-rl-workers migrate", add_help=False,
                    description=_MIGRATE_DESCRIPTION,
                    note=MIGRATE_FORMAT_NOTE if formatted else "")
    parser.add_argument("configs", nargs="+", type=Path, metavar="CONFIG",
                        help="config files, or folders of them (searched for *.yaml, *.yml)")
    check_help = "write nothing; exit 1 when any file would change"
    if formatted:
        parser.add_argument("--check", action="store_true", help=check_help)
        parser.set_defaults(in_place=False, output=None, nemo_rl=None, reference=False,
                            cache_dir=None, no_cache=False, help=False)
    else:
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--in-place", "-i", action="store_true",
                           help="rewrite the files in place")
        where.add_argument("-o", "--output", type=Path, metavar="OUT",
                           help="write here: a file for one input file, "
                           "else a folder mirroring the inputs")
        where.add_argument("--check", action="store_true", help=check_help)
    parser.add_argument("--explicit-workers", action="store_true",
                        help=f"write out the {FIELD} that quant_cfg implies")
    if formatted:
        add_output_format(parser, has_json=False)
    else:
        parser.set_defaults(output_format=None, json=False)
        add_nemo_rl_flag(parser)
        add_cache_flags(parser, TREE_MODELS)
        parser.add_argument("-h", "--help", action="store_true", help="show this help")
    return parser


def wants_format(argv: Sequence[str]) -> bool:
    """Whether `migrate ARGS` names an output format (else migrate runs as it always did)."""
    return any(a == "--json" or a == "--output-format" or a.startswith("--output-format=")
               for a in argv)


def add_nemo_rl_flag(
    command: argparse.ArgumentParser,
    nemo_rl_help: str = "the NeMo-RL checkout to judge against (default: the checkout holding "
    "the config, else the nemo_rl this environment imports, else the reference)",
    reference_help: str = "judge against the reference NeMo-RL (upstream after PR #4176), "
    "whatever checkout holds the config",
) -> None:
    which = command.add_mutually_exclusive_group()
    which.add_argument("--nemo-rl", default=None, metavar="PATH", help=nemo_rl_help)
    which.add_argument("--reference", action="store_true", help=reference_help)


def _static_flags(command: argparse.ArgumentParser, *kept: str) -> None:
    command.add_argument(
        "--static",
        action="store_true",
        help="judge the classes from their source with a type checker, importing nothing",
    )
    command.add_argument("--checker", choices=("pyrefly", "mypy"), default="pyrefly",
                         help="the type checker --static runs (default: pyrefly)")
    add_cache_flags(command, *kept)


def add_output_format(command: argparse.ArgumentParser, *, has_json: bool = True) -> None:
    """`--output-format`, beside the command's `--json` (which stays its spelling)."""
    command.add_argument(
        "--output-format", choices=FORMATS, default=None,
        help="text (default), json (same as --json), github (workflow annotations), "
        "sarif (SARIF 2.1.0, for code scanning), junit (JUnit XML)",
    )
    if not has_json:
        command.add_argument("--json", action="store_true", help="same as --output-format json")


def format_problem(args: argparse.Namespace) -> str | None:
    """Why the format `args` asks for cannot be written (`--json` and `--output-format`
    disagree, or its library is not installed), or None."""
    from nemo_rl_workers.findings.formats import unavailable

    fmt = chosen_format(args)
    if fmt is None:
        return f"--json and --output-format {args.output_format} disagree; give one"
    return unavailable(fmt)


def chosen_format(args: argparse.Namespace) -> str | None:
    """The format `args` asks for, or None when `--json` and `--output-format` disagree.
    Sets `args.json` so each command's own JSON path keeps reading it."""
    given: str | None = getattr(args, "output_format", None)
    as_json: bool = bool(getattr(args, "json", False))
    if as_json and given not in (None, "json"):
        return None
    fmt = "json" if as_json else (given or "text")
    args.json = fmt == "json"
    return fmt


# What a command keeps in its cache, each under its own default folder (`cache_default`).
TREE_MODELS = "tree models"
STATIC_VERDICTS = "static verdicts (--static)"
AUDIT_ANSWERS = "audit answers"


def cache_default(kept: str) -> str:
    """The folder `kept` goes to without `--cache-dir`, as `commands.cache` chooses it:
    tree models in the user's cache folder, the others in the working folder's."""
    from nemo_rl_workers.cache.folder import DEFAULT_CACHE_DIR, model_cache_dir

    if kept == TREE_MODELS:
        return model_cache_dir()
    return f"{DEFAULT_CACHE_DIR} of the working folder"


def add_cache_flags(command: argparse.ArgumentParser, *kept: str) -> None:
    """`--cache-dir` / `--no-cache`, the help naming where each thing the command keeps
    goes by default (the user's cache folder as this environment sets it)."""
    defaults = (cache_default(kept[0]) if len(kept) == 1 else
                "; ".join(f"{what} in {cache_default(what)}" for what in kept))
    group = command.add_mutually_exclusive_group()
    group.add_argument(
        "--cache-dir", default=None, metavar="DIR",
        help=f"keep the {' and '.join(kept)} in DIR (default: {defaults})".replace("%", "%%"),
    )
    group.add_argument("--no-cache", action="store_true",
                       help="judge afresh and store no answers")


def add_baseline_flags(command: argparse.ArgumentParser, plural: str, singular: str) -> None:
    """The baseline options `audit` and `check` share (each keys its entries its own way)."""
    command.add_argument("--baseline", metavar="FILE", default=None,
                         help=f"report only {plural} this baseline does not record")
    command.add_argument("--write-baseline", metavar="FILE", default=None,
                         help=f"record today's {plural} in FILE and exit 0")
    command.add_argument("--fail-on-stale", action="store_true",
                         help=f"exit 1 when --baseline holds entries no {singular} matches")
    command.add_argument("--prune-baseline", action="store_true",
                         help=f"rewrite --baseline without the entries no {singular} matches")


_P = TypeVar("_P", bound=argparse.ArgumentParser)


def add_audit(sub: argparse._SubParsersAction[_P]) -> None:
    audit_cmd = sub.add_parser(
        "audit", help="check every worker method a NeMo-RL checkout's drivers call by name")
    audit_cmd.add_argument("--nemo-rl", required=True, metavar="PATH",
                           help="the checkout: the folder holding the nemo_rl package")
    audit_cmd.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_baseline_flags(audit_cmd, "findings", "finding")
    audit_cmd.add_argument("--show-guarded", action="store_true",
                           help="also print the findings every caller in the tree guards "
                           "against (counted in the summary either way)")
    audit_cmd.add_argument(
        "extensions", nargs="*", metavar="EXTENSION",
        help="an extension class's FQN (found as source under --path), or a config whose "
        "worker_extension_cls_fqn fields name extensions")
    audit_cmd.add_argument("--path", action="append", default=[], metavar="DIR",
                           help="an import root holding the extensions' packages (repeatable)")
    audit_cmd.add_argument("--vllm-version", default=None, metavar="VERSION",
                           help="judge vLLM extensions against this installed vllm-stubs "
                           "version (default: the installed one)")
    audit_cmd.add_argument("--emit-protocols", default=None, metavar="OUT.py",
                           help="also write typed Protocols for the tree's roles and modes")


