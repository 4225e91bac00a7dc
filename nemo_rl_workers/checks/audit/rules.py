"""The audit's rules: each resolved dispatch against each worker class its driver can
start under the dispatch's condition. Only what would fail at runtime is a finding
(dispatch sends every argument by keyword, so keyword-only parameters and
`*args, **kwargs` overrides are fine; Ray runs an `async def` method for a plain
`.remote()` and `ray.get` returns its result, so `async def` alone is no finding).

Every rule and sentence a finding carries is the registry's (`findings.registry`); a
finding is data until shown, and changed only with `dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TypeAlias

from nemo_rl_workers.checks.audit.call_chain import Chain
from nemo_rl_workers.checks.audit.call_fit import Sent, fit
from nemo_rl_workers.findings import registry as said
from nemo_rl_workers.findings.registry import Message, Severity
from nemo_rl_workers.interpret.conditions import Origin
from nemo_rl_workers.tree.conditions import ALWAYS, Alternatives, conflicts, describe_either, either
from nemo_rl_workers.tree.drivers import Dispatch, Driver, WorkerChoice, restricted
from nemo_rl_workers.tree.source import ClassInfo, Function, Resolver, SourceTree, resolve_fqn

Args: TypeAlias = tuple[tuple[str, str], ...]
"""A message's arguments by name, beyond the finding's own fields."""


@dataclass(frozen=True)
class Finding:
    """One call a worker class cannot serve as the driver makes it: which of the
    registry's sentences it is (`said`) and its arguments, rendered only when shown."""

    said: Message
    driver: str  # the driver function, e.g. "Policy.train"
    method: str  # the worker method called by name
    worker: str  # the worker class FQN, as the driver names it
    call: str  # file:line where the driver gives the method name
    definition: str  # file:line of the method's definition, or where the MRO ends
    args: Args = ()
    # The switches the call fails under, as alternatives: () where unconditional.
    condition: Alternatives = ()
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
    def rule(self) -> str:
        return self.said.rule.id

    @property
    def severity(self) -> Severity:
        """The rule's, as reach decides what to report of it: a guarded finding is a note
        (no caller reaches it under its switches), a latent one (no caller in the tree)
        at most a warning."""
        if self.reach == "guarded":
            return "note"
        if self.reach == "latent":
            return "warning"
        return self.said.rule.severity

    @property
    def message(self) -> str:
        return self.sentence()

    def sentence(self, classes: tuple[str, ...] | None = None) -> str:
        """The finding's sentence, naming `classes` (by default every class of its cause)."""
        when = describe_either(self.condition)
        return self.said.render({
            **dict(self.args), "driver": self.driver, "method": self.method,
            "worker": _joined(classes or self.classes),
            "when": f" when {when}" if when else "",
            "paren_when": f" (when {when})" if when else ""})

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


def _joined(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def message_for(finding: Finding, fqn: str) -> str:
    """The finding's sentence about the one class `fqn` of its cause (a config-scoped run
    names the class the config starts, not the quantized variants it does not)."""
    return finding.sentence((fqn,)) if fqn in finding.classes else finding.message


def group_causes(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per cause: findings at the same call, of the same sentence, driver and
    method, whose definition (where the method is missing, or the parameter rejected)
    and arguments are the same but for the class, become one finding that lists the
    classes (a default worker and the quantized variants that inherit its gap). Their
    conditions, where they differ and the sentence ends with them (or names none), are
    joined with "or"; a sentence that names its condition elsewhere, or the class's own
    attribute, is one cause only with findings that say the same. Order: first
    appearance."""
    groups: dict[tuple[object, ...], list[Finding]] = {}
    for f in findings:
        said = f.said
        if said.merges_conditions or not said.names_condition:
            # Unconditional and conditional sentences ending with the condition stay apart.
            condition: object = bool(f.condition) and said.merges_conditions
        else:
            condition = f.condition
        key = (said, f.driver, f.method, f.call, f.definition, f.args, condition,
               f.worker if said.about_one_class else "", f.reach, f.guard)
        groups.setdefault(key, []).append(f)
    out: list[Finding] = []
    for members in groups.values():
        first = members[0]
        workers = tuple(sorted({w for m in members for w in m.classes}))
        alternatives = either(c for m in members for c in (m.condition or (ALWAYS,)))
        callers = tuple(sorted({c for m in members for c in m.callers},
                               key=lambda o: (o.where, repr(o.tests))))
        out.append(replace(
            first, worker=workers[0], condition=alternatives, workers=workers,
            callers=callers, chains=tuple(dict.fromkeys(c for m in members for c in m.chains))))
    return out


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
            found, more = _judge(dispatch, choice, info, resolver,
                                 either([condition | choice.condition]))
            if found and classify is not None:
                reach, guard, callers = classify(
                    dispatch, choice, driver.switches if driver is not None else set())
                found = [replace(f, reach=reach, guard=guard, callers=callers) for f in found]
            findings.extend(found)
            undecided.extend(more)
    return findings, undecided


def _judge(
    dispatch: Dispatch, choice: WorkerChoice, info: ClassInfo, resolver: Resolver,
    when: Alternatives,
) -> tuple[list[Finding], list[Undecided]]:
    def finding(message: Message, definition: str, **args: str) -> Finding:
        return Finding(message, dispatch.function, dispatch.method, choice.fqn,
                       dispatch.call, definition, tuple(args.items()), when)

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
        return [finding(said.NO_SUCH_METHOD, end.where, end=end.name)], []
    function, owner = located
    out: list[Finding] = []
    if _stub_counts(owner, function):
        out.append(finding(said.ONLY_A_STUB, function.where, stub=str(function.stub),
                           owner=owner.name))
    shape = fit(function, Sent(tuple(sorted(dispatch.keywords)), dispatch.positional,
                               dispatch.open_keywords))
    for keyword in shape.unknown_keywords:
        out.append(finding(said.NO_SUCH_PARAMETER, function.where, keyword=keyword))
    for name in shape.missing:
        out.append(finding(said.NEVER_SENT, function.where, name=name))
    generator = function.is_generator
    if dispatch.stream is True and not generator:
        out.append(finding(said.READ_AS_STREAM, function.where, owner=owner.name))
    elif dispatch.stream is False and generator:
        out.append(finding(said.READ_AS_VALUE, function.where, owner=owner.name))
    return out, []
