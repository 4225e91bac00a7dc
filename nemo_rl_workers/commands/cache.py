"""`--cache-dir DIR` / `--no-cache` as the commands read them: the folder an internal
error's traceback goes to (`report_dir`), and the lines about static-verdict entries not
trusted. Opening the cache and the revisions it holds is `tree.revisions`'; static
verdicts and audit answers live in `.nemo-rl-workers-cache/` of the working folder by
default, tree models in the user's cache folder (`cache.folder`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

if TYPE_CHECKING:
    from nemo_rl_workers.checks.static.static_kept import KeptVerdicts


class _CacheDirOnly(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise argparse.ArgumentError(None, message)  # the command's own parser words it


def given_cache_dir(argv: Sequence[str]) -> str | None:
    """The `--cache-dir` a command line gives (as argparse reads it, abbreviations and
    `--cache-dir=DIR` included), or None: for a run that ended before its arguments were
    parsed, or whose arguments do not parse."""
    parser = _CacheDirOnly(add_help=False, exit_on_error=False)
    parser.add_argument("--cache-dir", default=None)
    try:
        known, _ = parser.parse_known_args(list(argv))
    except argparse.ArgumentError:
        return None
    given: str | None = known.cache_dir
    return given


def report_dir(argv: Sequence[str]) -> str:
    """Where a file for the user to report (an internal error's traceback) goes: the
    command line's `--cache-dir`, else the user's cache folder (`model_cache_dir`)."""
    from nemo_rl_workers.cache.folder import model_cache_dir

    return given_cache_dir(argv) or model_cache_dir()


def say_static_notes(cache: KeptVerdicts | None, err: TextIO) -> None:
    """The lines about static-verdict entries not trusted, once each."""
    from nemo_rl_workers.errors import one_line

    if cache is None:
        return
    for note in dict.fromkeys(cache.notes):
        print(f"nemo-rl-workers: warning: {one_line(note)}", file=err)
    cache.notes.clear()
