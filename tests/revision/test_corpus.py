"""The revision model on the two real trees (upstream at 7ea279a and at 2025-09): each tree
judges its own configs. Skipped where the corpus is absent."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from nemo_rl_workers.checks.config.config_check import load_for_check
from nemo_rl_workers.commands.cli import main
from nemo_rl_workers.commands.migrate import run_migrate
from nemo_rl_workers.tree.revision_build import build_revision
from tests.corpus import TREES, corpus_tree

REPO = Path(__file__).resolve().parents[2]
CORPORA = TREES


@pytest.fixture(params=sorted(CORPORA))
def tree(request: pytest.FixtureRequest) -> Path:
    root = corpus_tree(request.param)
    return root


def _configs(root: Path) -> list[str]:
    return sorted(str(p) for p in (root / "examples" / "configs").rglob("*.yaml"))


def test_the_table_of_each_tree(tree: Path) -> None:
    """Checked by hand against each tree's lm_policy.py and vllm_generation.py."""
    revision = build_revision(tree, "--nemo-rl")
    assert (revision.schema, revision.has_v2) == ("dtensor_cfg", True)
    assert revision.defaults["dtensor_cfg._v2"] is False  # `.get("_v2", False)`: DTensor v1
    policy = {r.switches: r.default_fqn.rsplit(".", 1)[1] for r in revision.rows_of("Policy")}
    assert policy == {
        "megatron_cfg.enabled=true": "MegatronPolicyWorker",
        "dtensor_cfg._v2=true and dtensor_cfg.enabled=true and megatron_cfg.enabled=false":
            "DTensorPolicyWorkerV2",
        "dtensor_cfg._v2=false and dtensor_cfg.enabled=true and megatron_cfg.enabled=false":
            "DTensorPolicyWorker",
    }
    generation = {r.switches: r.default_fqn.rsplit(".", 1)[1]
                  for r in revision.rows_of("VllmGeneration")}
    assert generation == {"async_engine=true": "VllmAsyncGenerationWorker",
                          "async_engine=false": "VllmGenerationWorker"}
    if tree == CORPORA["2026-08"]:
        assert revision.extension_field == "constructor"
        assert revision.vllm_pin == "0.25.1"
        quantized = {r.default_fqn.rsplit(".", 1)[1]: (r.quantized_fqn or "").rsplit(".", 1)[-1]
                     for r in revision.rows_of("Policy")}
        assert quantized == {"MegatronPolicyWorker": "MegatronQuantPolicyWorker",
                             "DTensorPolicyWorkerV2": "DTensorQuantPolicyWorkerV2",
                             "DTensorPolicyWorker": "DTensorQuantPolicyWorker"}
        assert {"generation", "policy", "value", "teacher"} <= set(revision.roles())
        assert {"SGLangGeneration", "TrtllmGeneration", "VllmGeneration"} <= {
            r.driver for r in revision.rows if r.role == "generation"}
    else:
        assert revision.extension_field == "not read"
        assert revision.vllm_pin == "0.10.0"
        assert set(revision.roles()) >= {"generation", "policy"}


