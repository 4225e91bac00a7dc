"""`check`'s inputs that are launches: upstream's suite scripts and campaign lists.

A suite script (`tests/test_suites/llm/X.sh`) is judged as the launch it describes
(`tree.launch_scripts`); a campaign list (`nightly.txt`, `release.txt`, ...) stands for
every script it names, one verdict each, in its order. A script or list that cannot be
read, or a list line naming a script that is not there, is one unusable report (exit 2)
naming the file and line; a launch read outside the suite-script convention is one report
saying where, judged on nothing it would have guessed.
"""

from __future__ import annotations

from collections.abc import Iterable

from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.tree.launch import Launch

SCRIPT_SUFFIX = ".sh"
CAMPAIGN_SUFFIX = ".txt"


def launch_inputs(items: Iterable[str | ConfigReport | Launch]
                  ) -> list[str | ConfigReport | Launch]:
    """`items` with each suite script read as its launch and each campaign list as the
    launches it names."""
    out: list[str | ConfigReport | Launch] = []
    for item in items:
        if isinstance(item, str) and item.endswith(CAMPAIGN_SUFFIX):
            out.extend(_campaign(item))
        elif isinstance(item, str) and item.endswith(SCRIPT_SUFFIX):
            out.append(_script(item, item))
        else:
            out.append(item)
    return out


def undecided_launch(launch: Launch) -> ConfigReport:
    """The report of a launch read outside the convention: where, and nothing judged."""
    return ConfigReport(config=launch.config or "(recipe undecided)",
                        launch_script=launch.script, judged=False,
                        skipped=[f"launch: undecided: {launch.undecided}; the recipe is "
                                 "not judged as this script launches it"])


def _script(path: str, shown: str) -> Launch | ConfigReport:
    from nemo_rl_workers.tree.launch_scripts import LaunchScriptError, read_launch_script

    try:
        launch = read_launch_script(path)
    except LaunchScriptError as bad:
        return ConfigReport(config=shown, unusable=str(bad))
    return _named(launch, shown)


def _named(launch: Launch, shown: str) -> Launch:
    """The launch, its script named as the user gave it (or as the list writes it)."""
    from dataclasses import replace

    from nemo_rl_workers.checks.config.launch_entry import shown_path

    return replace(launch, script=shown,
                   config=shown_path(launch.config, shown) if launch.config else launch.config)


def _campaign(path: str) -> list[Launch | ConfigReport]:
    from nemo_rl_workers.tree.launch_scripts import LaunchScriptError, read_campaign

    try:
        entries = read_campaign(path)
    except LaunchScriptError as bad:
        return [ConfigReport(config=path, unusable=str(bad))]
    out: list[Launch | ConfigReport] = []
    for entry in entries:
        where = f"{entry.campaign}:{entry.line}: {entry.script}"
        if entry.missing is not None:
            out.append(ConfigReport(config=where, unusable=entry.missing))
        else:
            out.append(_script(entry.path, entry.script))
    return out
