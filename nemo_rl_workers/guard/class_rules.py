"""The user's class's own code against the tree it runs on: the audit's rules, reused.

- Its overrides fit what its bases call (`audit.subclasses.audit_subclass`): every method
  of the class that a base's own method calls on `self` (a generation worker's lifecycle
  calls `self._create_engine(llm_kwargs)`) must bind that call, and its own `super()` /
  `self` calls must bind what its MRO defines (the `base-call-*` and `extension-*` rules).
- For a vLLM extension, vLLM's attribute-clash rule (`vllm_extension_rule`): a class of
  the user's that hands vLLM a `worker_extension_cls` of its own (written in the class's
  own methods, as the tree's generation workers hand vLLM theirs) must not define a name
  vLLM's worker class already has; vLLM asserts that in every engine process, after the
  GPUs are taken. The rule is the one of the vLLM the tree pins, where vllm-stubs of it
  are installed, else the installed stubs' own; without vllm-stubs it is not applied.

Only the user's code is judged (the class and what of its MRO lies in its own folder):
what the tree's own classes do is the audit's business. Findings of severity error only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.rules import Finding
    from nemo_rl_workers.checks.vllm.vllm_extension_rule import Clash, ExtensionRule
    from nemo_rl_workers.guard.class_model import ClassModel


def override_findings(model: ClassModel, fqn: str) -> list[Finding]:
    """The audit's error findings on the class's own methods."""
    from nemo_rl_workers.checks.audit.subclasses import audit_subclass

    info = model.info(fqn)
    if info is None or not model.owns(info.file):
        return []
    return [f for f in audit_subclass(model.tree, model.resolver, info)
            if f.severity == "error"]


@dataclass(frozen=True)
class HandedClash:
    extension: str  # the worker_extension_cls the class hands vLLM
    where: str  # file:line where it is handed
    clashes: tuple[Clash, ...]
    pinned: str | None = None  # the vLLM the tree pins, where the rule is another's


def vllm_clashes(model: ClassModel, fqn: str, tree_root: str) -> list[HandedClash]:
    """Each extension of the user's that the class hands vLLM, with what vLLM refuses."""
    from nemo_rl_workers.checks.audit.vllm_extensions import (
        EXTENSION_KEY,
        extension_names,
        named_classes,
    )

    info = model.info(fqn)
    if info is None or not model.owns(info.file):
        return []
    own = {c.fqn for c in model.resolver.mro(info).classes if model.owns(c.file)}
    handed = [n for n in named_classes(model.tree, EXTENSION_KEY, [])
              if n.cls is not None and n.cls.fqn in own]
    if not handed:
        return []
    rule, pinned = _rule(tree_root)
    if rule is None:
        return []
    other = pinned if pinned is not None and pinned != rule.version else None
    out: list[HandedClash] = []
    for named in handed:
        names = extension_names(model.tree, model.resolver, named.fqn)
        # A name the extension inherits from the tree's own (upstream's internal
        # extension) is upstream's to answer for, as its own extension hands it too.
        clashes = [c for c in rule.clashes(named.fqn, names.names)
                   if model.owns(_file_of(model, c.extension_owner))]
        if clashes:
            out.append(HandedClash(named.fqn, named.where, tuple(clashes), other))
    return out


def _file_of(model: ClassModel, fqn: str) -> str:
    info = model.tree.classes.get(fqn)
    return info.file if info is not None else ""


@functools.cache
def _rule(tree_root: str) -> tuple[ExtensionRule | None, str | None]:
    """vLLM's rule to judge by, and the version the tree pins."""
    from nemo_rl_workers.checks.vllm.vllm_extension_rule import (
        ExtensionRuleUnavailable,
        installed_manifests,
        load_rule,
    )
    from nemo_rl_workers.tree.checkout import project_pin

    pinned, _ = project_pin(Path(tree_root))
    try:
        return load_rule(pinned if pinned in installed_manifests() else None), pinned
    except ExtensionRuleUnavailable:
        return None, pinned


def override_sentence(findings: list[Finding]) -> str:
    first = findings[0]
    more = len(findings) - 1
    return (f"has code that does not fit what its NeMo-RL bases call or define: "
            f"{first.message} ({first.definition}, called at {first.call})"
            + (f" and {more} more" if more > 0 else "")
            + f"; audit rule(s) {', '.join(sorted({f.rule for f in findings}))}")


def clash_sentence(handed: list[HandedClash]) -> str:
    first = handed[0]
    clash = first.clashes[0]
    names = sorted({c.name for h in handed for c in h.clashes})
    return (f"hands vLLM the worker extension {first.extension} ({first.where}), which "
            f"vLLM's attribute-clash rule refuses for {len(names)} name(s) "
            f"({', '.join(names)}): {clash.message()}"
            + (f" (the tree pins vLLM {first.pinned}, for which no vllm-stubs is installed)"
               if first.pinned else ""))
