"""A policy extension without `get_quantizer_stats` is not a QuantPolicyWorker.

The resolver demands QuantPolicyWorker whenever `quant_cfg` is set (rule R6);
CI must reject such a class before any job does.
"""

from __future__ import annotations

from contracts import (
    LogprobBatch,
    LogprobResult,
    PolicyWorker,
    QuantPolicyWorker,
    TrainBatch,
    TrainResult,
)


class PlainPolicyExtension:
    def is_alive(self) -> bool:
        return True

    def train(self, batch: TrainBatch) -> TrainResult:
        return {"loss": 0.0, "grad_norm": 0.0, "num_tokens": 0, "step": 0}

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        return {"logprobs": [[0.0 for _ in row] for row in batch["input_ids"]]}

    def save_checkpoint(self, path: str) -> None:
        return None

    def load_checkpoint(self, path: str) -> None:
        return None

    def shutdown(self) -> bool:
        return True


# Fine as a plain policy worker ...
_plain: type[PolicyWorker] = PlainPolicyExtension
# ... but not where a quantized one is required.
_quant: type[QuantPolicyWorker] = PlainPolicyExtension  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # no get_quantizer_stats
