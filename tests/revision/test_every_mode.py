"""Every mode a tree has (issue 34, item 2): what a recipe starts is all shown, on trees
written here (the real trees: test_corpus). An entry that builds a generation driver with
no policy (the evaluation), a frozen group whose driver clears quantization before it
builds, a class the tree picks through a dict lookup, an environment named by an explicit
`py_executable`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.test_cli import run
from tests.revision.trees import OLD_FILES, config, write

# An evaluation entry: its whole config has no policy; its setup builds the generation
# driver on the top-level `generation:` block, through a local name.
EVAL_ENTRY = '''
from typing import TypedDict
from nemo_rl.models.generation.vllm_generation import VllmGeneration


class EvalConfig(TypedDict):
    seed: int


class GenerationConfig(TypedDict):
    backend: str


class MasterConfig(TypedDict):
    eval: EvalConfig
    generation: GenerationConfig


def setup(master_config: MasterConfig, tokenizer):
    generation_config = master_config["generation"]
    return VllmGeneration(generation_config)
'''

EVAL_CONFIG = """\
eval:
  seed: 1
generation:
  backend: vllm
  vllm_cfg:
    async_engine: true
"""


def _eval_tree(tmp_path: Path) -> Path:
    return write(tmp_path, {**OLD_FILES, "nemo_rl/evals/__init__.py": "",
                            "nemo_rl/evals/eval.py": EVAL_ENTRY})


def _check(*argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("check", "--no-verify", "--json", *argv)
    report: dict[str, Any] = json.loads(out)
    return code, report


def test_an_eval_config_shows_the_generation_worker_its_entry_builds(tmp_path: Path) -> None:
    root = _eval_tree(tmp_path)
    code, report = _check(config(root, "evals/eval.yaml", EVAL_CONFIG))
    assert (code, report["problems"]) == (0, [])
    assert [(w["section"], w["fqn"], w["env"]) for w in report["workers"]] == [
        ("generation", "nemo_rl.models.generation.workers.VllmAsyncGenerationWorker", "VLLM")]


def test_a_generation_block_no_entry_builds_is_not_judged(tmp_path: Path) -> None:
    """Without the evaluation entry, a top-level `generation:` block starts nothing."""
    root = write(tmp_path, OLD_FILES)
    code, report = _check(config(root, "evals/eval.yaml", EVAL_CONFIG))
    assert (code, report["workers"], report["problems"]) == (0, [], [])
