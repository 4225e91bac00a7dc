"""The audit's rule registry: every rule it reports (id, severity, what it means, as the
guide's "Audit findings" table shows it) and every sentence it writes (a template and the
arguments it is filled from), after pyflakes' `messages.py`.

A finding holds one `Message` and its arguments, and is rendered only when shown; the
guide's table (`catalogue_tables.AUDIT`), `explain` and SARIF's rule help read `RULES`;
nothing else lists the rule ids. Imports nothing of the tool: every layer may read it.

A template names the finding's own fields `{driver}`, `{method}` and `{worker}` (the
class, or the classes of one cause, joined), its arguments by name, and the condition the
call runs under: `{when}` (" when a=true", empty when unconditional) or `{paren_when}`
(" (when a=true)"). Only a template that ends with `{when}` is one whose findings may be
grouped across conditions (its sentence then names them all, joined by "or").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

Severity: TypeAlias = Literal["error", "warning", "note"]  # note: guarded (audit.reach)


@dataclass(frozen=True)
class Rule:
    """One rule: its id, its severity, what it means (the guide's cell, markdown)."""

    id: str
    severity: Severity
    meaning: str

    @property
    def row(self) -> tuple[str, str]:
        """The guide's row: the id, and the meaning after the severity."""
        return (self.id, f"{self.severity}: {self.meaning}")


@dataclass(frozen=True)
class Message:
    """One sentence a rule writes: a `str.format` template over named arguments."""

    rule: Rule
    template: str

    def render(self, values: Mapping[str, str]) -> str:
        return self.template.format_map(values)

    @property
    def merges_conditions(self) -> bool:
        """Whether findings that differ only in their condition are one cause, whose
        sentence names every condition (the template ends with it)."""
        return self.template.endswith("{when}")

    @property
    def names_condition(self) -> bool:
        return "{when}" in self.template or "{paren_when}" in self.template

    @property
    def about_one_class(self) -> bool:
        """A sentence that names the class's own attribute (`{worker}.name`) is about that
        class: never one cause with another class's."""
        return "{worker}." in self.template


# -- the driver side (audit.rules) and the extension side (audit.extension_rules,
# audit.vllm_extensions, audit.extension_setup), the tree's own subclasses (audit.subclasses);
# in the guide's order.

MISSING_METHOD = Rule(
    'missing-method', 'error',
    "no class of the worker's MRO defines the method the driver calls by name, "
    'under the switches the call runs with; the definition named is where the MRO '
    'ends')
STUB_BODY = Rule(
    'stub-body', 'warning',
    'the method resolves only to a stub: `raise NotImplementedError` anywhere, or '
    '`pass` / `...` / a docstring in an `@abstractmethod` or in a method of a '
    'Protocol class itself; the same body in any other class is a no-op, whatever '
    'its ancestors')
UNKNOWN_KEYWORD = Rule(
    'unknown-keyword', 'error',
    'the driver sends a keyword (directly, through `common_kwargs`, or as the '
    'sharded-data keyword) that is no parameter of the method, which takes no '
    '`**kwargs`')
REQUIRED_NOT_SENT = Rule(
    'required-not-sent', 'error',
    'a parameter without a default is never sent (checked only when every keyword '
    'the call sends is known)')
STREAM_MISMATCH = Rule(
    'stream-mismatch', 'error',
    'the driver reads the result as a stream (`async for` / `anext` on one '
    '`ObjectRefGenerator`, `num_returns="streaming"`, '
    '`return_generators_as_proxies=True`) and the method is no generator, or reads '
    'one value (`ray.get`) of a generator method')
EXTENSION_MISSING_METHOD = Rule(
    'extension-missing-method', 'error',
    "an extension's `super().m(...)` / `self.m(...)` names a method no class of its"
    ' MRO at this revision defines')
EXTENSION_UNKNOWN_KEYWORD = Rule(
    'extension-unknown-keyword', 'error',
    'such a call passes a keyword the resolved method has no parameter for, and it '
    'takes no `**kwargs`')
EXTENSION_MISSING_ARGUMENT = Rule(
    'extension-missing-argument', 'error',
    'such a call omits a required parameter of the resolved method (checked only '
    'without `*`/`**` at the call)')
EXTENSION_TOO_MANY_POSITIONAL = Rule(
    'extension-too-many-positional', 'error',
    'such a call passes more positional arguments than the resolved method takes, '
    'and it takes no `*args`')
EXTENSION_SUBCLASSES_ACTOR = Rule(
    'extension-subclasses-actor', 'error',
    'an extension (or one of its own bases) subclasses a class decorated '
    '`@ray.remote`, which is an actor class, not a class: Ray refuses to start it; '
    "the finding names the undecorated class the decorated one wraps (upstream's "
    '`...Impl`) to subclass instead')
EXTENSION_IMPORT_MISSING = Rule(
    'extension-import-missing', 'error',
    "a module of an extension (the class's, or one of its own bases') imports from "
    "the tree's `nemo_rl` a module or a name this tree does not define, in a "
    "statement it runs whenever it is imported: the worker's module fails to import"
    ' in its own process; the finding names the module, the import and its line')
EXTENSION_NOT_ACTOR = Rule(
    'extension-not-actor', 'error',
    'an extension takes the place of a worker the tree starts as a Ray actor (a '
    '`@ray.remote` class), and is not decorated `@ray.remote` itself: Ray cannot '
    "start it; the finding names the worker's own decorator to copy")
EXTENSION_UNREGISTERED = Rule(
    'extension-unregistered', 'error',
    "the tree registers its workers' Python environments in its actor-environment "
    'registry, and no module of the tree or under `--path` adds the extension to '
    'it; the finding names the environment the tree registers for the worker the '
    'extension takes the place of')
OVERRIDE_UNKNOWN_KEYWORD = Rule(
    'override-unknown-keyword', 'error',
    'a driver sends a keyword to a method the extension overrides, and the override'
    ' has no such parameter and no `**kwargs`')
OVERRIDE_MISSING_ARGUMENT = Rule(
    'override-missing-argument', 'error',
    "the extension's override requires a parameter that the driver's call never "
    'sends')
OVERRIDE_NOT_A_METHOD = Rule(
    'override-not-a-method', 'error',
    'the extension binds a name a driver calls on its workers to a literal '
    '(`generate = None`), hiding the method its NeMo-RL base defines: Ray finds no '
    'such method on its workers')
BASE_CALL_UNKNOWN_KEYWORD = Rule(
    'base-call-unknown-keyword', 'error',
    'a worker class a driver of the tree starts, a class it hands vLLM, or a class '
    "of the tree that subclasses one, overrides a method, and a base class's own "
    'method calls it on `self` with a keyword the override has no parameter for '
    '(and no `**kwargs`)')
BASE_CALL_MISSING_ARGUMENT = Rule(
    'base-call-missing-argument', 'error',
    'such a base call omits a parameter the override requires (checked only without'
    ' `*`/`**` at the call)')
BASE_CALL_TOO_MANY_POSITIONAL = Rule(
    'base-call-too-many-positional', 'error',
    'such a base call passes more positional arguments than the override takes '
    '(`self.finalize(x)` on a `def finalize(self)`), and it takes no `*args`')
VLLM_EXTENSION_CLASH = Rule(
    'vllm-extension-clash', 'error',
    'a name of a `worker_extension_cls` (its `dir()`, names starting with `__` '
    "excepted) already exists on vLLM's worker class for the installed vllm-stubs "
    "version; vLLM's assertion would fail in every engine process")
COLLECTIVE_RPC_MISSING = Rule(
    'collective-rpc-missing', 'error',
    'a vLLM generation worker calls `collective_rpc("name")`, and neither the '
    "extension it hands vLLM nor vLLM's worker has a method of that name")


RULES: Final[tuple[Rule, ...]] = (
    MISSING_METHOD, STUB_BODY, UNKNOWN_KEYWORD, REQUIRED_NOT_SENT, STREAM_MISMATCH,
    EXTENSION_MISSING_METHOD, EXTENSION_UNKNOWN_KEYWORD, EXTENSION_MISSING_ARGUMENT,
    EXTENSION_TOO_MANY_POSITIONAL, EXTENSION_SUBCLASSES_ACTOR, EXTENSION_IMPORT_MISSING,
    EXTENSION_NOT_ACTOR, EXTENSION_UNREGISTERED, OVERRIDE_UNKNOWN_KEYWORD,
    OVERRIDE_MISSING_ARGUMENT, OVERRIDE_NOT_A_METHOD, BASE_CALL_UNKNOWN_KEYWORD,
    BASE_CALL_MISSING_ARGUMENT, BASE_CALL_TOO_MANY_POSITIONAL, VLLM_EXTENSION_CLASH,
    COLLECTIVE_RPC_MISSING,
)
"""Every rule, in the guide's order."""

BY_ID: Final[dict[str, Rule]] = {rule.id: rule for rule in RULES}

# -- the sentences -----------------------------------------------------------------------

# The driver side: a call the driver makes by name, against each class it can start.
NO_SUCH_METHOD = Message(
    MISSING_METHOD,
    "{driver} calls {method!r} on {worker}, which has no such method (its MRO ends at "
    "{end}){when}")
ONLY_A_STUB = Message(
    STUB_BODY,
    "{driver} calls {method!r} on {worker}, where it is only a stub ({stub} in {owner})")
NO_SUCH_PARAMETER = Message(
    UNKNOWN_KEYWORD,
    "{driver} sends {keyword}= to {method!r} of {worker}, which takes no such parameter "
    "and no **kwargs")
NEVER_SENT = Message(
    REQUIRED_NOT_SENT,
    "{driver} never sends {name}, a required parameter of {method!r} of {worker}")
READ_AS_STREAM = Message(
    STREAM_MISMATCH,
    "{driver} reads {method!r} as a stream (ObjectRefGenerator), but {owner}.{method} is "
    "not a generator")
READ_AS_VALUE = Message(
    STREAM_MISMATCH,
    "{driver} reads {method!r} as one value, but {owner}.{method} is a generator (Ray "
    "returns an ObjectRefGenerator)")

# A call on an interface the drivers implement, against each implementation.
INTERFACE_NO_SUCH_METHOD = Message(
    MISSING_METHOD,
    "{driver} calls {method!r} on a {interface}, and its implementation {worker} has no "
    "such method (its MRO ends at {end})")
INTERFACE_NO_SUCH_PARAMETER = Message(
    UNKNOWN_KEYWORD,
    "{driver} calls {method!r} on a {interface}, sending {keyword}=, which {owner}.{method} "
    "(the method of its implementation {worker}) takes no such parameter and no **kwargs")
INTERFACE_NEVER_SENT = Message(
    REQUIRED_NOT_SENT,
    "{driver} calls {method!r} on a {interface} without {name}, a required parameter of "
    "{owner}.{method} (the method of its implementation {worker})")

# An extension's own calls, on `super()` and `self`.
EXTENSION_NO_SUCH_METHOD = Message(
    EXTENSION_MISSING_METHOD,
    "{driver} calls {spelled}(...), but no class of {worker}'s MRO at this revision "
    "defines {method} ({count} classes, ending at {end})")
EXTENSION_NO_SUCH_PARAMETER = Message(
    EXTENSION_UNKNOWN_KEYWORD,
    "{driver} calls {spelled}(..., {keyword}=...), but {owner}.{method} has no parameter "
    "{keyword} and no **kwargs")
EXTENSION_TOO_MANY = Message(
    EXTENSION_TOO_MANY_POSITIONAL,
    "{driver} calls {spelled}(...) with {count} positional arguments, but {owner}.{method} "
    "takes {takes}")
EXTENSION_WITHOUT = Message(
    EXTENSION_MISSING_ARGUMENT,
    "{driver} calls {spelled}(...) without {name}, a required parameter of {owner}.{method}")

# The drivers' calls, against what an extension puts in the worker's place.
EXTENSION_LACKS_METHOD = Message(
    MISSING_METHOD,
    "{driver} calls {method!r} on {worker}, which has no such method (its MRO ends at "
    "{end}){when}; {base}, whose place it takes, {source}: define {method} in {name}")
OVERRIDE_NO_SUCH_PARAMETER = Message(
    OVERRIDE_UNKNOWN_KEYWORD,
    "{driver} sends {keyword}= to {method}{paren_when}, but the {what} {owner}.{target} "
    "has no parameter {keyword} and no **kwargs")
OVERRIDE_WITHOUT = Message(
    OVERRIDE_MISSING_ARGUMENT,
    "{driver} calls {method}{paren_when} without {name}, which the {what} {owner}.{target} "
    "requires")
BOUND_TO_A_VALUE = Message(
    OVERRIDE_NOT_A_METHOD,
    "{driver} calls {method}{paren_when} on its workers, but {cls} binds {method} to "
    "{value}, hiding {below}.{method}: Ray finds no method {method} on its workers")

# How the driver starts an extension.
SUBCLASSES_ACTOR = Message(
    EXTENSION_SUBCLASSES_ACTOR,
    "{worker} subclasses {actor}, which is decorated @ray.remote (an actor class, not a "
    "class): Ray refuses to start a subclass of it; {instead}")
IMPORT_FAILS = Message(
    EXTENSION_IMPORT_MISSING,
    "{module} runs `{statement}` (line {line}), but {missing}: importing the module fails "
    "in the worker's process")
NOT_AN_ACTOR = Message(
    EXTENSION_NOT_ACTOR,
    "{worker} is not an actor class: {where} defines it without @ray.remote, and {driver} "
    "starts the class it is named as a Ray actor ({base}, the worker it takes the place of, "
    "is one), so Ray cannot start it; decorate it with @{decorator}, as {base} is")
NOT_REGISTERED = Message(
    EXTENSION_UNREGISTERED,
    "{worker} is registered with no actor environment: no module of the tree or under "
    "--path adds it to {registry}, and the tree starts an actor class only in the "
    "environment its registry names; register it in a module the driver imports first: "
    '{registry}["{worker}"] = {shown}, the environment the tree registers for {base}')

# The tree's own subclasses: a base's call on `self`, against the override.
BASE_CALL_NO_SUCH_PARAMETER = Message(
    BASE_CALL_UNKNOWN_KEYWORD,
    "{driver} calls self.{method}(..., {keyword}=...), but the override {worker}.{method} "
    "has no parameter {keyword} and no **kwargs")
BASE_CALL_TOO_MANY = Message(
    BASE_CALL_TOO_MANY_POSITIONAL,
    "{driver} calls self.{method}(...) with {count} positional arguments, but the override "
    "{worker}.{method} takes {takes}")
BASE_CALL_WITHOUT = Message(
    BASE_CALL_MISSING_ARGUMENT,
    "{driver} calls self.{method}(...) without {name}, which the override {worker}.{method} "
    "requires")

# vLLM's side. A clash is one sentence `verify` writes too (`vllm_extension_rule`).
CLASHES_WITH_VLLM = Message(VLLM_EXTENSION_CLASH, "{clash}")
NO_RPC_TARGET = Message(
    COLLECTIVE_RPC_MISSING,
    "{driver} calls collective_rpc({method!r}){via} on {worker}, but neither vLLM "
    "{version}'s worker nor the extension it hands vLLM ({lacking}) has a method {method}")
