"""The tree's own rules decided through the helpers its `setup` calls (issue 34, item 1):
a helper of another module of the tree, imported as a module (`opd_module.is_...`), is
run on the config, and what a config block is at run time follows the model the tree
declares it with: a pydantic model's instance (no dict; `getattr` reads its fields with
their defaults; `model_dump` fills them in) or a TypedDict's plain dict. Trees written
here, never imported; upstream's own case (OPD teachers) in test_corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import run
from tests.revision.test_tree_rules import RULES_CONFIG, _tree
from tests.revision.trees import config, write

# A helper that tells a dict from a model, as upstream's `opd._opd_cfg` does; the dict
# path answers "not strict" whatever the config says, so the verdict shows which path the
# check took.
OPTIONS = '''
from typing import Any
from pydantic import BaseModel


def _block(master_config: Any) -> dict:
    if isinstance(master_config, dict):
        return {"strict": False}
    cfg = getattr(master_config, "strictness", None)
    if cfg is None:
        return {}
    if isinstance(cfg, BaseModel):
        return cfg.model_dump(exclude_none=True)
    return cfg


def is_strict(master_config: Any) -> bool:
    return bool(_block(master_config).get("strict", False))
'''

BLOCKS = '''
from typing import Optional, TypedDict
from pydantic import BaseModel, Field


class PolicyConfig(TypedDict):
    train_global_batch_size: int


class LossConfig(TypedDict):
    escape_shards: bool
'''

# Upstream's shape (2026-08): a pydantic MasterConfig whose blocks are TypedDicts.
MODELS = {
    "pydantic": BLOCKS + '''


class StrictConfig(BaseModel):
    strict: bool = True
    label: Optional[str] = None
    extra_keys: dict = Field(default_factory=dict)


class MasterConfig(BaseModel, extra="allow"):
    policy: PolicyConfig
    loss_fn: LossConfig
    strictness: Optional[StrictConfig] = None
''',
    "typeddict": BLOCKS + '''

class MasterConfig(TypedDict):
    policy: PolicyConfig
    loss_fn: LossConfig
    strictness: dict
''',
}

ALGORITHM = '''
from nemo_rl.algorithms import options as options_module
from nemo_rl.algorithms.models import MasterConfig
from nemo_rl.models.policy.lm_policy import Policy


def setup(master_config: MasterConfig, tokenizer):
    policy_config = master_config["policy"]
    strict = options_module.is_strict(master_config)
    if strict:
        assert policy_config["train_global_batch_size"] % 8 == 0, "strict runs take batches of 8"
    return Policy(None, policy_config)
'''

BATCH_12 = RULES_CONFIG.replace("train_global_batch_size: 16", "train_global_batch_size: 12")


def _fork(tmp_path: Path, models: str, options: str = OPTIONS) -> Path:
    return write(_tree(tmp_path), {
        "nemo_rl/algorithms/__init__.py": "", "nemo_rl/algorithms/options.py": options,
        "nemo_rl/algorithms/models.py": models, "nemo_rl/algorithms/fork.py": ALGORITHM})


def _check(path: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("check", "--no-verify", "--json", path)
    report: dict[str, Any] = json.loads(out)
    return code, report


@pytest.fixture(autouse=True)
def _no_escape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORK_IGNORE_SHARDS", "1")  # the Policy's own shard rule aside


@pytest.mark.parametrize(("strictness", "refused"), [
    ("strictness: {}", True),  # the model's default, filled in by model_dump
    ("strictness: {label: x}", True),
    ("strictness: {strict: false}", False),
    ("strictness: null", False),
])
def test_a_helper_of_another_module_decides_the_setup_s_rule(
        tmp_path: Path, strictness: str, refused: bool) -> None:
    root = _fork(tmp_path, MODELS["pydantic"])
    code, report = _check(config(root, "c.yaml", BATCH_12 + strictness + "\n"))
    if not refused:
        assert (code, report["problems"]) == (0, [])
        assert not any("fork.py" in line for line in report["skipped"])
        return
    assert code == 1
    [problem] = report["problems"]
    assert problem["path"] == "policy.train_global_batch_size"
    assert problem["message"].endswith(
        "at nemo_rl/algorithms/fork.py:11 (fork.setup): \"strict runs take batches of 8\"")
    # The guard's values, read through the helper, are part of what it was decided on.
    assert "strictness={...}" not in problem["message"]
    assert "policy.train_global_batch_size=12" in problem["message"]


def test_a_typeddict_config_is_the_dict_the_helper_tests_for(tmp_path: Path) -> None:
    """The same helper on a TypedDict MasterConfig takes its dict path ("not strict"):
    no refusal, where the pydantic model's instance takes the other."""
    root = _fork(tmp_path, MODELS["typeddict"])
    code, report = _check(config(root, "c.yaml", BATCH_12 + "strictness: {strict: true}\n"))
    assert (code, report["problems"]) == (0, [])
    root = _fork(tmp_path / "pydantic", MODELS["pydantic"])
    code, report = _check(config(root, "c.yaml", BATCH_12 + "strictness: {strict: true}\n"))
    assert [p["path"] for p in report["problems"]] == ["policy.train_global_batch_size"]


