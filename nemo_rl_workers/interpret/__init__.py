"""The interpret stage: a NeMo-RL tree's own code evaluated on one config, importing nothing.

Between the tree model (`nemo_rl_workers.tree`, which it reads) and the checks (which
extend it). Its public API, by module (names without an underscore; nothing private is
imported across modules):

- `expressions`: the values (`Known` with the config keys and environment variables it
  was read from, `Unknown` with the reason in words), the `Scope` a walk holds, the
  `Environ` the tree's code reads and sets, and the `Evaluator` of expressions on them
  (`truth`, `show_value`, `environment_read`, `ClusterSize`, `Read`, `Value`);
- `conditions`: the config tests kept on the way to a call (`ConfigTest`, `config_tests`,
  `whole_tests`, `first_failed`, `decided`, `Origin`), judged against a config later;
- `inline`: a helper's or a factory's test in its caller's terms (`bind`, `inlined`,
  `substituted`, `helper_of`);
- `helpers`: the tree's small helpers run on config values (`HelperEvaluator`, `Budget`,
  `HelperStopped`);
- `models`: what a config block is at run time under the pydantic or TypedDict model the
  tree declares it with (`config_model`, `model_field`, `construct`, `dump`, ...);
- `shape`: what is derived once per statement and function of the tree, whatever the
  config (`shape_of`: the nodes and calls a statement holds, its early exits; `starts`:
  whether it starts workers; `local_builders`, `all_calls`, `called_name`);
- `strict`: unknown syntax shapes, undecided for users and an error in the tests
  (`UnknownShape`, `strict_mode`, `unknown_shape`);
- `walk`: the statement walk (`SetupWalk`, with `Branch`, `TreeRule`, `walk_scope` and
  `worker_stops`), which the tree rules, the world size, the entry reach
  and the entry walk extend through `statement`, `assign` and `starts_workers`.

Nothing here imports `checks`, `findings` or `commands`.
"""
