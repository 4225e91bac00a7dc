"""Fail open: a failure of the guard itself is one line, and upstream runs as unguarded.

`--strict` (`NEMO_RL_WORKERS_GUARD_STRICT=1`) makes it a refusal: `GuardUnavailable`.
"""

from __future__ import annotations

import os
import sys

from nemo_rl_workers.guard import PREFIX, STRICT_ENV


class GuardUnavailable(RuntimeError):
    """The guard could not do its work and `--strict` asked for a refusal; one line."""


def strict() -> bool:
    return os.environ.get(STRICT_ENV, "0") not in ("", "0")


def fail_open(why: str, error: BaseException | None = None, *,
              then: str = "NeMo-RL runs unguarded") -> None:
    """One line on stderr, ending with what goes on (`then`). Under --strict, a refusal."""
    cause = f" ({type(error).__name__}: {error})" if error is not None else ""
    line = f"{PREFIX}: {why}{cause}"
    if strict():
        raise GuardUnavailable(f"{line}; refused under --strict") from error
    print(f"{line}; {then}", file=sys.stderr, flush=True)
