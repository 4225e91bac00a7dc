"""A fixed sample of generated Protocol/class pairs: the verifier agrees with the checkers.

One mypy run and one pyrefly run judge every sampled pair (see generator.py); the full
set (over 1,000 pairs) runs in `make bench`.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.static.checkers import BIN
from tests.static.generator import (
    BLIND_SPOTS,
    CATEGORIES,
    MYPY_FOLLOWS_SPEC,
    PYREFLY_FOLLOWS_SPEC,
    Pair,
    Verdict,
    all_pairs,
    judge,
    ruling,
    sample,
)

SAMPLE = sample(all_pairs())


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdict]:
    missing = [tool for tool in ("mypy", "pyrefly") if not (BIN / tool).exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed next to {BIN / 'python'}")
    found = judge(SAMPLE, tmp_path_factory.mktemp("generated"))
    return {_id(v.pair): v for v in found}


def _id(pair: Pair) -> str:
    return f"{pair.category}:{pair.name}"


def test_sample_covers_every_category() -> None:
    assert len(SAMPLE) >= 150
    per = Counter(pair.category for pair in SAMPLE)
    assert set(per) == {p.category for make in CATEGORIES.values() for p in make()}
    assert len({_id(p) for p in SAMPLE}) == len(SAMPLE)


def test_full_run_has_over_a_thousand_pairs() -> None:
    assert len(all_pairs()) >= 1000


@pytest.mark.parametrize("pair", SAMPLE, ids=_id)
def test_verifier_agrees_with_the_reference(pair: Pair, verdicts: dict[str, Verdict]) -> None:
    v = verdicts[_id(pair)]
    if pair.category in BLIND_SPOTS:
        # A documented runtime blind spot: the checkers see it, the verifier cannot.
        assert v.reference_rejects and not v.runtime_rejects
        return
    assert v.runtime_rejects == v.reference_rejects, (
        f"verifier {v.runtime}, mypy {v.mypy}, pyrefly {v.pyrefly}"
    )


def test_checker_disagreements_have_a_recorded_ruling(verdicts: dict[str, Verdict]) -> None:
    differ = [v for v in verdicts.values() if v.mypy_rejects != v.pyrefly_rejects]
    rulings = {**PYREFLY_FOLLOWS_SPEC, **MYPY_FOLLOWS_SPEC}
    for v in differ:
        side, why = ruling(v.pair)
        assert why in rulings.values(), f"{_id(v.pair)}: no ruling for mypy vs pyrefly"
        assert side in ("mypy", "pyrefly")


def test_the_checkers_reject_something_in_every_category(
    verdicts: dict[str, Verdict],
) -> None:
    # A sample the checkers all accept could not catch a false accept.
    rejected = Counter(v.pair.category for v in verdicts.values() if v.reference_rejects)
    accepted = Counter(v.pair.category for v in verdicts.values() if not v.reference_rejects)
    every = {v.pair.category for v in verdicts.values()}
    assert set(rejected) == every
    assert set(accepted) == every - BLIND_SPOTS
