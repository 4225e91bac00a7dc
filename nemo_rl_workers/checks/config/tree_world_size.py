"""The policy's world size as a NeMo-RL tree computes it for one config, or why not.

The tree's entry `setup` sizes the cluster its policy (or, for the evaluation, its
generation) is built on: `cluster = RayVirtualCluster(bundle_ct_per_node_list=
[policy_gpus_per_node] * policy_nodes)`, after arithmetic that keeps GPUs or nodes for a
reward model (`env.reward_model.resources`), teachers or inference. The model records each
construction and the local each driver is built on (`Revision.cluster_builds`,
`EntryBuild.cluster`); this module walks the setup in statement order with the tree rules'
walker (`interpret.walk`), on the config, and evaluates the bundle expression where the
setup builds that cluster: the world size is its sum. Small helpers the setup calls on
config values (`extract_necessary_env_names(data_config)`: which environments the data
names) are run on the config's values (`interpret.helpers`). What the walk cannot decide (a
branch on a value this check does not compute) is undecided, with the reason: never the
reference's arithmetic in its place.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.checks.config.entry_sections import entry_of
from nemo_rl_workers.interpret.expressions import (
    Environ,
    Evaluator,
    Known,
    Read,
    Scope,
    Unknown,
    Value,
    show_value,
)
from nemo_rl_workers.interpret.models import config_model, model_field
from nemo_rl_workers.interpret.shape import all_calls, called_name
from nemo_rl_workers.interpret.walk import SetupWalk, walk_scope, worker_stops
from nemo_rl_workers.reading.plain_data import plain_copy
from nemo_rl_workers.reading.recorded_reads import ENVIRON
from nemo_rl_workers.tree.entry_builds import CLUSTER_KEYWORD
from nemo_rl_workers.tree.knowledge import SETUP
from nemo_rl_workers.tree.source.gc_pause import collector_paused
from nemo_rl_workers.tree.source_kept import tree_source

if TYPE_CHECKING:
    from nemo_rl_workers.tree.cluster_builds import ClusterBuild
    from nemo_rl_workers.tree.revision import Revision
    from nemo_rl_workers.tree.source import Function, SourceTree


@dataclass(frozen=True)
class TreeWorldSize:
    """The world size the tree computes (None: undecided) and how, or why not."""

    size: int | None
    how: str
    reads: tuple[Read, ...] = ()  # the config values it was computed from


@dataclass(frozen=True)
class _Cluster:
    """A cluster the walk saw built: its size, and the build."""

    size: int
    build: ClusterBuild


def tree_world_size(config: Mapping[str, Any], revision: Revision,
                    environ: Mapping[str, str] | None = None,
                    driver: str | None = None) -> TreeWorldSize | None:
    """The world size of the cluster the config's entry builds its first driver on (the
    policy's, else the generation's), or `driver` on; None when the tree's entry builds
    none the model records (the size is then not this tree's to state)."""
    if revision.root is None:
        return None
    files = revision.unread_files()
    if files is not None and driver is None:
        # The first driver the entry builds may be in a module the model lacks: the size of
        # another driver's cluster would be a guess.
        return TreeWorldSize(None, f"the tree could not be read whole ({files}), and the "
                                   "driver whose cluster sets the world size may be there")
    entry = entry_of(config, revision)
    if entry is None:
        return TreeWorldSize(None, "no entry of this tree runs on this config alone (its "
                                   "top-level keys fit no setup's config, or two alike)")
    build = next((b for b in revision.entry_builds if b.module == entry and
                  b.cluster is not None and driver in (None, b.driver)), None)
    clusters = [c for c in revision.cluster_builds if c.module == entry]
    if not clusters or (build is None and driver is None):
        return None
    with collector_paused():  # it models the modules it walks (see tree.source.gc_pause)
        return _size(config, revision, entry, build.cluster if build is not None else None,
                     build.driver if build is not None else str(driver), clusters, environ)


@dataclass(frozen=True)
class _Walked:
    """A setup walked on one config: every cluster it builds is sized in its scope."""

    config: Mapping[str, Any]
    revision: Revision
    entry: str
    environ: Mapping[str, str | None]  # each variable the walk read, and its value
    function: Function
    walk: SizeWalk | None  # None: nested too deeply to follow


# The last walks, by config: one walk sizes the cluster of every driver (`check` asks for
# the world size, then for the policy's and the generation's clusters, of one config).
_WALKED: list[_Walked] = []
_WALKS_KEPT = 4


def _walked(config: Mapping[str, Any], revision: Revision, entry: str,
            clusters: list[ClusterBuild], environ: Mapping[str, str] | None
            ) -> _Walked | None:
    """The walk of `entry`'s setup on `config` (None: the setup cannot be read), made
    once while the config and the variables it read are the same."""
    from nemo_rl_workers.checks.config.derived_answers import ReadEnviron

    assert revision.root is not None
    base: Mapping[str, str] = ENVIRON if environ is None else environ
    for kept in _WALKED:
        if kept.config is config and kept.revision is revision and kept.entry == entry and \
                all(base.get(name) == value for name, value in kept.environ.items()):
            return kept
    read = ReadEnviron(base)
    started = setup_scope(config, revision, entry, read)
    if started is None:
        return None
    tree, function, scope = started
    walk: SizeWalk | None = SizeWalk(function, scope, Path(revision.root),
                                     worker_stops(tree, revision, function), tree, clusters)
    assert walk is not None
    try:
        walk.run()
    except (RecursionError, MemoryError):
        walk = None
    walked = _Walked(config, revision, entry, dict(read.read), function, walk)
    if not read.whole:
        _WALKED[:] = [*_WALKED[-(_WALKS_KEPT - 1):], walked]
    return walked


def _size(config: Mapping[str, Any], revision: Revision, entry: str, name: str | None,
          driver: str, clusters: list[ClusterBuild],
          environ: Mapping[str, str] | None) -> TreeWorldSize | None:
    walked = _walked(config, revision, entry, clusters, environ)
    if walked is None:
        return TreeWorldSize(None, f"{entry}.{SETUP} could not be read")
    if name is None:
        # No build of the driver on one config block is recorded (its config local is
        # bound more than once: GRPO's `generation_config`), but every call building it in
        # the setup names one cluster local: that is the cluster it is built on.
        name = built_on(walked.function, driver)
        if name is None:
            return None
    walk = walked.walk
    if walk is None:
        return TreeWorldSize(None, f"{entry}.{SETUP} is nested too deeply to follow")
    value = walk.scope.names.get(name)
    where = f"{entry.rsplit('.', 1)[-1]}.{SETUP}"
    if value is None:
        return TreeWorldSize(None, f"{where} was not followed as far as it builds {name}, "
                                   f"the cluster of {driver}")
    if isinstance(value, Unknown):
        return TreeWorldSize(None, f"the size of {name}, the cluster {where} builds "
                                   f"{driver} on: {value.reason}")
    cluster = value.value
    if not isinstance(cluster, _Cluster):
        return TreeWorldSize(None, f"{name}, the cluster of {driver}, is not one {where} "
                                   "builds where the model sees it")
    reads = ", ".join(f"{path}={shown}" for path, shown in dict.fromkeys(value.reads)
                      if shown != "{...}")
    return TreeWorldSize(cluster.size, (
        f"sum({cluster.build.bundles}) at {cluster.build.where}, the cluster {driver} is "
        f"built on" + (f"; from {reads}" if reads else "")), tuple(value.reads))


def built_on(function: Function, driver: str) -> str | None:
    """The one local every `driver(cluster=<local>, ...)` call of `function` names, or
    None (no such call, or calls on different clusters)."""
    named: set[str | None] = set()
    for node in all_calls(function):
        if called_name(node) == driver:
            named.add(next((k.value.id for k in node.keywords if k.arg == CLUSTER_KEYWORD
                            and isinstance(k.value, ast.Name)), None))
    return named.pop() if len(named) == 1 else None


def setup_scope(config: Mapping[str, Any], revision: Revision, entry: str,
                environ: Mapping[str, str] | None) -> tuple[SourceTree, Function, Scope] | None:
    """The entry's `setup` and the scope a walk of it starts from (its config parameter
    bound to `config`), or None where the tree's `setup` cannot be read."""
    assert revision.root is not None
    tree = tree_source(revision.root)
    module = tree.module(entry)
    if module is None or SETUP not in module.functions:
        return None
    function = module.functions[SETUP]
    env = Environ(ENVIRON if environ is None else environ)
    model = config_model(tree, module, function.params[0].annotation)
    scope = walk_scope(function, module, env, {function.params[0].name: Known(
        plain_copy(dict(config)), "", model=model)})
    scope.fields = functools.partial(model_field, tree)
    return tree, function, scope


class SizeWalk(SetupWalk):
    """The tree rules' walk of a setup, where an assignment builds a recorded cluster
    (its size bound to its local). It sizes clusters: the rules of the helpers it calls
    are not its to walk."""

    FOLLOWS_HELPERS = False

    def __init__(self, function: Function, scope: Scope, root: Path, stops: frozenset[str],
                 tree: SourceTree, clusters: list[ClusterBuild]) -> None:
        super().__init__(function, scope, root, stops, tree)
        self.clusters = {(c.line, c.name): c for c in clusters}

    # As the tree rules' walk has it, less a driver class named only to reach an attribute
    # (`MegatronGeneration.nvlink_domain_span(cfg)`: a static helper builds no driver, and
    # the clusters are sized after it).
    STATIC_CALLS_START = False

    def assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign,
                unsure: str | None) -> None:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(
            stmt.targets) == 1 else None
        build = self.clusters.get((stmt.lineno, target.id)) if isinstance(
            target, ast.Name) else None
        if build is not None and target is not None:
            self._bind(target, _cluster(build, self.evaluator()), unsure)
            return
        super().assign(stmt, unsure)


def _cluster(build: ClusterBuild, evaluator: Evaluator) -> Value:
    try:
        expression = ast.parse(build.bundles, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return Unknown(f"{build.bundles} does not parse")
    value = evaluator.value(expression)
    if isinstance(value, Unknown):
        return value
    counts = value.value
    if not (isinstance(counts, list | tuple) and all(
            isinstance(c, int) and not isinstance(c, bool) for c in counts)):
        return Unknown(f"{build.bundles} is {show_value(counts)}, not a list of GPU counts")
    return Known(_Cluster(sum(counts), build), None, value.reads, value.env)
