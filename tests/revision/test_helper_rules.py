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

from tests.cli_run import run_cli as run
from tests.revision.test_tree_rules import ALGORITHM as TYPED_ALGORITHM
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
     "StrictConfig may change what it is given (a validator, an __init__, an alias)"),
    # A default this check does not compute.
    (MODELS["pydantic"].replace("    strict: bool = True",
                                "    strict: bool = Field(default_factory=make_default)"),
     "StrictConfig.strict is required or has no default this check computes"),
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


# A setup that sums the nodes its teachers keep in a loop over what a helper of another
# module builds (imported inside the setup, as GRPO imports
# `create_teacher_configs_from_opd_config`): pydantic resources merged from defaults and
# per-teacher overrides, each turned into a dataclass.
TEACHERS = '''
from dataclasses import dataclass
from pydantic import BaseModel


class Resources(BaseModel, extra="allow"):
    num_nodes: int = 1
    gpus_per_node: int = 8


@dataclass
class Teacher:
    alias: str
    num_nodes: int
    gpus_per_node: int
    overrides: dict


def teacher_configs(opd_cfg: dict) -> list:
    defaults = dict(opd_cfg.get("defaults", {}))
    overrides = dict(opd_cfg.get("overrides", {}))
    out = []
    for alias, model_name in opd_cfg.get("teachers", {}).items():
        merged = {**defaults, **dict(overrides.get(alias, {}))}
        res = Resources(**merged)
        out.append(Teacher(alias=alias, num_nodes=res.num_nodes,
                           gpus_per_node=res.gpus_per_node,
                           overrides={**(res.model_extra or {})}))
    return out
'''

LOOPING_SETUP = '''
from typing import TypedDict
from nemo_rl.models.policy.lm_policy import Policy


class PolicyConfig(TypedDict):
    train_global_batch_size: int


class ClusterConfig(TypedDict):
    num_nodes: int


class MasterConfig(TypedDict):
    policy: PolicyConfig
    cluster: ClusterConfig
    opd: dict


def setup(master_config: MasterConfig, tokenizer):
    policy_config = master_config["policy"]
    cluster_config = master_config["cluster"]
    teacher_nodes = 0
    from nemo_rl.algorithms.teachers import teacher_configs
    for i, teacher in enumerate(teacher_configs(master_config["opd"])):
        assert teacher.gpus_per_node <= cluster_config["gpus_per_node"], (
            f"teacher {i} ({teacher.alias}) does not fit on one node")
        teacher_nodes += teacher.num_nodes
    assert cluster_config["num_nodes"] - teacher_nodes > 0, "no node is left for the policy"
    return Policy(None, policy_config)
'''

LOOPING_CONFIG = RULES_CONFIG + """\
cluster: {gpus_per_node: 8, num_nodes: 3}
opd:
  teachers: {a: model-a, b: model-b}
  defaults: {num_nodes: 1}
  overrides: {}
"""


def _looping(tmp_path: Path) -> Path:
    return write(_tree(tmp_path), {
        "nemo_rl/algorithms/__init__.py": "", "nemo_rl/algorithms/teachers.py": TEACHERS,
        "nemo_rl/algorithms/fork.py": LOOPING_SETUP})


@pytest.mark.parametrize(("change", "refused"), [
    (("overrides: {}", "overrides: {}"), []),
    # Teacher b asks for 16 GPUs per node: its turn refuses, with its alias.
    (("overrides: {}", "overrides: {b: {gpus_per_node: 16}}"),
     [("fork.py:26", "teacher 1 (b) does not fit on one node")]),
    # Both do: the loop's rule is said once, with the first turn that refuses.
    (("defaults: {num_nodes: 1}", "defaults: {num_nodes: 1, gpus_per_node: 16}"),
     [("fork.py:26", "teacher 0 (a) does not fit on one node")]),
    # Two nodes each: none is left of three.
    (("defaults: {num_nodes: 1}", "defaults: {num_nodes: 2}"),
     [("fork.py:29", "no node is left for the policy")]),
    # An extra key is kept by the model (extra="allow") and does not change the sizes.
    (("defaults: {num_nodes: 1}", "defaults: {num_nodes: 1, precision: bf16}"), []),
])
def test_a_loop_over_what_a_helper_builds_is_followed_turn_by_turn(
        tmp_path: Path, change: tuple[str, str], refused: list[tuple[str, str]]) -> None:
    root = _looping(tmp_path)
    code, report = _check(config(root, "c.yaml", LOOPING_CONFIG.replace(*change)))
    assert (code, [(p["message"].rpartition(" at nemo_rl/algorithms/")[2].partition(" (")[0],
                    p["message"].rpartition(": ")[2].strip('"')) for p in report["problems"]]
            ) == (1 if refused else 0, refused)
    assert not any("fork.py" in line for line in report["skipped"])


