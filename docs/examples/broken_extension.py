"""A deliberately broken extension, for the guide: `save_checkpoint` drifted from the contract.

The trainer calls `save_checkpoint(path)` with one string; this override renames the
parameter and adds a required one, so calls that the Protocol allows would fail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class BrokenPolicyWorker(AutomodelPolicyWorker):
    def save_checkpoint(self, directory: str, step: int) -> None:  # not the contract's shape
        super().save_checkpoint(f"{directory}/step_{step}")


if TYPE_CHECKING:
    from contracts.protocols import PolicyWorker

    _contract: type[PolicyWorker] = BrokenPolicyWorker
