"""The guide's rule tables, as data: each row's name and cells, in the guide's markdown.

docs/guides/worker-extensions.md shows these tables; `nemo-rl-workers explain RULE` and
SARIF's rule help read them from here (`findings.catalogue`), and tests/docs checks that
the guide's tables are exactly these rows, so the two cannot drift: a row edited here is
edited in the guide too (the test's failure shows the table the guide should hold). The
audit's rows are its rule registry's (`findings.registry`), edited there.
"""

from __future__ import annotations

from nemo_rl_workers.findings import registry

Rows = tuple[tuple[str, ...], ...]

SELECTION: Rows = (
    (
        'R0',
        '`Policy(..., worker_extension_cls_fqn=C)`',
        ('`DeprecationWarning` at your line; `C` is treated as if the config set it. If '
         'the config sets a different class: `WorkerConfigError`.'),
        ('`Policy(worker_extension_cls_fqn=...) is deprecated; set '
         'policy.worker_extension_cls_fqn in the config '
         'instead.`<br>`Policy(worker_extension_cls_fqn=<C>) conflicts with '
         '<path>.worker_extension_cls_fqn=<X>; remove the deprecated constructor '
         'argument and keep only the config field.`'),
    ),
    (
        'R1',
        'no `quant_cfg`, no `X`',
        '`D`, silently.',
        '—',
    ),
    (
        'R2',
        'no `quant_cfg`, `X` given',
        ('`X`, if it is a well-formed dotted name, registered with an actor '
         "environment, a subclass of `D`, and implements the role's Protocol (the last "
         'two are checked in its own environment, before any actor).'),
        ('`<path>.worker_extension_cls_fqn=<X> is not registered with an actor '
         "environment; register it through the 'nemo_rl.workers' entry-point group of "
         'its package (nemo-rl-workers list shows what is '
         'registered).`<br>`<path>.worker_extension_cls_fqn=<X> is not registered with '
         'an actor environment; did you mean <Y>? Otherwise register it through the '
         "'nemo_rl.workers' entry-point group of its package (nemo-rl-workers list "
         'shows what is registered).`<br>`<path>.worker_extension_cls_fqn=<X> is the '
         '<kind> of the <role> <backend>, but this section uses the <backend>; use <D> '
         'or a subclass of it.`<br>`<path>.worker_extension_cls_fqn must be a dotted '
         "name 'package.module.ClassName' of Python identifiers, but is <X> "
         '(<reason>).`<br>`<path>.worker_extension_cls_fqn=<X> does not satisfy the '
         '<Protocol> contract: <X> does not implement <Protocol>.<method>: <reason>`'),
    ),
    (
        'R3',
        '`quant_cfg` set, no `X`',
        ('`Q`, with a `UserWarning`; written back to the config once the workers '
         'started, so resolving it again is silent.'),
        ('`quant_cfg requires worker_extension_cls_fqn=<Q>; setting it automatically. '
         'Set this field explicitly to silence this warning.`'),
    ),
    (
        'R4',
        '`quant_cfg` set, `X == Q`',
        '`Q`, silently.',
        '—',
    ),
    (
        'R5',
        '`quant_cfg` set, `X != Q`',
        ('`WorkerConfigError`; the config is left unchanged. The text begins with '
         "upstream NeMo-RL's sentence, then names the path, the backend or mode, whose "
         'worker `X` is, and the fix. A custom extension cannot run quantized '
         '(quantized workers are the built-in ones, and a plugin cannot replace them): '
         'the text says so.'),
        ('`quant_cfg requires worker_extension_cls_fqn=<Q>, got <X>. At '
         '<path>.worker_extension_cls_fqn: quant_cfg is set and this section uses the '
         '<backend>, whose quantized worker is the expected class; the given one is the '
         '<kind> of the <role> <backend>. Set the field to the expected class or remove '
         'it to have it filled in.`<br>`quant_cfg requires '
         'worker_extension_cls_fqn=<Q>, got <X>. At <path>.worker_extension_cls_fqn: '
         'quant_cfg is set and this section uses the <backend>, whose quantized worker '
         'is the expected class; the given one is not a built-in worker. Quantized '
         'workers are the built-in ones and a plugin cannot replace them, so an '
         'extension cannot run quantized: set the field to the expected class (or '
         'remove it) to quantize, or remove <path>.quant_cfg to run the extension '
         'unquantized.`'),
    ),
    (
        'R6',
        '`quant_cfg` set',
        ("The class must implement the role's quantized Protocol (`QuantPolicyWorker`, "
         '`QuantGenerationWorker`, `QuantAsyncGenerationWorker`).'),
        ('`<path>.quant_cfg is set, but the <backend> has no quantized worker; remove '
         'quant_cfg.`<br>`<path>.worker_extension_cls_fqn=<X> does not satisfy the '
         '<Protocol> contract: <X> does not implement <Protocol>.<method>: '
         '<reason>`<br>`get_quantizer_stats() needs a quantized policy, but '
         '<path>.quant_cfg is unset and the workers run <D>; set <path>.quant_cfg (e.g. '
         'INT8_DEFAULT_CFG).`'),
    ),
    (
        'R7',
        'generation backend other than vLLM with `X` set',
        '`WorkerConfigError` (the field would be ignored otherwise).',
        ('`<path>.worker_extension_cls_fqn is set to <X>, but generation backend '
         "'<backend>' does not use worker extensions and would silently ignore it; "
         "remove the field or use backend 'vllm'.`"),
    ),
    (
        'R8',
        'a frozen teacher derived from a student (`Policy.frozen_teacher`)',
        ('A deep copy: `quant_cfg` cleared to null with a `UserWarning`, other '
         '`quant_*` keys, `real_quant*` and `worker_extension_cls_fqn` removed, and '
         "every key that would load the student's weights (`pretrained_checkpoint`, "
         '`checkpoint_path`, in the section or its `<backend>_cfg` blocks) dropped with '
         'a `UserWarning`; the student config is untouched.'),
        ('`<path>.quant_cfg cleared to null for the frozen teacher (the student policy '
         'has <value>): a teacher runs unquantized on its default '
         'worker.`<br>`<path>.<key> dropped for the frozen teacher (the student policy '
         "has <value>): it would load the student's weights; a teacher loads its own "
         'model.`'),
    ),
)

