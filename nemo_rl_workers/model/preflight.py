"""Preflight: the other checks NeMo-RL's `Policy` makes before it allocates anything.

Upstream `Policy.__init__` asserts these one at a time, some only after Ray has
started; here they are rules over the loaded config that run in the same
pre-allocation pipeline as the worker rules and report every problem at once:

- FP32 LM head: the flags are real booleans, Megatron's is not combined with the
  fused linear-logprobs kernel, and training and vLLM generation agree;
- parallelism: the model-parallel product fits the cluster and divides it, and
  tensor parallelism of 4 or more uses equal train and logprob micro-batches;
- feature combinations: speculative-decoding drafts, sequence packing and
  dynamic batching only where the trainer supports them.

Rules are data (`RULES`): a stable name, a one-line description, whether it needs
the cluster's world size, and a pure function over one worker section. Backend
exclusivity, renamed keys and section shapes belong to the outdated-config check
and the resolver; rules that depend on them skip quietly when they do not hold.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal

from nemo_rl_workers.errors import Problem, raise_if_any, show
from nemo_rl_workers.model.sections import as_mapping, key_problem, policy_backend, worker_sections
from nemo_rl_workers.reading.recorded_reads import ENVIRON

# Upstream's documented way past the TP>=4 batch-variance check; like upstream,
# any non-empty value counts as set.
TP_ACCURACY_ESCAPE_ENV: Final = "NRL_IGNORE_TP_ACCURACY_CHECK"
TP_ACCURACY_MIN_TP: Final = 4
# Upstream reserves this vLLM worker variable for its own fp32-head plumbing.
VLLM_FP32_LM_HEAD_ENV: Final = "NRL_VLLM_FP32_LM_HEAD"

# Model families whose vLLM implementation has an fp32 LM-head path (upstream
# patches only Nemotron-H, NemotronHForCausalLM). Matched case-insensitively as
# substrings of the model name, so hub ids and local checkpoint paths both work.
VLLM_FP32_LM_HEAD_MODEL_FAMILIES: tuple[str, ...] = (
    "nemotron-h",
    "nemotron_h",
    "nemotronh",
    "nemotron-nano-9b-v2",
    "nemotron-nano-12b-v2",
    "nemotron-3-nano",
)

# Per training backend, the parallel axes whose product is one model replica.
PARALLEL_AXES: Mapping[str, tuple[tuple[str, str], ...]] = {
    "megatron": (
        ("TP", "megatron_cfg.tensor_model_parallel_size"),
        ("PP", "megatron_cfg.pipeline_model_parallel_size"),
        ("CP", "megatron_cfg.context_parallel_size"),
    ),
    "automodel": (
        ("TP", "automodel_cfg.tensor_parallel_size"),
        ("CP", "automodel_cfg.context_parallel_size"),
    ),
}
BACKEND_BLOCK: Mapping[str, str] = {"megatron": "megatron_cfg", "automodel": "automodel_cfg"}

FieldKind = Literal["bool", "positive_int", "positive_int_or_null", "mapping", "seconds_or_null"]

FP32_LM_HEAD_FIELDS: tuple[tuple[str, FieldKind], ...] = (
    ("megatron_cfg.fp32_lm_head", "bool"),
    ("generation.vllm_cfg.fp32_lm_head", "bool"),
)
# Everything else the rules read. Worker sections, generation, vllm_cfg and the
# backend blocks' `enabled` are typed by the resolver and the outdated check.
SCHEMA_FIELDS: tuple[tuple[str, FieldKind], ...] = (
    ("megatron_cfg.use_fused_linear_logprobs", "bool"),
    ("train_micro_batch_size", "positive_int_or_null"),
    ("logprob_batch_size", "positive_int_or_null"),
    ("draft", "mapping"),
    ("draft.enabled", "bool"),
    ("sequence_packing", "mapping"),
    ("sequence_packing.enabled", "bool"),
    ("dynamic_batching", "mapping"),
    ("dynamic_batching.enabled", "bool"),
    ("generation.vllm_cfg.env_vars", "mapping"),
    # Each worker call's time limit (RayWorkerGroup); null is no limit.
    ("call_timeout_s", "seconds_or_null"),
    ("generation.call_timeout_s", "seconds_or_null"),
)
EXPECTED_TEXT: Mapping[FieldKind, str] = {
    "bool": "true, false or null",
    "positive_int": "a positive integer",
    "positive_int_or_null": "a positive integer or null",
    "mapping": "a mapping of keys to values",
    "seconds_or_null": "a positive number of seconds, or null for no limit",
}


class _Missing(Enum):
    MISSING = "missing"


MISSING: Final = _Missing.MISSING


@dataclass(frozen=True)
class Advice:
    """A finding that is worth a UserWarning but does not block the run."""

    text: str


@dataclass(frozen=True)
class SectionView:
    """One worker section (`policy`, `teacher`, `teachers[i]`) as the rules see it."""

    path: str
    section: Mapping[str, Any]
    backend: str | None  # "megatron" or "automodel"; None unless exactly one is enabled
    config: Mapping[str, Any]
    world_size: int | None
    environ: Mapping[str, str]

    def get(self, dotted: str) -> object:
        """The value at a dotted key below the section, or MISSING (also under a non-mapping)."""
        return lookup(self.section, dotted)

    def key(self, dotted: str) -> str:
        """The full config path of a key below the section."""
        return f"{self.path}.{dotted}"


Finding = Problem | Advice
RuleFunction = Callable[[SectionView], Iterator[Finding]]


@dataclass(frozen=True)
class PreflightRule:
    name: str
    description: str
    needs_world_size: bool
    function: RuleFunction


@dataclass(frozen=True)
class PreflightReport:
    problems: list[Problem]
    warnings: list[str]  # UserWarning texts the caller emits
    skipped: list[str]  # rules (or sections) not run, and why

    def raise_if_problems(self) -> None:
        """Raise one WorkerConfigError carrying every problem, if there are any."""
        raise_if_any(self.problems)


def lookup(mapping: Mapping[str, Any], dotted: str) -> object:
    """The value at `dotted` below `mapping`; MISSING when a step is absent or not a mapping."""
    value: object = mapping
    for part in dotted.split("."):
        current = as_mapping(value)
        if current is None or part not in current:
            return MISSING
        value = current[part]
    return value


def _fits(kind: FieldKind, value: object) -> bool:
    if kind == "bool":
        return value is None or isinstance(value, bool)
    if kind == "mapping":
        return value is None or as_mapping(value) is not None
    if kind == "seconds_or_null":
        if value is None:
            return True
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return 0 < value < math.inf
    if value is None:
        return kind == "positive_int_or_null"
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _type_problems(
    view: SectionView, fields: tuple[tuple[str, FieldKind], ...]
) -> Iterator[Problem]:
    for dotted, kind in fields:
        value = view.get(dotted)
        if value is MISSING or _fits(kind, value):
            continue
        path = view.key(dotted)
        if kind == "mapping" and isinstance(value, Mapping):  # a key that is not a string
            yield key_problem(value, path)
            continue
        expected = EXPECTED_TEXT[kind]
        # Quoted, so that the string "false" does not read like the boolean false.
        given = repr(value) if isinstance(value, str) else show(value)
        note = " (a string is never read as a boolean)" if kind == "bool" and isinstance(
            value, str) else ""
        yield _problem(path, expected, given, f"{path} must be {expected}, but is {given}{note}.")


def _problem(path: str, expected: str, given: str, message: str) -> Problem:
    # The runner stamps the rule name from RULES, so names live in one table.
    return Problem(path=path, expected=expected, given=given, message=message)


def _flag(view: SectionView, dotted: str) -> bool | None:
    """A boolean setting with absent/null read as off; None when its type is wrong."""
    value = view.get(dotted)
    if value is MISSING or value is None:
        return False
    return value if isinstance(value, bool) else None


def _vllm_cfg(view: SectionView) -> Mapping[str, Any] | None:
    """The vLLM settings, when the section generates with vLLM; else None."""
    if view.get("generation.backend") != "vllm":
        return None
    return as_mapping(view.get("generation.vllm_cfg"))


def _parallel_sizes(view: SectionView) -> list[tuple[str, str, int]] | None:
    """(axis, dotted key, size) of the enabled backend; None when unknown or mistyped."""
    if view.backend is None:
        return None
    sizes: list[tuple[str, str, int]] = []
    for axis, dotted in PARALLEL_AXES[view.backend]:
        value = view.get(dotted)
        if value is MISSING:
            value = 1  # the backends default an unset axis to 1
        if not _fits("positive_int", value) or not isinstance(value, int):
            return None
        sizes.append((axis, dotted, value))
    return sizes


def _product_text(sizes: list[tuple[str, str, int]]) -> tuple[int, str]:
    product = 1
    for _, _, size in sizes:
        product *= size
    shown = " x ".join(f"{axis}({count(size)})" for axis, _, size in sizes)
    return product, f"{shown} = {count(product)}"


_SHOWN_DIGITS: Final = 24


def count(n: int) -> str:
    """A GPU count as text; one beyond any cluster by its size (str() of an int over
    4,300 digits raises, and a 400-digit number helps nobody)."""
    if -(10**_SHOWN_DIGITS) < n < 10**_SHOWN_DIGITS:
        return str(n)
    return f"a {int(math.log10(abs(n))) + 1}-digit number"


def ratio(num: int, den: int) -> str:
    """`num / den` to three decimals, in integers (a float overflows past 1e308)."""
    whole, rest = divmod(num * 1000 // den, 1000)
    return count(whole) if abs(whole) >= 10**_SHOWN_DIGITS else f"{whole}.{rest:03d}"


# ----------------------------------------------------------------- FP32 LM head


def fp32_lm_head_type(view: SectionView) -> Iterator[Finding]:
    yield from _type_problems(view, FP32_LM_HEAD_FIELDS)


def fp32_lm_head_fused_logprobs(view: SectionView) -> Iterator[Finding]:
    if view.backend != "megatron":
        return
    head_on = _flag(view, "megatron_cfg.fp32_lm_head")
    if head_on and _flag(view, "megatron_cfg.use_fused_linear_logprobs"):
        fused = view.key("megatron_cfg.use_fused_linear_logprobs")
        head = view.key("megatron_cfg.fp32_lm_head")
        yield _problem(fused, f"false while {head} is true", "true",
                       # Led by the key the problem is located at.
                       f"{fused}: true makes {head}: true have no effect, because the fused "
                       f"linear-logprobs kernel bypasses the output layer; set one of them "
                       f"to false.")


def fp32_lm_head_automodel(view: SectionView) -> Iterator[Finding]:
    vllm = _vllm_cfg(view)
    if view.backend != "automodel" or vllm is None or vllm.get("fp32_lm_head") is not True:
        return
    path = view.key("generation.vllm_cfg.fp32_lm_head")
    yield _problem(path, "false or null with the Automodel backend", "true",
                   f"{path}: true needs a matching fp32 LM head in training, which only the "
                   f"Megatron backend has; set it to false or train with "
                   f"{view.key('megatron_cfg.enabled')}: true.")


def fp32_lm_head_mismatch(view: SectionView) -> Iterator[Finding]:
    if view.backend != "megatron" or _vllm_cfg(view) is None:
        return
    train = _flag(view, "megatron_cfg.fp32_lm_head")
    generate = _flag(view, "generation.vllm_cfg.fp32_lm_head")
    if train is None or generate is None or train == generate:
        return
    train_path = view.key("megatron_cfg.fp32_lm_head")
    path = view.key("generation.vllm_cfg.fp32_lm_head")
    yield _problem(path, f"{show(train)} (the same as {train_path})", show(generate),
                   f"The fp32 LM head must be on in both Megatron training and vLLM generation or "
                   f"in neither, but {train_path} is {show(train)} and {path} is {show(generate)}; "
                   f"set both to the same value, since a one-sided fp32 head widens the "
                   f"training/generation logprob mismatch instead of narrowing it.")


def fp32_lm_head_reserved_env(view: SectionView) -> Iterator[Finding]:
    vllm = _vllm_cfg(view)
    env_vars = as_mapping(vllm.get("env_vars")) if vllm is not None else None
    if env_vars is None or VLLM_FP32_LM_HEAD_ENV not in env_vars:
        return
    path = view.key(f"generation.vllm_cfg.env_vars.{VLLM_FP32_LM_HEAD_ENV}")
    given = show(env_vars[VLLM_FP32_LM_HEAD_ENV])
    yield _problem(path, "absent", given,
                   f"{path} is set to {given}, but it is reserved for NeMo-RL's own fp32 "
                   f"LM-head plumbing; remove it and set "
                   f"{view.key('generation.vllm_cfg.fp32_lm_head')} instead.")


def fp32_lm_head_model(view: SectionView) -> Iterator[Finding]:
    vllm = _vllm_cfg(view)
    if view.backend != "megatron" or vllm is None or vllm.get("fp32_lm_head") is not True:
        return
    name = view.get("generation.model_name")
    if not isinstance(name, str):
        name = view.get("model_name")
    if not isinstance(name, str) or vllm_supports_fp32_lm_head(name):
        return
    yield Advice(
        f"{view.key('generation.vllm_cfg.fp32_lm_head')}: true only changes vLLM's Nemotron-H "
        f"model implementation, and {name!r} is not known to be one, so vLLM generation will "
        f"likely keep a bf16 LM head while training uses fp32."
    )


def vllm_supports_fp32_lm_head(model_name: str) -> bool:
    """Whether `model_name` belongs to a family whose vLLM model has an fp32 LM-head path."""
    lowered = model_name.lower()
    return any(family in lowered for family in VLLM_FP32_LM_HEAD_MODEL_FAMILIES)


# ---------------------------------------------------------------- parallelism


def parallelism_size(view: SectionView) -> Iterator[Finding]:
    if view.backend is None:
        return
    kind: FieldKind = "positive_int"
    axes = PARALLEL_AXES[view.backend]
    yield from _type_problems(view, tuple((dotted, kind) for _, dotted in axes))


def parallelism_fits(view: SectionView) -> Iterator[Finding]:
    sizes = _parallel_sizes(view)
    world = view.world_size
    if sizes is None or world is None:
        return
    product, text = _product_text(sizes)
    if product <= world:
        return
    assert view.backend is not None  # sizes exist only for a known backend
    path = view.key(BACKEND_BLOCK[view.backend])
    yield _problem(path, f"a model-parallel product of at most the world size {count(world)}",
                   text,
                   f"{path} needs {text} GPUs per model replica but the cluster has "
                   f"{count(world)}, so no "
                   f"data-parallel size is possible; reduce the parallel sizes or add GPUs "
                   f"(cluster.num_nodes x cluster.gpus_per_node).")


def parallelism_divides(view: SectionView) -> Iterator[Finding]:
    sizes = _parallel_sizes(view)
    world = view.world_size
    if sizes is None or world is None:
        return
    product, text = _product_text(sizes)
    if product > world or world % product == 0:
        return  # too large is parallelism_fits' problem
    assert view.backend is not None
    path = view.key(BACKEND_BLOCK[view.backend])
    shown = count(world)
    yield _problem(path, f"a model-parallel product that divides the world size {shown}", text,
                   f"{path} gives {text}, which does not divide the world size {shown} and would "
                   f"imply a data-parallel size of {shown}/{count(product)} = "
                   f"{ratio(world, product)}; "
                   f"choose parallel sizes whose product divides {shown}, or change the "
                   f"cluster size.")


def parallelism_tp_accuracy(view: SectionView) -> Iterator[Finding]:
    sizes = _parallel_sizes(view)
    if sizes is None or "logprob_batch_size" not in view.section:
        return  # like upstream: only configs that set a logprob batch size
    _, tp_key, tp = sizes[0]
    train, logprob = view.get("train_micro_batch_size"), view.get("logprob_batch_size")
    if tp < TP_ACCURACY_MIN_TP or train == logprob:
        return
    if not (_fits("positive_int", train) and _fits("positive_int", logprob)):
        return  # mistyped or null batch sizes are reported by preflight.schema
    if view.environ.get(TP_ACCURACY_ESCAPE_ENV):
        return
    if lookup(view.config, "loss_fn.force_on_policy_ratio") is True:
        return  # upstream sets the escape variable itself in this case
    path = view.key("logprob_batch_size")
    train_path = view.key("train_micro_batch_size")
    yield _problem(path, f"{show(train)} (equal to {train_path})", show(logprob),
                   # The sentence leads with the key the problem is located at.
                   f"{path} ({show(logprob)}) must equal {train_path} ({show(train)}) because "
                   f"{view.key(tp_key)} is {tp}, and tensor parallelism of {TP_ACCURACY_MIN_TP} "
                   f"or more gives batch-size-dependent logprobs; set them equal, set "
                   f"{view.key(tp_key)} to 1 or 2, set loss_fn.force_on_policy_ratio: true (needs "
                   f"train_global_batch_size = num_prompts_per_step x num_generations_per_prompt), "
                   f"or set {TP_ACCURACY_ESCAPE_ENV}=1 to bypass the check (not recommended).")


# ------------------------------------------------------- feature combinations


def schema(view: SectionView) -> Iterator[Finding]:
    yield from _type_problems(view, SCHEMA_FIELDS)


def draft_backend(view: SectionView) -> Iterator[Finding]:
    if view.backend != "automodel" or _flag(view, "draft.enabled") is not True:
        return
    path = view.key("draft.enabled")
    yield _problem(path, "false unless the Megatron backend is enabled", "true",
                   f"{path}: true is only supported with the Megatron backend; set "
                   f"{view.key('megatron_cfg.enabled')}: true or {path}: false.")


def draft_sequence_packing(view: SectionView) -> Iterator[Finding]:
    if (_flag(view, "draft.enabled") is not True
            or _flag(view, "sequence_packing.enabled") is not True):
        return
    path = view.key("sequence_packing.enabled")
    draft = view.key("draft.enabled")
    yield _problem(path, f"false while {draft} is true", "true",
                   f"{path}: true is not supported with {draft}: true yet (speculative "
                   f"decoding drafts do not support sequence packing); set {path}: false or "
                   f"{draft}: false.")


def dynamic_batching_sequence_packing(view: SectionView) -> Iterator[Finding]:
    if (_flag(view, "dynamic_batching.enabled") is not True
            or _flag(view, "sequence_packing.enabled") is not True):
        return
    path = view.key("dynamic_batching.enabled")
    packing = view.key("sequence_packing.enabled")
    yield _problem(path, f"false while {packing} is true", "true",
                   f"{path} and {packing} are both true, but dynamic batching and sequence "
                   f"packing are mutually exclusive; set {path}: false or {packing}: false.")


def dynamic_batching_pipeline(view: SectionView) -> Iterator[Finding]:
    sizes = _parallel_sizes(view)
    if sizes is None or _flag(view, "dynamic_batching.enabled") is not True:
        return
    for axis, dotted, size in sizes:
        if axis == "PP" and size > 1:
            path = view.key(dotted)
            yield _problem(path, "1 while dynamic batching is enabled", show(size),
                           f"Dynamic batching supports a single pipeline stage only, but {path} is "
                           f"{size}; set it to 1 or {view.key('dynamic_batching.enabled')}: false.")


RULES: tuple[PreflightRule, ...] = (
    PreflightRule("preflight.fp32_lm_head.type",
                  "megatron_cfg.fp32_lm_head and generation.vllm_cfg.fp32_lm_head are "
                  "true, false or null.",
                  False, fp32_lm_head_type),
    PreflightRule("preflight.fp32_lm_head.fused_logprobs",
                  "Megatron's fp32 LM head is not combined with use_fused_linear_logprobs.",
                  False, fp32_lm_head_fused_logprobs),
    PreflightRule("preflight.fp32_lm_head.automodel",
                  "vLLM's fp32 LM head is not used with the Automodel training backend.",
                  False, fp32_lm_head_automodel),
    PreflightRule("preflight.fp32_lm_head.mismatch",
                  "Megatron training and vLLM generation agree on the fp32 LM head.",
                  False, fp32_lm_head_mismatch),
    PreflightRule("preflight.fp32_lm_head.reserved_env",
                  f"vllm_cfg.env_vars does not set the reserved {VLLM_FP32_LM_HEAD_ENV}.",
                  False, fp32_lm_head_reserved_env),
    PreflightRule("preflight.fp32_lm_head.model",
                  "Warning only: vLLM's fp32 LM head on a model not known to support it.",
                  False, fp32_lm_head_model),
    PreflightRule("preflight.parallelism.size",
                  "The enabled backend's parallel sizes are positive integers.",
                  False, parallelism_size),
    PreflightRule("preflight.parallelism.fits",
                  "The model-parallel product (TP x PP x CP) is at most the world size.",
                  True, parallelism_fits),
    PreflightRule("preflight.parallelism.divides",
                  "The model-parallel product divides the world size (integer data-parallel size).",
                  True, parallelism_divides),
    PreflightRule("preflight.parallelism.tp_accuracy",
                  f"With TP >= {TP_ACCURACY_MIN_TP}, train_micro_batch_size equals "
                  f"logprob_batch_size (escape: {TP_ACCURACY_ESCAPE_ENV}, "
                  f"loss_fn.force_on_policy_ratio).",
                  False, parallelism_tp_accuracy),
    PreflightRule("preflight.schema",
                  "Other fields the preflight rules read have the right type.",
                  False, schema),
    PreflightRule("preflight.draft.backend",
                  "draft.enabled only with the Megatron backend.",
                  False, draft_backend),
    PreflightRule("preflight.draft.sequence_packing",
                  "draft.enabled not together with sequence_packing.enabled.",
                  False, draft_sequence_packing),
    PreflightRule("preflight.dynamic_batching.sequence_packing",
                  "dynamic_batching.enabled not together with sequence_packing.enabled.",
                  False, dynamic_batching_sequence_packing),
    PreflightRule("preflight.dynamic_batching.pipeline",
                  "dynamic_batching.enabled only with a single pipeline stage.",
                  False, dynamic_batching_pipeline),
)


def preflight_problems(
    config: Mapping[str, Any],
    *,
    world_size: int | None,
    environ: Mapping[str, str] | None = None,
    sections: Iterable[tuple[str, object]] | None = None,
) -> PreflightReport:
    """Run every preflight rule over every worker section; never raises on the config's contents.

    `world_size` is the number of GPUs the policy's cluster has (None: the rules
    that need it are listed in `skipped`); it must be a positive int when given.
    `environ` defaults to `os.environ` and is only read, for escape hatches.
    `sections` replaces the config's own (path, section) pairs, to check one section.
    """
    if world_size is not None and not _fits("positive_int", world_size):
        raise ValueError(f"world_size must be a positive integer or None, not {world_size!r}")
    env: Mapping[str, str] = ENVIRON if environ is None else environ
    problems: list[Problem] = []
    advice: list[str] = []
    skipped = [f"{rule.name}: no world size given" for rule in RULES
               if rule.needs_world_size and world_size is None]
    root = as_mapping(config)
    if root is None and isinstance(config, Mapping):  # a mapping with a non-string key
        return PreflightReport([key_problem(config, "")], [], skipped)
    if root is None:
        return PreflightReport([], [], skipped + ["every rule: the config is not a mapping"])
    for path, raw in worker_sections(root) if sections is None else sections:
        section = as_mapping(raw)
        if section is None:
            why = ("has a key that is not a string" if isinstance(raw, Mapping)
                   else "is not a mapping")
            skipped.append(f"{path}: every rule (the section {why})")
            continue
        backend, backend_problems = policy_backend(section, path)
        view = SectionView(path, section, None if backend_problems else backend, root,
                           world_size, env)
        for rule in RULES:
            if rule.needs_world_size and world_size is None:
                continue
            for finding in rule.function(view):
                if isinstance(finding, Advice):
                    advice.append(finding.text)
                else:
                    problems.append(dataclasses.replace(finding, rule=rule.name))
    return PreflightReport(problems, advice, skipped)


def check_preflight(
    config: Mapping[str, Any],
    *,
    world_size: int | None,
    environ: Mapping[str, str] | None = None,
    stacklevel: int = 2,
) -> PreflightReport:
    """`preflight_problems`, then emit its warnings and raise its problems (WorkerConfigError)."""
    report = preflight_problems(config, world_size=world_size, environ=environ)
    for text in report.warnings:
        warnings.warn(text, UserWarning, stacklevel=stacklevel + 1)
    report.raise_if_problems()
    return report


def world_size_from(
    nodes: int | None, gpus_per_node: int | None, world_size: int | None
) -> int | None:
    """The world size the CLI was given (`--world-size N` or `--nodes N --gpus-per-node G`).

    None when none of them is given; ValueError (one line) when a value is not a
    positive integer, only one of nodes/gpus-per-node is given, or both forms
    are given and disagree.
    """
    for flag, value in (("--nodes", nodes), ("--gpus-per-node", gpus_per_node),
                        ("--world-size", world_size)):
        if value is not None and not _fits("positive_int", value):
            raise ValueError(f"{flag} must be a positive integer, not {value!r}")
    if (nodes is None) != (gpus_per_node is None):
        given, missing = ("--nodes", "--gpus-per-node") if gpus_per_node is None else (
            "--gpus-per-node", "--nodes")
        raise ValueError(f"{given} needs {missing} too (or give --world-size alone)")
    if nodes is None or gpus_per_node is None:
        return world_size
    product = nodes * gpus_per_node
    if world_size is not None and world_size != product:
        raise ValueError(f"--world-size {world_size} disagrees with --nodes {nodes} x "
                         f"--gpus-per-node {gpus_per_node} = {product}; "
                         "give one or make them agree")
    return product
