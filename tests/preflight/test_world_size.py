"""`world_size_from`: the CLI's --world-size, or --nodes with --gpus-per-node."""

from __future__ import annotations

from typing import Any

import pytest

from nemo_rl_workers.model.preflight import world_size_from


@pytest.mark.parametrize(("nodes", "gpus", "world", "expected"), [
    (None, None, None, None),
    (None, None, 8, 8),
    (2, 8, None, 16),
    (2, 8, 16, 16),
    (1, 1, None, 1),
])
def test_consistent_input_gives_the_world_size(
    nodes: int | None, gpus: int | None, world: int | None, expected: int | None
) -> None:
    assert world_size_from(nodes, gpus, world) == expected


@pytest.mark.parametrize(("nodes", "gpus", "world", "message"), [
    (2, None, None, "--nodes needs --gpus-per-node too"),
    (None, 8, None, "--gpus-per-node needs --nodes too"),
    (None, 8, 8, "--gpus-per-node needs --nodes too"),
    (2, 8, 8, "--world-size 8 disagrees with --nodes 2 x --gpus-per-node 8 = 16"),
    (0, 8, None, "--nodes must be a positive integer, not 0"),
    (1, -4, None, "--gpus-per-node must be a positive integer, not -4"),
    (None, None, True, "--world-size must be a positive integer, not True"),
    (None, None, "8", "--world-size must be a positive integer, not '8'"),
])
def test_inconsistent_input_is_a_one_line_value_error(
    nodes: Any, gpus: Any, world: Any, message: str
) -> None:
    with pytest.raises(ValueError) as raised:
        world_size_from(nodes, gpus, world)
    text = str(raised.value)
    assert text.startswith(message)
    assert "\n" not in text