OUTDATED: Rows = (
    (
        'outdated.rename',
        'a `dtensor_cfg` block',
        ('`<path>.dtensor_cfg has been renamed to <path>.automodel_cfg; rename the key, '
         'its contents are unchanged.`<br>`<path>.dtensor_cfg has been renamed to '
         '<path>.automodel_cfg; both are set, so move what <path>.dtensor_cfg holds '
         'into <path>.automodel_cfg and delete <path>.dtensor_cfg.`'),
    ),
    (
        'outdated.v2',
        'an `automodel_cfg._v2` (or `dtensor_cfg._v2`) key, whatever its value',
        ('`<path>._v2 is no longer supported (there is one Automodel worker now); '
         'remove it, whatever its value (it is <value>).`'),
    ),
    (
        'backend',
        'both Megatron and Automodel enabled, or neither',
        ('`<path>: Megatron and Automodel are both enabled; set exactly one of '
         '<path>.megatron_cfg.enabled or <path>.automodel_cfg.enabled to '
         'true.`<br>`<path>: neither Megatron nor Automodel is enabled; set exactly one '
         'of <path>.megatron_cfg.enabled or <path>.automodel_cfg.enabled to true.`'),
    ),
)

PROBLEMS: Rows = (
    (
        'R0',
        'the deprecated constructor argument and the config name different classes',
        'keep only the config field',
    ),
    (
        'R2',
        ("a configured class is another backend's or role's worker, or is not "
         'registered with an actor environment'),
        'use a subclass of `D`; register it through the `nemo_rl.workers` entry points',
    ),
    (
        'R5',
        ("`quant_cfg` is set and the configured class is not the section's quantized "
         'worker'),
        'set it to `Q` or remove it; to keep an extension, remove `quant_cfg`',
    ),
    (
        'R6',
        ('`quant_cfg` is set for a backend without a quantized worker, or quantizer '
         'statistics are asked of an unquantized policy'),
        'remove `quant_cfg`, or set it',
    ),
    (
        'R7',
        'a non-vLLM generation backend has `worker_extension_cls_fqn` set',
        'remove the field or use `backend: vllm`',
    ),
    (
        'fqn',
        '`worker_extension_cls_fqn` is not a dotted name of Python identifiers',
        'write `package.module.ClassName`',
    ),
    (
        'tree',
        ('(a resolution, not a problem) another NeMo-RL tree\'s switches chose the '
         "section's class (see [which NeMo-RL is checked](#which-nemo-rl-is-checked))"),
        "nothing; the table says which class that tree starts",
    ),
    (
        'tree.switch',
        ('against another tree: a switch it chooses its worker by (`megatron_cfg.enabled`, '
         '`dtensor_cfg._v2`, `async_engine`, ...) is set to something other than true or '
         'false'),
        'set it to `true` or `false`',
    ),
    (
        'tree.no-worker',
        ("against another tree: under the section's switches its driver starts no worker "
         '(the message lists what it starts, and when), e.g. TRT-LLM with '
         '`async_engine: false`'),
        'set the switches to a combination the tree has',
    ),
    (
        'tree.undecided',
        ("against another tree: its source does not decide the section's class (a switch "
         'left out that it reads with no default, a backend it has no driver for, two '
         'classes under the same switches); never a pass'),
        'set the switch, or check against another tree (`--nemo-rl`, `--reference`)',
    ),
    (
        'tree.refuses',
        ("against another tree: one of its own pre-allocation rules (an `assert` or `raise` "
         "that its algorithm's `setup` or a driver's constructor runs on config values "
         'before any worker starts) refuses the config; the message quotes its condition, '
         'the values it was decided on, its file:line and its own message'),
        "what the tree's message says (or check against another tree)",
    ),
    (
        'driver.no-such-class',
        ('`check --entry DRIVER`: the class the driver hands a driver of the tree '
         '(`Policy(..., worker_extension_cls_fqn=...)`, a replaced resolver) exists '
         "neither in the tree nor in the driver's folder or its package's; the message "
         'names the closest classes'),
        'correct the name where the driver (or the config key it reads) gives it',
    ),
    (
        'driver.wrong-base',
        ("`check --entry DRIVER`: the driver's class takes the place of the worker the "
         'section would start with this config, but its nearest base in the tree is '
         "another worker's (a DTensor v2 extension where the config selects v1), or no "
         "worker's"),
        'subclass the worker the section starts (or the plain class it wraps)',
    ),
    (
        'driver.no-parameter',
        ('`check --entry DRIVER`: the driver passes `worker_extension_cls_fqn=` to a '
         'driver class whose constructor in this tree takes no such parameter (a '
         '`TypeError` before any worker starts)'),
        'select the class the way this tree reads it',
    ),
    (
        'driver.undecided',
        ('`check --entry DRIVER`: the class the driver passes (or the section its '
         '`config=` builds) is not a value the walk computes: a call, a name assigned '
         'under a branch, a config block handed to code that may change it, `**kwargs`, a '
         'replaced resolver that returns more than one literal; the message names the '
         'line; never a pass'),
        'pass a literal, a module constant or a read of the config',
    ),
    (
        'cluster',
        ('the `cluster:` section cannot give a world size: `gpus_per_node` or '
         '`num_nodes` is not a positive integer, or non-colocated generation leaves no '
         'GPU for training'),
        'fix the section, or give `--world-size`',
    ),
    (
        'cluster.fit',
        ('`check --cluster-resources FILE` or `--address ADDR`: a node group of the '
         "config's `cluster:` shape (`gpus_per_node` GPU bundles of `{CPU: 1, GPU: 1}`, "
         'all on one node) fits no node of that cluster, or all groups together exceed '
         'it; the message is the sentence `RayVirtualCluster` refuses a start with'),
        'fewer GPUs per node, or a cluster with larger nodes',
    ),
    (
        'key',
        ('a key of a worker section is a near-typo of a key that selects the worker '
         '(`worker_extention_cls_fqn`, `quant_cgf`, `vllm_cfg.async_engin`, ...), so it '
         'would be ignored'),
        'use the key the message names',
    ),
    (
        'schema',
        ('a field has the wrong type (a section that is not a mapping, `enabled: '
         '"yes"`, a non-numeric learning rate, ...), or a key is not a string (`1: x`: '
         '"`policy` has the key 1, which is an int, not a string")'),
        'give the type the message names; quote the key',
    ),
    (
        'backend',
        ('both or neither of Megatron and Automodel are enabled, or `VllmGeneration` is '
         'given a non-vLLM backend'),
        'enable exactly one; use `backend: vllm`',
    ),
    (
        'registry',
        "no worker row is registered for the section's backend",
        'install the plugin that provides it, or use a registered backend',
    ),
    (
        'outdated.rename',
        'a `dtensor_cfg` block',
        'rename it to `automodel_cfg` (`nemo-rl-workers migrate`)',
    ),
    (
        'outdated.v2',
        'an `_v2` key under `automodel_cfg` or `dtensor_cfg`',
        'delete it (`nemo-rl-workers migrate`)',
    ),
    (
        'contract',
        ('the resolved class does not implement its Protocol, is not a subclass of `D`, '
         'or cannot be constructed as the worker group will'),
        ('change the class as the message says (`nemo-rl-workers verify` shows every '
         'violation)'),
    ),
    (
        'import',
        ('the resolved class cannot be imported in its environment, or the name is not '
         'a class'),
        'install the package in that environment; fix the name',
    ),
    (
        'environment',
        ("the class's actor environment could not run the verification (interpreter "
         'missing, crashed, timed out)'),
        'fix the `ActorEnvironment` the plugin registers',
    ),
    (
        'import.actors',
        ('the class imports in the driver (or its verification environment) but the '
         'process its actors will be cannot find its module, on some node'),
        ('install the package where the actors run, or put it on their path '
         '(`runtime_env`)'),
    ),
    (
        'preflight',
        "the worker class's own `preflight` hook crashed",
        "fix the worker's `preflight`",
    ),
    (
        'isolation',
        ('importing or verifying the class in this process raised (even `SystemExit` or '
         '`KeyboardInterrupt`) or ran past its time bound (60 s, '
         '`NEMO_RL_VERIFY_TIMEOUT_S`)'),
        ('fix the class or module the message names; `verify` reports the same line '
         'with exit 1'),
    ),
    (
        'quant_cfg',
        ('`quant_cfg` names no ModelOpt config or recipe, or an invalid one; a recipe '
         'that does not exist, is not a regular file (a device such as `/dev/zero`, a '
         'pipe, a folder) or cannot be read (a symlink loop, a name too long) says which'),
        'use a ModelOpt config name (e.g. `INT8_DEFAULT_CFG`) or a recipe file',
    ),
    (
        'quant_device',
        'a CUDA-only quantization format (NVFP4, MX) where no CUDA device is visible',
        'use `INT8_DEFAULT_CFG` or `FP8_DEFAULT_CFG` on CPU',
    ),
    (
        'preflight.fp32_lm_head.type',
        'an fp32 LM-head flag is not a boolean',
        'use `true`, `false` or null',
    ),
    (
        'preflight.fp32_lm_head.fused_logprobs',
        "Megatron's fp32 LM head with `use_fused_linear_logprobs`",
        'turn one of them off',
    ),
    (
        'preflight.fp32_lm_head.automodel',
        "vLLM's fp32 LM head with Automodel training",
        'turn it off, or train with Megatron',
    ),
    (
        'preflight.fp32_lm_head.mismatch',
        'training and generation disagree on the fp32 LM head',
        'set both to the same value',
    ),
    (
        'preflight.fp32_lm_head.reserved_env',
        '`vllm_cfg.env_vars` sets the reserved `NRL_VLLM_FP32_LM_HEAD`',
        'remove it; set `vllm_cfg.fp32_lm_head`',
    ),
    (
        'preflight.fp32_lm_head.model',
        'warning only: fp32 LM head on a model not known to support it',
        'check the model family',
    ),
    (
        'preflight.parallelism.size',
        'a parallel size is not a positive integer',
        'give a positive integer',
    ),
    (
        'preflight.parallelism.fits',
        'TP x PP x CP exceeds the world size',
        'reduce the sizes or add GPUs',
    ),
    (
        'preflight.parallelism.divides',
        'TP x PP x CP does not divide the world size',
        'choose sizes that divide it',
    ),
    (
        'preflight.parallelism.tp_accuracy',
        'TP >= 4 with different train and logprob micro-batch sizes',
        'make them equal (or the escapes the message names)',
    ),
    (
        'preflight.schema',
        ('another field the preflight rules read has the wrong type, or a mapping of '
         'them has a key that is not a string (`sequence_packing: {1: x}`: '
         '"`policy.sequence_packing` has the key 1, which is an int, not a string")'),
        'give the type the message names; quote the key',
    ),
    (
        'preflight.draft.backend',
        '`draft.enabled` without Megatron',
        'enable Megatron or disable the draft',
    ),
    (
        'preflight.draft.sequence_packing',
        '`draft.enabled` with sequence packing',
        'disable one',
    ),
    (
        'preflight.dynamic_batching.sequence_packing',
        'dynamic batching with sequence packing',
        'disable one',
    ),
    (
        'preflight.dynamic_batching.pipeline',
        'dynamic batching with pipeline parallelism',
        'set the pipeline size to 1 or disable dynamic batching',
    ),
)

