"""What `check` learned about one config file: the classes each section starts, the
problems, warnings and notes, how it was launched and judged. Made by `config_check`,
kept whole by `kept_reports`, shown by `findings`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nemo_rl_workers.errors import Problem
from nemo_rl_workers.model.resolver import Resolution
from nemo_rl_workers.reading.origin import Lines, own_line, same_file

if TYPE_CHECKING:
    from nemo_rl_workers.tree.launch import Launch
    from nemo_rl_workers.tree.revision import Revision


@dataclass
class ConfigReport:
    """Everything learned about one config file."""

    config: str
    workers: list[Resolution] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # What was skipped because of the NeMo-RL judged against, not this config (a rule
    # family that tree's schema has no use for): a text report says it once per run.
    revision_notes: list[str] = field(default_factory=list)
    # Cache entries not trusted while this config was judged (said once, on stderr).
    cache_notes: list[str] = field(default_factory=list)
    # Set when the file could not be used at all (exit code 2).
    unusable: str | None = None
    # The world size the preflight rules ran with, and how the config's `cluster:` gave
    # it (None when a flag gave it, or nothing did).
    world_size: int | None = None
    world_size_from: str | None = None
    # The NeMo-RL revision the config was judged against (None: not chosen, the reference).
    revision: Revision | None = None
    # Where each key of the loaded config is written (the config or a `defaults:` parent),
    # and the line of the config's own `defaults:`: to place an inherited value's problem
    # on the config checked, the file the user runs.
    lines: Lines = field(default_factory=dict)
    defaults_line: int | None = None
    # The entry script the config was judged through, and why (None: the algorithm the
    # config's shape selects); the launch script it came from, if any.
    entry: str | None = None
    entry_path: str | None = None  # the entry's path alone, for a one-line verdict
    launch_script: str | None = None
    # Upstream's suite script for this recipe, read (a bare recipe: the launch it names).
    suite: Launch | None = None
    # False where nothing was judged (a launch read outside the convention): no NeMo-RL is
    # named for it, and it is not "ok".
    judged: bool = True

    def inherited(self, problem: Problem) -> bool:
        """Whether the value `problem` is about is written in a `defaults:` parent (the
        problem's file), not in the config checked."""
        return problem.file is not None and not same_file(problem.file, self.config)

    def config_line(self, problem: Problem) -> int | None:
        """The line of the config checked that `problem` lands on: its key's own line; for
        an inherited value, the closest enclosing key the config writes, else its
        `defaults:` line."""
        if not self.inherited(problem):
            return problem.line
        found = own_line(self.config, self.lines, problem.path)
        return found if found is not None else self.defaults_line
