"""A launch: one recipe as a run starts it, not the file alone.

A config never runs by itself: an entry script (`examples/run_grpo.py`) loads it, applies
`key=value` overrides, may change it before the algorithm's `setup`, and the shell that
starts it exports variables the tree's code reads (`NRL_IGNORE_TP_ACCURACY_CHECK`) and sizes
the cluster (`NUM_NODES`). Upstream writes its launches down as suite scripts
(`tests/test_suites/llm/X.sh`); a user names an entry with `check --entry SCRIPT`. Every
source of a launch gives this one value, which the checks judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# `Launch.entry_why` of an entry the user named (`check --entry SCRIPT`): their own input,
# so an entry that cannot be read is unusable (exit 2), and a driver is judged for the
# extension class it hands the tree's drivers.
NAMED = "named with --entry"


@dataclass(frozen=True)
class Launch:
    """One run of a recipe, as it is launched."""

    config: str  # the recipe's path
    overrides: tuple[str, ...] = ()
    # The entry script that loads the recipe (a path); None: the one the config's shape
    # selects. `entry_why` says how it was chosen ("named with --entry", "X.sh runs it").
    entry: str | None = None
    entry_why: str = ""
    # What the launch exports into the run's environment (`export NRL_...=1`).
    environ: Mapping[str, str] = field(default_factory=dict)
    num_nodes: int | None = None
    gpus_per_node: int | None = None
    script: str | None = None  # the launch script it was read from, if any
    # Variables the launch takes from the caller's environment, unset in the script and
    # without a default (`policy.model_name=$NRL_DEEPSCALER_8K_CKPT`): they stay as `$NAME`
    # in `overrides` and `environ`, so a check can tell a value it must not judge.
    caller_inputs: tuple[str, ...] = ()
    # Where the launch could not be read within the convention: "X.sh:12: why". A launch
    # that is undecided is judged on nothing it would have guessed.
    undecided: str | None = None
