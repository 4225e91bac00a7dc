"""Typed contracts of NeMo-RL workers and a verifier that reports every violation.

Import-light: only the standard library, typing_extensions and beartype.
"""

from contracts.init_call import GENERATION_INIT, INIT_CALLS, POLICY_INIT, InitCall
from contracts.protocols import (
    PROTOCOLS,
    AsyncGenerationWorker,
    GenerationWorker,
    PolicyWorker,
    QuantAsyncGenerationWorker,
    QuantGenerationWorker,
    QuantPolicyWorker,
)
from contracts.types import (
    EngineArgs,
    GenerationBatch,
    GenerationResult,
    GenerationSample,
    LogprobBatch,
    LogprobResult,
    QuantizerStats,
    TrainBatch,
    TrainResult,
)

__all__ = [
    "GENERATION_INIT",
    "INIT_CALLS",
    "POLICY_INIT",
    "InitCall",
    "PROTOCOLS",
    "AsyncGenerationWorker",
    "EngineArgs",
    "GenerationBatch",
    "GenerationResult",
    "GenerationSample",
    "GenerationWorker",
    "LogprobBatch",
    "LogprobResult",
    "PolicyWorker",
    "QuantAsyncGenerationWorker",
    "QuantGenerationWorker",
    "QuantPolicyWorker",
    "QuantizerStats",
    "TrainBatch",
    "TrainResult",
]
