"""What `audit` knows about NeMo-RL, as data: one place, so upstream's next dispatch
helper, config switch or driver is a row here, not a code change.

Everything else in `nemo_rl_workers.checks.audit` is generic: it reads the
`nemo_rl_workers.tree.source` model of a tree and applies these tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class DispatchHelper:
    """A `RayWorkerGroup` method that calls a worker method named by a string.

    `name_position`/`name_keyword`: where the worker method's name is given.
    `own_keywords`: the helper's own parameters (not sent to the worker).
    `common_keyword`: a dict keyword whose keys are sent to every worker as keywords.
    `sends_keywords`: whether the call's other keywords go to the worker (shutdown's don't).
    """

    name_position: int | None
    name_keyword: str
    own_keywords: frozenset[str] = frozenset()
    common_keyword: str | None = None
    sends_keywords: bool = True
    # What the call returns: one ObjectRef ("ref"), a list of them ("refs"), or a
    # MultiWorkerFuture ("bundle", read through `get_all_worker_results`).
    returns: str = "refs"


DISPATCH_HELPERS: Final[dict[str, DispatchHelper]] = {
    "run_all_workers_single_data": DispatchHelper(
        0, "method_name", frozenset({"run_rank_0_only_axes"})),
    "run_all_workers_multiple_data": DispatchHelper(
        0, "method_name", frozenset({"run_rank_0_only_axes"}), "common_kwargs"),
    "run_all_workers_sharded_data": DispatchHelper(
        0, "method_name",
        frozenset({"in_sharded_axes", "replicate_on_axes", "output_is_replicated",
                   "make_dummy_calls_to_free_axes"}),
        "common_kwargs", returns="bundle"),
    "run_single_worker_single_data": DispatchHelper(
        0, "method_name", frozenset({"worker_idx"}), returns="ref"),
    "shutdown": DispatchHelper(0, "cleanup_method", frozenset({"timeout", "force"}),
                               sends_keywords=False),
}
"""The dispatch helpers, by method name (called on a worker group)."""

WORKER_GROUP_ATTRIBUTE: Final = "worker_group"
"""The attribute a driver keeps its `RayWorkerGroup` in."""

HANDLE_ATTRIBUTES: Final = ("worker_group.workers", "worker_group._workers", "rollout_engines")
"""Expressions (by how their text ends) that hold worker actor handles
(`self.worker_group.workers[i].method.remote(...)`, SGLang's `self.rollout_engines`)."""

WORKER_SELECTORS: Final = frozenset({
    "RayWorkerBuilder", "resolve_policy_worker_cls", "resolve_generation_worker_cls",
})
"""Calls whose string argument names the worker class a driver starts."""

OVERRIDE_MAP_SUFFIX: Final = "_WORKER_OVERRIDES"
"""Module-level dicts {default FQN: quantized FQN}; the quantized class runs under
`quant_cfg` wherever the default would."""

ACTOR_ENVIRONMENT_REGISTRIES: Final = ("ACTOR_ENVIRONMENT_REGISTRY", "MODELOPT_ACTOR_REGISTRY")
"""Module-level dicts {actor class FQN: Python environment} (ModelOpt's is merged into
the main one upstream)."""


@dataclass(frozen=True)
class Switch:
    """A config value a driver branches on to choose its worker class.

    Recognised as a subscript/`.get` chain whose string keys end with `keys`, or as an
    attribute or local variable named one of `names`.
    """

    keys: tuple[str, ...]
    names: frozenset[str] = frozenset()


SWITCHES: Final[dict[str, Switch]] = {
    # vLLM's `vllm_cfg.async_engine`, TRT-LLM's `trtllm_cfg.async_engine`.
    "async_engine": Switch(("async_engine",), frozenset({"async_engine", "is_async_engine"})),
    "megatron_cfg.enabled": Switch(("megatron_cfg", "enabled"), frozenset({"megatron_enable"})),
    "dtensor_cfg.enabled": Switch(("dtensor_cfg", "enabled"), frozenset({"dtensor_enable"})),
    "dtensor_cfg._v2": Switch(("dtensor_cfg", "_v2"), frozenset({"use_v2"})),
    "automodel_cfg.enabled": Switch(("automodel_cfg", "enabled"),
                                    frozenset({"automodel_enable"})),
}


@dataclass(frozen=True)
class Owner:
    """Whose workers `self.<attribute>.worker_group` holds: a driver class (by name), and
    the switches that are known to hold when that attribute is used."""

    driver: str
    holds: tuple[tuple[str, bool], ...] = ()


OWNERS: Final[dict[str, Owner]] = {
    "_policy": Owner("Policy"),
    "policy": Owner("Policy"),
    "student_policy": Owner("Policy"),
    "_generation": Owner("VllmGeneration"),
    "generation": Owner("VllmGeneration"),
    "policy_generation": Owner("VllmGeneration"),
}
"""The default owner of `<x>.<attribute>.worker_group`, by attribute."""

DRIVER_OWNERS: Final[dict[tuple[str, str], Owner]] = {
    # MegatronGeneration generates with the Megatron policy's own workers.
    ("MegatronGeneration", "_policy"): Owner("Policy", (("megatron_cfg.enabled", True),)),
}
"""Per-driver exceptions to OWNERS: (driver class name, attribute) -> owner."""

ACTOR_MAKERS: Final = frozenset({"ray.remote"})
"""What makes an actor class of a plain class where it is used: `ray.remote(Cls)`,
`ray.remote(num_cpus=1)(Cls)` (resolved through the module's imports, so `from ray import
remote` counts too)."""


def makes_actor(written: str, imports: Mapping[str, str] | None = None) -> bool:
    """Whether a decorator, or the callee of a call, written so makes an actor class of a
    plain class: the one test of "is an actor class" that the tree's drivers, the audit
    and the runtime guard share.

    With the module's `imports` (local name -> absolute name), the written name is
    resolved through them and must be a maker exactly (`from ray import remote` counts,
    another package's `remote` does not): the drivers use it to say which class a call
    starts, where a wrong yes would name a class the tree never starts. Without, a maker's
    last name counts too (`remote`, `r.remote`: an import the source is not followed
    through): a class is judged an actor class unless it plainly is not, so neither the
    audit nor the guard refuses a class Ray would start."""
    name = written.split("(", 1)[0].strip()
    if imports is not None:
        head, dot, rest = name.partition(".")
        return (imports[head] + dot + rest if head in imports else name) in ACTOR_MAKERS
    return any(name == maker or name.rpartition(".")[2] == maker.rpartition(".")[2]
               for maker in ACTOR_MAKERS)


def is_actor_class(decorators: Iterable[str]) -> bool:
    """Whether a class statement with these decorators (as written) is an actor class
    (`@ray.remote`, `@ray.remote(num_gpus=1)`): Ray refuses to subclass it or to start
    a subclass of it."""
    return any(makes_actor(written) for written in decorators)


STREAMING_OPTION: Final = ("num_returns", "streaming")
"""`.options(num_returns="streaming")`: the caller reads the result as a stream."""

STREAM_PROXY_KEYWORD: Final = "return_generators_as_proxies"
"""`get_all_worker_results(bundle, return_generators_as_proxies=True)` yields streams."""


EAGER_MARKERS: Final = (
    *(h for h in DISPATCH_HELPERS if h.startswith("run_")), WORKER_GROUP_ATTRIBUTE,
    *(h.rsplit(".", 1)[-1] for h in HANDLE_ATTRIBUTES if not h.startswith(
        f"{WORKER_GROUP_ATTRIBUTE}.")),
    *WORKER_SELECTORS, OVERRIDE_MAP_SUFFIX, *ACTOR_ENVIRONMENT_REGISTRIES, ".remote(",
)
"""A module whose text holds none of these has no driver-side code (a worker group's
`shutdown` and `workers` are reached through `worker_group`, which is a marker itself: the
bare words are in most modules and would parse them all): the audit models
it only if a worker's MRO leads there (see `nemo_rl_workers.tree.source.read_tree`'s `eager`)."""


def driver_side(text: str) -> bool:
    return any(marker in text for marker in EAGER_MARKERS)


# -- the revision model (tree/revision.py) --------------------------------------------

DRIVER_ROLES: Final[dict[str, str]] = {
    "Policy": "policy",
    "Value": "value",
    "TeacherWorkerGroup": "teacher",
}
"""The role whose config section a driver class serves, where its name does not say it;
a driver named `...Generation` serves the generation section of its backend."""

GENERATION_DRIVER_SUFFIX: Final = "Generation"
"""`VllmGeneration`, `SGLangGeneration`, ...: the backend is the name before the suffix."""

SECTION_ROLES: Final[dict[str, tuple[str, ...]]] = {
    "policy": ("policy",),
    "teacher": ("policy",),
    "teachers": ("policy",),
    "value": ("value",),
    "env.reward_model": ("policy",),
}
"""The roles whose drivers start a config section's workers, first found in the tree wins.
Distillation builds its teachers with `Policy` from their own sections; on-policy
distillation's `TeacherWorkerGroup` derives a teacher from the student's section instead,
so no section is judged against it."""

CLUSTER_BUNDLES: Final = "bundle_ct_per_node_list"
"""`RayVirtualCluster(bundle_ct_per_node_list=[...])`: one GPU bundle per count, and its
`world_size()` is the list's sum (`self._world_size = sum(self._bundle_ct_per_node_list)`
in both corpora's virtual_cluster.py)."""

QUANT_KEY: Final = "quant_cfg"
"""The config key whose value selects a row's quantized counterpart (`*_WORKER_OVERRIDES`);
a driver that clears it on its own copy (`tree.frozen_groups`) starts the default class."""

EXTENSION_FIELD: Final = "worker_extension_cls_fqn"
"""The config key (and the older constructor argument) naming an extension class."""

LIBRARY_PACKAGE: Final = "nemo_rl_workers"
"""A tree whose drivers import this selects its workers through this project's table."""


ALGORITHMS: Final = "nemo_rl.algorithms"
"""The package whose modules are the algorithms an entry config runs (GRPO, PPO, SFT, ...)."""

SETUP: Final = "setup"
"""An algorithm module's function that builds its workers from the whole config."""

ENTRY_PACKAGES: Final = (ALGORITHMS, "nemo_rl.evals")
"""The packages whose modules' `setup` an entry script runs on a whole config: the
algorithms, and the evaluation (which builds a generation driver with no policy)."""