def test_a_loop_this_check_does_not_follow_is_undecided(tmp_path: Path) -> None:
    """Hostile: more turns than `MAX_TURNS` (64), or a loop over a value the config does not
    give; each rule in it is one undecided line, never a problem."""
    root = _looping(tmp_path)
    many = "{" + ", ".join(f"t{i}: m{i}" for i in range(100)) + "}"
    code, report = _check(config(root, "many.yaml", LOOPING_CONFIG.replace(
        "{a: model-a, b: model-b}", many).replace("num_nodes: 3}", "num_nodes: 300}")))
    assert (code, report["problems"]) == (0, [])
    assert any(line.startswith("tree rule nemo_rl/algorithms/fork.py:26 ") and line.endswith(
        "it runs in a loop, which this check does not follow") for line in report["skipped"])
    write(root, {"nemo_rl/algorithms/fork.py": LOOPING_SETUP.replace(
        'teacher_configs(master_config["opd"])', "teacher_configs(ask_the_scheduler())")})
    code, report = _check(config(root, "asked.yaml", LOOPING_CONFIG))
    assert (code, report["problems"]) == (0, [])
    assert sum("fork.py:26 " in line or "fork.py:29 " in line
               for line in report["skipped"]) == 2


def test_a_field_without_a_default_is_required(tmp_path: Path) -> None:
    """`Field(min_length=1)` and `Field(..., description=...)` give no default: the entry's
    config requires them; `Field(default=...)`, `Field(None)` and a factory do not."""
    from nemo_rl_workers.tree.entry_configs import required_keys
    from nemo_rl_workers.tree.source_kept import tree_source

    root = write(tmp_path, {"nemo_rl/__init__.py": "", "nemo_rl/algorithms/__init__.py": "",
                            "nemo_rl/algorithms/entry.py": '''
from typing import Optional
from pydantic import BaseModel, Field


class Block(BaseModel):
    x: int = 1


class MasterConfig(BaseModel):
    policy: Block
    teachers: list[Block] = Field(min_length=1)
    cluster: Block = Field(..., description="the cluster")
    data: Block = Field(default_factory=Block)
    logger: Optional[Block] = Field(None)
    loss_fn: Block = Field(default=Block())


def setup(master_config: MasterConfig):
    return master_config
'''})
    assert required_keys(tree_source(root), "nemo_rl.algorithms.entry") == (
        "cluster", "policy", "teachers")


def test_a_block_validated_into_a_model_is_its_instance(tmp_path: Path) -> None:
    """`StrictConfig.model_validate(block).model_dump()` of a TypedDict config's block: the
    model's default fills in what the YAML leaves out; a model with a validator is not run."""
    options = OPTIONS.replace(
        '    if isinstance(master_config, dict):\n        return {"strict": False}\n',
        '    if isinstance(master_config, dict):\n'
        '        return StrictConfig.model_validate(master_config["strictness"]).model_dump()\n'
    ).replace("from pydantic import BaseModel\n", "from pydantic import BaseModel\n"
              "from nemo_rl.algorithms.models import StrictConfig\n")
    strict = MODELS["pydantic"].split("class MasterConfig")[0]
    models = strict + MODELS["typeddict"].split("\n\n", 1)[1]
    root = _fork(tmp_path, models, options)
    code, report = _check(config(root, "c.yaml", BATCH_12 + "strictness: {label: x}\n"))
    assert [p["path"] for p in report["problems"]] == ["policy.train_global_batch_size"]
    code, report = _check(config(root, "off.yaml", BATCH_12 + "strictness: {strict: false}\n"))
    assert (code, report["problems"]) == (0, [])
    validated = models.replace("    extra_keys: dict = Field(default_factory=dict)\n",
                               "    extra_keys: dict = Field(default_factory=dict)\n\n"
                               "    @model_validator(mode='after')\n"
                               "    def check(self):\n        return self\n")
    root = _fork(tmp_path / "validated", validated, options)
    code, report = _check(config(root, "c.yaml", BATCH_12 + "strictness: {label: x}\n"))
    assert (code, report["problems"]) == (0, [])
    [line] = [line for line in report["skipped"] if "fork.py:11" in line]
    assert line.endswith("StrictConfig may change what it is given (a validator, an "
                         "__init__, an alias), code this check does not run)"), line


