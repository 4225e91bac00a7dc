"""The reference policy workers train, score and checkpoint a real tiny model."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker
from nemo_rl.models.policy.workers.base_policy_worker import BasePolicyWorker
from nemo_rl.models.policy.workers.megatron_policy_worker import MegatronPolicyWorker

from nemo_rl_workers.errors import WorkerConfigError
from tests.workers.helpers import BATCH, policy_config

WORKERS: dict[str, type[BasePolicyWorker]] = {
    "megatron": MegatronPolicyWorker,
    "automodel": AutomodelPolicyWorker,
}


def make(backend: str, lr: float = 1e-2) -> BasePolicyWorker:
    return WORKERS[backend](policy_config(backend, lr=lr), rank=0, world_size=1)


@pytest.mark.parametrize("backend", sorted(WORKERS))
def test_training_reduces_loss_on_a_fixed_batch(backend: str) -> None:
    worker = make(backend)
    results = [worker.train(BATCH) for _ in range(5)]
    assert [r["step"] for r in results] == [1, 2, 3, 4, 5]
    # 7 + 4 predicted tokens: position 0 of each row is never a target.
    assert all(r["num_tokens"] == 11 for r in results)
    assert all(r["grad_norm"] > 0 for r in results)
    # A fresh model over 128 tokens starts near ln(128).
    assert abs(results[0]["loss"] - math.log(128)) < 0.5
    assert results[-1]["loss"] < results[0]["loss"] - 1.0


def test_loss_mask_selects_the_trained_tokens() -> None:
    masked = make("megatron")
    result = masked.train(
        {"input_ids": BATCH["input_ids"], "loss_mask": [[0, 0, 0, 0, 1, 1, 1, 1], [0, 1, 1, 0, 0]]}
    )
    assert result["num_tokens"] == 6
    # The masked loss is the mean over exactly those tokens, as scored before the step.
    fresh = make("megatron")
    logprobs = fresh.get_logprobs({"input_ids": BATCH["input_ids"]})["logprobs"]
    chosen = logprobs[0][4:] + logprobs[1][1:3]
    assert result["loss"] == pytest.approx(-sum(chosen) / len(chosen), rel=1e-5)


def test_loss_mask_of_the_wrong_shape_is_rejected() -> None:
    with pytest.raises(ValueError, match="loss_mask must have one entry per token"):
        make("megatron").train({"input_ids": [[1, 2, 3]], "loss_mask": [[1, 1]]})


@pytest.mark.parametrize("backend", sorted(WORKERS))
def test_logprobs_have_one_value_per_token_and_ignore_padding(backend: str) -> None:
    worker = make(backend)
    batched = worker.get_logprobs({"input_ids": BATCH["input_ids"]})["logprobs"]
    assert [len(row) for row in batched] == [8, 5]
    assert all(row[0] == 0.0 for row in batched)
    assert all(-20.0 < v < 0.0 for row in batched for v in row[1:])
    # Scoring a row alone gives the same values: right padding does not leak in.
    alone = worker.get_logprobs({"input_ids": [BATCH["input_ids"][1]]})["logprobs"][0]
    assert alone == pytest.approx(batched[1], abs=1e-5)


def test_megatron_reads_its_learning_rate_from_megatron_cfg() -> None:
    frozen = make("megatron", lr=0.0)
    before = frozen.get_logprobs({"input_ids": BATCH["input_ids"]})
    frozen.train(BATCH)
    assert frozen.get_logprobs({"input_ids": BATCH["input_ids"]}) == before


def test_automodel_reads_optimizer_kwargs_and_max_grad_norm() -> None:
    config = policy_config("automodel", lr=0.5)
    config["max_grad_norm"] = 0.25
    worker = AutomodelPolicyWorker(config, rank=0, world_size=1)
    assert worker.settings.lr == 0.5
    assert worker.settings.max_grad_norm == 0.25


def test_bad_optimizer_and_model_settings_are_reported_together() -> None:
    config = policy_config("megatron")
    config["megatron_cfg"]["optimizer"] = {"lr": "fast", "clip_grad": "big"}
    config["tiny_model"] = {"hidden_size": 0}
    with pytest.raises(WorkerConfigError) as caught:
        MegatronPolicyWorker(config, rank=0, world_size=1)
    assert [p.path for p in caught.value.problems] == ["policy.tiny_model.hidden_size"]
    config["tiny_model"] = {}
    with pytest.raises(WorkerConfigError) as caught:
        MegatronPolicyWorker(config, rank=0, world_size=1)
    problems = {p.path: p for p in caught.value.problems}
    assert set(problems) == {
        "policy.megatron_cfg.optimizer.lr",
        "policy.megatron_cfg.optimizer.clip_grad",
    }
    assert problems["policy.megatron_cfg.optimizer.lr"].given == "fast"
    assert problems["policy.megatron_cfg.optimizer.lr"].expected == "a number"


@pytest.mark.parametrize("backend", sorted(WORKERS))
def test_checkpoint_round_trip_restores_model_optimizer_and_step(
    backend: str, tmp_path: Path
) -> None:
    trained = make(backend)
    trained.train(BATCH)
    trained.train(BATCH)
    trained.save_checkpoint(str(tmp_path / "ckpt"))

    restored = make(backend)
    assert restored.get_logprobs(BATCH) != trained.get_logprobs(BATCH)
    restored.load_checkpoint(str(tmp_path / "ckpt"))
    assert restored.get_logprobs(BATCH) == trained.get_logprobs(BATCH)
    # The optimizer state came back too: the next step is identical.
    assert restored.train(BATCH) == trained.train(BATCH)


def test_only_rank_zero_writes_a_checkpoint(tmp_path: Path) -> None:
    worker = MegatronPolicyWorker(policy_config("megatron"), rank=1, world_size=2)
    worker.save_checkpoint(str(tmp_path / "ckpt"))
    assert not (tmp_path / "ckpt").exists()


def test_loading_a_missing_checkpoint_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no policy checkpoint at .*policy_worker.pt"):
        make("megatron").load_checkpoint(str(tmp_path))


def test_shutdown_ends_liveness() -> None:
    worker = make("automodel")
    assert worker.is_alive()
    assert worker.shutdown() is True
    assert not worker.is_alive()
    assert worker.shutdown() is True
