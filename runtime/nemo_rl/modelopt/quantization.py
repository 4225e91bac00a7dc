"""NVIDIA ModelOpt helpers shared by the quantized policy and vLLM workers.

`quant_cfg` is what NeMo-RL accepts: the name of a built-in config on
`modelopt.torch.quantization` (e.g. `INT8_DEFAULT_CFG`) or a path to a YAML recipe
(a ModelOpt PTQ recipe with a top-level `quantize:` section, or a bare
`{quant_cfg: [...], algorithm: ...}` document). Relative recipe paths are resolved
against the working directory of the process that reads them.

`quant_cfg_problems` checks a value without building a model, so it can run in the
verification step before any GPU actor exists. A CUDA-only config on a machine
without CUDA is rejected by `resolve_quant_cfg`, in the worker, before ModelOpt
touches the model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from contracts.types import QuantizerStats
from nemo_rl_workers.errors import Problem, one_line, raise_if_any, show

# Named in messages so a user sees what a valid value looks like.
KNOWN_CFG_EXAMPLES: tuple[str, ...] = (
    "INT8_DEFAULT_CFG",
    "FP8_DEFAULT_CFG",
    "INT4_AWQ_CFG",
    "NVFP4_DEFAULT_CFG",
)
EXPECTED = (
    "a ModelOpt config name (e.g. " + ", ".join(KNOWN_CFG_EXAMPLES) + ") or a path to a YAML "
    "quantization recipe"
)
RECIPE_SUFFIXES = (".yaml", ".yml")
# Quantizers of the attention K/V batched matmuls: ModelOpt's KV-cache quantizers.
KV_QUANTIZER_SUFFIXES = ("k_bmm_quantizer", "v_bmm_quantizer")
# Calibration: seeded random token batches over the model's vocabulary. Enough for
# max calibration to set every amax; the values are not meant to be representative.
CALIBRATION_BATCHES = 4
CALIBRATION_BATCH_SIZE = 2
CALIBRATION_SEQ_LEN = 16
# get_weight_snapshot returns at most this many leading values of a weight.
SNAPSHOT_LIMIT = 1024


def _problem(path: str, given: object, message: str, rule: str = "quant_cfg") -> Problem:
    return Problem(path=path, expected=EXPECTED, given=show(given), message=message, rule=rule)


def _is_recipe_path(value: str) -> bool:
    return value.endswith(RECIPE_SUFFIXES) or os.sep in value or "/" in value


def _load_recipe(value: str, path: str) -> tuple[dict[str, Any] | None, Problem | None]:
    from nemo_rl_workers.reading.safe_read import ConfigLoadError, exists, parse_yaml, read_text

    shown = one_line(value)
    try:  # the guarded reader first: ModelOpt's own reader has no size, FIFO or alias limits
        # A symlink loop or a name too long is the reader's to name, not "does not exist".
        if not exists(Path(value), value):
            where = one_line(os.path.abspath(value))
            return None, _problem(
                path, value, f"{path}: the quantization recipe file {where} does not exist; "
                f"set {path} to {EXPECTED}."
            )
        parse_yaml(read_text(Path(value), value), value)
    except ConfigLoadError as error:
        parsed = error.kind in ("yaml", "too-large", "not-utf8")
        why = (
            "is not a regular file: a device, a pipe or a folder"
            if error.kind == "not-a-file" else error.reason
        )
        return None, _problem(
            path, value, f"{path}: the quantization recipe {shown} "
            f"{'cannot be parsed' if parsed else 'cannot be used'} ({why}); "
            f"set {path} to {EXPECTED}."
        )
    from modelopt.recipe import load_config

    try:
        loaded: object = load_config(value)
    except Exception as error:  # noqa: BLE001 - YAML and schema errors vary by version
        return None, _problem(
            path, value, f"{path}: the quantization recipe {value} cannot be parsed "
            f"({type(error).__name__}: {error})."
        )
    section = loaded.get("quantize", loaded) if isinstance(loaded, Mapping) else loaded
    if not isinstance(section, Mapping) or "quant_cfg" not in section:
        return None, _problem(
            path, value, f"{path}: the quantization recipe {value} has no quant_cfg entry "
            "(expected one, optionally under a top-level quantize: section)."
        )
    return {"algorithm": "max", **dict(section)}, None


def _load_builtin(value: str, path: str) -> tuple[dict[str, Any] | None, Problem | None]:
    import modelopt.torch.quantization as mtq

    builtin: object = getattr(mtq, value, None)
    if not value.endswith("_CFG") or not isinstance(builtin, Mapping):
        return None, _problem(
            path, value, f"{path} must be {EXPECTED}, but {show(value)} is not a built-in "
            "ModelOpt config name nor a recipe file path."
        )
    return dict(builtin), None


def _entries(cfg: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Format dicts of the enabled entries of a (list- or legacy dict-shaped) quant_cfg."""
    entries = cfg.get("quant_cfg")
    if isinstance(entries, Mapping):  # legacy {pattern: cfg}
        entries = [{"quantizer_name": k, "cfg": v} for k, v in entries.items()]
    if not isinstance(entries, list):
        return
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get("enable") is False:
            continue
        formats = entry.get("cfg")
        for fmt in formats if isinstance(formats, list) else [formats]:
            if isinstance(fmt, Mapping) and fmt.get("enable") is not False:
                yield fmt


