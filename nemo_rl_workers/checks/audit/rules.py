"""The audit's rules: each resolved dispatch against each worker class its driver can
start under the dispatch's condition. Only what would fail at runtime is a finding
(dispatch sends every argument by keyword, so keyword-only parameters and
`*args, **kwargs` overrides are fine; Ray runs an `async def` method for a plain
`.remote()` and `ray.get` returns its result, so `async def` alone is no finding).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias, get_args

from nemo_rl_workers.checks.audit.call_chain import Chain
from nemo_rl_workers.checks.audit.call_fit import Sent, fit
from nemo_rl_workers.interpret.conditions import Origin
from nemo_rl_workers.tree.conditions import conflicts, describe
from nemo_rl_workers.tree.drivers import Dispatch, Driver, WorkerChoice, restricted
from nemo_rl_workers.tree.source import ClassInfo, Function, Resolver, SourceTree, resolve_fqn

Severity: TypeAlias = Literal["error", "warning", "note"]  # note: guarded (audit.reach)
RuleName: TypeAlias = Literal[
    "missing-method", "stub-body", "unknown-keyword", "required-not-sent", "stream-mismatch",
    # The extension side (audit.extension_rules, audit.vllm_extensions).
    "extension-missing-method", "extension-unknown-keyword", "extension-missing-argument",
    "extension-too-many-positional", "override-unknown-keyword", "override-missing-argument",
    "override-not-a-method", "extension-subclasses-actor", "extension-import-missing",
    # How the driver starts it (audit.extension_setup).
    "extension-not-actor", "extension-unregistered",
    "vllm-extension-clash", "collective-rpc-missing",
    # The tree's own subclasses (audit.subclasses): overrides against their bases' calls.
    "base-call-unknown-keyword", "base-call-missing-argument", "base-call-too-many-positional",
]

WARNINGS: Final[frozenset[RuleName]] = frozenset({"stub-body"})
RULES: Final[dict[RuleName, Severity]] = {
    rule: "warning" if rule in WARNINGS else "error" for rule in get_args(RuleName)}
"""Every rule and its severity: each of RuleName, an error unless one of WARNINGS (the
guide's "Audit findings" table lists each, with its severity)."""


@dataclass(frozen=True)
class Finding:
    """One call a worker class cannot serve as the driver makes it."""

    rule: RuleName
    severity: Severity
    driver: str  # the driver function, e.g. "Policy.train"
    method: str  # the worker method called by name
    worker: str  # the worker class FQN, as the driver names it
    call: str  # file:line where the driver gives the method name
    definition: str  # file:line of the method's definition, or where the MRO ends
    message: str
    condition: str = ""  # the switches the call runs under ("" when unconditional)
    # Every class this one cause affects (the quantized variants that inherit a gap),
    # sorted; `worker` is the first. Empty on a finding about one class only.
    workers: tuple[str, ...] = ()
    # Whether a caller of the tree reaches it under switches that select the class
    # ("reachable"), every caller excludes them ("guarded", by `guard`, file:line), or
    # none calls it ("latent"); see audit.reach. "" where not classed (reachable).
    reach: str = ""
    guard: str = ""
    # For a reachable one: the calls it is reached from (file:line), followed up to the
    # modules that declare the config they run on (a config-scoped `check` asks which
    # of them a recipe runs). Empty where not known.
    callers: tuple[Origin, ...] = ()
    # For a reachable one in a config-scoped run: the chains of calls whose receivers
    # resolve, from an entry down to the driver's call (`call_chain`). Empty: none does.
    chains: tuple[Chain, ...] = ()
    # Where the walk back may have missed a route, in words (a call that does not
    # resolve); "" where it missed none.
    chain_gap: str = ""

    @property
    def classes(self) -> tuple[str, ...]:
        return self.workers or (self.worker,)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What a baseline records for the first class: no line numbers."""
        return (self.rule, self.driver, self.method, self.worker)

    @property
    def keys(self) -> tuple[tuple[str, str, str, str], ...]:
        """A baseline's keys for every class of the cause (one entry per class, as before
        causes were grouped, so baselines stay valid)."""
        return tuple((self.rule, self.driver, self.method, w) for w in self.classes)


@dataclass(frozen=True)
class Undecided:
    """A call the source cannot decide (a base outside the tree and the stubs)."""

    driver: str
    method: str
    worker: str
    call: str
    reason: str


_SLOT = "\x00worker\x00"


def _joined(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def message_for(finding: Finding, fqn: str) -> str:
    """The finding's sentence about the one class `fqn` of its cause (a config-scoped run
    names the class the config starts, not the quantized variants it does not)."""
    joined = _joined(finding.classes)
    if fqn not in finding.classes or joined not in finding.message:
        return finding.message
    return finding.message.replace(joined, fqn, 1)


def group_causes(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per cause: findings at the same call, of the same rule, driver and
    method, whose definition (where the method is missing, or the parameter rejected)
    and sentence are the same but for the class named, become one finding that lists
    the classes (a default worker and the quantized variants that inherit its gap). Their
    conditions, where they differ, are joined with "or". Order: first appearance."""
    groups: dict[tuple[str, ...], list[Finding]] = {}
    for f in findings:
        when = f" when {f.condition}"
        conditional = bool(f.condition) and f.message.endswith(when)
        sentence = f.message[: len(f.message) - len(when)] if conditional else f.message
        template = sentence.replace(f.worker, _SLOT)
        # A sentence that names the class's own attribute ("Cls.attr") is about that class.
        alone = f.worker if _SLOT + "." in template else ""
        key: tuple[str, ...] = (f.rule, f.severity, f.driver, f.method, f.call, f.definition,
                                template, "when" if conditional else "", alone, f.reach,
                                f.guard)
        groups.setdefault(key, []).append(f)
    out: list[Finding] = []
    for key, members in groups.items():
        template, conditional = key[6], key[7] == "when"
        first = members[0]
        workers = tuple(sorted({w for m in members for w in m.classes}))
        conditions = _merged({m.condition for m in members})
        if "" in conditions:
            condition = ""
        elif len(conditions) == 1:
            condition = conditions[0]
        else:
            condition = " or ".join(f"({c})" if " and " in c else c for c in conditions)
        message = template.replace(_SLOT, _joined(workers))
        if conditional and condition:
            message += f" when {condition}"
        callers = tuple(sorted({c for m in members for c in m.callers},
                               key=lambda o: (o.where, repr(o.tests))))
        out.append(Finding(first.rule, first.severity, first.driver, first.method, workers[0],
                           first.call, first.definition, message, condition, workers,
                           first.reach, first.guard, callers,
                           tuple(dict.fromkeys(c for m in members for c in m.chains)),
                           first.chain_gap))
    return out


