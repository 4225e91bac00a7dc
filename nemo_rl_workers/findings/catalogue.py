"""What each rule means and where the guide explains it: SARIF's rule descriptors.

Data, one row per rule name a command can report (the guide's "Error catalogue" tables;
tests/formats checks each row names a rule there). A rule missing here still gets a
descriptor, pointing at the catalogue as a whole.
"""

from __future__ import annotations

import os

# Where the guide is published; SARIF wants an absolute URI. Set it to your mirror's.
GUIDE_URL_ENV = "NEMO_RL_WORKERS_GUIDE_URL"
DEFAULT_GUIDE_URL = (
    "https://github.com/YOUR-ORG/nemo-rl-worker-contracts/blob/main/docs/guides/worker-extensions.md"
)
CATALOGUE_ANCHOR = "error-catalogue"

# rule -> (short description, the guide's anchor of the table that lists it)
RULES: dict[str, tuple[str, str]] = {
    'R0': (
        'the deprecated constructor argument and the config name different classes',
        'problem-rules',
    ),
    'R2': (
        "a configured class is another backend's or role's worker, or is not registered "
        'with an actor environment',
        'problem-rules',
    ),
    'R5': (
        "quant_cfg is set and the configured class is not the section's quantized worker",
        'problem-rules',
    ),
    'R6': (
        'quant_cfg is set for a backend without a quantized worker, or quantizer '
        'statistics are asked of an unquantized policy',
        'problem-rules',
    ),
    'R7': ('a non-vLLM generation backend has worker_extension_cls_fqn set', 'problem-rules'),
    'fqn': ('worker_extension_cls_fqn is not a dotted name of Python identifiers', 'problem-rules'),
    'cluster': (
        'the cluster: section cannot give a world size: gpus_per_node or num_nodes is not '
        'a positive integer, or non-colocated generation leaves no GPU for training',
        'problem-rules',
    ),
    'key': (
        'a key of a worker section is a near-typo of a key that selects the worker '
        '(worker_extention_cls_fqn, quant_cgf, vllm_cfg.async_engin, ...), so it would be '
        'ignored',
        'problem-rules',
    ),
    'schema': (
        'a field has the wrong type (a section that is not a mapping, enabled: "yes", a '
        'non-numeric learning rate, ...)',
        'problem-rules',
    ),
    'backend': (
        'both or neither of Megatron and Automodel are enabled, or VllmGeneration is '
        'given a non-vLLM backend',
        'problem-rules',
    ),
    'registry': ("no worker row is registered for the section's backend", 'problem-rules'),
    'outdated.rename': ('a dtensor_cfg block', 'problem-rules'),
    'outdated.v2': ('an _v2 key under automodel_cfg or dtensor_cfg', 'problem-rules'),
    'contract': (
        'the resolved class does not implement its Protocol, is not a subclass of D, or '
        'cannot be constructed as the worker group will',
        'problem-rules',
    ),
    'import': (
        'the resolved class cannot be imported in its environment, or the name is not a class',
        'problem-rules',
    ),
    'environment': (
        "the class's actor environment could not run the verification (interpreter "
        'missing, crashed, timed out)',
        'problem-rules',
    ),
    'import.actors': (
        'the class imports in the driver (or its verification environment) but the '
        'process its actors will be cannot find its module, on some node',
        'problem-rules',
    ),
    'preflight': ("the worker class's own preflight hook crashed", 'problem-rules'),
    'isolation': (
        'importing or verifying the class in this process raised (even SystemExit or '
        'KeyboardInterrupt) or ran past its time bound (60 s, NEMO_RL_VERIFY_TIMEOUT_S)',
        'problem-rules',
    ),
    'quant_cfg': (
        'quant_cfg names no ModelOpt config or recipe, or an invalid one',
        'problem-rules',
    ),
    'quant_device': (
        'a CUDA-only quantization format (NVFP4, MX) where no CUDA device is visible',
        'problem-rules',
    ),
    'preflight.fp32_lm_head.type': ('an fp32 LM-head flag is not a boolean', 'problem-rules'),
    'preflight.fp32_lm_head.fused_logprobs': (
        "megatron's fp32 LM head with use_fused_linear_logprobs",
        'problem-rules',
    ),
    'preflight.fp32_lm_head.automodel': (
        "VLLM's fp32 LM head with Automodel training",
        'problem-rules',
    ),
    'preflight.fp32_lm_head.mismatch': (
        'training and generation disagree on the fp32 LM head',
        'problem-rules',
    ),
    'preflight.fp32_lm_head.reserved_env': (
        'vllm_cfg.env_vars sets the reserved NRL_VLLM_FP32_LM_HEAD',
        'problem-rules',
    ),
    'preflight.fp32_lm_head.model': (
        'warning only: fp32 LM head on a model not known to support it',
        'problem-rules',
    ),
    'preflight.parallelism.size': ('a parallel size is not a positive integer', 'problem-rules'),
    'preflight.parallelism.fits': ('TP x PP x CP exceeds the world size', 'problem-rules'),
    'preflight.parallelism.divides': (
        'TP x PP x CP does not divide the world size',
        'problem-rules',
    ),
    'preflight.parallelism.tp_accuracy': (
        'TP >= 4 with different train and logprob micro-batch sizes',
        'problem-rules',
    ),
    'preflight.schema': (
        'another field the preflight rules read has the wrong type',
        'problem-rules',
    ),
    'preflight.draft.backend': ('draft.enabled without Megatron', 'problem-rules'),
    'preflight.draft.sequence_packing': ('draft.enabled with sequence packing', 'problem-rules'),
    'preflight.dynamic_batching.sequence_packing': (
        'dynamic batching with sequence packing',
        'problem-rules',
    ),
    'preflight.dynamic_batching.pipeline': (
        'dynamic batching with pipeline parallelism',
        'problem-rules',
    ),
    'gate': (
        "stricter: beartype's structural check of the class against a runtime-checkable "
        'Protocol failed',
        'contract-violations',
    ),
    'missing': (
        'a Protocol member is absent, or only an abstract Protocol body (..., '
        '@abstractmethod) provides it',
        'contract-violations',
    ),
    'not-callable': ('the member exists but is not callable', 'contract-violations'),
    'kind': (
        'the Protocol declares a classmethod or staticmethod, the class an instance method',
        'contract-violations',
    ),
    'async': (
        'stricter: async def / async generator / plain function differ',
        'contract-violations',
    ),
    'shape': (
        'a call the Protocol allows is rejected (arity, names, keyword-only, defaults, overloads)',
        'contract-violations',
    ),
    'annotation': ('parameter, return or attribute types are incompatible', 'contract-violations'),
    'attribute': (
        'a data member or property: read-only where the Protocol needs it settable, a '
        'method where it declares data, an instance variable for a ClassVar',
        'contract-violations',
    ),
    'undecidable': (
        'the class alone cannot settle the member (reported in report.undecidable; does '
        'not fail the check)',
        'contract-violations',
    ),
    'base': ('stricter: the class is not a subclass of the required base', 'contract-violations'),
    'init': (
        'stricter: the constructor does not accept the call the worker group makes',
        'contract-violations',
    ),
    'static': (
        'the type checker rejects the class for this Protocol member; its words follow the member',
        'static-findings',
    ),
    'source': (
        'the checker cannot take the class from its module (a name that is not a class there)',
        'static-findings',
    ),
    # audit's rules (the guide's "Audit findings" table, nemo_rl_workers.checks.audit.rules.RULES).
    "missing-method": ("a worker class the driver can start has no method the driver calls "
                       "by name", "audit-findings"),
    "stub-body": ("the method the driver calls is only a stub body (...) in the worker's MRO",
                  "audit-findings"),
    "unknown-keyword": ("the driver passes a keyword the worker's method does not accept",
                        "audit-findings"),
    "required-not-sent": ("the worker's method requires an argument the driver never sends",
                          "audit-findings"),
    "stream-mismatch": ("the driver and the worker disagree on a streamed (generator) call",
                        "audit-findings"),
    "extension-subclasses-actor": ("an extension subclasses a @ray.remote-decorated class, "
                                   "which Ray refuses to start", "audit-findings"),
    "base-call-unknown-keyword": ("a base class calls self.m(..., k=...) and a subclass's "
                                  "override of m has no parameter k", "audit-findings"),
    "base-call-missing-argument": ("a base class calls self.m(...) without an argument the "
                                   "subclass's override of m requires", "audit-findings"),
    "base-call-too-many-positional": ("a base class calls self.m(...) with more positional "
                                      "arguments than the subclass's override of m takes",
                                      "audit-findings"),
    "undecided": ("the source cannot tell whether the worker serves the call (a base outside "
                  "the tree and the stubs)", "audit-findings"),
    "unresolved": ("a dispatch call whose method name or workers the source cannot tell",
                   "audit-findings"),
    # Findings only the output formats name (the guide's "Output formats" table).
    "migrate": ("the config still uses outdated keys; nemo-rl-workers migrate rewrites it",
                "output-formats"),
    "unusable": ("the input could not be used at all (exit code 2)", "output-formats"),
    "warning": ("advice the check emits at run time (R3, preflight), not a failure",
                "output-formats"),
}


def guide_url() -> str:
    return os.environ.get(GUIDE_URL_ENV) or DEFAULT_GUIDE_URL


def describe(rule: str) -> tuple[str, str]:
    """(short description, help URI) of `rule`."""
    text, anchor = RULES.get(rule, (f"Rule {rule}; see the error catalogue", CATALOGUE_ANCHOR))
    return text, f"{guide_url()}#{anchor}"
