"""`--output-format {text,json,github,sarif,junit}`: one flag, one writer per format.

`text` and `json` stay each command's own (their shapes are documented per command);
`github`, `sarif` and `junit` are written from the common `Results` that each command's
adapter (`findings.adapters`) makes. `--json` stays a spelling of `--output-format json`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the writers' argument; the flag's names need none of it
    from nemo_rl_workers.findings.results import Results

FORMATS = ("text", "json", "github", "sarif", "junit")
STRUCTURED = ("github", "sarif", "junit")
# The library each writer needs, and the extra that installs it.
_NEEDS = {"sarif": "pydantic_sarif", "junit": "junitparser"}
EXTRA = "nemo-rl-worker-contracts[ci]"

__all__ = [
    "EXTRA", "FORMATS", "STRUCTURED", "FormatUnavailable",
    "render", "unavailable",
]


class FormatUnavailable(ValueError):
    """The format's library is not installed (exit code 2)."""


def unavailable(fmt: str) -> str | None:
    """Why `fmt` cannot be written here (its library is missing), or None."""
    needed = _NEEDS.get(fmt)
    if needed is None:
        return None
    try:
        __import__(needed)
    except ImportError:
        return (f"--output-format {fmt} needs the {needed.replace('_', '-')} package, which is "
                f"not installed here (pip install '{EXTRA}')")
    return None


def _writer(fmt: str) -> Callable[[Results], str]:
    missing = unavailable(fmt)
    if missing is not None:
        raise FormatUnavailable(missing)
    if fmt == "github":
        from nemo_rl_workers.findings.formats import github

        return github.render
    if fmt == "sarif":
        from nemo_rl_workers.findings.formats import sarif

        return sarif.render
    if fmt == "junit":
        from nemo_rl_workers.findings.formats import junit

        return junit.render
    raise ValueError(f"{fmt} is each command's own format, not a Results writer")


def render(results: Results, fmt: str) -> str:
    """`results` in `fmt` (one of STRUCTURED); FormatUnavailable without its library."""
    return _writer(fmt)(results)
