"""Fuzzed configs through the functions `nemo-rl-workers check` runs.

Random values of random types at every key the rules and the resolver read, sections
replaced by non-mappings, hostile FQN strings, and random `defaults:` chains (cycles
included) written as small YAML trees. Every outcome must be a resolution or a project
error carrying a config path (WorkerConfigError, ConfigLoadError); no other exception
may escape, and the input is never modified.
"""

from __future__ import annotations

import copy
import keyword
import math
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nemo_rl_workers.checks.config.config_check import analyze_config, analyze_file
from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.errors import Problem, WorkerConfigError
from nemo_rl_workers.model.outdated import outdated_config_problems
from nemo_rl_workers.model.preflight import preflight_problems
from nemo_rl_workers.model.resolver import Resolution, resolve_config
from nemo_rl_workers.model.table import BUILTIN_ROWS
from nemo_rl_workers.reading.loader import ConfigLoadError, load_config

SECTION_ROOTS = ("policy", "teacher", "teachers")
BUILTIN_FQNS = sorted(
    {fqn for row in BUILTIN_ROWS for fqn in (row.default_fqn, row.quantized_fqn) if fqn}
)
QUANT_NAMES = ("INT8_DEFAULT_CFG", "FP8_DEFAULT_CFG", "NVFP4_DEFAULT_CFG", "NOT_A_CFG",
               "recipes/int8.yaml")

# ------------------------------------------------------------------ strategies

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(("true", "false", "vllm", "megatron", "", " ", "null", "${a.b}",
                     "two\nlines", "nul\x00byte")),
)
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=6), inner, max_size=3),
    ),
    max_leaves=6,
)
identifier = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
fqns = st.one_of(
    st.sampled_from(BUILTIN_FQNS),
    st.text(max_size=40),  # unicode, empty, whitespace, control characters
    st.lists(identifier, min_size=1, max_size=5).map(".".join),
    st.lists(st.sampled_from(sorted(keyword.kwlist)), min_size=2, max_size=3).map(".".join),
    st.sampled_from(("", ".", "..", "a.", ".a", "a..b", "a. b", "a.b\n", "é.Ünïcode",
                     "pkg.mod\nInjected.Line", "pkg.mod\x00.Cls", "x\u2028y.Z", "a.b\rc",
                     "a.b.c" * 2000, "a." * 5000 + "B", "os.system", "builtins.eval")),
    anything,  # not a string at all
)


_ABSENT = object()  # a key left out of its mapping


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, chosen with the given weights (`one_of` merges equal ones,
    so repeating a strategy there does not weigh it)."""
    total = sum(weight for weight, _ in choices)

    def pick(n: int) -> st.SearchStrategy[Any]:
        for weight, strategy in choices:
            if n < weight:
                return strategy
            n -= weight
        raise AssertionError(n)

    return st.integers(min_value=0, max_value=total - 1).flatmap(pick)


def maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`value`, a random value of any type, or the key left out."""
    return st.one_of(value, anything, st.just(_ABSENT))


