"""A tree's message is quoted as the tree prints it: an f-string's conversion and format
spec apply to the config's value (upstream's lm_policy.py writes `{dp:.3f}`, which prints
`0.500`; the check printed `0.5` before). What the check does not apply stays `{expression}`:
a value the config does not give, a spec the value refuses, a width of thousands."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_run import run_cli as run
from tests.revision.trees import OLD_FILES, config, write

POLICY = '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup


class Policy:
    def __init__(self, cluster, config):
        n = config["train_micro_batch_size"]
        name = config["model_name"]
        if n > 4:
            raise ValueError(
                f"mbs {n:03d} of {name!r} ({name}) at {n / 3:.2f}, {n / 3}; "
                f"wide {n:>99999}; refused {name:d}; not the config's {cluster}"
            )
        self.worker_group = RayWorkerGroup(RayWorkerBuilder(
            "nemo_rl.models.policy.workers.dtensor.DTensorPolicyWorker", config))

    def train(self, data):
        return self.worker_group.run_all_workers_single_data("train", data=data)
'''

CONFIG = """\
policy:
  model_name: tiny
  train_micro_batch_size: 6
  dtensor_cfg: {enabled: true}
"""


def test_conversions_and_specs_apply_to_the_config_s_values(tmp_path: Path) -> None:
    root = write(tmp_path, {**OLD_FILES, "nemo_rl/models/policy/lm_policy.py": POLICY})
    code, out, err = run("check", "--no-verify", "--json", config(root, "c.yaml", CONFIG))
    assert (code, err) == (1, "")
    messages = [p["message"] for p in json.loads(out)["problems"]]
    assert len(messages) == 1
    assert messages[0].endswith(
        "at nemo_rl/models/policy/lm_policy.py:10 (Policy.__init__): "
        "\"mbs 006 of 'tiny' (tiny) at 2.00, 2.0; wide {n}; refused {name}; "
        "not the config's {cluster}\"")
