"""The guide's newcomer sections cannot drift: the Protocol table and the driver script."""

from __future__ import annotations

from pathlib import Path

import pytest
from typing_extensions import get_protocol_members

from contracts.protocols import PROTOCOLS
from tests.docs.protocol_reference import GUIDE, guide_table, render
from tests.docs.snippets import REPO, read_blocks


def test_the_protocol_table_is_what_contracts_declares() -> None:
    table = guide_table(GUIDE.read_text(encoding="utf-8"))
    assert table == render(), "run `python -m tests.docs.protocol_reference`"
    # Every member of every Protocol is in it, and only those.
    rows = table.splitlines()[2:]
    own = 0
    for protocol in PROTOCOLS.values():
        inherited: set[str] = set()
        for base in protocol.__bases__:
            if base in PROTOCOLS.values():
                inherited |= get_protocol_members(base)
        own += len(get_protocol_members(protocol) - inherited)
    assert len(rows) == own
    assert "| `QuantPolicyWorker` | `PolicyWorker` (all its members) | " \
           "`def get_quantizer_stats(self) -> QuantizerStats` |" in rows


def test_a_changed_protocol_changes_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is not vacuous: a Protocol with another member renders another table."""
    before = render()
    policy = PROTOCOLS["PolicyWorker"]

    def train(self: object, batch: object, steps: int = 1) -> object: ...

    monkeypatch.setattr(policy, "train", train)
    assert render() != before and "steps: int = 1" in render()


def _same_as() -> list[tuple[str, Path]]:
    return [(b.text, REPO / (b.directive("same-as") or ""))
            for b in read_blocks(GUIDE) if b.directive("same-as") is not None]


def test_blocks_shown_as_files_are_those_files() -> None:
    shown = _same_as()
    assert [path.name for _, path in shown] == ["driver.py"]
    for text, path in shown:
        assert text == path.read_text(encoding="utf-8"), path
