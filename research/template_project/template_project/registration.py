"""Entry point of the `nemo_rl.workers` group: where this project's worker runs, and the
contract it is verified against before any actor starts.

Kept import-light (no torch): the driver reads it while resolving configs.
"""

from nemo_rl_workers.model.registry import DRIVER_ENV, WorkerPlugin
from template_project.protocols import WeightNormWorker

WORKER_FQN = "template_project.workers.TemplateAutomodelPolicyWorker"

# The extension runs in the driver's interpreter; a project with its own venv would
# pass ActorEnvironment(name="template", py_executable="/path/to/venv/bin/python").
PLUGIN = WorkerPlugin(
    environments={WORKER_FQN: DRIVER_ENV},
    protocols={WORKER_FQN: WeightNormWorker},
)
