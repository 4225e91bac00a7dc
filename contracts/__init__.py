"""Typed contracts of NeMo-RL workers and a verifier that reports every violation.

Import-light: only the standard library, typing_extensions and beartype.
"""

from contracts.calltime import (
    CALL_CONTRACTS_ENV,
    ContractCallError,
    call_contracts_enabled,
    enforce_calls,
)
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
from contracts.verify import (
    ContractError,
    VerifyReport,
    Violation,
    check,
    clear_cache,
    verify,
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
    "CALL_CONTRACTS_ENV",
    "ContractCallError",
    "ContractError",
    "VerifyReport",
    "Violation",
    "call_contracts_enabled",
    "check",
    "clear_cache",
    "enforce_calls",
    "verify",
]
