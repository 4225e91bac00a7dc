"""Typed contracts of NeMo-RL workers and a verifier that reports every violation.

Import-light: only the standard library, typing_extensions and beartype. Importing the
package itself costs nothing: each name below is loaded on first use, so a process that
needs only `contracts.protocols` (the driver's resolver, `--help`) never loads beartype.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

# The public API: name -> the module that defines it.
_API = {
    "CALL_CONTRACTS_ENV": "contracts.calltime",
    "ContractCallError": "contracts.calltime",
    "call_contracts_enabled": "contracts.calltime",
    "enforce_calls": "contracts.calltime",
    "GENERATION_INIT": "contracts.init_call",
    "INIT_CALLS": "contracts.init_call",
    "POLICY_INIT": "contracts.init_call",
    "InitCall": "contracts.init_call",
    "PROTOCOLS": "contracts.protocols",
    "AsyncGenerationWorker": "contracts.protocols",
    "GenerationWorker": "contracts.protocols",
    "PolicyWorker": "contracts.protocols",
    "QuantAsyncGenerationWorker": "contracts.protocols",
    "QuantGenerationWorker": "contracts.protocols",
    "QuantPolicyWorker": "contracts.protocols",
    "EngineArgs": "contracts.types",
    "GenerationBatch": "contracts.types",
    "GenerationResult": "contracts.types",
    "GenerationSample": "contracts.types",
    "LogprobBatch": "contracts.types",
    "LogprobResult": "contracts.types",
    "QuantizerStats": "contracts.types",
    "TrainBatch": "contracts.types",
    "TrainResult": "contracts.types",
    "ContractError": "contracts.verify",
    "VerifyReport": "contracts.verify",
    "Violation": "contracts.verify",
    "check": "contracts.verify",
    "clear_cache": "contracts.verify",
    "verify": "contracts.verify",
}

if TYPE_CHECKING:
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


class _Package(types.ModuleType):
    """`contracts.verify` is the function, as when this package imported it eagerly: the
    import system binds the submodule `contracts.verify` to that name once it is loaded,
    and would shadow the function for `from contracts import verify` from then on."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and _API.get(name) == value.__name__:
            return  # the name is the API's; the submodule stays in sys.modules
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'contracts' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value