def block(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A mapping whose keys are each present or absent (sometimes with a non-string key
    too), or a non-mapping in its place."""
    as_dict = st.fixed_dictionaries({k: maybe(v) for k, v in fields.items()}).map(
        lambda d: {k: v for k, v in d.items() if v is not _ABSENT}
    )
    int_keyed = as_dict.map(lambda d: {**d, 7: "an int key"})
    return weighted((6, as_dict), (1, int_keyed), (1, anything))


flag = st.one_of(st.booleans(), st.none())
size = st.one_of(st.integers(min_value=0, max_value=16), st.just(2**64))
generation = block(
    backend=st.sampled_from(("vllm", "sglang", "megatron", "", "VLLM")),
    quant_cfg=st.sampled_from(QUANT_NAMES),
    worker_extension_cls_fqn=fqns,
    model_name=st.sampled_from(("tiny", "nvidia/Nemotron-H-8B", "")),
    vllm_cfg=block(async_engine=flag, fp32_lm_head=flag, env_vars=anything,
                   tensor_parallel_size=size),
)
policy_section = block(
    megatron_cfg=block(enabled=flag, fp32_lm_head=flag, use_fused_linear_logprobs=flag,
                       tensor_model_parallel_size=size, pipeline_model_parallel_size=size,
                       context_parallel_size=size),
    automodel_cfg=block(enabled=flag, _v2=flag, tensor_parallel_size=size,
                        context_parallel_size=size),
    dtensor_cfg=block(enabled=flag, _v2=flag, tensor_parallel_size=size),
    quant_cfg=st.sampled_from(QUANT_NAMES),
    worker_extension_cls_fqn=fqns,
    generation=generation,
    train_micro_batch_size=size,
    logprob_batch_size=size,
    draft=block(enabled=flag),
    sequence_packing=block(enabled=flag),
    dynamic_batching=block(enabled=flag),
    model_name=st.sampled_from(("tiny", "nvidia/Nemotron-H-8B")),
)

# Free-form sections above are mostly rejected; to reach the accepting rules (R1-R4) as
# often, most sections are a valid one with a few keys changed (or removed).
VALID_SECTION: dict[str, Any] = {
    "model_name": "tiny",
    "automodel_cfg": {"enabled": True},
    "megatron_cfg": {"enabled": False},
    "generation": {"backend": "vllm", "vllm_cfg": {"async_engine": False}},
}
MUTABLE_KEYS: dict[tuple[str, ...], st.SearchStrategy[Any]] = {
    ("megatron_cfg", "enabled"): flag,
    ("automodel_cfg", "enabled"): flag,
    ("automodel_cfg", "_v2"): flag,
    ("dtensor_cfg",): block(enabled=flag, _v2=flag),
    ("quant_cfg",): st.sampled_from(QUANT_NAMES),
    ("worker_extension_cls_fqn",): fqns,
    ("generation",): generation,
    ("generation", "backend"): st.sampled_from(("vllm", "sglang")),
    ("generation", "vllm_cfg"): st.just({"async_engine": True}),
    ("generation", "vllm_cfg", "async_engine"): flag,
    ("generation", "vllm_cfg", "fp32_lm_head"): flag,
    ("generation", "quant_cfg"): st.sampled_from(QUANT_NAMES),
    ("generation", "worker_extension_cls_fqn"): fqns,
    ("megatron_cfg", "fp32_lm_head"): flag,
    ("megatron_cfg", "use_fused_linear_logprobs"): flag,
    ("megatron_cfg", "tensor_model_parallel_size"): size,
    ("megatron_cfg", "pipeline_model_parallel_size"): size,
    ("automodel_cfg", "tensor_parallel_size"): size,
    ("automodel_cfg", "context_parallel_size"): size,
    ("train_micro_batch_size",): size,
    ("logprob_batch_size",): size,
}
mutation = st.sampled_from(sorted(MUTABLE_KEYS)).flatmap(
    lambda path: st.tuples(
        st.just(path),
        weighted((4, MUTABLE_KEYS[path]), (1, anything), (1, st.just(_ABSENT))),
    )
)


def mutated(changes: list[tuple[tuple[str, ...], Any]]) -> dict[str, Any]:
    """VALID_SECTION with each change applied where its parent is still a mapping."""
    section = copy.deepcopy(VALID_SECTION)
    for path, value in changes:
        parent: object = section
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue  # an earlier change replaced the parent
        if value is _ABSENT:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = value
    return section


near_valid_section = st.lists(mutation, max_size=2).map(mutated)
section = weighted((4, near_valid_section), (1, policy_section))
absent = st.just(_ABSENT)
configs = st.fixed_dictionaries(
    {
        "policy": weighted((8, section), (1, anything), (1, absent)),
        "teacher": weighted((4, absent), (1, section)),
        "teachers": weighted((4, absent), (1, maybe(st.lists(section, max_size=2)))),
    }
).map(lambda d: {k: v for k, v in d.items() if v is not _ABSENT})
world_sizes = st.one_of(st.none(), st.integers(min_value=1, max_value=64))

# -------------------------------------------------------------------- checks


def assert_located(problem: Problem) -> None:
    """A problem names a config path inside a worker section, and reads as text."""
    # Runtime types too: a field built from a fuzzed value must still be text.
    fields = (problem.path, problem.expected, problem.given, problem.message)
    assert all(type(text) is str for text in fields), problem
    root = problem.path.split(".")[0].split("[")[0]
    assert root in SECTION_ROOTS, problem
    assert problem.message, problem
    assert "\n" not in problem.message, problem  # one line each, as the CLI prints them


def same(a: object, b: object) -> bool:
    """Deep equality where NaN equals NaN (a fuzzed float may be NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def check_config(config: dict[str, Any], world_size: int | None) -> None:
    """Run `check`'s functions; only project errors with config paths may come out."""
    before = copy.deepcopy(config)
    report = ConfigReport(config="fuzzed.yaml")
    analyze_config(config, report, world_size=world_size, verify=False, preflight=True)
    for problem in report.problems:
        assert_located(problem)
    for found in (outdated_config_problems(config),
                  preflight_problems(config, world_size=world_size).problems):
        for problem in found:
            assert_located(problem)
    try:
        resolutions = resolve_config(config)
    except WorkerConfigError as err:
        event("rejected")
        for problem in err.problems:
            assert_located(problem)
    else:
        event(f"resolved {len(resolutions)} worker(s)")
        assert all(type(r) is Resolution and type(r.fqn) is str for r in resolutions)
        # `check` resolved the very same classes.
        assert [r.fqn for r in report.workers] == [r.fqn for r in resolutions]
    assert same(config, before), "the config was modified"


@pytest.mark.slow  # 2,000 examples: 7-12 s
@settings(max_examples=2000, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(config=configs, world_size=world_sizes)
def test_fuzzed_configs_give_a_resolution_or_located_problems(
    config: dict[str, Any], world_size: int | None
) -> None:
    check_config(config, world_size)


# ------------------------------------------------------------ defaults chains

FILES = 4
defaults_entry = weighted(
    (4, st.integers(min_value=0, max_value=FILES - 1).map(lambda i: f"f{i}.yaml")),  # cycles too
    (1, st.sampled_from(("missing.yaml", "../outside/x.yaml", "/nonexistent/abs.yaml",
                         "sub/../f0.yaml", "", ".", "/dev/null", "f0.yaml\n", "f\x00.yaml"))),
    (1, st.text(max_size=10)),
)
defaults_value = weighted(
    (3, st.none()),
    (3, defaults_entry),
    (2, st.lists(defaults_entry, max_size=3)),
    (1, anything),  # not a file name or a list of them
)
# YAML that safe_dump can write: string keys, no NaN surprises in keys.
yaml_policy = block(
    automodel_cfg=block(enabled=flag, _v2=flag),
    megatron_cfg=block(enabled=flag),
    dtensor_cfg=block(enabled=flag),
    quant_cfg=st.sampled_from(QUANT_NAMES),
    worker_extension_cls_fqn=fqns,
    generation=block(backend=st.sampled_from(("vllm", "sglang")), vllm_cfg=anything),
)
tree = st.lists(
    st.fixed_dictionaries({"defaults": defaults_value, "policy": maybe(yaml_policy)}),
    min_size=1, max_size=FILES,
)


def write_tree(folder: Path, files: list[dict[str, Any]]) -> Path:
    (folder / "sub").mkdir()
    for i, data in enumerate(files):
        body = {k: v for k, v in data.items() if v is not _ABSENT and v is not None}
        (folder / f"f{i}.yaml").write_text(yaml.safe_dump(body, allow_unicode=True))
    return folder / "f0.yaml"


@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=tree, world_size=world_sizes)
def test_random_defaults_chains_load_or_fail_with_one_line(
    files: list[dict[str, Any]], world_size: int | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        top = write_tree(Path(tmp), files)
        try:
            config = load_config(top)
        except ConfigLoadError as err:
            event(f"unusable ({err.kind})")
            assert err.file is not None and "\n" not in str(err)
            config = None
        report = analyze_file(str(top), (), world_size=world_size, verify=False,
                              preflight=True)
        if config is None:
            assert report.unusable is not None and "\n" not in report.unusable
        else:
            assert report.unusable is None
            for problem in report.problems:
                assert_located(problem)
                assert problem.file is not None  # located in the tree
            check_config(config, world_size)
