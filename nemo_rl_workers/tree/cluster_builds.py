"""The clusters an entry's `setup` builds, and the arithmetic that sizes them, as data.

`cluster = RayVirtualCluster(bundle_ct_per_node_list=[policy_gpus_per_node] * policy_nodes,
...)`: the tree's cluster has one GPU bundle per count, so its world size is the list's sum
(`knowledge.CLUSTER_BUNDLES`). What the counts are is the setup's own arithmetic on the
config (GPUs it keeps for a reward model, nodes for teachers or inference): this module
records each such construction (the local it is bound to, the expression as written, its
line), read from the source model (nothing imported); `checks/config/tree_world_size.py`
evaluates the expression where the setup builds it, on one config.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nemo_rl_workers.tree.source import SourceTree


@dataclass(frozen=True)
class ClusterBuild:
    """One cluster an entry's `setup` builds."""

    module: str  # the entry module
    name: str  # the local it is bound to, e.g. "train_cluster"
    bundles: str  # the bundle-count expression, as written
    line: int  # the line of the assignment in the setup's file
    where: str  # file:line, for the report


def cluster_builds(tree: SourceTree) -> tuple[ClusterBuild, ...]:
    from nemo_rl_workers.tree.entry_builds import entry_modules
    from nemo_rl_workers.tree.knowledge import CLUSTER_BUNDLES, SETUP

    out: list[ClusterBuild] = []
    for name in entry_modules(tree):
        module = tree.module(name)
        if module is None:
            continue
        function = module.functions[SETUP]
        for node in ast.walk(function.node):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Call)):
                continue
            bundles = next((k.value for k in node.value.keywords if k.arg == CLUSTER_BUNDLES),
                           None)
            if bundles is not None:
                out.append(ClusterBuild(name, node.targets[0].id, ast.unparse(bundles),
                                        node.lineno, f"{function.file}:{node.lineno}"))
    return tuple(out)
