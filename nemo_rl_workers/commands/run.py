"""`nemo-rl-workers run [OPTIONS] SCRIPT [ARGS...]` / `run [OPTIONS] -m MODULE [ARGS...]`.

Parsed by hand, not by argparse: everything from SCRIPT (or after `-m MODULE`) on is the
program's, untouched. It runs in this process, before the CLI's stream wrappers, so the
program sees the real `sys.stdout`/`sys.stderr` and its own exit status.

When the program is given a recipe the way upstream's scripts take one (`--config FILE`
or `--config=FILE`, then `key=value` overrides), `check`'s verdicts on it run first
(`preflight`, the CLI's `check_recipe`): problems refuse the run with exit 1 and the same
lines as `check`; `--warn` only prints them; `--no-preflight` skips it. Without either,
`NEMO_RL_WORKERS_GUARD_PREFLIGHT=warn|off` (the knob of the guard's own recipe check,
`guard.recipe_check`) does the same.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Protocol

from nemo_rl_workers.findings.exit_codes import EXIT_OK, EXIT_UNUSABLE
from nemo_rl_workers.findings.reporter import Reporter
from nemo_rl_workers.guard.recipe_check import recipe_of

USAGE = ("usage: nemo-rl-workers run [--strict] [--warn | --no-preflight] SCRIPT [ARGS...]\n"
         "       nemo-rl-workers run [--strict] [--warn | --no-preflight] -m MODULE [ARGS...]\n"
         "Runs a NeMo-RL entry point as python would, with the runtime guard armed\n"
         "(NEMO_RL_WORKERS_GUARD=1): each RayWorkerGroup's class is judged before any\n"
         "placement group or actor of it exists, and a failed worker call gains a note.\n"
         "  --strict  a failure of the guard itself refuses the run (default: one line, and\n"
         "            NeMo-RL runs unguarded)\n"
         "  --warn    a recipe given as --config FILE [key=value ...] that check finds\n"
         "            problems in only warns (default: exit 1 before the program starts)\n"
         "  --no-preflight  do not check the recipe\n"
         "  (without either: NEMO_RL_WORKERS_GUARD_PREFLIGHT=warn|off, else check)")


class Preflight(Protocol):
    """`check`'s verdicts on a recipe, through the entry script that runs it."""

    def __call__(self, config: str, overrides: Sequence[str], *,
                 entry: str | None = None) -> int: ...


def run_command(argv: Sequence[str], preflight: Preflight | None = None) -> int:
    """Parse, check the recipe (`preflight`), then run the program; its `SystemExit`
    passes through."""
    # The process's own streams: the program that follows writes to them too.
    say = Reporter(sys.stdout, sys.stderr, "nemo-rl-workers run:")
    args = list(argv)
    strict = False
    asked: str | None = None
    while args and args[0].startswith("-") and args[0] != "-m":
        option = args.pop(0)
        if option in ("-h", "--help"):
            say.line(USAGE)
            return EXIT_OK
        if option == "--strict":
            strict = True
        elif option == "--warn":
            asked = "warn"
        elif option == "--no-preflight":
            asked = "off"
        elif option == "--":
            break
        else:
            say.notice(f"unknown option {option}")
            say.err_line(USAGE)
            return EXIT_UNUSABLE
    module = bool(args) and args[0] == "-m"
    if module:
        args.pop(0)
    if not args:
        what = "MODULE after -m" if module else "SCRIPT or -m MODULE"
        say.notice(f"give a {what}")
        say.err_line(USAGE)
        return EXIT_UNUSABLE
    recipe = recipe_of(args[1:])
    if recipe is not None and preflight is not None:
        from nemo_rl_workers.guard.recipe_check import mode

        how = asked or mode(os.environ)
        # The script being run is the entry the recipe is judged through (a module: the
        # config's shape chooses, as `check` does without --entry).
        code = preflight(*recipe, entry=None if module else args[0]) if how != "off" \
            else EXIT_OK
        if code != EXIT_OK and how != "warn":
            say.notice(f"{recipe[0]}: the recipe has problems (above); the program was not "
                       "started (--warn: start it anyway; --no-preflight: skip the check)")
            return code
    from nemo_rl_workers.guard.launcher import launch

    launch(args[0], args[1:], module=module, strict=strict)
    return EXIT_OK
