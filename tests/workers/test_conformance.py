"""Every class of the built-in worker table imports and satisfies its Protocol."""

from __future__ import annotations

import importlib

import pytest

from contracts import INIT_CALLS, PROTOCOLS, verify
from nemo_rl_workers.model.registry import WorkerRow
from nemo_rl_workers.model.table import BUILTIN_ROWS


def load(fqn: str) -> type:
    module, _, name = fqn.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type)
    return cls


@pytest.mark.parametrize("row", BUILTIN_ROWS, ids=lambda row: row.label)
def test_table_classes_satisfy_their_protocols(row: WorkerRow) -> None:
    default = load(row.default_fqn)
    verify(default, PROTOCOLS[row.protocol], init_call=INIT_CALLS[row.role])
    assert row.quantized_fqn is not None and row.quant_protocol is not None
    quantized = load(row.quantized_fqn)
    verify(
        quantized, PROTOCOLS[row.quant_protocol], base=default, init_call=INIT_CALLS[row.role]
    )


def test_conformance_module_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, nemo_rl.conformance, nemo_rl.models.policy.workers, "
        "nemo_rl.models.generation.vllm, nemo_rl.modelopt.models.generation; "
        "print(sorted({'torch', 'vllm', 'modelopt', 'transformers'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
