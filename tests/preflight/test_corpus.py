"""The preflight rules over NeMo-RL's real example configs: they must never crash.

Informative only: how many configs have preflight problems is printed, not asserted,
because these upstream configs are outdated (see the corpus README) and some are
meant for clusters larger than they declare.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from nemo_rl_workers.model.preflight import preflight_problems
from nemo_rl_workers.reading.loader import ConfigLoadError, load_config
from tests.corpus import NEMO_RL

CORPUS = NEMO_RL / "examples" / "configs"
# Upstream's own config test exempts these from the TP>=4 batch check because their
# launch scripts set NRL_IGNORE_TP_ACCURACY_CHECK=1; nothing else in the corpus should trip it.
UPSTREAM_TP_ACCURACY_EXEMPT = frozenset({
    "grpo-qwen3-30ba3b-4n8g-40K.yaml",
    "grpo-qwen3-30ba3b-8n8g-megatron.yaml",
    "grpo-qwen3-32b-4n8g.yaml",
    "grpo-qwen3-32b-8n8g-async-1off.yaml",
    "grpo-gemma3-27b-it-8n8g-fsdp2tp8-actckpt-long.yaml",
    "grpo-gemma3-27b-it-8n4g-fsdp2tp4-actckpt-long.yaml",
})


def _renamed(config: Mapping[str, Any]) -> dict[str, Any]:
    """A copy with each worker section's `dtensor_cfg` read as `automodel_cfg`, as `migrate` does.

    Without it the outdated check rejects almost every corpus config and the
    backend-dependent preflight rules skip; with it they all run.
    """
    renamed = dict(config)
    for key in ("policy", "teacher"):
        section = renamed.get(key)
        if isinstance(section, Mapping) and "dtensor_cfg" in section:
            moved = {k: v for k, v in section.items() if k != "dtensor_cfg"}
            moved.setdefault("automodel_cfg", section["dtensor_cfg"])
            renamed[key] = moved
    return renamed


def _world_size(config: Mapping[str, Any]) -> int | None:
    cluster = config.get("cluster")
    if not isinstance(cluster, Mapping):
        return None
    nodes, gpus = cluster.get("num_nodes"), cluster.get("gpus_per_node")
    if type(nodes) is int and type(gpus) is int and nodes > 0 and gpus > 0:
        return nodes * gpus
    return None


@pytest.mark.slow
def test_preflight_never_crashes_on_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    paths = sorted(CORPUS.rglob("*.yaml"))
    assert paths, f"no YAML files under {CORPUS}"
    checked = with_problems = unloadable = 0
    rules: Counter[str] = Counter()
    raw_with_problems = 0
    tp_accuracy_files: set[str] = set()
    for path in paths:
        try:
            config = load_config(path)
        except ConfigLoadError:  # the loader's own rejections; any other exception is a crash
            unloadable += 1
            continue
        world_size = _world_size(config)
        raw = preflight_problems(config, world_size=world_size, environ={})
        raw_with_problems += bool(raw.problems)
        report = preflight_problems(_renamed(config), world_size=world_size, environ={})
        checked += 1
        with_problems += bool(report.problems)
        rules.update(p.rule for p in report.problems)
        tp_accuracy_files.update(
            path.name for p in report.problems if p.rule == "preflight.parallelism.tp_accuracy")
    assert checked > 0, f"the loader rejected all {len(paths)} corpus configs"
    assert tp_accuracy_files <= UPSTREAM_TP_ACCURACY_EXEMPT, sorted(tp_accuracy_files)
    with capsys.disabled():
        print(f"\npreflight over corpus: {checked} configs loaded ({unloadable} did not); "
              f"{raw_with_problems} have problems as written, {with_problems} with dtensor_cfg "
              f"read as automodel_cfg; by rule: {dict(rules)}")
