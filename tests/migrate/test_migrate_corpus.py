"""The real upstream configs: migrated in place, every one loads, passes the checks, resolves."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from nemo_rl_workers import resolve_config
from nemo_rl_workers.commands.migrate import run_migrate
from nemo_rl_workers.model.outdated import check_outdated_config
from nemo_rl_workers.reading.loader import ConfigLoadError, load_config
from tests.corpus import NEMO_RL

pytestmark = pytest.mark.slow  # ~300 real files, several seconds on a shared CPU

REPO = Path(__file__).resolve().parents[2]
CORPUS = NEMO_RL / "examples" / "configs"


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    copy = tmp_path_factory.mktemp("corpus") / "configs"
    shutil.copytree(CORPUS, copy)
    out, err = io.StringIO(), io.StringIO()
    assert run_migrate([str(copy), "--in-place"], out, err) == 0, err.getvalue()
    # Nothing on stderr but the warnings for sections whose `_v2: false` chose DTensor v1.
    assert [line for line in err.getvalue().splitlines()
            if ": warning: " not in line or not line.endswith("backend's worker instead")] == []
    return copy


def test_every_migrated_config_loads_passes_the_checks_and_resolves(
    migrated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Some recipes interpolate ${oc.env:HF_HOME}; upstream expects it set.
    monkeypatch.setenv("HF_HOME", str(migrated / "hf_home"))
    configs = sorted(migrated.rglob("*.yaml"))
    assert len(configs) > 200
    resolved = 0  # configs with at least one worker (eval configs have none)
    missing_parent: list[str] = []
    for path in configs:
        try:
            config = load_config(path)
        except ConfigLoadError as e:
            # Only a defaults chain that leaves the snapshot (examples/modelopt, nemo_gym).
            assert e.kind == "missing-default", str(e)
            missing_parent.append(path.name)
            continue
        check_outdated_config(config)
        resolved += bool(resolve_config(config))
    assert resolved > 250
    assert len(missing_parent) < 25


def test_migrating_the_corpus_again_changes_nothing(migrated: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_migrate([str(migrated), "--check"], out, err) == 0, out.getvalue()
    assert out.getvalue().endswith(" 0 would change, 295 unchanged, 0 failed\n".lstrip())


def test_the_outdated_corpus_is_rejected_before_migration() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    out, err = io.StringIO(), io.StringIO()
    # Toward the reference: against its own tree the corpus is current (tests/revision).
    assert run_migrate([str(CORPUS), "--check", "--reference"], out, err) == 1
    # 137: `value` and `env.reward_model` sections are migrated too (as upstream checks them).
    assert "137 would change, 158 unchanged, 0 failed\n" in out.getvalue()
    assert "value.dtensor_cfg -> value.automodel_cfg" in out.getvalue()
    assert "env.reward_model.dtensor_cfg -> env.reward_model.automodel_cfg" in out.getvalue()
