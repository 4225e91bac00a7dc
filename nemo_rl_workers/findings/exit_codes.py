"""The exit codes of every `nemo-rl-workers` command, each defined and described once.

The verdicts (0, 1, 2) are each command's own; the others are the dispatcher's, for every
command alike: a bug, an output that cannot be written, an interrupt, a reader gone away.
`--help` and the guide's table say the same (tests/docs holds them in step).
"""

from __future__ import annotations

EXIT_OK = 0  # no problem (migrate: done, or nothing to do)
EXIT_PROBLEMS = 1  # problems or findings (migrate --check: a file would change)
EXIT_UNUSABLE = 2  # unusable input: one line on stderr, never a traceback
EXIT_INTERNAL = 70  # sysexits' EX_SOFTWARE: a bug in this program, never a verdict on the input
EXIT_OUTPUT = 74  # sysexits' EX_IOERR: stdout or stderr cannot be written (a full disk, closed)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader went away (`| head`); nothing more is written

# Each code in a few words, in order: what `--help` lists.
MEANINGS: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "no problem"),
    (EXIT_PROBLEMS, "problems found"),
    (EXIT_UNUSABLE, "unusable input"),
    (EXIT_INTERNAL, "internal error"),
    (EXIT_OUTPUT, "output cannot be written"),
    (EXIT_INTERRUPTED, "interrupted"),
    (EXIT_BROKEN_PIPE, "output pipe closed"),
)


def summary() -> str:
    """`0 no problem, 1 problems found, ...`: every code with its meaning, one phrase."""
    return ", ".join(f"{code} {meaning}" for code, meaning in MEANINGS)


def verdict(found: bool) -> int:
    """A command's verdict: problems (or findings) found, or none."""
    return EXIT_PROBLEMS if found else EXIT_OK
