"""Run the user's entry point as `python SCRIPT` / `python -m MODULE` would, guard armed.

As `coverage run` and `opentelemetry-instrument` do: `sys.argv` is the script (or the
module's file) and its arguments, the code runs as `__main__`, `sys.path[0]` is the
script's folder (or the working folder for `-m`), and the exit status is the program's
(`SystemExit` passes through; an uncaught exception prints its traceback, notes last,
and exits 1). `NEMO_RL_WORKERS_GUARD=1` is set for the process and everything it starts
(Ray's workers get the driver's environment), then the hooks are armed here. `run` has
handled the program's recipe before (checked, warned of or skipped): the launch's marker
(`recipe_check.launch_key` of the program's arguments) tells the armed hooks not to check
it again, here and in what the program starts with the same arguments.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

from nemo_rl_workers.guard import ENV, RECIPE_CHECKED_ENV, STRICT_ENV


def launch(target: str, args: Sequence[str], *, module: bool, strict: bool) -> None:
    """Run it; returns when the program returns, raises what it raises."""
    os.environ[ENV] = "1"
    if strict:
        os.environ[STRICT_ENV] = "1"
    from nemo_rl_workers.guard import startup
    from nemo_rl_workers.guard.recipe_check import launch_key

    os.environ[RECIPE_CHECKED_ENV] = launch_key(args)

    startup.arm()
    if module:
        sys.argv = [target, *args]  # runpy replaces argv[0] with the module's file
        sys.path[0] = os.getcwd()
        runpy.run_module(target, run_name="__main__", alter_sys=True)
        return
    sys.argv = [target, *args]
    sys.path[0] = os.path.dirname(os.path.realpath(target))
    runpy.run_path(target, run_name="__main__")
