"""The runtime guard: checks inside the unmodified upstream NeMo-RL people train with.

Armed by `nemo-rl-workers run SCRIPT|-m MODULE` or `NEMO_RL_WORKERS_GUARD=1` (a `.pth`
start-up line, `nemo_rl_workers_guard.pth`, imports `startup` only then), it installs a
post-import hook on upstream's `nemo_rl.distributed.worker_groups` (then wrapt's function
wrappers), never changing upstream's source:

- `startup`: what the `.pth` line runs; arms the post-import hook (a finder), or says in
  one line why not;
- `recipe_check`: when that hook fires, `check`'s verdicts on the main program's
  `--config FILE [key=value ...]`, once (`run` checked it already: not again);
- `hooks`: the wrappers of `RayWorkerGroup.__init__` (judge the class before the original
  creates any placement group or actor), of its `run_*` methods and of `ray.get` (notes);
- `judgement`: the class judgement (source found on the driver's path, nothing of it
  imported; the live actor-environment registry);
- `driver_model`: the tree's drivers, what they call on their workers, the audit's
  verdicts on the tree's own classes and the revision's Protocols, cached by content;
- `class_model`: the user's class, read on demand from its own folder;
- `class_rules`: its own code against the tree (overrides vs its bases' calls, vLLM's
  attribute-clash rule for an extension it hands vLLM);
- `driver_calls`: what the constructing driver calls on its workers (the audit's rules);
- `environment_fix`: the fix of an `actor-environment` refusal (the environment the tree
  registers for the class's base);
- `worker_check`: one Ray task in the workers' interpreter imports and inspects the class,
  and checks it with `contracts` against the revision's Protocol;
- `notes`: the PEP 678 notes a failed worker call gains;
- `launcher`: runs the user's entry point as `python` would;
- `fail_open`: the one line (or, under `--strict`, the refusal) when the guard fails.

Fail open: a failure of the guard itself is one line on stderr and upstream runs as
unguarded (`NEMO_RL_WORKERS_GUARD_STRICT=1`, `run --strict`, makes it a refusal). Nothing
here imports `nemo_rl`: the user's modules come from `sys.modules` or from the hooks.
"""

ENV = "NEMO_RL_WORKERS_GUARD"
STRICT_ENV = "NEMO_RL_WORKERS_GUARD_STRICT"
PREFLIGHT_ENV = "NEMO_RL_WORKERS_GUARD_PREFLIGHT"  # check (default) | warn | off
# The launch (a digest of its arguments) whose recipe was checked, warned of or skipped.
RECIPE_CHECKED_ENV = "NEMO_RL_WORKERS_GUARD_RECIPE_CHECKED"
PREFIX = "nemo-rl-workers guard"
