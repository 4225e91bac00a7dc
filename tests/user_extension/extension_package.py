"""A NeMo-RL user's extension package, written into a folder of its own for one corpus tree,
correct or with one deliberate mistake.

The package is kept beside this module as templates (`package/<tree>/**/*.txt`, so neither
pytest nor the type checkers take it for this project's code): worker classes subclassing
the tree's own, written as upstream's `research/template_project` writes its extension
(`@ray.remote` on a subclass of the undecorated class), a registration module (the tree's
`ACTOR_ENVIRONMENT_REGISTRY`), a driver script and a config whose `defaults:` is the
tree's own recipe (`@TREE@` stands for the tree's folder). A mistake is a list of exact
text edits; each must match, so a template that drifts fails here, not silently.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.corpus import CORPORA

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "package"
CORPUS = CORPORA
TREES = {"2026-08": CORPUS / "nemo-rl", "2025-09": CORPUS / "nemo-rl-2025-09"}
CONFIG = "configs/my_ext.yaml"
EXTENSION_FIELD = "worker_extension_cls_fqn"
# The role's built-in contract a user names to `verify` for a section's class.
PROTOCOL_OF_SECTION = {"policy": "PolicyWorker", "policy.generation": "GenerationWorker"}


@dataclass(frozen=True)
class Edit:
    """Replace every occurrence of `old` (at least one) in the package's `file`."""

    file: str
    old: str
    new: str


@dataclass(frozen=True)
class Mistake:
    name: str
    what: str
    edits: tuple[Edit, ...]


def _policy_2026(old: str, new: str) -> Edit:
    return Edit("my_ext/policy_worker.py", old, new)


def _generation_2025(old: str, new: str) -> Edit:
    return Edit("my_ext/generation_worker.py", old, new)


_POLICY_REMOTE = (
    "@ray.remote(\n"
    '    runtime_env=get_runtime_env_for_policy_worker("dtensor_policy_worker_v2")\n'
    ")  # pragma: no cover\n"
)
_VLLM_REMOTE = (
    "@ray.remote(\n"
    '    runtime_env={**get_nsight_config_if_pattern_matches("vllm_generation_worker")}\n'
    ")  # pragma: no cover\n"
)
_NSYS_IMPORT = "from nemo_rl.utils.nsys import nvtx_range\n"  # neither tree defines it

