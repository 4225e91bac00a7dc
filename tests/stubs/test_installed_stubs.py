"""From a project that is not this repository, the installed `vllm-stubs` is all it takes.

No config file, no mypy_path, no search-path: mypy and pyrefly find the stub-only
distribution in the environment (PEP 561), accept real vLLM keywords that NeMo-RL
never passes, and reject a misspelled one.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
USER_CODE = '''\
from vllm import LLM, AsyncEngineArgs, SamplingParams


def build(model: str) -> LLM:
    return LLM(model, max_num_seqs=8, kv_cache_dtype="fp8", enable_prefix_caching=True)


def engine_args(model: str) -> AsyncEngineArgs:
    return AsyncEngineArgs(model, max_num_seqs=8, kv_cache_dtype="fp8", enable_prefix_caching=True)


def sampling() -> SamplingParams:
    return SamplingParams(max_tokens=4, stop=["</s>"], repetition_penalty=1.1)


def misspelled(model: str) -> LLM:
    return LLM(model, max_num_seq=8)
'''
MISSPELLED_LINE = 17


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        importlib.metadata.distribution("vllm-stubs")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("vllm-stubs is not installed in this environment; run `make setup`")
    folder = tmp_path_factory.mktemp("user_project")
    (folder / "job.py").write_text(USER_CODE)
    return folder


def _env() -> dict[str, str]:
    # As in an activated virtualenv: how pyrefly finds the interpreter's site-packages.
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    env["VIRTUAL_ENV"] = str(BIN.parent)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_mypy_accepts_real_keywords_and_rejects_a_misspelled_one(project: Path) -> None:
    done = subprocess.run(
        [str(BIN / "mypy"), "--strict", "-O", "json", "--no-error-summary", "job.py"],
        cwd=project, env=_env(), capture_output=True, text=True, timeout=300, check=False,
    )
    errors = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    found = [(e["line"], e["code"]) for e in errors if e["severity"] == "error"]
    assert found == [(MISSPELLED_LINE, "call-arg")], done.stdout + done.stderr
    assert "max_num_seqs" in errors[0]["message"]  # "did you mean"


def test_pyrefly_accepts_real_keywords_and_rejects_a_misspelled_one(project: Path) -> None:
    done = subprocess.run(
        [str(BIN / "pyrefly"), "check", "--output-format", "json", "job.py"],
        cwd=project, env=_env(), capture_output=True, text=True, timeout=300, check=False,
    )
    report = json.loads(done.stdout)
    found = [(e["line"], e["name"]) for e in report["errors"] if e["severity"] == "error"]
    assert found == [(MISSPELLED_LINE, "unexpected-keyword")], done.stdout + done.stderr
