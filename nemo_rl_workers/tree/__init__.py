"""The tree stage: one model of a NeMo-RL tree, built from its source without importing it.

The only part of the tool that knows how NeMo-RL is laid out. Between reading (guarded
files) and the checks, which read the model and never read source themselves:

- `source/`: the one-pass source model (modules, classes, MROs, signatures, call sites)
  and the guarded walk and read of a tree's Python files;
- `knowledge`: what the stage knows about NeMo-RL's layout, as data (dispatch helpers,
  config switches, override maps, actor-environment registries);
- `conditions`: the config switches a call or a worker choice holds under;
- `drivers`: which worker class each driver starts under which switches, every dispatch
  site with its receiver, the actor-environment registry;
- `delegated_drivers`, `actor_lookups`, `frozen_groups`, `base_environment`,
  `class_names`: what the drivers start through a class they build, actors a plain
  reading does not name, what a driver clears before building, environments, class names;
- `entry_scripts`, `entry_builds`, `entry_configs`, `cluster_builds`: the entry scripts,
  which driver their `setup` builds on which config block, the clusters it sizes;
- `launch`, `launch_scripts`, `shell_syntax`, `shell_values`: a launch (a recipe as a run
  starts it) and upstream's launch scripts read as data;
- `checkout`: which tree a command judges, and its project file (the vLLM it pins);
- `git_head`, `tree_version`: the tree's commit and the release it says it is;
- `revision`, `revision_build`, `stage`: the distilled model every command judges against
  (schema, worker table, defaults, environments, calls per driver, version, vLLM pin, what
  is undecided), how it is built, and the front door that hands it to a command;
- `cache`, `content_key`, `revision_cache`, `source_kept`: entries on disk keyed by the
  content of what an answer was made from, that key, the revision model's entry, and the
  source model a run already built.

Nothing here imports `checks`, `findings` or `commands`.
"""
