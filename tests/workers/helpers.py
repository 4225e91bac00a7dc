"""Configs and batches shared by the worker tests."""

from __future__ import annotations

from typing import Any

from contracts.types import TrainBatch

# Rows of different lengths, so padding is exercised.
BATCH: TrainBatch = {"input_ids": [[1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13]]}


def policy_config(
    backend: str, *, lr: float = 1e-2, quant_cfg: str | None = None
) -> dict[str, Any]:
    """A policy section enabling `backend` ("megatron" or "automodel") with learning rate `lr`."""
    config: dict[str, Any] = {"model_name": "tiny-local", "tiny_model": {"seed": 3}}
    if backend == "megatron":
        config["megatron_cfg"] = {"enabled": True, "optimizer": {"lr": lr}}
    else:
        config["automodel_cfg"] = {"enabled": True}
        config["optimizer"] = {"name": "torch.optim.AdamW", "kwargs": {"lr": lr}}
    if quant_cfg is not None:
        config["quant_cfg"] = quant_cfg
    return config
