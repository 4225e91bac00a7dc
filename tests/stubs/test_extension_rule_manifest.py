"""The manifest's record of vLLM's worker_extension_cls rule (stubs/generate.py).

The installed vllm-stubs carries the same manifest (what the rule is judged against), and
the worker classes' names are a consistent MRO walk. With VLLM_WHEEL naming a vLLM wheel,
the record is regenerated from it and compared (no network; skipped without one).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

STUBS = Path(__file__).resolve().parents[2] / "stubs"
MANIFEST: dict[str, Any] = json.loads((STUBS / "manifest.json").read_text())
RULE: dict[str, Any] = MANIFEST["extension_rule"]


def test_the_package_carries_the_manifest() -> None:
    assert (STUBS / "vllm" / "manifest.json").read_text() == (STUBS / "manifest.json").read_text()
    project = (STUBS / "pyproject.toml").read_text()
    assert '"manifest.json"' in project


def test_the_rule_is_read_from_worker_base() -> None:
    assert RULE["rule"] == {
        "check": "not hasattr(worker_class, attr)",
        "file": "vllm/v1/worker/worker_base.py",
        "function": "WorkerWrapperBase.init_worker",
        "line": 320,
        "names": "dir(worker_extension_cls)",
        "skip_prefix": "__",
    }
    assert RULE["platforms"]["cuda"] == "vllm.v1.worker.gpu_worker.Worker"
    assert set(RULE["platforms"].values()) == set(RULE["workers"])
    assert RULE["metaclass_names"] == ["mro"]


@pytest.mark.parametrize("fqn", sorted(RULE["workers"]))
def test_worker_names_are_an_mro_walk(fqn: str) -> None:
    entry = RULE["workers"][fqn]
    assert entry["mro"][0] == fqn
    assert entry["mro"][-1] == "vllm.v1.worker.worker_base.WorkerBase"
    assert entry["external_bases"] == []
    names = [n["name"] for n in entry["names"]]
    assert names == sorted(set(names))
    assert not any(n.startswith("__") for n in names)
    assert {n["owner"] for n in entry["names"]} <= set(entry["mro"])
    assert all(entry["files"][c].startswith("vllm/v1/worker/") for c in entry["mro"])
    kinds = {n["name"]: n["kind"] for n in entry["names"]}
    # Hand-read in vLLM 0.33: a WorkerBase method, a Worker property and helper.
    assert kinds["synchronize_device"] == "method"
    assert kinds["sleep_mode_backend"] == "property"
    assert kinds["_maybe_get_memory_pool_context"] == "method"
    assert "model_runner" not in kinds  # set on the instance in __init__, not on the class


def test_regenerated_from_the_wheel_is_the_committed_record() -> None:
    wheel = os.environ.get("VLLM_WHEEL")
    if not wheel or not Path(wheel).is_file():
        pytest.skip("set VLLM_WHEEL to a vllm-0.33.0 wheel (pip download vllm==0.33.0 --no-deps)")
    spec = importlib.util.spec_from_file_location("stubs_generate", STUBS / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = generate  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(generate)
        _, manifest, _ = generate.generate(Path(wheel))
    finally:
        del sys.modules[spec.name]
    assert manifest["extension_rule"] == RULE