def _merged(described: set[str]) -> list[str]:
    """Conditions (as `describe` writes them) joined by "or", simplified: two that differ
    only in one switch's value are one without it (`x=true` or `x=false` is always)."""
    terms = {frozenset(tuple(p.rsplit("=", 1)) for p in c.split(" and ")) if c else frozenset()
             for c in described}
    changed = True
    while changed:
        changed = False
        for a in list(terms):
            for b in list(terms):
                diff = a ^ b
                if len(diff) == 2 and len({name for name, _ in diff}) == 1:
                    terms -= {a, b}
                    terms.add(a & b)
                    changed = True
                    break
            if changed:
                break
    return sorted(" and ".join(f"{n}={v}" for n, v in sorted(t)) for t in terms)


def _stub_counts(owner: ClassInfo, function: Function) -> bool:
    """A stub is `raise NotImplementedError`, or a `pass`/`...`/docstring-only body that
    is a declaration: an `@abstractmethod`, or a method of a Protocol class itself. Such a
    body in any other class is a deliberate no-op, whatever its ancestors (an ABC base, an
    interface): calling it cannot fail."""
    if function.stub is None:
        return False
    if function.stub == "raise NotImplementedError" or function.is_abstract:
        return True
    return any(b.rsplit(".", 1)[-1].split("[")[0] == "Protocol" for b in owner.bases)


Classify = Callable[[Dispatch, WorkerChoice, set[str]], tuple[str, str, tuple[Origin, ...]]]