def needs_cuda(cfg: Mapping[str, Any]) -> bool:
    """Whether ModelOpt can only apply `cfg` on CUDA: dynamic block quantization
    (NVFP4, MXFP4/6/8, MXINT8) asserts CUDA tensors."""
    for fmt in _entries(cfg):
        blocks = fmt.get("block_sizes")
        if isinstance(blocks, Mapping) and blocks.get("type") == "dynamic":
            return True
    return False


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def load_quant_cfg(
    value: object, path: str, *, check_device: bool = True
) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Resolve `value` into the dict `mtq.quantize` takes, or the problems why not.

    Builds no model: only modelopt's config module and the recipe file are read.
    `check_device` adds a problem for a CUDA-only config where no CUDA device is
    visible; only the process that will hold the model can judge that.
    """
    if value is None or value == "":
        return None, [
            _problem(
                path, value, f"{path} must be {EXPECTED} for a quantized worker, but is unset."
            )
        ]
    if not isinstance(value, str):
        return None, [_problem(path, value, f"{path} must be {EXPECTED}, but is {show(value)}.")]
    cfg, problem = _load_recipe(value, path) if _is_recipe_path(value) else _load_builtin(
        value, path
    )
    if problem is not None or cfg is None:
        return None, [problem] if problem is not None else []
    from modelopt.torch.quantization.config import QuantizeConfig

    try:
        QuantizeConfig(**cfg)
    except Exception as error:  # noqa: BLE001 - pydantic ValidationError and friends
        first = str(error).splitlines()[:3]
        return None, [
            _problem(path, value, f"{path}: {value} is not a valid ModelOpt quantization config "
                     f"({' '.join(first)}).")
        ]
    if check_device and needs_cuda(cfg) and not _cuda_available():
        return None, [
            Problem(
                path=path,
                expected="a config ModelOpt can apply on CPU (e.g. INT8_DEFAULT_CFG, "
                "FP8_DEFAULT_CFG), or a CUDA device",
                given=show(value),
                message=f"{path}: {value} uses dynamic block quantization (NVFP4/MX formats), "
                "which ModelOpt runs only on CUDA, and no CUDA device is available here; use "
                "INT8_DEFAULT_CFG or FP8_DEFAULT_CFG on CPU.",
                rule="quant_device",
            )
        ]
    return cfg, []


def quant_cfg_problems(value: object, path: str) -> list[Problem]:
    """Every problem with `quant_cfg` value `value` at config path `path`, except the
    device: verification may run on a CPU-only driver for GPU workers, so whether a
    CUDA-only config (NVFP4, MX formats) can run is left to the worker itself."""
    return load_quant_cfg(value, path, check_device=False)[1]


def resolve_quant_cfg(value: object, path: str = "quant_cfg") -> dict[str, Any]:
    """The `mtq.quantize` config for `value`; raises WorkerConfigError otherwise."""
    cfg, problems = load_quant_cfg(value, path)
    raise_if_any(problems)
    assert cfg is not None  # load_quant_cfg returns a cfg exactly when no problem
    return cfg


def calibration_batches(vocab_size: int, seed: int, device: str = "cpu") -> list[list[list[int]]]:
    """Seeded random token batches over the vocabulary (see CALIBRATION_* above)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    batches = torch.randint(
        0,
        vocab_size,
        (CALIBRATION_BATCHES, CALIBRATION_BATCH_SIZE, CALIBRATION_SEQ_LEN),
        generator=generator,
    )
    return cast(list[list[list[int]]], batches.tolist())


def quantize_model(
    model: Any, cfg: Mapping[str, Any], forward_loop: Callable[[Any], None]
) -> Any:
    """Insert ModelOpt quantizers into `model` and calibrate them with `forward_loop`."""
    import modelopt.torch.quantization as mtq

    return mtq.quantize(model, dict(cfg), forward_loop)


def quantize_causal_lm(model: Any, cfg: Mapping[str, Any], vocab_size: int, seed: int) -> Any:
    """quantize_model for a HF causal LM, calibrated on `calibration_batches`."""
    import torch

    batches = [torch.tensor(b, dtype=torch.long) for b in calibration_batches(vocab_size, seed)]

    def forward_loop(calibrated: Any) -> None:
        with torch.no_grad():
            for batch in batches:
                calibrated(input_ids=batch, use_cache=False)

    return quantize_model(model, cfg, forward_loop)


def quantizer_stats(model: Any) -> QuantizerStats:
    """Counts over the model's ModelOpt TensorQuantizer modules."""
    import torch
    from modelopt.torch.quantization.nn import TensorQuantizer

    total = enabled = with_amax = positive = kv = 0
    for name, module in model.named_modules():
        if not isinstance(module, TensorQuantizer):
            continue
        total += 1
        enabled += module.is_enabled is True
        amax: object = module.amax
        if isinstance(amax, torch.Tensor):
            with_amax += 1
            positive += bool((amax > 0).all().item())
            kv += name.endswith(KV_QUANTIZER_SUFFIXES)
    return QuantizerStats(
        total=total, enabled=enabled, with_amax=with_amax, positive_amax=positive, kv_amax=kv
    )


def weight_snapshot(model: Any, name: str) -> list[float]:
    """The first SNAPSHOT_LIMIT values of parameter `name`, as floats."""
    params = dict(model.named_parameters())
    if name not in params:
        sample = ", ".join(sorted(params)[:5])
        raise KeyError(f"no parameter named {name!r}; parameters include {sample}")
    flat = params[name].detach().flatten()[:SNAPSHOT_LIMIT].float().cpu()
    return cast(list[float], flat.tolist())