# 2026-08: the mistakes are in the policy worker (upstream's template's own worker).
# 2025-09: in the vLLM generation worker (that tree has no undecorated policy worker).
MISTAKES: dict[str, dict[str, Mistake]] = {
    "2026-08": {m.name: m for m in (
        Mistake("renamed", "get_worker_rank, which the driver calls by name, renamed get_rank",
                (_policy_2026("def get_worker_rank(self)", "def get_rank(self)"),)),
        Mistake("signature", "the train override lacks check_dim_skip_keys, which Policy sends",
                (_policy_2026("        check_dim_skip_keys: Optional[Iterable[str]] = None,\n",
                              ""),
                 _policy_2026("            check_dim_skip_keys=check_dim_skip_keys,\n", ""))),
        Mistake("no-ray-remote", "the worker class is not decorated @ray.remote",
                (_policy_2026(_POLICY_REMOTE, ""),)),
        Mistake("unregistered", "the registration module leaves the policy worker out",
                (Edit("my_ext/registration.py",
                      'ACTOR_ENVIRONMENT_REGISTRY["my_ext.policy_worker.MyPolicyWorker"] = (\n'
                      "    PY_EXECUTABLES.AUTOMODEL\n)\n", ""),)),
        Mistake("actor-subclass", "the worker subclasses the @ray.remote DTensorPolicyWorkerV2",
                (_policy_2026("DTensorPolicyWorkerV2Impl", "DTensorPolicyWorkerV2"),)),
        Mistake("misspelt-fqn", "the config names my_ext.policy_worker.MyPolicyWroker",
                (Edit(CONFIG, "my_ext.policy_worker.MyPolicyWorker",
                      "my_ext.policy_worker.MyPolicyWroker"),)),
        Mistake("missing-tree-name", "the worker imports nvtx_range from nemo_rl.utils.nsys",
                (_policy_2026("import torch\n\n", f"import torch\n\n{_NSYS_IMPORT}"),
                 _policy_2026("        return torch.distributed.get_rank()\n",
                              '        with nvtx_range("get_worker_rank"):\n'
                              "            return torch.distributed.get_rank()\n"))),
    )},
    "2025-09": {m.name: m for m in (
        Mistake("renamed", "generate, which VllmGeneration calls by name, renamed generate_batch",
                (_generation_2025("    def generate(\n", "    def generate_batch(\n"),)),
        Mistake("signature", "the generate override lacks greedy, which VllmGeneration sends",
                (_generation_2025(
                    "    def generate(\n        self, data: BatchedDataDict[GenerationDatumSpec]"
                    ", greedy: bool = False\n",
                    "    def generate(\n"
                    "        self, data: BatchedDataDict[GenerationDatumSpec]\n"),
                 _generation_2025("return self.generate_text(data, greedy=greedy)",
                                  "return self.generate_text(data)"))),
        Mistake("no-ray-remote", "the worker class is not decorated @ray.remote",
                (_generation_2025(_VLLM_REMOTE, ""),)),
        Mistake("unregistered", "the registration module registers nothing",
                (Edit("my_ext/registration.py",
                      'ACTOR_ENVIRONMENT_REGISTRY["my_ext.generation_worker.MyVllmGenerationWorker"]'
                      " = (\n    PY_EXECUTABLES.VLLM\n)\n", ""),)),
        Mistake("actor-subclass", "the worker subclasses the @ray.remote VllmGenerationWorker",
                (_generation_2025("BaseVllmGenerationWorker", "VllmGenerationWorker"),)),
        Mistake("misspelt-fqn",
                "the config names my_ext.generation_worker.MyVllmGenerationWroker",
                (Edit(CONFIG, "my_ext.generation_worker.MyVllmGenerationWorker",
                      "my_ext.generation_worker.MyVllmGenerationWroker"),)),
        Mistake("missing-tree-name", "the worker imports nvtx_range from nemo_rl.utils.nsys",
                (_generation_2025("import ray\n\n", f"import ray\n\n{_NSYS_IMPORT}"),
                 _generation_2025("        return self.generate_text(data, greedy=greedy)\n",
                                  '        with nvtx_range("generate"):\n'
                                  "            return self.generate_text(data, greedy=greedy)\n"
                                  ))),
    )},
}


def write_package(tree: str, dest: Path, mistake: str | None = None) -> Path:
    """Write the package for `tree` into `dest` (created), with `mistake` applied."""
    root = TEMPLATES / tree
    for source in sorted(root.rglob("*.txt")):
        target = dest / source.relative_to(root)
        target = target.with_name(target.name.removesuffix(".txt"))
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8").replace("@TREE@", str(TREES[tree]))
        target.write_text(text, encoding="utf-8")
    if mistake is not None:
        apply(dest, MISTAKES[tree][mistake])
    return dest


def apply(dest: Path, mistake: Mistake) -> None:
    """Apply `mistake`'s edits in place."""
    for edit in mistake.edits:
        path = dest / edit.file
        text = path.read_text(encoding="utf-8")
        assert edit.old in text, f"{mistake.name}: {edit.old!r} is not in {edit.file}"
        path.write_text(text.replace(edit.old, edit.new), encoding="utf-8")


def configured_classes(dest: Path) -> dict[str, str]:
    """Each section's `worker_extension_cls_fqn` as the package's config writes it, by
    section path: what a user copies into `verify`'s command line."""
    import yaml

    found: dict[str, str] = {}

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == EXTENSION_FIELD and isinstance(value, str):
                    found[path] = value
                else:
                    walk(value, f"{path}.{key}" if path else str(key))

    walk(yaml.safe_load((dest / CONFIG).read_text(encoding="utf-8")), "")
    return found


def remove(dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
