"""What `audit` prints about extensions and vLLM, besides the findings (which print like
every other finding): for people, one line each; for tools, the `extensions` and `vllm`
keys of the JSON (additive to the driver side's shape)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nemo_rl_workers.checks.audit.extensions import ExtensionSection
from nemo_rl_workers.errors import one_line


def section_json(section: ExtensionSection) -> dict[str, Any]:
    vllm = section.vllm
    rel = section.rel
    return {
        "extensions": [
            {
                "class": a.fqn,
                "origin": section.origins.get(a.fqn, ""),
                "definition": rel(a.where),
                "role": a.role,
                "stands_for": a.stands_for.fqn if a.stands_for is not None else None,
                "own_classes": list(a.own),
                "calls_checked": a.calls_checked,
                "driver_calls_checked": a.driver_calls_checked,
                "unknown": [_rel_line(u, rel) for u in a.unknown],
            }
            for a in section.audits
        ],
        "vllm": {
            "version": section.vllm_version,
            "pinned": section.vllm_pinned,
            "worker": section.vllm_worker,
            "extensions": [
                {
                    "class": fqn,
                    "passed_at": [rel(n.where) for n in vllm.extensions if n.fqn == fqn]
                    if vllm is not None else [],
                    "known": vllm.names[fqn].known if vllm is not None else False,
                    "clashes": sorted(c.name for n, c in vllm.clashes if n.fqn == fqn)
                    if vllm is not None else [],
                }
                for fqn in section.vllm_extensions
            ],
            "worker_classes": sorted({n.fqn for n in vllm.workers}) if vllm is not None else [],
            "collective_rpc": {
                "resolved": len(vllm.rpc_calls) if vllm is not None else 0,
                "unresolved": [
                    {"call": rel(c.where), "function": c.function}
                    for c in (vllm.rpc_unresolved if vllm is not None else [])
                ],
            },
        },
    }


def _rel_line(line: str, rel: Callable[[str], str]) -> str:
    head, sep, tail = line.partition(": ")
    if sep and head.rpartition(":")[2].isdigit():
        return f"{rel(head)}: {tail}"
    return line


def section_lines(section: ExtensionSection) -> list[str]:
    rel = section.rel
    lines: list[str] = []
    for a in section.audits:
        origin = section.origins.get(a.fqn, "")
        if a.stands_for is not None:
            what = (f"extends {a.stands_for.fqn} ({a.role}'s worker); {len(a.own)} own "
                    f"class(es); {a.calls_checked} super()/self calls and "
                    f"{a.driver_calls_checked} driver calls to its overrides checked")
        else:
            what = "its role is unknown"
        lines.append(one_line(f"extension {a.fqn} ({origin}): {what}"))
        lines.extend(one_line(f"  unknown: {_rel_line(u, rel)}") for u in a.unknown)
    vllm = section.vllm
    if vllm is not None and (section.vllm_extensions or vllm.rpc_calls or vllm.rpc_unresolved):
        clashing = {n.fqn for n, _ in vllm.clashes}
        lines.append(one_line(
            f"vLLM {section.vllm_version} (installed vllm-stubs): {len(section.vllm_extensions)} "
            f"worker_extension_cls judged against {section.vllm_worker}, "
            f"{len(clashing)} refused; {len(vllm.rpc_calls)} collective_rpc calls resolved, "
            f"{len(vllm.rpc_unresolved)} unresolved"))
        for fqn in section.vllm_extensions:
            if not vllm.names[fqn].known:
                lines.append(one_line(
                    f"  unknown: {fqn}: bases outside the tree "
                    f"({', '.join(vllm.names[fqn].unknown_bases) or 'not found'}); "
                    "its names are not all known"))
        for call in vllm.rpc_unresolved:
            lines.append(one_line(
                f"{section.rel(call.where)}: unresolved: collective_rpc in {call.function}: "
                "the method name is not a literal here or at any caller in the tree"))
    return lines
