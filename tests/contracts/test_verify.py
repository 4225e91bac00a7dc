"""The verifier: one rule broken at a time, every problem at once, the cache."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from contracts import (
    GENERATION_INIT,
    POLICY_INIT,
    ContractError,
    PolicyWorker,
    QuantAsyncGenerationWorker,
    QuantPolicyWorker,
    TrainBatch,
    TrainResult,
    check,
    clear_cache,
    verify,
)
from contracts.verify import Rule
from tests.contracts import samples

M = "tests.contracts.samples"
SAMPLES = os.path.relpath(samples.__file__)


def at(func: Callable[..., object]) -> str:
    """The location suffix of a violation about `func` (its `def` line in samples.py)."""
    code = getattr(func, "__func__", func).__code__
    return f" [{SAMPLES}:{code.co_firstlineno}]"

STATS = "QuantPolicyWorker.get_quantizer_stats"


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    clear_cache()


def test_good_worker_passes_every_rule() -> None:
    report = verify(
        samples.QuantPolicy, QuantPolicyWorker, base=samples.Policy, init_call=POLICY_INIT
    )
    assert report.ok
    assert report.violations == ()
    assert report.skipped == ()
    assert str(report) == f"{M}.QuantPolicy implements QuantPolicyWorker"


def test_async_generator_annotated_stream_passes() -> None:
    # AsyncGenerator[GenerationSample, None] vs the Protocol's AsyncIterator[GenerationSample]:
    # beartype calls this pair undecidable; the verifier compares the yielded type.
    report = verify(samples.StreamingGeneration, QuantAsyncGenerationWorker)
    assert report.ok and report.skipped == ()


@pytest.mark.parametrize(
    ("cls", "kwargs", "rule", "line"),
    [
        pytest.param(
            samples.Policy,
            {},
            "missing",
            f"{M}.Policy does not implement {STATS}: missing",
            id="missing",
        ),
        pytest.param(
            samples.StatsNotCallable,
            {},
            "not-callable",
            f"{M}.StatsNotCallable does not implement {STATS}: not callable (found int)",
            id="not-callable",
        ),
        pytest.param(
            samples.StatsWithRequiredArg,
            {},
            "shape",
            f"{M}.StatsWithRequiredArg does not implement {STATS}: "
            "call shape: extra parameter 'module' needs a default"
            + at(samples.StatsWithRequiredArg.get_quantizer_stats),
            id="shape",
        ),
        pytest.param(
            samples.StatsAsDict,
            {},
            "annotation",
            f"{M}.StatsAsDict does not implement {STATS}: "
            "annotation: returns dict[str, int], which is not a QuantizerStats "
            "(the Protocol's return)" + at(samples.StatsAsDict.get_quantizer_stats),
            id="annotation",
        ),
        pytest.param(
            samples.QuantPolicy,
            {"base": samples.OtherBase},
            "base",
            f"{M}.QuantPolicy does not implement QuantPolicyWorker: "
            f"not a subclass of {M}.OtherBase",
            id="base",
        ),
        pytest.param(
            samples.NoRankInit,
            {"init_call": POLICY_INIT},
            "init",
            f"{M}.NoRankInit does not implement QuantPolicyWorker: constructor cannot take "
            "NoRankInit(config, rank=..., world_size=...): "
            "got an unexpected keyword argument 'rank'",
            id="init",
        ),
    ],
)
def test_each_rule_alone(cls: type, kwargs: dict[str, type], rule: Rule, line: str) -> None:
    with pytest.raises(ContractError) as caught:
        verify(cls, QuantPolicyWorker, **kwargs)  # type: ignore[arg-type]  # base or init_call
    (violation,) = caught.value.violations
    assert violation.rule == rule
    assert str(violation) == line
    assert str(caught.value) == line


def test_static_and_class_methods_satisfy_an_instance_method() -> None:
    # The typing spec compares the member as an instance exposes it.
    assert check(samples.StaticStats, QuantPolicyWorker).ok


def test_kind_a_protocol_classmethod_needs_a_class_or_static_method() -> None:
    (violation,) = check(samples.InstanceCreate, samples.MadeByClass).violations
    assert violation.rule == "kind"
    assert str(violation) == (
        f"{M}.InstanceCreate does not implement MadeByClass.create: "
        "an instance method, the Protocol declares a classmethod"
        + at(samples.InstanceCreate.create)
    )


def test_async_is_a_named_stricter_rule_beside_the_spec_annotation() -> None:
    report = check(samples.AsyncStats, QuantPolicyWorker)
    where = at(samples.AsyncStats.get_quantizer_stats)
    assert [str(v) for v in report.violations] == [
        f"{M}.AsyncStats does not implement {STATS}: a coroutine function (async def), the "
        "Protocol declares a plain function (stricter than the spec: Ray runs a method by its "
        "function kind)" + where,
        f"{M}.AsyncStats does not implement {STATS}: annotation: returns "
        "Coroutine[Any, Any, QuantizerStats], which is not a QuantizerStats "
        "(the Protocol's return)" + where,
    ]
    assert [v.rule for v in report.violations] == ["async", "annotation"]
    assert not report.spec_ok


def test_plain_protocol_is_checked_structurally() -> None:
    # Not @runtime_checkable: beartype's gate does not apply; the members are compared.
    assert check(samples.QuantPolicy, samples.UncheckedStats).ok
    (violation,) = check(samples.StatsAsDict, samples.UncheckedStats).violations
    assert violation.rule == "annotation"


def test_protocol_with_data_member() -> None:
    report = check(samples.QuantPolicy, samples.NamedWorker)
    assert [str(v) for v in report.violations] == [
        f"{M}.QuantPolicy does not implement NamedWorker.name: missing"
    ]


def test_explicit_protocol_subclass_that_forgets_a_member_is_refused() -> None:
    with pytest.raises(ContractError) as caught:
        verify(samples.SubclassForgetsStats, QuantPolicyWorker)
    (violation,) = caught.value.violations
    assert violation.rule == "missing"
    assert str(violation).startswith(
        f"{M}.SubclassForgetsStats does not implement {STATS}: missing: only the abstract "
        "body in Protocol QuantPolicyWorker provides it (a call would return None) [contracts/"
    )


def test_four_problems_one_error_every_line() -> None:
    with pytest.raises(ContractError) as caught:
        verify(samples.FourProblems, QuantPolicyWorker)
    c = f"{M}.FourProblems does not implement QuantPolicyWorker"
    shutdown = at(samples.FourProblems.shutdown)
    assert str(caught.value).splitlines() == [
        f"{c}.is_alive: not callable (found bool)",
        f"{c}.save_checkpoint: call shape: positional parameter 1 is named 'directory', "
        "the Protocol names it 'path'" + at(samples.FourProblems.save_checkpoint),
        f"{c}.shutdown: a coroutine function (async def), the Protocol declares a plain "
        "function (stricter than the spec: Ray runs a method by its function kind)" + shutdown,
        f"{c}.shutdown: annotation: returns Coroutine[Any, Any, bool], which is not a bool "
        "(the Protocol's return)" + shutdown,
        f"{c}.get_quantizer_stats: missing",
    ]
    assert [v.rule for v in caught.value.violations] == [
        "not-callable", "shape", "async", "annotation", "missing"
    ]


def test_unresolvable_annotation_is_skipped_not_failed() -> None:
    report = check(samples.StatsHiddenType, QuantPolicyWorker)
    assert report.ok
    assert report.skipped == (
        f"{M}.StatsHiddenType.get_quantizer_stats: annotation of return could not be resolved "
        "(NameError: name 'HiddenStats' is not defined); not checked",
    )


def test_typeddict_returns() -> None:
    class Same(samples.Policy):
        def train(self, batch: TrainBatch) -> TrainResult:
            return samples.RESULT

    class Loose(samples.Policy):
        def train(self, batch: TrainBatch) -> dict[str, float]:  # type: ignore[override]  # under test
            return {}

    assert check(Same, PolicyWorker).ok
    (violation,) = check(Loose, PolicyWorker).violations
    assert violation.message == (
        "annotation: returns dict[str, float], which is not a TrainResult (the Protocol's return)"
    )


def test_none_return_against_bool() -> None:
    class NoneShutdown(samples.Policy):
        def shutdown(self) -> None:  # type: ignore[override]  # under test
            pass

    (violation,) = check(NoneShutdown, PolicyWorker).violations
    assert violation.message == (
        "annotation: returns None, which is not a bool (the Protocol's return)"
    )


def test_parameters_are_contravariant() -> None:
    class Narrow(samples.Policy):
        def save_checkpoint(self, path: str | bytes) -> None:  # wider: fine
            pass

        def load_checkpoint(self, path: bytes) -> None:  # type: ignore[override]  # flagged
            pass

    (violation,) = check(Narrow, PolicyWorker).violations
    assert (violation.member, violation.message) == (
        "load_checkpoint",
        "annotation: parameter 'path' is bytes, which does not accept the Protocol's str",
    )


def test_check_does_not_raise_and_verify_lists_every_violation() -> None:
    report = check(samples.FourProblems, QuantPolicyWorker)
    assert not report.ok and len(report.violations) == 5
    with pytest.raises(ContractError) as caught:
        verify(samples.FourProblems, QuantPolicyWorker)
    assert caught.value.violations == report.violations


def test_init_args_is_an_alias_of_init_call() -> None:
    report = check(samples.NoRankInit, QuantPolicyWorker, init_args=POLICY_INIT)
    assert [v.rule for v in report.violations] == ["init"]
    with pytest.raises(TypeError, match="not both"):
        check(samples.Policy, PolicyWorker, init_call=POLICY_INIT, init_args=GENERATION_INIT)


def test_contract_error_survives_pickling() -> None:
    with pytest.raises(ContractError) as caught:
        verify(samples.FourProblems, QuantPolicyWorker)
    again = pickle.loads(pickle.dumps(caught.value))
    assert isinstance(again, ContractError)
    assert again.violations == caught.value.violations
    assert str(again) == str(caught.value)


def test_cache_hit_returns_the_same_report_in_microseconds() -> None:
    first = check(samples.QuantPolicy, QuantPolicyWorker, init_call=POLICY_INIT)
    assert check(samples.QuantPolicy, QuantPolicyWorker, init_call=POLICY_INIT) is first
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        check(samples.QuantPolicy, QuantPolicyWorker, init_call=POLICY_INIT)
    per_call = (time.perf_counter() - start) / n
    assert per_call < 50e-6, f"cached check took {per_call * 1e6:.1f} us"
    clear_cache()
    assert check(samples.QuantPolicy, QuantPolicyWorker, init_call=POLICY_INIT) is not first


def test_cache_key_includes_base_and_init_call() -> None:
    plain = check(samples.NoRankInit, QuantPolicyWorker)
    with_init = check(samples.NoRankInit, QuantPolicyWorker, init_call=POLICY_INIT)
    assert plain.ok and not with_init.ok
    # The same class and Protocol, cached without a base, then asked with one it lacks.
    no_base = check(samples.QuantPolicy, QuantPolicyWorker)
    with_base = check(samples.QuantPolicy, QuantPolicyWorker, base=samples.OtherBase)
    assert no_base.ok and not with_base.ok
    assert check(samples.QuantPolicy, QuantPolicyWorker) is no_base  # each key kept apart


def test_rejects_non_protocol() -> None:
    with pytest.raises(TypeError, match="needs a typing.Protocol"):
        check(samples.Policy, samples.OtherBase)


def test_import_contracts_loads_nothing_heavy() -> None:
    root = Path(__file__).resolve().parents[2]
    code = (
        "import sys, contracts, contracts.testing\n"
        "heavy = ('nemo_rl', 'ray', 'torch', 'vllm', 'modelopt')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
