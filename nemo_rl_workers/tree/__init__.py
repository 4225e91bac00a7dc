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
- `checkout`: which tree a command judges, and its project file (the vLLM it pins);
- `git_head`: the tree's commit;
- `revision`: the distilled model every command judges against (schema, worker table,
  defaults, environments, calls per driver, version, vLLM pin, what is undecided);
- `cache`: the revision model on disk, keyed by the content of every file it read.

Nothing here imports `checks`, `findings` or `commands`.
"""
