"""`nemo-rl-workers`: the entry point and dispatcher. Parses the command line (`options`),
runs the one command asked for (each in its own module, imported only when it runs), and
keeps every stream safe (`streams`). The exit codes are `exit_codes`'; the dispatcher's
own are those of every command alike: 70 internal error, 74 output cannot be written,
130 interrupted, 141 output pipe closed.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO, cast

from nemo_rl_workers.commands.options import build_parser, format_problem, parse
from nemo_rl_workers.findings.check_output import check_recipe
from nemo_rl_workers.findings.exit_codes import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT,
    EXIT_UNUSABLE,
)
from nemo_rl_workers.findings.reporter import Reporter
from nemo_rl_workers.findings.streams import OutputFailed, SafeStream, silence_stdout

INTERNAL_ERROR_PREFIX = "nemo-rl-workers-internal-error-"


@dataclass(frozen=True)
class Command:
    """Where a command's code lives (`module:function`, imported only when it runs) and
    what the dispatcher settles before it: its output format, the worker registry."""

    runs: str
    formats: bool = False  # takes --output-format (and --json): checked before it runs
    registry: bool = False  # resolves workers: a registry that cannot load stops it


COMMANDS = {
    "resolve": Command("resolve:run_resolve", registry=True),
    "check": Command("check:run_check", formats=True, registry=True),
    "verify": Command("verify:run_verify", formats=True),
    "list": Command("listing:run_list"),
    "explain": Command("explain:run_explain"),
    "audit": Command("audit_cache:run_audit_cached", formats=True),
}
# Parsed by its own grammar (`options.migrate_parser`), after the registry is settled.
MIGRATE = Command("migrate:run_migrate", registry=True)


def _function(command: Command) -> Callable[..., int]:
    module, _, name = command.runs.partition(":")
    found: Callable[..., int] = getattr(
        importlib.import_module(f"nemo_rl_workers.commands.{module}"), name)
    return found


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
        checked = sys.modules.get("nemo_rl_workers.checks.contract.contract_check")
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
            Reporter(safe_out, safe_err).notice(f"cannot write the output: {failed.reason}")
            safe_err.flush()
        return EXIT_OUTPUT
    except KeyboardInterrupt:
        Reporter(safe_out, safe_err).notice("interrupted")
        return EXIT_INTERRUPTED
    except BaseException as error:  # noqa: BLE001 - the safety net: a bug, reported as such
        return _internal_error(error, Reporter(safe_out, safe_err),
                               sys.argv[1:] if argv is None else argv)


def _internal_error(error: BaseException, say: Reporter, argv: Sequence[str]) -> int:
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
    say.notice(f"internal error ({type(error).__name__}); {where}; please report it with "
              "that file")
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
    say = Reporter(out, err)
    if args_list[:1] == ["migrate"]:
        if _registry_unusable(say):
            return EXIT_UNUSABLE
        return _function(MIGRATE)(args_list[1:], out, err)
    args = parse(build_parser(), args_list, out, err)
    if isinstance(args, int):  # --help, --version, or a usage error (one line)
        return args
    command = COMMANDS[args.command]
    if command.formats and (problem := format_problem(args)) is not None:
        return say.unusable(problem)
    if command.registry and _registry_unusable(say):
        return EXIT_UNUSABLE
    return _function(command)(args, out, err)


def _registry_unusable(say: Reporter) -> bool:
    """A registration that cannot be loaded (a stale entry point) stops a command that
    resolves: one line naming it, exit 2, rather than verdicts from a partial table."""
    from nemo_rl_workers.model.registry import RegistryError, default_registry

    try:
        default_registry()
    except RegistryError as bad:
        say.notice(str(bad))
        return True
    return False
