"""is_subhint_safe: beartype's is_subhint plus the hints worker Protocols use and it rejects."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Annotated, NotRequired, TypedDict

import pytest

from contracts.types import GenerationSample, QuantizerStats, TrainBatch, TrainResult
from contracts.verify import is_subhint_safe, show_hint, typeddict_fields


class StrictTrainBatch(TypedDict):
    input_ids: list[list[int]]
    loss_mask: list[list[int]]


class LooseTrainBatch(TypedDict):
    input_ids: list[list[int]]
    loss_mask: NotRequired[list[list[int]]]


class WiderTrainResult(TypedDict):
    loss: float
    grad_norm: float
    num_tokens: int
    step: int
    lr: float


@pytest.mark.parametrize(
    ("sub", "sup", "expected"),
    [
        (TrainResult, TrainResult, True),
        (dict[str, float], TrainResult, False),
        (TrainResult, dict[str, float], False),  # PEP 589: a TypedDict is not a dict[...]
        (TrainResult, Mapping[str, object], True),
        (WiderTrainResult, TrainResult, True),  # extra keys: structural subtype
        (TrainResult, WiderTrainResult, False),
        (QuantizerStats, TrainResult, False),
        (LooseTrainBatch, TrainBatch, True),  # same keys, same required-ness
        (StrictTrainBatch, TrainBatch, False),  # loss_mask required vs not
        (TrainResult, TrainResult | None, True),
        (TrainResult | None, TrainResult, False),
        (Annotated[TrainResult, "x"], TrainResult, True),
        (AsyncIterator[GenerationSample], AsyncIterator[GenerationSample], True),
        (AsyncGenerator[GenerationSample, None], AsyncIterator[GenerationSample], True),
        (AsyncGenerator[TrainResult, None], AsyncIterator[GenerationSample], False),
        (list[TrainResult], list[TrainResult], True),
        (list[WiderTrainResult], list[TrainResult], False),  # list is invariant
        (type(None), None, True),
        (None, bool, False),
        (int, float, True),  # PEP 484 numeric tower
        (float, int, False),
        (bool, int, True),
        (list[int], list[float], False),
    ],
)
def test_is_subhint_safe(sub: object, sup: object, expected: bool) -> None:
    assert is_subhint_safe(sub, sup) is expected


def test_typeddict_fields_sees_not_required_under_future_annotations() -> None:
    # contracts.types uses `from __future__ import annotations`; on Python 3.11 its
    # __required_keys__ wrongly lists loss_mask.
    assert typeddict_fields(TrainBatch) == {
        "input_ids": (list[list[int]], True),
        "loss_mask": (list[list[int]], False),
    }


@pytest.mark.parametrize(
    ("hint", "text"),
    [
        (TrainResult, "TrainResult"),
        (dict[str, float], "dict[str, float]"),
        (TrainResult | None, "TrainResult | None"),
        (AsyncIterator[GenerationSample], "AsyncIterator[GenerationSample]"),
        (type(None), "None"),
    ],
)
def test_show_hint(hint: object, text: str) -> None:
    assert show_hint(hint) == text
