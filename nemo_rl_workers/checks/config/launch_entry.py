"""Which entry script runs a config, and the config as that entry hands it to `setup`.

The entry is the one the launch names (`check --entry SCRIPT`, a suite script's `uv run
ENTRY`); else the one upstream's own suite script for the recipe runs
(`tree.launch_scripts.suite_launch_of`); else none: the algorithm whose `setup` the
config's shape fits, as before, and the report says so. The chosen entry's walk
(`entry_walk`) gives the config its `setup` receives and the entry's own rules; its
algorithm is the one every tree rule of the run follows (`entry_sections.entry_chosen`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.tree.entry_scripts import (
    EntryScript,
    EntryScriptError,
    EntryScriptUnreadable,
    read_entry_script,
)
from nemo_rl_workers.tree.launch import NAMED, Launch

if TYPE_CHECKING:
    from nemo_rl_workers.checks.config.entry_walk import EntryRun
    from nemo_rl_workers.tree.revision import Revision




@dataclass
class ChosenEntry:
    """The entry a config is judged through (None: the config's shape chooses), why, and
    what the report says of it."""

    script: EntryScript | None = None
    why: str = ""
    notes: list[str] = field(default_factory=list)
    # The named entry could not be read (exit 2): one line.
    unusable: str | None = None
    # The suite script that launches this recipe, when the run is not judged as it launches
    # it (a bare recipe): named in a refusal's note, with the escape it sets.
    suite: Launch | None = None


def choose_entry(config: str, launch: Launch | None, revision: Revision) -> ChosenEntry:
    """The entry `config` is judged through against `revision`."""
    chosen = ChosenEntry()
    if revision.root is None:
        return chosen
    root = revision.root
    if launch is not None and launch.entry is not None:
        try:
            chosen.script = read_entry_script(
                launch.entry, revision.setups, root,
                None if launch.entry_why in ("", NAMED) else _shown(launch.entry, root))
        except EntryScriptError as error:
            if launch.entry_why == NAMED and isinstance(error, EntryScriptUnreadable):
                chosen.unusable = f"--entry {error}"  # the user's own input: unusable
                return chosen
            # A driver that builds the tree's drivers itself (no `setup`) is judged for the
            # class it hands them (`driver_extension`); the config's shape picks the rules.
            chosen.notes.append(f"entry: {error}; judged through the algorithm the config's "
                                "shape selects")
            return chosen
        chosen.why = launch.entry_why or NAMED
        return chosen
    from nemo_rl_workers.tree.launch_scripts import suite_launch_of

    suite = suite_launch_of(config)
    if suite is not None:
        chosen.suite = suite
        if suite.entry is not None and suite.undecided is None:
            try:
                chosen.script = read_entry_script(suite.entry, revision.setups, root,
                                                  _shown(suite.entry, root))
                chosen.why = f"{_shown(suite.script or '', root)} runs it"
                return chosen
            except EntryScriptError as error:
                chosen.notes.append(f"entry: {error}")
    chosen.why = "none named and no suite script runs it: the algorithm the config's " \
                 "shape selects"
    return chosen


def walk_entry(chosen: ChosenEntry, config: Mapping[str, Any], revision: Revision,
               environ: Mapping[str, str]) -> EntryRun | None:
    """The chosen entry's run on the loaded config (None: no entry chosen)."""
    if chosen.script is None:
        return None
    from nemo_rl_workers.checks.config.entry_walk import run_entry

    return run_entry(chosen.script, config, revision, environ)


def shown_entry(chosen: ChosenEntry, root: str | None) -> str | None:
    """The entry as the report names it: its path in the tree, and why it was chosen."""
    path = shown_entry_path(chosen, root)
    return None if path is None else f"{path} ({chosen.why})"


def shown_entry_path(chosen: ChosenEntry, root: str | None) -> str | None:
    """The entry's path in the tree (the short name a one-line verdict gives)."""
    return None if chosen.script is None else _shown(chosen.script.path, root)


def shown_path(path: str, like: str) -> str:
    """A path as a report shows it: relative to the working folder where the path the
    user gave (`like`) is relative (`../shared/corpus/...`), else absolute."""
    if os.path.isabs(like):
        return os.path.abspath(path)
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return path


def _shown(path: str, root: str | None) -> str:
    if root is not None:
        try:
            relative = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
        except ValueError:
            return path
        if not relative.startswith(".."):
            return relative
    return path