CONTRACT: Rows = (
    (
        'gate',
        ("*stricter*: beartype's structural check of the class against a "
         'runtime-checkable Protocol failed'),
    ),
    (
        'missing',
        ('a Protocol member is absent, or only an abstract Protocol body (`...`, '
         '`@abstractmethod`) provides it'),
    ),
    (
        'not-callable',
        'the member exists but is not callable',
    ),
    (
        'kind',
        ('the Protocol declares a classmethod or staticmethod, the class an instance '
         'method'),
    ),
    (
        'async',
        '*stricter*: `async def` / async generator / plain function differ',
    ),
    (
        'shape',
        ('a call the Protocol allows is rejected (arity, names, keyword-only, defaults, '
         'overloads)'),
    ),
    (
        'annotation',
        'parameter, return or attribute types are incompatible',
    ),
    (
        'attribute',
        ('a data member or property: read-only where the Protocol needs it settable, a '
         'method where it declares data, an instance variable for a `ClassVar`'),
    ),
    (
        'undecidable',
        ('the class alone cannot settle the member (reported in `report.undecidable`; '
         'does not fail the check)'),
    ),
    (
        'base',
        '*stricter*: the class is not a subclass of the required base',
    ),
    (
        'init',
        '*stricter*: the constructor does not accept the call the worker group makes',
    ),
)

