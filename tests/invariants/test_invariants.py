"""Every verdict on the two corpus trees is the recorded one (issue 45's invariant).

The record (`verdicts.json`, written by `python -m tests.invariants.record`) holds, per shipped
config and per campaign launch, the classes, world size, problems, warnings and undecided rule
sites, and per tree the audit's findings. A change that moves code leaves it identical; a change
of verdict rewrites the record in the same commit, where review sees it.
"""

from __future__ import annotations

import json

import pytest

from tests.invariants.record import RECORD, TREES, record_of


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TREES))
def test_every_verdict_is_the_recorded_one(name: str) -> None:
    root = TREES[name]
    if not (root / "nemo_rl").is_dir():
        pytest.skip(f"corpus absent: {root}")
    recorded = json.loads(RECORD.read_text())[name]
    today = record_of(root)
    for part in ("configs", "launches"):
        changed = sorted(k for k in recorded[part].keys() | today[part].keys()
                         if recorded[part].get(k) != today[part].get(k))
        first = changed[0] if changed else None
        assert not changed, (f"{part} whose verdict changed: {changed[:10]}; the first, "
                             f"recorded: {recorded[part].get(first)}, today: "
                             f"{today[part].get(first)}")
    assert today["audit"] == recorded["audit"]


def test_the_record_names_no_folder_of_this_machine() -> None:
    """The record is compared on any clone (CI's lies elsewhere): it holds no absolute path."""
    text = RECORD.read_text()
    assert '"/' not in text, "verdicts.json names a folder of the machine that wrote it"
