"""What `verify` checks by default: what the worker builder will require of a class.

Without `--role` and `--base`, they are inferred from the Protocol through the
registry's rows: the rows whose Protocol (or quantized Protocol) it is give the role,
whose constructor call the builder makes, and the classes the resolver will accept
as a base: a custom class must subclass the row's default worker (R2), and with
`quant_cfg` only the row's quantized worker itself runs (R4/R5). What cannot be
inferred is reported as not checked, never passed silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.init_call import INIT_CALLS, InitCall
from contracts.verify import Violation
from nemo_rl_workers.model.protocols import extends, load_protocol
from nemo_rl_workers.model.registry import WorkerRegistry, WorkerRow


@dataclass(frozen=True)
class BuilderDefaults:
    """The role and base `verify` checks, where they came from, and what it cannot check."""

    role: str | None
    init_call: InitCall | None
    base: type | None
    base_fqn: str | None
    inferred: tuple[str, ...] = ()  # what was inferred, one phrase each
    not_checked: tuple[str, ...] = ()
    # A class that subclasses none of several possible bases (e.g. two backends).
    violations: tuple[Violation, ...] = ()


def _rows_of(protocol: str, registry: WorkerRegistry) -> tuple[list[WorkerRow], bool]:
    """The rows whose default (False) or quantized (True) Protocol `protocol` is, or, for
    an extension Protocol (an FQN), the rows whose Protocol it extends (quantized first:
    a quantized Protocol extends the default one)."""
    default = [r for r in registry.rows() if r.protocol == protocol]
    if default:
        return default, False
    quant = [r for r in registry.rows() if r.quant_protocol == protocol]
    if quant or "." not in protocol:
        return quant, True
    extension, _ = load_protocol(protocol)
    if extension is None:
        return [], False

    def extended(ref: str | None) -> bool:
        role = load_protocol(ref)[0] if ref is not None else None
        return role is not None and extends(extension, role)

    quant = [r for r in registry.rows() if extended(r.quant_protocol)]
    if quant:
        return quant, True
    return [r for r in registry.rows() if extended(r.protocol)], False


def builder_defaults(
    cls: type,
    cls_fqn: str,
    protocol: str,
    *,
    role: str | None,
    base: type | None,
    base_fqn: str | None,
    registry: WorkerRegistry,
) -> BuilderDefaults:
    """Fill in `role` and `base` that were not given, from the Protocol's rows."""
    from nemo_rl_workers.checks.contract.contract_check import import_class

    rows, quantized = _rows_of(protocol, registry)
    inferred: list[str] = []
    not_checked: list[str] = []
    if role is None:
        roles = sorted({r.role for r in rows})
        if len(roles) == 1:
            role = roles[0]
            inferred.append(f"role {role} (from {protocol})")
        else:
            not_checked.append(
                f"constructor binding: no role can be inferred from {protocol} "
                f"({'no registered row uses it' if not roles else 'rows of several roles'}); "
                "pass --role policy or --role generation")
    if base is not None or role is None:
        if base is None:
            not_checked.append("required base class: no role, so no row's worker; pass --base")
        return BuilderDefaults(role, INIT_CALLS[role] if role else None, base, base_fqn,
                               tuple(inferred), tuple(not_checked))
    candidates = [
        fqn for fqn in dict.fromkeys(
            (r.quantized_fqn if quantized else r.default_fqn) for r in rows if r.role == role)
        if fqn is not None
    ]
    if not candidates:
        not_checked.append(f"required base class: no registered row uses {protocol}; "
                           "pass --base")
    imported: list[tuple[str, type]] = []
    for fqn in candidates:
        found, failure = import_class(fqn, "base", "a class")
        if found is None:
            reason = failure[3] if failure else "not a class"
            not_checked.append(f"required base class {fqn}: {reason}")
        else:
            imported.append((fqn, found))
    fits = [(fqn, found) for fqn, found in imported if issubclass(cls, found)]
    kind = "quantized worker" if quantized else "default worker"
    if fits:
        base_fqn, base = fits[0]
        inferred.append(f"base {base_fqn} (the {kind} of its row)")
    violations: tuple[Violation, ...] = ()
    if not fits and imported:
        names = " or ".join(fqn for fqn, _ in imported)
        why = ("with quant_cfg the builder runs only the row's quantized worker" if quantized
               else "a custom worker must subclass its row's default worker (R2)")
        violations = (Violation(cls_fqn, protocol, "", "base",
                                f"not a subclass of {names}; {why}"),)
        inferred.append(f"base: one of the {kind}s of the {protocol} rows")
    return BuilderDefaults(role, INIT_CALLS[role], base, base_fqn, tuple(inferred),
                           tuple(not_checked), violations)