def test_check_of_a_tree_s_own_configs(tree: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    files = _configs(tree)
    main(["check", "--no-verify", "--json", *files], out, err)
    reports = json.loads(out.getvalue())["configs"]
    # Each report's file by its place (a report's own name may be redacted: an environment
    # value another test read through ${oc.env:...} can be part of a file name).
    for file, report in zip(files, reports, strict=True):
        report["file"] = file
    usable = [r for r in reports if r["error"] is None]
    assert len(usable) >= 58
    resolved = 0
    for report in usable:
        assert report["nemo_rl"]["path"] == str(tree) and report["nemo_rl"]["schema"] == (
            "dtensor_cfg"), report["config"]
        rules = {p["rule"] for p in report["problems"]}
        assert not any(r.startswith("outdated") for r in rules), report["config"]
        # Every policy and generation section is resolved through the tree's table, or
        # named undecided with the reason: never passed over.
        config, _ = load_for_check(report["file"])
        sections = {w["section"] for w in report["workers"]}
        named = sections | {p["path"] for p in report["problems"] if p["rule"].startswith("tree")}
        # A driver that starts no worker of its own (Megatron generation) is said so.
        named |= {note.split(": ", 1)[0] for note in report["skipped"]
                  if note.endswith("starts no worker class of its own")}
        policy = config.get("policy")
        if isinstance(policy, dict):
            assert "policy" in named, report["config"]
            if isinstance(policy.get("generation"), dict):
                assert "policy.generation" in named, report["config"]
        for worker in report["workers"]:
            assert worker["fqn"].startswith("nemo_rl.") and worker["rule"] == "tree", worker
        resolved += "policy" in sections
    assert resolved >= 51


def test_migrate_check_against_the_tree_changes_nothing(tree: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_migrate([str(tree / "examples" / "configs"), "--check"], out, err) == 0
    assert out.getvalue().splitlines()[-1].startswith("0 would change, ")
    assert len(err.getvalue().splitlines()) == 1
    assert "left unchanged: they are on the schema of the NeMo-RL they belong to" in (
        err.getvalue())


def test_list_shows_every_role_and_backend(tree: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["list", "--nemo-rl", str(tree), "--json"], out, err) == 0
    listing = json.loads(out.getvalue())
    drivers = {row["driver"] for row in listing["rows"]}
    assert {"Policy", "VllmGeneration"} <= drivers
    if tree == CORPORA["2026-08"]:
        assert {"SGLangGeneration", "TrtllmGeneration", "Value", "TeacherWorkerGroup"} <= drivers
    out = io.StringIO()
    assert main(["list", "--nemo-rl", str(tree)], out, err) == 0
    # The release its nemo_rl/package_info.py says (read as data; the corpora have no .git).
    version = {CORPORA["2026-08"]: "0.6.0", CORPORA["2025-09"]: "0.4.0rc0"}[tree]
    assert out.getvalue().splitlines()[0] == (
        f"NeMo-RL: {tree}, version {version} (dtensor_cfg schema with _v2; --nemo-rl)")


# What each tree's own code refuses before allocation, checked by hand against its source
# (issue 34): config -> (rule, config path, the tree's file:line). The 2025-09 tree has no
# tensor-parallel logprob check, so its six TP >= 4 recipes that the reference's built-in
# rule used to fail are not refused; the 2026 tree has that check (lm_policy.py:212), and
# its grpo setup asserts batch_multiplier == 1 without dynamic sampling (grpo.py:571).
TP_2026 = ("tree.refuses", "policy.train_micro_batch_size",
           "nemo_rl/models/policy/lm_policy.py:212")
REFUSED: dict[str, dict[str, tuple[str, str, str]]] = {
    "2025-09": {},
    "2026-08": {
        "examples/configs/prorlv2_1_moe.v2.yaml": (
            "tree.refuses", "grpo.batch_multiplier", "nemo_rl/algorithms/grpo.py:571"),
        "examples/configs/recipes/llm/grpo-gemma3-27b-it-8n4g-fsdp2tp4-actckpt-long.yaml": TP_2026,
        "examples/configs/recipes/llm/grpo-gemma3-27b-it-8n8g-fsdp2tp8-actckpt-long.yaml": TP_2026,
        "examples/configs/recipes/llm/grpo-qwen3-30ba3b-8n8g-megatron.yaml": TP_2026,
        "examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n8g-40K.yaml": TP_2026,
    },
}
# No false verdict: the NeMo-Gym distillation recipe (nano3) that upstream launches through
# examples/nemo_gym/run_distillation_nemo_gym.py, which sets vllm_cfg.async_engine = True
# before setup, is judged through that entry (its suite script's), so NeMo-Gym's own
# assertion (nemo_gym.py:90) holds (issue 44; test_corpus_launches).
KNOWN_FALSE: dict[str, dict[str, tuple[str, str, str]]] = {"2025-09": {}, "2026-08": {}}


def test_a_problem_only_where_the_tree_refuses_the_config(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check --nemo-rl .` of every shipped config, from the tree's root."""
    monkeypatch.delenv("NRL_IGNORE_TP_ACCURACY_CHECK", raising=False)
    monkeypatch.chdir(tree)
    files = [str(Path(f).relative_to(tree)) for f in _configs(tree)]
    out, err = io.StringIO(), io.StringIO()
    main(["check", "--nemo-rl", ".", "--no-verify", "--json", *files], out, err)
    reports = json.loads(out.getvalue())["configs"]
    found: dict[str, tuple[str, str, str]] = {}
    for file, report in zip(files, reports, strict=True):
        for problem in report["problems"]:
            where = problem["message"].rpartition(" at ")[2].partition(" (")[0] if (
                problem["rule"] == "tree.refuses") else ""
            found[file] = (problem["rule"], problem["path"], where)
    name = next(k for k, v in CORPORA.items() if v == tree)
    assert found == REFUSED[name] | KNOWN_FALSE[name]


def test_the_older_tree_has_no_tensor_parallel_logprob_rule(monkeypatch: pytest.MonkeyPatch,
                                                            ) -> None:
    root = corpus_tree("2025-09")
    monkeypatch.delenv("NRL_IGNORE_TP_ACCURACY_CHECK", raising=False)
    monkeypatch.chdir(root)
    out, err = io.StringIO(), io.StringIO()
    config = "examples/configs/grpo_math_70B_megatron.yaml"  # TP 8, micro 1, logprob 2
    assert main(["check", "-v", "--nemo-rl", ".", "--no-verify", config], out, err) == 0
    lines = out.getvalue().splitlines()
    assert not any(line.startswith("  problem:") for line in lines) and lines[-1] == "  ok"
    # The reference's built-in rule would refuse it (on the renamed keys).
    assert main(["check", "--reference", "--no-verify", config], out, err) == 1


def test_the_2026_tree_s_tensor_parallel_rule_and_its_escape(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree's own TP >= 4 assertion, its message, and the variable it reads."""
    root = corpus_tree("2026-08")
    monkeypatch.delenv("NRL_IGNORE_TP_ACCURACY_CHECK", raising=False)
    monkeypatch.chdir(root)
    config = "examples/configs/recipes/llm/grpo-qwen3-30ba3b-8n8g-megatron.yaml"
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", "--nemo-rl", ".", "--no-verify", config], out, err) == 1
    problem = next(line for line in out.getvalue().splitlines() if "problem:" in line)
    assert problem.startswith(
        f"  problem: {config}:10: policy.train_micro_batch_size: this NeMo-RL refuses the "
        "config before any worker starts: assert config['train_micro_batch_size'] == "
        "config['logprob_batch_size'] fails (policy.train_micro_batch_size=1, "
        "policy.logprob_batch_size=4, policy.megatron_cfg.tensor_model_parallel_size=4, "
        "$NRL_IGNORE_TP_ACCURACY_CHECK is unset) at nemo_rl/models/policy/lm_policy.py:212 "
        "(Policy.__init__): \"There is a known batch-variant accuracy issue with TP>=4")
    monkeypatch.setenv("NRL_IGNORE_TP_ACCURACY_CHECK", "1")
    assert main(["check", "--nemo-rl", ".", "--no-verify", config], io.StringIO(), err) == 0


def test_the_rule_s_own_hint_meets_the_tree_s_batch_assertion(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """force_on_policy_ratio (the TP rule's third fix) makes GRPO's setup set the escape
    variable (grpo.py:707), so Policy's TP assertion passes; but setup asserts first that
    train_global_batch_size is num_prompts_per_step x num_generations_per_prompt
    (grpo.py:701), which this recipe (64 x 32 != 512) fails."""
    root = corpus_tree("2026-08")
    monkeypatch.delenv("NRL_IGNORE_TP_ACCURACY_CHECK", raising=False)
    monkeypatch.chdir(root)
    out, err = io.StringIO(), io.StringIO()
    config = "examples/configs/recipes/llm/grpo-qwen3-30ba3b-8n8g-megatron.yaml"
    code = main(["check", "--nemo-rl", ".", "--no-verify", "--json", config,
                 "loss_fn.force_on_policy_ratio=true"], out, err)
    report = json.loads(out.getvalue())
    assert code == 1
    assert [(p["path"], "nemo_rl/algorithms/grpo.py:701 (grpo.setup)" in p["message"])
            for p in report["problems"]] == [("grpo.num_prompts_per_step", True)]
    assert "grpo.num_prompts_per_step=64, grpo.num_generations_per_prompt=32, " \
           "policy.train_global_batch_size=512" in report["problems"][0]["message"]


def test_the_2026_tree_s_generation_cluster_rule_runs_on_its_inference_cluster(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """VllmGeneration.__init__ asserts `cluster.world_size() % self.model_parallel_size
    == 0` (vllm_generation.py:121); GRPO builds it on `inference_cluster` (grpo.py:1189,
    1356), which is the policy's one-GPU cluster on grpo_math_1B (colocated, grpo.py:843)."""
    root = corpus_tree("2026-08")
    monkeypatch.chdir(root)
    config = "examples/configs/grpo_math_1B.yaml"
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", "--nemo-rl", ".", "--no-verify", "--json", config], out, err) == 0
    assert not any("vllm_generation.py:121" in line
                   for line in json.loads(out.getvalue())["skipped"])
    out = io.StringIO()
    code = main(["check", "--nemo-rl", ".", "--no-verify", "--json", config,
                 "policy.generation.vllm_cfg.tensor_parallel_size=2"], out, err)
    [problem] = json.loads(out.getvalue())["problems"]
    assert code == 1
    assert problem["message"].endswith(
        "(cluster.gpus_per_node=1, cluster.num_nodes=1, "
        "policy.generation.vllm_cfg.tensor_parallel_size=2, "
        "policy.generation.vllm_cfg.pipeline_parallel_size=1) at "
        "nemo_rl/models/generation/vllm/vllm_generation.py:121 (VllmGeneration.__init__): "
        "\"World size must be a multiple of model parallel size. Got world size 1 and model "
        "parallel size (TP * PP) 2.\"")


def test_a_recipe_that_nulls_a_required_block_is_another_entry_s(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cross-tokenizer distillation recipes inherit distillation_math.yaml and write
    `teacher: null` over it; their entry is xtoken_off_policy_distillation (whose
    MasterConfig requires `teachers: list[TeacherConfig] = Field(min_length=1)`), not
    distillation, whose `teacher: PolicyConfig` a null is not."""
    root = corpus_tree("2026-08")
    monkeypatch.chdir(root)
    out, err = io.StringIO(), io.StringIO()
    config = "examples/configs/xtoken_off_policy_distillation.yaml"
    main(["check", "--nemo-rl", ".", "--no-verify", "--json", config], out, err)
    skipped = json.loads(out.getvalue())["skipped"]
    assert any("(xtoken_off_policy_distillation.setup)" in line for line in skipped)
    assert not any("(distillation.setup)" in line for line in skipped)