STATIC: Rows = (
    (
        'static',
        ('the type checker rejects the class for this Protocol member; its words follow '
         'the member'),
    ),
    (
        'base',
        ("the class is not a subclass of the required base (`--base`, or the section's "
         'default worker)'),
    ),
    (
        'source',
        ('the checker cannot take the class from its module (a name that is not a class '
         'there)'),
    ),
    (
        'import',
        ("the class's module (or one of its own bases') imports from the NeMo-RL tree "
         'given as `--nemo-rl` a module or a name that tree does not define: the class '
         'cannot be imported; the line names the module, the import and its line'),
    ),
    (
        'undecided',
        ('the checker takes the class (or a class it inherits from), the Protocol or '
         "`--base` as unknown (`Any`): its module is not on the path here (a fork's "
         'worker, a package not installed), or it is one the checker does not follow. '
         'Under `Any` every member and every base would pass, so the verdict is '
         'undecided, never a pass (exit 1); the line names the name that cannot be '
         'resolved and why'),
    ),
)

# The audit's rows are its registry's (`findings.registry`): the one list of its rules.
AUDIT: Rows = tuple(rule.row for rule in registry.RULES)

GUARD: Rows = (
    (
        'fqn',
        ("the worker builder's class name is not a dotted Python name "
         '(`module.Class`)'),
    ),
    (
        'defined',
        ("the FQN's module has no such class (or there is no such module on the "
         'path)'),
    ),
    (
        'actor-subclass',
        ('the class subclasses an `@ray.remote` class (Ray refuses that '
         'definition in every worker)'),
    ),
    (
        'actor-class',
        'the class has no `@ray.remote`',
    ),
    (
        'actor-environment',
        ("the tree's own `get_actor_python_env` (the live "
         '`ACTOR_ENVIRONMENT_REGISTRY`, which scripts extend at run time) has no '
         "environment for it. The fix names the environment the tree's registry "
         "gives the actor class of the class's base (a vLLM extension: "
         '`VLLM_EXECUTABLE`), else `PY_EXECUTABLES.SYSTEM`'),
    ),
    (
        'overrides-fit-bases',
        ("the class's own methods do not fit the NeMo-RL classes it extends, by "
         "the audit's rules (`base-call-*`, `extension-*`): a method its base "
         "calls on `self` (upstream's vLLM worker calls "
         '`self._create_engine(llm_kwargs)`) is overridden with a signature that '
         'cannot bind that call, or its own `super()`/`self` calls do not bind '
         'what its MRO defines'),
    ),
    (
        'vllm-extension-clash',
        ("the class hands vLLM a `worker_extension_cls` of the user's own "
         "(written in its own methods, as upstream's generation workers hand "
         "vLLM theirs), and that extension defines a name vLLM's worker class "
         'already has: vLLM asserts that in every engine process, after the GPUs '
         'are taken. The rule is the one of the vLLM the tree pins where '
         "vllm-stubs of it are installed, else the installed stubs' (the "
         'sentence names the version); names the extension inherits from the '
         "tree's own extension are upstream's business; without vllm-stubs the "
         'rule is not applied'),
    ),
    (
        'driver-calls',
        ('the group is constructed by a driver of the tree (`Policy`, '
         "`VllmGeneration`, a fork's own; found on the call stack) and the class "
         'cannot serve a method that driver always calls on its workers, by the '
         "audit's rules, where the tree's own worker the class extends can (the "
         'one sharing its nearest base; of a class extending none, every worker '
         'of that driver): a subclass of the sync vLLM worker is never asked for '
         "`load_model`, which only the async one has. Also where the workers' "
         "interpreter finds such a method missing and the class's source lacks "
         'it too (or binds the name to something else): said with where the '
         'driver calls it'),
    ),
    (
        'worker-interpreter',
        ("in the interpreter the actors will use (the tree's "
         '`get_actor_python_env` answer), one CPU-free Ray task (no actor, no '
         'placement group) cannot import the class; once per class'),
    ),
    (
        'worker-method',
        ("in that same task, a method the driver always calls (and the tree's "
         'own worker the class extends has) is missing or does not accept the '
         "call's shape (`inspect` alone), though the class's source on the "
         "driver's path defines it: the two interpreters import different code. "
         'Not checked where upstream has still to build that interpreter (`uv '
         '...` answers: upstream makes it inside `RayWorkerGroup`, after the '
         'placement groups)'),
    ),
    (
        'worker-protocol',
        ('in that same task, where `beartype` and `contracts` import, '
         '`contracts.check` (the verifier the reference runtime uses) finds the '
         "class failing the revision's Protocol of the constructing driver (the "
         "one `audit --emit-protocols` writes for the driver's default worker "
         "the class extends, or the driver's only one) on a method the driver "
         "always calls: a parameter annotation narrower than the Protocol's, a "
         "wider return, another call shape. Only the Protocol's own class and "
         'the imports its annotations name are run there (a name whose import '
         'fails there is `Any`); what the class alone cannot decide is not a '
         'refusal'),
    ),
)

