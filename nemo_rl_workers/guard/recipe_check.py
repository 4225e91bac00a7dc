"""The recipe check of an armed process: `check`'s verdicts on the main program's
`--config FILE [key=value ...]`, once, before any worker group exists.

`nemo-rl-workers run` checks the recipe before it starts the program; under
`NEMO_RL_WORKERS_GUARD=1` nothing starts the program but Python, so the check runs where
the guard's hooks start: when the program imports upstream's
`nemo_rl.distributed.worker_groups` (`startup`'s finder), before the hooks are installed.
That is the earliest moment the process is known to be a NeMo-RL driver, and it comes
before anything of Ray: upstream's entry scripts import it (through the algorithm) at
their top, before `init_ray()`, the tokenizer and the data, and no `RayVirtualCluster`,
placement group or worker group can exist before it is imported.

It runs in the main program only: `sys.argv[0]` is the script (or the `-m` module's file)
that `__main__` runs, and its arguments hold `--config FILE` as `run` parses them
(`recipe_of`). A Ray worker (no `--config`), `python -c`, the REPL, and a
multiprocessing child (its main module is `__mp_main__`) pay a look at `sys.argv`.

`NEMO_RL_WORKERS_GUARD_PREFLIGHT` (`check` (default), `warn`, `off`) says what problems do:
refuse the run (`SystemExit` with `check`'s code, after `check`'s lines and one line of
the guard), only warn, or not check. The launch's marker (`RECIPE_CHECKED_ENV`, a digest of
the program's arguments) says the recipe was already handled for these arguments: `run`
sets it (it checked, warned or skipped before the program started), and so does this
check, for what the program starts with the same arguments. A failure of the check itself
fails open (`fail_open`; `--strict`: `GuardUnavailable`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from nemo_rl_workers.guard import PREFIX, PREFLIGHT_ENV, RECIPE_CHECKED_ENV
from nemo_rl_workers.guard.fail_open import fail_open

if TYPE_CHECKING:
    import types

MODES = ("check", "warn", "off")
_checked = False


class Launch(NamedTuple):  # not a dataclass: every armed process imports this module
    """The main program's recipe: the script it runs, the config, the overrides."""

    entry: str
    config: str
    overrides: tuple[str, ...]


def launch_key(args: Sequence[str]) -> str:
    """The marker of a launch: a digest of the program's arguments (argv after the
    script), the same wherever they are the same."""
    import hashlib

    joined = "\0".join(args).encode("utf-8", "surrogatepass")  # any str argv holds
    return hashlib.sha256(joined).hexdigest()[:32]


def recipe_of(args: Sequence[str]) -> tuple[str, list[str]] | None:
    """(config, overrides) of a program's arguments, as upstream's scripts parse them:
    `--config FILE` or `--config=FILE`, and `key=value` arguments."""
    config: str | None = None
    overrides: list[str] = []
    items = list(args)
    index = 0
    while index < len(items):
        item = items[index]
        if item == "--config" and index + 1 < len(items):
            config = items[index + 1]
            index += 2
            continue
        if item.startswith("--config="):
            config = item.partition("=")[2]
        elif not item.startswith("-") and "=" in item:
            overrides.append(item)
        index += 1
    return (config, overrides) if config else None


def main_launch(argv: Sequence[str], main: types.ModuleType | None) -> Launch | None:
    """The recipe of the main program (`argv`, `__main__`); None where the process is not
    one (`-c`, the REPL, stdin, a multiprocessing child) or takes no `--config`."""
    if not argv or argv[0] in ("", "-c", "-") or main is None:
        return None
    if getattr(main, "__name__", None) != "__main__":
        return None  # multiprocessing's children re-import the parent's as __mp_main__
    recipe = recipe_of(argv[1:])
    if recipe is None:
        return None
    file = getattr(main, "__file__", None)
    if not isinstance(file, str) or os.path.realpath(file) != os.path.realpath(argv[0]):
        return None
    return Launch(argv[0], recipe[0], tuple(recipe[1]))


def mode(environ: Mapping[str, str]) -> str:
    """`check`, `warn` or `off`, from the knob; an unknown value checks, said in one line."""
    given = environ.get(PREFLIGHT_ENV, "").strip().lower()
    if given in MODES:
        return given
    if given:
        print(f"{PREFIX}: {PREFLIGHT_ENV}={environ[PREFLIGHT_ENV]!r} is not one of "
              f"{', '.join(MODES)}; the recipe is checked", file=sys.stderr, flush=True)
    return "check"


def on_worker_groups() -> None:
    """Check the main program's recipe, once per process: returns to let the program go
    on, raises SystemExit to refuse it (GuardUnavailable under --strict when the check
    itself fails)."""
    global _checked
    if _checked:
        return
    _checked = True
    argv = list(getattr(sys, "argv", []) or [])
    try:
        launch = main_launch(argv, sys.modules.get("__main__"))
    except Exception as error:  # noqa: BLE001 - fail open: the user's program must run
        fail_open("cannot read the program's recipe", error, then="the program goes on unchecked")
        return
    if launch is None:
        return
    key = launch_key(argv[1:])
    if os.environ.get(RECIPE_CHECKED_ENV) == key:
        return  # `run` checked it, or the process that started this one did
    how = mode(os.environ)
    os.environ[RECIPE_CHECKED_ENV] = key
    if how == "off":
        return
    code = _check(launch)
    if code is None or code == 0:
        return
    if how == "warn":
        print(f"{PREFIX}: {launch.config}: the recipe has problems (above); the program goes "
              f"on ({PREFLIGHT_ENV}=warn)", file=sys.stderr, flush=True)
        return
    print(f"{PREFIX}: {launch.config}: the recipe has problems (above); the program was "
          f"stopped before any worker group was made ({PREFLIGHT_ENV}=warn: go on anyway; "
          f"{PREFLIGHT_ENV}=off: skip the check)", file=sys.stderr, flush=True)
    raise SystemExit(code)


def _check(launch: Launch) -> int | None:
    """`check`'s exit code on the launch, its lines on the process's streams; None when
    the check itself failed (fail open)."""
    try:
        from nemo_rl_workers.findings.check_output import check_recipe
        from nemo_rl_workers.tree.source.gc_pause import collector_paused

        sys.stdout.flush()
        with collector_paused():  # the user's heap is not collected over the check's trees
            return check_recipe(launch.config, launch.overrides, entry=launch.entry)
    except Exception as error:  # noqa: BLE001 - fail open: the user's program must run
        fail_open(f"cannot check the recipe {launch.config}", error,
                  then="the program goes on unchecked")
        return None