def test_nested_loops_stop_the_walk_with_one_line(tmp_path: Path) -> None:
    """Hostile: three nested loops of 60 turns over the config's list (216,000 statements);
    the walk stops after 5,000 and says where, and the rule after them is not passed."""
    nested = LOOPING_SETUP.replace(
        '    for i, teacher in enumerate(teacher_configs(master_config["opd"])):\n',
        '    for a in master_config["opd"]["many"]:\n'
        '        for b in master_config["opd"]["many"]:\n'
        '            for c in master_config["opd"]["many"]:\n'
        '                teacher_nodes += 0\n'
        '    for i, teacher in enumerate(teacher_configs(master_config["opd"])):\n')
    root = write(_looping(tmp_path), {"nemo_rl/algorithms/fork.py": nested})
    many = "  many: [" + ", ".join(["1"] * 60) + "]\n"
    code, report = _check(config(root, "c.yaml", LOOPING_CONFIG.replace(
        "defaults: {num_nodes: 1}", "defaults: {num_nodes: 2}") + many))
    assert (code, report["problems"]) == (0, [])
    assert any(line.startswith("tree rules of fork.setup from nemo_rl/algorithms/fork.py:")
               and line.endswith("undecided: the walk stops after 5000 statements (its loops "
                                 "run that many)") for line in report["skipped"])


@pytest.mark.parametrize(("teachers", "reason"), [
    (TEACHERS.replace("class Resources(BaseModel, extra=\"allow\"):",
                      "class Resources(Looped):\n    pass\n\n\nclass Looped(Resources):"),
     "Resources is no pydantic model or dataclass whose instance is decided here"),
    (TEACHERS.replace('extra="allow"', 'extra="forbid"'),
     "Resources keeps or refuses extra keys in a way not decided here"),
    (TEACHERS.replace("    overrides: dict\n",
                      "    overrides: dict\n\n    def __post_init__(self):\n"
                      "        self.num_nodes = 0\n"),
     "Teacher is a dataclass whose instance is not decided here"),
    (TEACHERS.replace("alias=alias, ", ""),
     "Teacher.alias is not given and has no default this check computes"),
])
def test_an_instance_this_check_does_not_make_leaves_the_loop_undecided(
        tmp_path: Path, teachers: str, reason: str) -> None:
    assert teachers != TEACHERS
    root = write(_looping(tmp_path), {"nemo_rl/algorithms/teachers.py": teachers})
    code, report = _check(config(root, "c.yaml", LOOPING_CONFIG.replace(
        "defaults: {num_nodes: 1}", "defaults: {num_nodes: 2, precision: bf16}")))
    assert (code, report["problems"]) == (0, [])
    lines = [line for line in report["skipped"] if "fork.py:29 " in line]
    assert len(lines) == 1 and reason in lines[0], lines


# test_tree_rules' TypedDict entry config, with a setup that changes its policy block.
ASSIGNING_SETUP = TYPED_ALGORITHM.split("\ndef setup")[0] + '''
def setup(master_config: MasterConfig, tokenizer):
    policy_config = master_config["policy"]
    same = master_config["policy"]
    CHANGE
    assert policy_config["train_global_batch_size"] % 8 == 0, "batches of 8"
    return Policy(None, same)
'''


@pytest.mark.parametrize(("change", "verdict"), [
    # The block changes in place, seen through every name bound to it.
    ('same["train_global_batch_size"] = 12', "refuses"),
    ('master_config["policy"]["train_global_batch_size"] = 16', "passes"),
    # A value this check does not compute, a branch the config does not decide, a method
    # that changes the block in place: what the rule reads is no longer known.
    ('same["train_global_batch_size"] = ask_the_scheduler()', "undecided"),
    ('if ask_the_scheduler():\n        same["train_global_batch_size"] = 12', "undecided"),
    ('same.update(ask_the_scheduler())', "undecided"),
    ('if ask_the_scheduler():\n        same.setdefault("train_global_batch_size", 12)',
     "undecided"),
    # A change on values the walk knows is made on its copy, as the run makes it.
    ('same.setdefault("train_global_batch_size", 12)', "passes"),
    ('same.update({"train_global_batch_size": 12})', "refuses"),
    ('same.pop("train_global_batch_size", None)', "undecided"),
])
def test_what_the_setup_assigns_by_item_is_what_its_rules_read(
        tmp_path: Path, change: str, verdict: str) -> None:
    root = write(_tree(tmp_path), {"nemo_rl/algorithms/__init__.py": "",
                                   "nemo_rl/algorithms/fork.py": ASSIGNING_SETUP.replace(
                                       "CHANGE", change)})
    code, report = _check(config(root, "c.yaml", RULES_CONFIG))  # the config's batch: 16
    lines = [line for line in report["skipped"] if "fork.py" in line]
    refused = [p["message"] for p in report["problems"] if "fork.py" in p["message"]]
    assert (bool(refused), bool(lines)) == (verdict == "refuses", verdict == "undecided")
    if verdict == "undecided":  # what changed it is said
        assert "policy_config changes: " in lines[0] or \
            "policy_config is set differently where" in lines[0] or \
            "['train_global_batch_size'] is assigned at nemo_rl/algorithms/fork.py:" in \
            lines[0] or "the config has no policy.train_global_batch_size" in lines[0], lines


