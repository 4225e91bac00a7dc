"""What the reference policy workers share: a tiny causal LM trained on CPU.

Reference implementation, not Megatron-LM or NeMo Automodel: each worker builds a
small Llama-architecture model with `transformers` from `policy.tiny_model`
(never downloaded), seeded so every data-parallel rank starts identical, and
trains it with AdamW on next-token cross-entropy. The caller shards a batch's rows
over the ranks; when the worker group gave the actors a rendezvous address
(`nemo_rl.distributed.data_parallel`), every step all-reduces the gradients, scaled by
the token count of all ranks, so each rank takes the step the whole batch would give
and the replicas stay identical. Constructed without one (in-process, or
`world_size == 1`), a worker trains on exactly the batch it is given.

Backends differ only in where they read optimizer settings (`optimizer_settings`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import nn

if TYPE_CHECKING:  # transformers loads only when a model is built: verifying a class
    # imports this module, and transformers would double what that costs.
    from transformers import LlamaForCausalLM

from contracts.types import LogprobBatch, LogprobResult, TrainBatch, TrainResult
from nemo_rl.distributed.data_parallel import DataParallelError, DataParallelGroup
from nemo_rl_workers.errors import Problem, raise_if_any, show
from nemo_rl_workers.model.sections import as_mapping, section_problem

# The tiny model a config without `tiny_model` gets; `seed` seeds weight init.
TINY_MODEL_DEFAULTS: dict[str, int] = {
    "vocab_size": 128,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 128,
    "max_position_embeddings": 256,
    "seed": 0,
}

# Upstream NeMo-RL defaults (5e-6) barely move a tiny model; a config sets its own.
DEFAULT_LR = 1e-3
CHECKPOINT_FILE = "policy_worker.pt"


@dataclass(frozen=True)
class OptimizerSettings:
    """AdamW settings and gradient clipping; `max_grad_norm` None means no clipping."""

    lr: float = DEFAULT_LR
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    max_grad_norm: float | None = None


def _number(block: Mapping[str, Any], key: str, path: str, problems: list[Problem]) -> float | None:
    """`block[key]` as a float, or None when absent/null; a non-number is a problem."""
    value = block.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.append(
            Problem(
                path=f"{path}.{key}",
                expected="a number",
                given=show(value),
                message=f"{path}.{key} must be a number, but is {show(value)}.",
                rule="schema",
            )
        )
        return None
    return float(value)


def read_optimizer_settings(
    block: object,
    path: str,
    *,
    max_grad_norm: object = None,
    grad_norm_path: str = "policy.max_grad_norm",
) -> OptimizerSettings:
    """OptimizerSettings from a mapping with lr/weight_decay/eps and betas given as
    `betas: [b1, b2]` or `adam_beta1`/`adam_beta2`; `max_grad_norm` is read from the
    full dotted `grad_norm_path`. Raises WorkerConfigError listing every bad key."""
    problems: list[Problem] = []
    mapping = as_mapping(block) if block is not None else {}
    if mapping is None:
        problems.extend(p for p in [section_problem(block, path)] if p)
        mapping = {}
    defaults = OptimizerSettings()
    lr = _number(mapping, "lr", path, problems)
    weight_decay = _number(mapping, "weight_decay", path, problems)
    eps = _number(mapping, "eps", path, problems)
    if eps is None:
        eps = _number(mapping, "adam_eps", path, problems)
    beta1 = _number(mapping, "adam_beta1", path, problems)
    beta2 = _number(mapping, "adam_beta2", path, problems)
    betas = mapping.get("betas")
    if betas is not None:
        if (
            isinstance(betas, list | tuple)
            and len(betas) == 2
            and all(isinstance(b, int | float) and not isinstance(b, bool) for b in betas)
        ):
            beta1, beta2 = float(betas[0]), float(betas[1])
        else:
            problems.append(
                Problem(
                    path=f"{path}.betas",
                    expected="a list of two numbers",
                    given=show(betas),
                    message=f"{path}.betas must be a list of two numbers, but is {show(betas)}.",
                    rule="schema",
                )
            )
    parent, _, leaf = grad_norm_path.rpartition(".")
    clip = _number({leaf: max_grad_norm}, leaf, parent, problems)
    raise_if_any(problems)
    return OptimizerSettings(
        lr=defaults.lr if lr is None else lr,
        weight_decay=defaults.weight_decay if weight_decay is None else weight_decay,
        betas=(
            defaults.betas[0] if beta1 is None else beta1,
            defaults.betas[1] if beta2 is None else beta2,
        ),
        eps=defaults.eps if eps is None else eps,
        max_grad_norm=clip,
    )


def tiny_model_settings(config: Mapping[str, Any], path: str = "policy") -> dict[str, int]:
    """`config["tiny_model"]` over TINY_MODEL_DEFAULTS; every value a positive int
    (seed: any int >= 0). Raises WorkerConfigError listing every bad key."""
    block = config.get("tiny_model")
    mapping = as_mapping(block) if block is not None else {}
    where = f"{path}.tiny_model"
    if mapping is None:
        raise_if_any(p for p in [section_problem(block, where)] if p)
        mapping = {}
    settings = dict(TINY_MODEL_DEFAULTS)
    problems: list[Problem] = []
    for key, value in mapping.items():
        if key not in settings:
            continue  # other keys (e.g. model_type notes) pass through untouched
        minimum = 0 if key == "seed" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            expected = "an integer >= 0" if minimum == 0 else "a positive integer"
            problems.append(
                Problem(
                    path=f"{where}.{key}",
                    expected=expected,
                    given=show(value),
                    message=f"{where}.{key} must be {expected}, but is {show(value)}.",
                    rule="schema",
                )
            )
            continue
        settings[key] = value
    if not problems and settings["hidden_size"] % settings["num_attention_heads"]:
        problems.append(
            Problem(
                path=f"{where}.hidden_size",
                expected=f"a multiple of num_attention_heads ({settings['num_attention_heads']})",
                given=show(settings["hidden_size"]),
                message=(
                    f"{where}.hidden_size must be a multiple of num_attention_heads "
                    f"({settings['num_attention_heads']}), but is {settings['hidden_size']}."
                ),
                rule="schema",
            )
        )
    raise_if_any(problems)
    return settings


def build_tiny_model(settings: Mapping[str, int]) -> LlamaForCausalLM:
    """A freshly initialised tiny Llama; seeded without touching the global RNG."""
    from transformers import LlamaConfig, LlamaForCausalLM

    model_config = LlamaConfig(
        vocab_size=settings["vocab_size"],
        hidden_size=settings["hidden_size"],
        num_hidden_layers=settings["num_hidden_layers"],
        num_attention_heads=settings["num_attention_heads"],
        num_key_value_heads=settings["num_attention_heads"],
        intermediate_size=settings["intermediate_size"],
        max_position_embeddings=settings["max_position_embeddings"],
        tie_word_embeddings=False,
        use_cache=False,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(settings["seed"])
        # transformers 5.14 leaves LlamaForCausalLM.__init__ unannotated; call it
        # through a typed view instead of silencing mypy and pyrefly differently.
        construct = cast("Callable[[LlamaConfig], LlamaForCausalLM]", LlamaForCausalLM)
        return construct(model_config)


def _pad(rows: list[list[int]], name: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded [B, T] token ids and the matching 0/1 validity mask."""
    if not rows or any(not row for row in rows):
        raise ValueError(f"{name} must hold at least one non-empty row of token ids")
    width = max(len(row) for row in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    valid = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        valid[i, : len(row)] = 1
    return ids, valid


@dataclass(frozen=True)
class _TrainInputs:
    ids: torch.Tensor
    valid: torch.Tensor
    # 1.0 where token t is a loss target (valid, unmasked, t >= 1), shape [B, T-1].
    target_weights: torch.Tensor
    num_tokens: int


def _train_inputs(batch: TrainBatch, *, allow_empty: bool) -> _TrainInputs | None:
    """The padded tensors of a train batch; None for a batch without rows when
    `allow_empty` (a data-parallel rank that got no rows still joins the step)."""
    rows = batch["input_ids"]
    if allow_empty and not rows and not batch.get("loss_mask"):
        return None
    ids, valid = _pad(rows, "batch.input_ids")
    weights = valid.clone()
    if "loss_mask" in batch:
        mask_rows = batch["loss_mask"]
        if [len(r) for r in mask_rows] != [len(r) for r in rows]:
            raise ValueError(
                "batch.loss_mask must have one entry per token of batch.input_ids "
                f"(row lengths {[len(r) for r in rows]}), "
                f"but has row lengths {[len(r) for r in mask_rows]}"
            )
        mask, _ = _pad(mask_rows, "batch.loss_mask")
        weights = weights * (mask != 0).long()
    # Token t is a target of the prediction made at t-1; position 0 is never one.
    target_weights = weights[:, 1:].float()
    return _TrainInputs(ids, valid, target_weights, int(target_weights.sum().item()))


class BasePolicyWorker:
    """Reference policy worker (one data-parallel rank); see the module docstring."""

    # The config block that enables this backend, e.g. "megatron_cfg".
    backend_key: str = ""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        self.config = config
        self.rank = rank
        self.world_size = world_size
        self.model_settings = tiny_model_settings(config)
        self.settings = self.optimizer_settings(config)
        self.model: nn.Module = self.prepare_model(build_tiny_model(self.model_settings))
        self.model.train()
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(),
            lr=self.settings.lr,
            weight_decay=self.settings.weight_decay,
            betas=self.settings.betas,
            eps=self.settings.eps,
        )
        self.step = 0
        self._alive = True
        # None when this rank trains alone; joined lazily, at the first train step.
        self.data_parallel = DataParallelGroup.from_env(rank=rank, world_size=world_size)

    @classmethod
    def optimizer_settings(cls, config: Mapping[str, Any]) -> OptimizerSettings:
        """Where the backend reads its optimizer settings; overridden per backend."""
        return OptimizerSettings()

    def prepare_model(self, model: nn.Module) -> nn.Module:
        """Hook between building the model and creating the optimizer (quantization)."""
        return model

    def _token_logprobs(self, ids: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """log p(token t | tokens < t) for t >= 1, shape [B, T-1]."""
        output = self.model(input_ids=ids, attention_mask=valid, use_cache=False)
        logits = cast(torch.Tensor, output.logits).float()
        logprobs = torch.log_softmax(logits[:, :-1], dim=-1)
        return logprobs.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)

    def is_alive(self) -> bool:
        return self._alive

    def train(self, batch: TrainBatch) -> TrainResult:
        """One AdamW step on the mean next-token cross-entropy over the masked tokens
        of this rank's rows or, data-parallel, of every rank's rows."""
        dp = self.data_parallel
        failure: Exception | None = None
        inputs: _TrainInputs | None = None
        try:
            inputs = _train_inputs(batch, allow_empty=dp is not None)
        except ValueError as err:
            if dp is None:
                raise
            failure = err
        total_tokens = inputs.num_tokens if inputs is not None else 0
        if dp is not None:
            # Every rank joins every collective, even with a bad shard, and all raise together.
            (summed,), failed = dp.agree([total_tokens], failed=failure is not None)
            self._raise_if_failed(failed, failure)
            total_tokens = int(summed)
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        loss_value = 0.0
        try:
            if inputs is not None:
                token_logprobs = self._token_logprobs(inputs.ids, inputs.valid)
                # Divided by all ranks' tokens: the sum of the ranks' gradients is then
                # the gradient of the whole batch's token mean.
                loss = -(token_logprobs * inputs.target_weights).sum() / max(total_tokens, 1)
                torch.autograd.backward(loss)  # typed, unlike Tensor.backward
                loss_value = float(loss.item())
        except Exception as err:
            if dp is None:
                raise
            failure = err
        if dp is not None:
            (loss_value,), failed = dp.sum_gradients(
                self.model.parameters(), [loss_value], failed=failure is not None
            )
            if failed:
                self.optimizer.zero_grad(set_to_none=True)
            self._raise_if_failed(failed, failure)
        clip = self.settings.max_grad_norm
        grad_norm = torch.nn.utils.clip_grad_norm_(
            self.model.parameters(), clip if clip is not None else float("inf")
        )
        self.optimizer.step()
        self.step += 1
        return TrainResult(
            loss=loss_value,
            grad_norm=float(grad_norm.item()),
            num_tokens=inputs.num_tokens if inputs is not None else 0,
            step=self.step,
        )

    def _raise_if_failed(self, failed: bool, failure: Exception | None) -> None:
        """Raise this rank's own error, or name the step another rank failed."""
        if failure is not None:
            raise failure
        if failed:
            raise DataParallelError(
                f"rank {self.rank}: another data-parallel rank failed step {self.step + 1}; "
                "no rank updated its weights (that rank's error names the cause)."
            )

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        rows = batch["input_ids"]
        ids, valid = _pad(rows, "batch.input_ids")
        self.model.eval()
        try:
            with torch.no_grad():
                token_logprobs = self._token_logprobs(ids, valid)
        finally:
            self.model.train()
        values = cast(list[list[float]], token_logprobs.tolist())
        return LogprobResult(
            logprobs=[[0.0, *values[i][: len(row) - 1]] for i, row in enumerate(rows)]
        )

    def save_checkpoint(self, path: str) -> None:
        """Model and optimizer state into directory `path`. Data-parallel replicas are
        identical, so only rank 0 writes (atomically), as upstream does."""
        if self.rank != 0:
            return
        os.makedirs(path, exist_ok=True)
        target = os.path.join(path, CHECKPOINT_FILE)
        partial = f"{target}.partial"
        torch.save(
            {
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "step": self.step,
            },
            partial,
        )
        os.replace(partial, target)

    def load_checkpoint(self, path: str) -> None:
        target = os.path.join(path, CHECKPOINT_FILE)
        if not os.path.isfile(target):
            raise FileNotFoundError(
                f"no policy checkpoint at {target}; expected a directory written by "
                "save_checkpoint"
            )
        state = cast(dict[str, Any], torch.load(target, map_location="cpu", weights_only=True))
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])

    def shutdown(self) -> bool:
        """Free the optimizer state, leave the data-parallel group and report the
        worker dead; idempotent."""
        if self._alive:
            self.optimizer.zero_grad(set_to_none=True)
            self.optimizer.state.clear()
            if self.data_parallel is not None:
                self.data_parallel.close()
            self._alive = False
        return True
