"""The research extension: the Automodel reference worker plus one new method."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class TemplateAutomodelPolicyWorker(AutomodelPolicyWorker):
    """Adds `get_weight_norm` (the `WeightNormWorker` contract), callable on every rank
    through the policy's worker group narrowed to that Protocol."""

    def get_weight_norm(self) -> float:
        """The L2 norm over all trainable parameters of this rank's model."""
        with torch.no_grad():
            squares = [p.detach().float().pow(2).sum() for p in self.model.parameters()]
            return float(torch.stack(squares).sum().sqrt())


if TYPE_CHECKING:
    from template_project.protocols import WeightNormWorker

    # Nothing runs here: mypy and pyrefly check the extension against the contract the
    # trainer calls (PolicyWorker and get_weight_norm), so a method whose signature
    # drifts fails type checking in CI.
    _contract: type[WeightNormWorker] = TemplateAutomodelPolicyWorker
