"""contracts.testing.assert_implements: a pytest-friendly verify."""

from __future__ import annotations

import pytest

from contracts import POLICY_INIT, QuantPolicyWorker
from contracts.testing import assert_implements
from tests.contracts import samples


def test_passes_silently() -> None:
    assert_implements(
        samples.QuantPolicy, QuantPolicyWorker, base=samples.Policy, init_call=POLICY_INIT
    )


def test_fails_with_the_full_report() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_implements(samples.FourProblems, QuantPolicyWorker)
    lines = str(caught.value).splitlines()
    assert len(lines) == 5
    assert lines[-1] == (
        "tests.contracts.samples.FourProblems does not implement "
        "QuantPolicyWorker.get_quantizer_stats: missing"
    )


def test_report_includes_skipped_notes() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_implements(samples.StatsHiddenType, QuantPolicyWorker, base=samples.OtherBase)
    assert (
        str(caught.value)
        .splitlines()[1]
        .startswith(
            "  skipped: tests.contracts.samples.StatsHiddenType.get_quantizer_stats: annotation"
        )
    )