def check(
    tree: SourceTree, resolver: Resolver, dispatches: list[Dispatch],
    drivers: dict[str, tuple[Driver | None, list[WorkerChoice]]],
    classify: Classify | None = None,
) -> tuple[list[Finding], list[Undecided]]:
    findings: list[Finding] = []
    undecided: list[Undecided] = []
    seen: set[tuple[object, ...]] = set()
    for dispatch in dispatches:
        driver, choices = drivers.get(dispatch.owner, (None, []))
        if dispatch.worker is not None:  # a handle of one known class
            choices = [c for c in choices if c.fqn == dispatch.worker] or [
                WorkerChoice(dispatch.worker, frozenset(), dispatch.call)]
        condition = restricted(dispatch, driver)
        for choice in choices:
            if conflicts(condition, choice.condition):
                continue
            key = (dispatch.call, dispatch.via, dispatch.method, choice.fqn, dispatch.function)
            if key in seen:
                continue
            seen.add(key)
            info = resolve_fqn(tree, choice.fqn)
            if info is None:
                continue  # listed with the worker classes as not found in the tree
            # When it fails: the call's switches and those that select this class.
            when = describe(condition | choice.condition)
            found, more = _judge(dispatch, choice, info, resolver, when)
            if found and classify is not None:
                reach, guard, callers = classify(
                    dispatch, choice, driver.switches if driver is not None else set())
                found = [replace(f, reach=reach, guard=guard, callers=callers) for f in found]
            findings.extend(found)
            undecided.extend(more)
    return findings, undecided


def _judge(
    dispatch: Dispatch, choice: WorkerChoice, info: ClassInfo, resolver: Resolver, when: str
) -> tuple[list[Finding], list[Undecided]]:
    def finding(rule: RuleName, definition: str, message: str) -> Finding:
        return Finding(rule, RULES[rule], dispatch.function, dispatch.method, choice.fqn,
                       dispatch.call, definition, message, when)

    mro = resolver.mro(info)
    located = resolver.find_method(info, dispatch.method)
    if located is None:
        if resolver.has_attribute(info, dispatch.method):
            return [], []
        if mro.unknown or mro.problem:
            why = mro.problem or f"its bases {', '.join(mro.unknown)} are outside the tree " \
                "and the installed stubs"
            return [], [Undecided(dispatch.function, dispatch.method, choice.fqn,
                                  dispatch.call, why)]
        end = mro.classes[-1]
        return [finding(
            "missing-method", end.where,
            f"{dispatch.function} calls {dispatch.method!r} on {choice.fqn}, which has no such "
            f"method (its MRO ends at {end.name})" + (f" when {when}" if when else ""),
        )], []
    function, owner = located
    out: list[Finding] = []
    if _stub_counts(owner, function):
        out.append(finding(
            "stub-body", function.where,
            f"{dispatch.function} calls {dispatch.method!r} on {choice.fqn}, where it is only a "
            f"stub ({function.stub} in {owner.name})",
        ))
    shape = fit(function, Sent(tuple(sorted(dispatch.keywords)), dispatch.positional,
                               dispatch.open_keywords))
    for keyword in shape.unknown_keywords:
        out.append(finding(
            "unknown-keyword", function.where,
            f"{dispatch.function} sends {keyword}= to {dispatch.method!r} of "
            f"{choice.fqn}, which takes no such parameter and no **kwargs",
        ))
    for name in shape.missing:
        out.append(finding(
            "required-not-sent", function.where,
            f"{dispatch.function} never sends {name}, a required parameter of "
            f"{dispatch.method!r} of {choice.fqn}",
        ))
    generator = function.is_generator
    if dispatch.stream is True and not generator:
        out.append(finding(
            "stream-mismatch", function.where,
            f"{dispatch.function} reads {dispatch.method!r} as a stream (ObjectRefGenerator), "
            f"but {owner.name}.{dispatch.method} is not a generator",
        ))
    elif dispatch.stream is False and generator:
        out.append(finding(
            "stream-mismatch", function.where,
            f"{dispatch.function} reads {dispatch.method!r} as one value, but "
            f"{owner.name}.{dispatch.method} is a generator (Ray returns an ObjectRefGenerator)",
        ))
    return out, []