@pytest.mark.parametrize(("models", "reason"), [
    # A validator may change what the model is given: its dump is not decided.
    (MODELS["pydantic"].replace(
        "    extra_keys: dict = Field(default_factory=dict)\n",
        "    extra_keys: dict = Field(default_factory=dict)\n\n"
        "    @field_validator('strict')\n    def flip(cls, v):\n        return not v\n"),
     "StrictConfig is not a model whose dump is decided here"),
    # A default this check does not compute.
    (MODELS["pydantic"].replace("    strict: bool = True",
                                "    strict: bool = Field(default_factory=make_default)"),
     "StrictConfig.strict has no default this check computes"),
    # Hostile: models whose bases are each other; and a base that is not the tree's.
    (MODELS["pydantic"].replace("class StrictConfig(BaseModel):",
                                "class StrictConfig(LoopConfig):\n    pass\n\n\n"
                                "class LoopConfig(StrictConfig):"),
     "branches on isinstance(cfg, BaseModel), a test this check does not decide"),
    (MODELS["pydantic"].replace("class StrictConfig(BaseModel):",
                                "class StrictConfig(SomeLibraryModel):"),
     "branches on isinstance(cfg, BaseModel), a test this check does not decide"),
])
def test_a_model_whose_instance_is_not_decided_leaves_the_rule_undecided(
        tmp_path: Path, models: str, reason: str) -> None:
    assert models != MODELS["pydantic"]
    root = _fork(tmp_path, models)
    code, report = _check(config(root, "c.yaml", BATCH_12 + "strictness: {}\n"))
    assert (code, report["problems"]) == (0, [])
    [line] = [line for line in report["skipped"] if "fork.py:11" in line]
    assert "undecided" in line and reason in line, line


def test_a_model_dump_without_exclude_none_keeps_the_nones(tmp_path: Path) -> None:
    """`.get("label", "x")` on a dump that keeps `label: None` is None, not "x"."""
    options = OPTIONS.replace(
        'return bool(_block(master_config).get("strict", False))',
        'return _block(master_config).get("label", "x") is None').replace(
        "cfg.model_dump(exclude_none=True)", "cfg.model_dump()")
    root = _fork(tmp_path, MODELS["pydantic"], options)
    code, report = _check(config(root, "c.yaml", BATCH_12 + "strictness: {strict: false}\n"))
    assert [p["path"] for p in report["problems"]] == ["policy.train_global_batch_size"]
    dropped = options.replace("cfg.model_dump()", "cfg.model_dump(exclude_none=True)")
    root = _fork(tmp_path / "dropped", MODELS["pydantic"], dropped)
    code, report = _check(config(root, "c.yaml", BATCH_12 + "strictness: {strict: false}\n"))
    assert (code, report["problems"]) == (0, [])
