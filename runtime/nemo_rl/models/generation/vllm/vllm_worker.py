"""The synchronous vLLM generation worker, and what the async one shares with it.

With vLLM and a CUDA device the worker builds a real `vllm.LLM` whose GPU workers
carry NeMo-RL's internal extension (`worker_extension_cls`). Without them it can
still be constructed with `defer_model_load=True` (engine arguments are computed,
nothing is loaded), and `load_model()` raises GenerationUnavailableError saying
what is missing. vLLM is imported lazily, inside methods.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar, get_args

from contracts.types import EngineArgs, GenerationBatch, GenerationResult
from nemo_rl_workers.errors import Problem, raise_if_any, show
from nemo_rl_workers.model.sections import as_mapping

if TYPE_CHECKING:
    from vllm import LLM, SamplingParams
    from vllm.outputs import CompletionOutput

VLLM_EXTENSION_FQN = "nemo_rl.models.generation.vllm.vllm_backend.VllmInternalWorkerExtension"


class GenerationUnavailableError(RuntimeError):
    """A generation engine was needed but cannot exist here (no vLLM, no GPU, not loaded)."""


def require_engine_runtime(worker: str) -> None:
    """Raise GenerationUnavailableError unless vLLM imports and CUDA is available."""
    missing: list[str] = []
    if importlib.util.find_spec("vllm") is None:
        missing.append("vLLM is not installed (pip install 'nemo-rl-worker-contracts[vllm]')")
    import torch

    if not torch.cuda.is_available():
        missing.append("no CUDA device is available")
    if missing:
        raise GenerationUnavailableError(
            f"{worker} cannot load its model: {'; '.join(missing)}. Construct it with "
            "defer_model_load=True to inspect get_engine_args() without loading."
        )


# vLLM 0.33's `ModelDType` (stubs/manifest.json): the `precision` values the engine accepts.
ModelDType = Literal["auto", "half", "float16", "bfloat16", "float", "float32"]
MODEL_DTYPES: tuple[ModelDType, ...] = get_args(ModelDType)


class VllmEngineSettings(TypedDict):
    """The keyword arguments of `vllm.LLM` / `AsyncEngineArgs` a worker passes.

    A TypedDict, so `LLM(**settings)` is checked key by key against the stubs: a
    misspelled engine keyword fails mypy and pyrefly like a misspelled argument.
    """

    model: str
    tokenizer: str
    dtype: ModelDType
    seed: int
    tensor_parallel_size: int
    gpu_memory_utilization: float
    max_model_len: int | None
    enforce_eager: bool
    enable_sleep_mode: bool
    worker_extension_cls: str
    load_format: str
    skip_tokenizer_init: bool
    trust_remote_code: bool


T = TypeVar("T", str, int, float, bool)
# Where the generation section sits in a NeMo-RL config, for problem paths.
SECTION_PATH = "policy.generation"
_KIND_NAMES: dict[type, str] = {
    str: "a string", int: "an integer", float: "a number", bool: "true or false"
}


def _setting(
    block: Mapping[str, Any], key: str, kind: type[T], default: T | None, problems: list[Problem]
) -> T | None:
    """`generation.vllm_cfg.<key>` as `kind` (an int is accepted as a float), or
    `default` when absent or null; a wrong type is a problem."""
    value = block.get(key)
    if value is None:
        return default
    if isinstance(value, bool) == (kind is bool):
        if isinstance(value, kind):
            return value
        if kind is float and isinstance(value, int):
            return kind(value)
    problems.append(_wrong_setting(key, _KIND_NAMES[kind], value))
    return default


def _wrong_setting(key: str, expected: str, value: object) -> Problem:
    path = f"{SECTION_PATH}.vllm_cfg.{key}"
    return Problem(
        path=path,
        expected=expected,
        given=show(value),
        message=f"{path} must be {expected}, but is {show(value)}.",
        rule="schema",
    )


def _dtype(value: str, problems: list[Problem]) -> ModelDType:
    """`vllm_cfg.precision` as one of vLLM's dtypes; another name is a problem now, not
    an engine error after the GPUs are reserved."""
    for dtype in MODEL_DTYPES:
        if value == dtype:
            return dtype
    problems.append(_wrong_setting("precision", f"one of {', '.join(MODEL_DTYPES)}", value))
    return "auto"


def engine_settings(
    config: Mapping[str, Any], *, rank: int, extension_fqn: str, enforce_eager: bool = False
) -> VllmEngineSettings:
    """Engine settings from a GenerationConfig section; raises WorkerConfigError.

    Reads `model_name`, `seed` (plus `rank`, so replicas sample differently),
    `colocated.enabled` (sleep mode, to hand the GPU back to training) and
    `vllm_cfg.{precision, tensor_parallel_size, gpu_memory_utilization,
    max_model_len, enforce_eager, load_format, skip_tokenizer_init,
    trust_remote_code}`. `enforce_eager` is the default of `vllm_cfg.enforce_eager`.
    """
    problems: list[Problem] = []
    model = config.get("model_name")
    if not isinstance(model, str) or not model:
        problems.append(
            Problem(
                path=f"{SECTION_PATH}.model_name",
                expected="a model name or local path",
                given=show(model),
                message=f"{SECTION_PATH}.model_name must name a model or local path, but is "
                f"{show(model)}.",
                rule="schema",
            )
        )
        model = ""
    seed = config.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        problems.append(
            Problem(path=f"{SECTION_PATH}.seed", expected="an integer", given=show(seed),
                    message=f"{SECTION_PATH}.seed must be an integer, but is {show(seed)}.",
                    rule="schema")
        )
        seed = 0
    cfg = as_mapping(config.get("vllm_cfg")) or {}
    colocated = as_mapping(config.get("colocated")) or {}
    settings = VllmEngineSettings(
        model=model,
        tokenizer=model,
        dtype=_dtype(_setting(cfg, "precision", str, "auto", problems) or "auto", problems),
        seed=seed + rank,
        tensor_parallel_size=_setting(cfg, "tensor_parallel_size", int, 1, problems) or 1,
        gpu_memory_utilization=_setting(cfg, "gpu_memory_utilization", float, 0.6, problems)
        or 0.6,
        max_model_len=_setting(cfg, "max_model_len", int, None, problems),
        enforce_eager=_setting(cfg, "enforce_eager", bool, enforce_eager, problems) is True,
        enable_sleep_mode=colocated.get("enabled") is True,
        worker_extension_cls=extension_fqn,
        load_format=_setting(cfg, "load_format", str, "auto", problems) or "auto",
        # Prompts and outputs are token ids, so vLLM needs no tokenizer by default.
        skip_tokenizer_init=_setting(cfg, "skip_tokenizer_init", bool, True, problems) is True,
        trust_remote_code=_setting(cfg, "trust_remote_code", bool, False, problems) is True,
    )
    raise_if_any(problems)
    return settings


def sampling_params(batch: GenerationBatch, greedy: bool, seed: int) -> SamplingParams:
    """One sample per prompt with its chosen-token log-prob; greedy means temperature 0."""
    from vllm import SamplingParams

    return SamplingParams(
        n=1,
        temperature=0.0 if greedy else 1.0,
        top_p=1.0,
        top_k=-1,  # all tokens; -1 means "disabled" in every vLLM version
        max_tokens=batch["max_new_tokens"],
        logprobs=0,
        seed=None if greedy else seed,
    )


def completion_logprobs(completion: CompletionOutput) -> list[float]:
    """The log-prob vLLM reported for each generated token (0.0 where it reported none)."""
    steps = completion.logprobs or []
    return [
        # vLLM's FlatLogprobs holds None at positions without log-probs.
        step[token].logprob if step is not None and token in step else 0.0
        for token, step in zip(completion.token_ids, steps, strict=False)
    ]


def generation_result(completions: Sequence[CompletionOutput]) -> GenerationResult:
    return GenerationResult(
        output_token_ids=[list(c.token_ids) for c in completions],
        logprobs=[completion_logprobs(c) for c in completions],
    )


class VllmWorkerBase:
    """What the sync and async workers share: the builder's arguments and engine settings."""

    extension_fqn: str = VLLM_EXTENSION_FQN
    # Quantized subclasses run eagerly: CUDA graphs captured before quantizers are
    # inserted would bypass them.
    enforce_eager_default: bool = False

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        self.config = config
        self.rank = rank
        self.world_size = world_size
        self.settings = engine_settings(
            config, rank=rank, extension_fqn=self.extension_fqn,
            enforce_eager=self.enforce_eager_default,
        )
        self._alive = True

    def is_alive(self) -> bool:
        return self._alive

    def get_engine_args(self) -> EngineArgs:
        return dict(self.settings)