VALIDATORS = '''
def validate_policy(policy_config, strict=False):
    if policy_config.get("checkpoint_engine") is not None:
        raise ValueError("policy.checkpoint_engine was replaced by policy.refit_transport")
    check_batches(policy_config)


def check_batches(policy_config):
    assert policy_config["train_global_batch_size"] % 4 == 0, "batches of 4"
    check_batches(policy_config)  # a loop of calls: walked as deep as MAX_HELPER_DEPTH


def log_it(message):
    assert message, "never a rule on the config"
'''

VALIDATING_SETUP = ASSIGNING_SETUP.replace(
    "from nemo_rl.models.policy.lm_policy import Policy\n",
    "from nemo_rl.models.policy.lm_policy import Policy\n"
    "from nemo_rl.algorithms.validators import log_it, validate_policy\n").replace(
    "    CHANGE\n", "    log_it('starting')\n    validate_policy(policy_config)\n")


@pytest.mark.parametrize(("change", "refused"), [
    (("train_global_batch_size: 16", "train_global_batch_size: 16"), []),
    (("train_global_batch_size: 16", "train_global_batch_size: 16\n  checkpoint_engine: x"),
     [("validators.py:4", "policy.checkpoint_engine was replaced by policy.refit_transport")]),
    # A helper of the helper: its assertion, said once although its call loops.
    (("train_global_batch_size: 16", "train_global_batch_size: 18"),
     [("validators.py:9", "batches of 4"), ("fork.py:26", "batches of 8")]),
])
def test_the_rules_of_a_function_the_setup_calls_on_a_block_are_the_tree_s(
        tmp_path: Path, change: tuple[str, str], refused: list[tuple[str, str]]) -> None:
    root = write(_tree(tmp_path), {
        "nemo_rl/algorithms/__init__.py": "", "nemo_rl/algorithms/validators.py": VALIDATORS,
        "nemo_rl/algorithms/fork.py": VALIDATING_SETUP})
    code, report = _check(config(root, "c.yaml", RULES_CONFIG.replace(*change)))
    assert (code, [(p["message"].rpartition(" at nemo_rl/algorithms/")[2].partition(" (")[0],
                    p["message"].rpartition(": ")[2].strip('"')) for p in report["problems"]]
            ) == (1 if refused else 0, refused)
    if refused:
        assert "(validators.validate_policy)" in report["problems"][0]["message"] or \
            "(validators.check_batches)" in report["problems"][0]["message"]
    assert not any("never a rule" in line or "log_it" in line for line in report["skipped"])


def test_a_function_that_starts_workers_ends_the_setup_s_rules(tmp_path: Path) -> None:
    """What the setup asserts after a helper that builds the policy is not before any
    worker starts: not judged."""
    validators = VALIDATORS + '''

def build(policy_config):
    from nemo_rl.models.policy.lm_policy import Policy
    return Policy(None, policy_config)
'''
    setup = VALIDATING_SETUP.replace("    validate_policy(policy_config)\n",
                                     "    build(policy_config)\n").replace(
        "import log_it, validate_policy", "import build, log_it")
    root = write(_tree(tmp_path), {
        "nemo_rl/algorithms/__init__.py": "", "nemo_rl/algorithms/validators.py": validators,
        "nemo_rl/algorithms/fork.py": setup})
    code, report = _check(config(root, "c.yaml", RULES_CONFIG.replace(
        "train_global_batch_size: 16", "train_global_batch_size: 18")))
    assert (code, report["problems"]) == (0, [])


def test_models_nested_past_the_limit_leave_the_rule_undecided(tmp_path: Path) -> None:
    """Hostile: twelve models, each the default of the one before (`MAX_DUMP_DEPTH` is 8):
    the dump is not made, and the rule under it is one undecided line."""
    chain = "".join(f"\n\nclass Level{i}(BaseModel):\n    inner: Level{i + 1} = "
                    f"Field(default_factory=Level{i + 1})\n" for i in range(11, -1, -1))
    models = MODELS["pydantic"].replace(
        "class StrictConfig(BaseModel):\n",
        "class Level12(BaseModel):\n    x: int = 1\n" + chain + "\n\nclass StrictConfig(BaseModel):"
        "\n    levels: Level0 = Field(default_factory=Level0)\n")
    root = _fork(tmp_path, models)
    code, report = _check(config(root, "c.yaml", BATCH_12 + "strictness: {}\n"))
    assert (code, report["problems"]) == (0, [])
    [line] = [line for line in report["skipped"] if "fork.py:11" in line]
    assert "its models nest too deeply to follow" in line, line
