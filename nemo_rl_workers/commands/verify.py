"""`nemo-rl-workers verify FQN --protocol P`: one class against a contract Protocol,
imported in its own thread (bounded), or read from source with `--static`
(`commands.static`); against a NeMo-RL tree's own Protocol where `--nemo-rl` names one
(`commands.verify_tree`).

Exit codes: 0 the class implements the contract, 1 violations (`isolation` included: it
raised past the verifier or ran past its bound), 2 unusable input (an unknown protocol, a
malformed or missing class, a broken registration).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.exit_codes import EXIT_UNUSABLE, verdict
from nemo_rl_workers.findings.formats import STRUCTURED
from nemo_rl_workers.findings.reporter import Reporter

if TYPE_CHECKING:
    from nemo_rl_workers.commands.verify_tree import Judged

ROLE_NOTE = "the constructor binding (--role) is checked by the runtime verifier only"
TREE_NOT_CHECKED = ("the constructor binding and the required base class: the tree's "
                    "builder is not modelled (--base requires one)")


def run_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.model.fqn import fqn_problem
    from nemo_rl_workers.model.protocols import load_protocol

    say = Reporter(out, err)
    protocol, unknown = load_protocol(args.protocol)
    if protocol is None:
        return say.unusable(f"unknown protocol {args.protocol!r}: {unknown}")
    for value, what in ((args.fqn, "FQN"), (args.base, "--base")):
        if value is not None and (problem := fqn_problem(value, what)) is not None:
            return say.unusable(problem.message)
    # The NeMo-RL judged (commands.verify_tree): the class (and its bases) are taken from
    # that tree first, and a built-in contract stands for that tree's Protocol of its role.
    from nemo_rl_workers.commands.verify_tree import judged_against

    judged = judged_against(args, say)
    if judged is None:
        return EXIT_UNUSABLE
    tree_root = judged.tree_root
    if args.static:
        return _verify_static(args, say, judged)
    if tree_root is not None:
        # The tree's modules are imported for this verdict only: a process that runs the
        # command in-process (the pytest plugin) keeps its own `nemo_rl` afterwards.
        package = args.fqn.split(".")[0]
        kept = {name: module for name, module in sys.modules.items()
                if name == package or name.startswith(f"{package}.")}
        for name in kept:
            del sys.modules[name]
        sys.path.insert(0, tree_root)
        try:
            return _verify_imported(args, protocol, say, judged)
        finally:
            sys.path.remove(tree_root)
            for name in [n for n in sys.modules if n == package or n.startswith(f"{package}.")]:
                del sys.modules[name]
            sys.modules.update(kept)
    return _verify_imported(args, protocol, say, judged)


def _verify_static(args: argparse.Namespace, say: Reporter, judged: Judged) -> int:
    """`verify FQN --protocol P --static`: judge one class from its source (taken from the
    NeMo-RL tree `judged` names first, against that tree's Protocol where it has one)."""
    from nemo_rl_workers.checks.static.static_check import (
        ProtocolSpec,
        ProtocolText,
        Subject,
        judge,
    )
    from nemo_rl_workers.checks.static.static_kept import KeptVerdicts
    from nemo_rl_workers.commands.cache import say_static_notes
    from nemo_rl_workers.commands.static import checker_missing
    from nemo_rl_workers.tree.revisions import open_cache

    if checker_missing(args.checker, say.err):
        return EXIT_UNUSABLE
    usable, store = open_cache(args, say.err)
    if not usable:
        return EXIT_UNUSABLE
    cache = KeptVerdicts(store) if store is not None else None
    tree_root = judged.tree_root
    tree_protocol = judged.protocol
    if tree_protocol is not None:
        subject = Subject(args.fqn, tree_protocol.name, args.base)
        protocols: dict[str, ProtocolSpec] | None = {
            tree_protocol.name: ProtocolText(tree_protocol.name, tree_protocol.text)}
    else:
        subject, protocols = Subject(args.fqn, args.protocol, args.base), None
    (report,) = judge([subject], checker=args.checker, cache=cache, protocols=protocols,
                      first_roots=(tree_root,) if tree_root else ())
    say_static_notes(cache, say.err)
    if report.unusable is not None:
        return say.unusable(report.unusable)
    skipped = [*report.skipped, *([ROLE_NOTE] if args.role else [])]
    fmt: str = getattr(args, "output_format", None) or "text"
    if args.json or fmt in STRUCTURED:
        payload = {
            "class": args.fqn,
            "protocol": args.protocol,
            "ok": report.ok,
            "violations": [
                {"member": f.member, "rule": f.rule, "message": line}
                for f, line in zip(report.findings, report.lines(), strict=True)
            ],
            "skipped": skipped,
            "checker": args.checker,
        }
        if fmt in STRUCTURED:
            return emit_verify(payload, fmt, say)
        say.json(payload | judged.as_json())
        return verdict(not report.ok)
    if judged.line is not None:
        say.line(judged.line)
    if report.ok:
        contract = tree_protocol.described() if tree_protocol is not None else args.protocol
        say.line(f"{args.fqn} implements {contract}")
    say.lines(report.lines())
    say.lines(f"skipped: {note}" for note in skipped)
    return verdict(not report.ok)


def _verify_imported(args: argparse.Namespace, protocol: type, say: Reporter,
                     judged: Judged) -> int:
    """`verify` by importing the class (in its own thread, bounded); against a tree's
    Protocol (`judged.protocol`), run from its text once the class is imported."""
    from contracts import check as check_contract
    from nemo_rl_workers.checks.contract.builder_defaults import BuilderDefaults, builder_defaults
    from nemo_rl_workers.checks.contract.contract_check import (
        import_class,
        isolated,
        vllm_extension_problems,
    )
    from nemo_rl_workers.model.registry import RegistryError, default_registry
    try:
        registry = default_registry()
    except RegistryError as bad:
        return say.unusable(str(bad))

    def examine() -> tuple[str | None, dict[str, Any]]:
        """Import and verify, as plain data: runs isolated, the class is untrusted code."""
        cls, failure = import_class(args.fqn, "FQN", "a class")
        base, base_failure = (
            import_class(args.base, "--base", "a class") if args.base else (None, None)
        )
        for found in (failure, base_failure):
            if found is not None:  # (path, expected, given, message, rule)
                return found[3], {}
        assert cls is not None
        if judged.protocol is not None:  # the tree's Protocol; its builder is not modelled
            from nemo_rl_workers.guard.worker_check import loaded_protocol

            builder = BuilderDefaults(args.role, None, base, args.base, (), (TREE_NOT_CHECKED,))
            with loaded_protocol(judged.protocol.text, judged.protocol.name) as tree_protocol:
                report = check_contract(cls, tree_protocol, base=base)
        else:
            # What the builder will require, where --role / --base do not say (the
            # Protocol's rows).
            builder = builder_defaults(cls, args.fqn, args.protocol, role=args.role, base=base,
                                       base_fqn=args.base, registry=registry)
            report = check_contract(cls, protocol, base=builder.base,
                                    init_call=builder.init_call)
        violations = report.violations + builder.violations
        # The extension it hands vLLM, by vLLM's own clash rule (installed vllm-stubs).
        clashes = vllm_extension_problems(cls, args.fqn, "")
        return None, {
            "class": args.fqn,
            "protocol": args.protocol,
            "ok": bool(report.ok) and not builder.violations and not clashes,
            "violations": [
                {"member": str(v.member), "rule": str(v.rule), "message": str(v)}
                for v in violations
            ] + [
                {"member": clash[2], "rule": clash[4], "message": clash[3]}
                for clash in clashes
            ],
            "undecidable": [
                {"member": str(v.member), "rule": str(v.rule), "message": str(v)}
                for v in report.undecidable
            ],
            "skipped": [str(note) for note in report.skipped],
            "role": builder.role,
            "base": builder.base_fqn,
            "inferred": list(builder.inferred),
            "not_checked": list(builder.not_checked),
        }

    done, why = isolated(examine)
    if done is None:  # raised past the verifier, or still running at the time bound
        message = f"{args.fqn} could not be verified against {args.protocol}: {why}"
        failed: dict[str, Any] = {
            "class": args.fqn, "protocol": args.protocol, "ok": False,
            "violations": [{"member": "", "rule": "isolation", "message": message}],
            "undecidable": [], "skipped": [], "role": args.role, "base": args.base,
            "inferred": [], "not_checked": [],
        }
        done = None, failed
    unusable, payload = done
    if unusable is not None:
        return say.unusable(unusable)
    if args.output_format in STRUCTURED:
        return emit_verify(payload, args.output_format, say)
    if args.json:
        say.json(payload | judged.as_json())
        return verdict(not payload["ok"])
    if judged.line is not None:
        say.line(judged.line)
    if payload["ok"]:
        contract = (judged.protocol.described() if judged.protocol is not None
                    else args.protocol)
        say.line(f"{args.fqn} implements {contract}")
    say.lines(one_line(violation["message"]) for violation in payload["violations"])
    say.lines(f"undecidable: {one_line(line['message'])}" for line in payload["undecidable"])
    say.lines(f"skipped: {one_line(note)}" for note in payload["skipped"])
    if payload["inferred"]:
        say.line(f"checked as the builder will run it: {'; '.join(payload['inferred'])}")
    say.lines(f"not checked: {one_line(note)}" for note in payload["not_checked"])
    return verdict(not payload["ok"])


def emit_verify(payload: Mapping[str, Any], fmt: str, say: Reporter) -> int:
    """`verify`'s verdict (imported or `--static`) in a structured format; its exit code."""
    from nemo_rl_workers.findings.adapters import verify_results

    if not say.results(verify_results(payload), fmt):
        return EXIT_UNUSABLE
    return verdict(not payload["ok"])
