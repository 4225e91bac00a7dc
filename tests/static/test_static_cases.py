"""Each static case reports exactly its marked error codes in mypy and in pyrefly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.static.checkers import Codes, StaticRun, read_markers
from tests.static.conftest import CASES, case_files

# The cases the project promises (DESIGN: static checks), with the codes of their errors.
REQUIRED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "extension_missing_quant_method.py": (frozenset({"assignment"}), frozenset({"bad-assignment"})),
    "extension_wrong_signature.py": (frozenset({"assignment"}), frozenset({"bad-assignment"})),
    "vllm_misspelled_keyword.py": (frozenset({"call-arg"}), frozenset({"unexpected-keyword"})),
    "deprecated_policy_argument.py": (frozenset({"deprecated"}), frozenset({"deprecated"})),
    "deprecated_policy_argument_pattern.py": (
        frozenset({"deprecated"}),
        frozenset({"deprecated"}),
    ),
    # Typed worker calls (issue 11): each mistake fails in both checkers.
    "worker_call_misspelled_method.py": (
        frozenset({"attr-defined"}),
        frozenset({"missing-attribute"}),
    ),
    "worker_call_wrong_arguments.py": (
        frozenset({"call-overload", "call-arg"}),
        frozenset({"no-matching-overload"}),
    ),
    "worker_call_result_wrong_type.py": (
        frozenset({"assignment", "attr-defined", "call-overload"}),
        frozenset({"bad-assignment", "missing-attribute"}),
    ),
    "worker_call_not_narrowed.py": (
        frozenset({"call-overload", "return-value"}),
        frozenset({"no-matching-overload", "bad-return"}),
    ),
    "worker_call_by_name.py": (frozenset({"deprecated"}), frozenset({"deprecated"})),
}


def _union(codes: Codes) -> frozenset[str]:
    return frozenset().union(*codes.values())


@pytest.mark.parametrize("path", case_files(), ids=lambda p: p.name)
def test_checkers_report_exactly_the_marked_codes(path: Path, static_run: StaticRun) -> None:
    expected = read_markers(path.read_text())
    assert static_run.mypy.get(path.name, {}) == expected.mypy, "mypy"
    assert static_run.pyrefly.get(path.name, {}) == expected.pyrefly, "pyrefly"


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_required_case_fails_with_its_codes(name: str, static_run: StaticRun) -> None:
    mypy_codes, pyrefly_codes = REQUIRED[name]
    assert mypy_codes <= _union(static_run.mypy.get(name, {}))
    assert pyrefly_codes <= _union(static_run.pyrefly.get(name, {}))


@pytest.mark.parametrize("name", ["vllm_usage_ok.py", "worker_call_ok.py"])
def test_clean_cases_check_clean(name: str, static_run: StaticRun) -> None:
    assert (CASES / name).exists()
    assert name not in static_run.mypy
    assert name not in static_run.pyrefly


def test_a_suppression_without_codes_is_rejected() -> None:
    with pytest.raises(ValueError, match="line 1: a suppression without error codes"):
        read_markers("x: int = 'a'  # type: ignore\n")