FORMATS: Rows = (
    (
        'migrate',
        ('`migrate --check`: the config still uses outdated keys (one finding per '
         'change, at the line of the key)'),
    ),
    (
        'problem',
        ('`check`: a problem that carries no rule name (each of the [problem '
         'rules](#problem-rules) has its own)'),
    ),
    (
        'unusable',
        'the file could not be used at all (exit code 2): an `<error>` in JUnit',
    ),
    (
        'warning',
        'advice `check` emits (R3, preflight), not a failure',
    ),
    (
        'undecided',
        ('`audit`: a call the source cannot decide; `--static`: a class, Protocol or '
         '`--base` the checker takes as unknown ([static findings](#static-findings)); '
         'never passed: exit 1'),
    ),
    (
        'unresolved',
        ('`audit`: a dispatch call whose method name or workers the source cannot tell '
         '(a warning)'),
    ),
)

LOAD: Rows = (
    (
        'missing-file',
        'the config file does not exist',
    ),
    (
        'missing-default',
        'a `defaults:` entry names a file that does not exist',
    ),
    (
        'not-a-file',
        'a directory, device or pipe (a FIFO is refused without waiting for a writer)',
    ),
    (
        'unreadable',
        ('the operating system refused to read it, or its name: a symlink loop, a name '
         'too long for the file system'),
    ),
    (
        'too-large',
        ('over 8 MiB, or YAML aliases that would add over 100,000 nodes when expanded '
         '(or refer to themselves); nodes written out plainly do not count, the size '
         'limit bounds them'),
    ),
    (
        'not-utf8',
        'not UTF-8 text',
    ),
    (
        'yaml',
        ('YAML syntax, duplicate keys, non-string keys (a float, a boolean, a null; an '
         'integer key loads, and `check` reports it as a problem naming the key, exit 1: '
         'quote it), `!!python` and other tags, '
         "nesting deeper than 100 levels, an integer over Python's 4,300-digit limit"),
    ),
    (
        'not-mapping',
        'the top level is not a mapping',
    ),
    (
        'defaults',
        'a malformed `defaults:` value or `_override_` marker',
    ),
    (
        'cycle',
        '`defaults:` files include each other',
    ),
    (
        'outside-root',
        'a `defaults:` parent outside the allowed root',
    ),
    (
        'too-deep',
        '`defaults:` nested too deeply or too many files',
    ),
    (
        'override',
        'a malformed or inapplicable command-line override',
    ),
    (
        'interpolation',
        ('a `${...}` that does not resolve (for `check`, an unset `${oc.env:...}` only '
         'where a value the rules read needs it); or resolving would build over 8 MiB '
         'of text, evaluate over 20,000 references and resolver calls (nested ones '
         'count; each `${oc.select:...}` is evaluated once per resolution, so a chain '
         'of selects costs one evaluation a link), or take over 10 s'),
    ),
)
