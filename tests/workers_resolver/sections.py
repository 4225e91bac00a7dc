"""Small config sections for each row of the worker table, built fresh per test."""

from __future__ import annotations

from typing import Any

from nemo_rl_workers import WorkerRow, default_registry

ROWS: tuple[WorkerRow, ...] = default_registry().rows()
ROW_IDS = [f"{r.role}-{r.backend}-{r.mode or 'train'}" for r in ROWS]


def section_for(row: WorkerRow, **extra: Any) -> dict[str, Any]:
    """A minimal valid section that selects `row`, plus `extra` keys."""
    section: dict[str, Any]
    if row.role == "policy":
        section = {
            "model_name": "tiny",
            "megatron_cfg": {"enabled": row.backend == "megatron"},
            "automodel_cfg": {"enabled": row.backend == "automodel"},
        }
    else:
        section = {"backend": row.backend, "vllm_cfg": {"async_engine": row.mode == "async"}}
    section.update(extra)
    return section


def path_for(row: WorkerRow) -> str:
    return "policy" if row.role == "policy" else "policy.generation"
