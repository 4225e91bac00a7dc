"""Problems raised by Policy and VllmGeneration name the file and line of a loaded config."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest
from nemo_rl.distributed.inventory import ray_resources_snapshot
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.generation.vllm.vllm_generation import VllmGeneration
from nemo_rl.models.policy.lm_policy import Policy
from nemo_rl.pipeline import plan_generation, plan_policy

from contracts.init_call import GENERATION_INIT, POLICY_INIT
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.reading.loader import load_config

AUTOMODEL = "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"
MEGATRON_QUANT = (
    "nemo_rl.modelopt.models.policy.workers.megatron_quant_policy_worker."
    "MegatronQuantPolicyWorker"
)

PARENT = f"""\
policy:
  model_name: tiny-local
  megatron_cfg:
    enabled: false
  automodel_cfg:
    enabled: true
  generation:
    backend: vllm
    worker_extension_cls_fqn: {AUTOMODEL}
"""

CHILD = f"""\
defaults: parent.yaml
policy:
  quant_cfg: INT8_DEFAULT_CFG
  worker_extension_cls_fqn: {MEGATRON_QUANT}
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    (tmp_path / "parent.yaml").write_text(PARENT)
    child = tmp_path / "child.yaml"
    child.write_text(CHILD)
    return child


Where = list[tuple[str, str | None, int | None]]


def _where(err: pytest.ExceptionInfo[WorkerConfigError]) -> Where:
    return [(p.rule, p.file, p.line) for p in err.value.problems]


def test_the_pipeline_locates_problems_down_the_defaults_chain(config_file: Path) -> None:
    config = load_config(config_file)
    with pytest.raises(WorkerConfigError) as err:
        plan_policy(config["policy"], world_size=2, init_call=POLICY_INIT)
    assert _where(err) == [("R5", str(config_file), 4)]
    assert str(err.value).startswith(
        f"{config_file}:4: quant_cfg requires worker_extension_cls_fqn="
    )


def test_a_generation_section_typo_is_located(tmp_path: Path) -> None:
    path = tmp_path / "gen.yaml"
    path.write_text("policy:\n  generation:\n    backend: vllm\n    vllm_cfg:\n"
                    "      async_engin: true\n")
    with pytest.raises(WorkerConfigError) as err:
        plan_generation(load_config(path)["policy"]["generation"], world_size=2,
                        init_call=GENERATION_INIT)
    assert _where(err) == [("key", str(path), 5)]
    assert "did you mean policy.generation.vllm_cfg.async_engine?" in str(err.value)


def test_a_copied_or_hand_built_section_has_no_place(config_file: Path) -> None:
    section = copy.deepcopy(load_config(config_file)["policy"])
    with pytest.raises(WorkerConfigError) as err:
        plan_policy(section, world_size=2, init_call=POLICY_INIT)
    assert _where(err) == [("R5", None, None)]


@pytest.fixture
def cluster(ray_cluster: None) -> Iterator[RayVirtualCluster]:
    cluster = RayVirtualCluster([2], use_gpus=False, name="located")
    yield cluster
    cluster.shutdown()


@pytest.mark.ray
def test_policy_and_vllm_generation_raise_with_file_and_line(
    config_file: Path, cluster: RayVirtualCluster
) -> None:
    config = load_config(config_file)
    before = ray_resources_snapshot()
    with pytest.raises(WorkerConfigError) as err:
        Policy(cluster, config["policy"])
    assert _where(err) == [("R5", str(config_file), 4)]
    with pytest.raises(WorkerConfigError) as err:
        VllmGeneration(cluster, config["policy"]["generation"], defer_model_load=True)
    # The generation section is set in the parent file: its line there.
    assert _where(err) == [("R2", str(config_file.parent / "parent.yaml"), 9)]
    assert ray_resources_snapshot() == before
