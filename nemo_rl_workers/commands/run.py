"""`nemo-rl-workers run [--strict] SCRIPT [ARGS...]` / `run [--strict] -m MODULE [ARGS...]`.

Parsed by hand, not by argparse: everything from SCRIPT (or after `-m MODULE`) on is the
program's, untouched. It runs in this process, before the CLI's stream wrappers, so the
program sees the real `sys.stdout`/`sys.stderr` and its own exit status.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = ("usage: nemo-rl-workers run [--strict] SCRIPT [ARGS...]\n"
         "       nemo-rl-workers run [--strict] -m MODULE [ARGS...]\n"
         "Runs a NeMo-RL entry point as python would, with the runtime guard armed\n"
         "(NEMO_RL_WORKERS_GUARD=1): each RayWorkerGroup's class is judged before any\n"
         "placement group or actor of it exists, and a failed worker call gains a note.\n"
         "  --strict  a failure of the guard itself refuses the run (default: one line, and\n"
         "            NeMo-RL runs unguarded)")


def run_command(argv: Sequence[str]) -> int:
    """Parse, then run the program; its `SystemExit` passes through."""
    args = list(argv)
    strict = False
    while args and args[0].startswith("-") and args[0] != "-m":
        option = args.pop(0)
        if option in ("-h", "--help"):
            print(USAGE)
            return 0
        if option == "--strict":
            strict = True
        elif option == "--":
            break
        else:
            print(f"nemo-rl-workers run: unknown option {option}\n{USAGE}", file=sys.stderr)
            return 2
    module = bool(args) and args[0] == "-m"
    if module:
        args.pop(0)
    if not args:
        what = "MODULE after -m" if module else "SCRIPT or -m MODULE"
        print(f"nemo-rl-workers run: give a {what}\n{USAGE}", file=sys.stderr)
        return 2
    from nemo_rl_workers.guard.launcher import launch

    launch(args[0], args[1:], module=module, strict=strict)
    return 0