class VllmGenerationWorker(VllmWorkerBase):
    """A synchronous vLLM generation worker (`vllm_cfg.async_engine: false`)."""

    def __init__(
        self,
        config: dict[str, Any],
        *,
        rank: int,
        world_size: int,
        defer_model_load: bool = False,
    ) -> None:
        super().__init__(config, rank=rank, world_size=world_size)
        self._llm: LLM | None = None
        if not defer_model_load:
            self.load_model()

    def load_model(self) -> None:
        if self._llm is not None:
            return
        require_engine_runtime(type(self).__name__)
        from vllm import LLM

        self._llm = LLM(**self.settings)
        self.after_load()

    def after_load(self) -> None:
        """Hook run once the engine exists (quantized workers quantize here)."""

    def engine(self) -> LLM:
        if self._llm is None:
            raise GenerationUnavailableError(
                f"{type(self).__name__} has no loaded model; call load_model() first "
                "(it needs vLLM and a CUDA device)."
            )
        return self._llm

    def generate(self, batch: GenerationBatch, greedy: bool = False) -> GenerationResult:
        llm = self.engine()  # first: without an engine, say so rather than fail to import
        from vllm.inputs import TokensPrompt

        prompts = [TokensPrompt(prompt_token_ids=list(p)) for p in batch["prompt_token_ids"]]
        outputs = llm.generate(
            prompts, sampling_params(batch, greedy, self.settings["seed"]), use_tqdm=False
        )
        return generation_result([output.outputs[0] for output in outputs])

    def sleep(self) -> None:
        self.engine().sleep(level=1)

    def wake_up(self) -> None:
        self.engine().wake_up()

    def shutdown(self) -> bool:
        """Drop the engine (vLLM frees its GPU memory when the LLM is collected)."""
        self._llm = None
        self._alive = False
        return True
