"""Judge worker classes against their Protocols from source, never importing them.

For CI images without the workers' dependencies (torch, vLLM, Megatron): the class's
source is found by walking the import path as Python would (`sys.path`, and the
folders that editable installs map packages to) without executing any module or
package `__init__`; a generated *probe* module then asks a type checker (pyrefly by
default, mypy on request) one question per Protocol member:

    class _P_PolicyWorker_train(Protocol):          # the member, copied from the Protocol
        def train(self, batch: TrainBatch) -> TrainResult: ...
    _c0_train: type[_P_PolicyWorker_train] = _S0    # the class under judgement

so each error names its member. Imports the checker cannot resolve (a heavy package
not installed here) make what they provide unknown (`Any`), never an error; they
are listed as skipped. Many classes share one probe and one checker run.

The runtime verifier (`contracts.check`) and this path see different things; see the
guide's "Static and runtime verification" section.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeAlias

from nemo_rl_workers.checks.static.checker_files import refused_config
from nemo_rl_workers.checks.static.static_imports import oversized_import
from nemo_rl_workers.reading.atomic_write import write_atomic
from nemo_rl_workers.tree.source.lookup import ImportRoots, Located, RootListing, locate
from nemo_rl_workers.tree.source.outline import Outline, Outlines
from nemo_rl_workers.tree.source.parse import NotPython
from nemo_rl_workers.tree.source.reading import SourceProblem

__all__ = ["ImportRoots", "Located", "locate"]  # the shared source lookup, re-exported

CHECKERS = ("pyrefly", "mypy")
# The kinds of a static finding (the guide's "Static findings" table lists each).
StaticRule: TypeAlias = Literal["static", "base", "source", "import", "undecided"]
# What a probe line asks: a finding's rule, whether the class (or the base) is a class at
# all (a function, a constant or an instance is unusable input, not a finding), or whether
# the checker knows the class, the Protocol or the base (a *canary*: the line must be an
# error, "no such attribute", for any class the checker knows; a class it takes as `Any`,
# or that inherits from `Any`, has every attribute, and every contract would pass).
_Question: TypeAlias = Literal[
    StaticRule, "not-a-class", "base-not-a-class", "known-class", "known-protocol", "known-base"
]
_CANARY = "__nemo_rl_workers_no_such_attribute__"
# mypy follows the class's imports silently (their errors are not ours) and skips the
# heavy frameworks, whose types are then unknown (Any): analysing torch alone takes
# minutes, and the contract is about the class's own methods.
MYPY_CONFIG = """\
[mypy]
follow_imports = silent
ignore_missing_imports = True

[mypy-torch.*,transformers.*,ray.*,modelopt.*,megatron.*,triton.*]
follow_imports = skip
"""
# pyrefly's options besides the paths (part of a cached verdict's key, as MYPY_CONFIG is).
PYREFLY_OPTIONS = ("--preset", "default")
CHECKER_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ProtocolText:
    """A Protocol given as source, not as a class of this interpreter: a NeMo-RL tree's,
    as `audit --emit-protocols` writes it (`text` its module, `name` its class). The probe
    defines it in place; the names its imports bring are found in the tree, never here."""

    name: str
    text: str

    def _parsed(self) -> tuple[list[ast.ImportFrom], ast.ClassDef]:
        body = ast.parse(self.text).body
        imports = [n for n in body if isinstance(n, ast.ImportFrom) and n.module != "__future__"]
        (cls,) = [n for n in body if isinstance(n, ast.ClassDef) and n.name == self.name]
        return imports, cls

    def imports(self) -> list[str]:
        """Its import lines (`__future__`'s aside), as the probe writes them."""
        return [ast.unparse(node) for node in self._parsed()[0]]

    def modules(self) -> list[str]:
        """The modules its imports name (what a cached verdict on it depends on)."""
        return [node.module for node in self._parsed()[0] if node.module]

    def members(self) -> dict[str, str]:
        """Each member's source, by name."""
        found: dict[str, str] = {}
        for node in self._parsed()[1].body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[node.name] = ast.unparse(node) + "\n"
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found[node.target.id] = ast.unparse(node) + "\n"
        return found

    def named(self, name: str) -> str:
        """Its class statement, renamed `name` (the probe's `_W<n>`)."""
        cls = self._parsed()[1]
        cls.name = name
        return ast.unparse(cls)


# A contract the probe asks about: a Protocol class of this interpreter, or one as text.
ProtocolSpec: TypeAlias = "type | ProtocolText"


def protocol_label(protocol: ProtocolSpec) -> str:
    return protocol.name if isinstance(protocol, ProtocolText) else protocol.__qualname__


@dataclass(frozen=True)
class Subject:
    """One question: does class `fqn` satisfy `protocol` (and subclass `base_fqn`)?"""

    fqn: str
    protocol: str
    base_fqn: str | None = None


@dataclass(frozen=True)
class StaticFinding:
    """One member the checker rejects (member "" for the class as a whole)."""

    member: str
    rule: StaticRule
    message: str


@dataclass(frozen=True)
class StaticReport:
    """The verdict on one Subject; `unusable` is set when it could not be judged at all."""

    subject: Subject
    findings: tuple[StaticFinding, ...] = ()
    skipped: tuple[str, ...] = ()
    unusable: str | None = None

    @property
    def ok(self) -> bool:
        return self.unusable is None and not self.findings

    def lines(self) -> list[str]:
        """One line per finding, in the runtime verifier's format."""
        out = []
        for finding in self.findings:
            if finding.rule == "import":
                out.append(f"{self.subject.fqn} cannot be imported: {finding.message}")
                continue
            if finding.rule == "undecided":
                out.append(f"{self.subject.fqn} is undecided for {self.subject.protocol}: "
                           f"{finding.message}")
                continue
            where = self.subject.protocol + (f".{finding.member}" if finding.member else "")
            out.append(f"{self.subject.fqn} does not implement {where}: {finding.message}")
        return out


# ---------------------------------------------------------------------------------------
# The probe


@dataclass
class _Probe:
    """The generated module and what each of its lines asks."""

    lines: list[str] = field(default_factory=list)
    # line number -> (subject index, member, rule); member "" for the whole class.
    questions: dict[int, tuple[int, str, _Question]] = field(default_factory=dict)
    # Protocol members already written as one-member Protocols: (protocol, member) -> name.
    members: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, text: str, question: tuple[int, str, _Question] | None = None) -> None:
        self.lines.append(text)
        if question is not None:
            self.questions[len(self.lines)] = question

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _member_source(protocol: ProtocolSpec, name: str) -> str | None:
    """The member as the Protocol writes it, or None if its source is not available."""
    if isinstance(protocol, ProtocolText):
        return protocol.members().get(name)
    for owner in protocol.__mro__:
        if name not in vars(owner):
            continue
        raw = vars(owner)[name]
        target: object = raw.fget if isinstance(raw, property) else getattr(raw, "__func__", raw)
        if not callable(target):
            return None
        try:
            return textwrap.dedent(inspect.getsource(target))
        except (OSError, TypeError):
            return None
    for owner in protocol.__mro__:
        annotation = vars(owner).get("__annotations__", {}).get(name)
        if annotation is not None:
            text = annotation if isinstance(annotation, str) else inspect.formatannotation(
                annotation
            )
            return f"{name}: {text}\n"
    return None


def _one_member_protocol(probe: _Probe, protocol: ProtocolSpec, name: str) -> str | None:
    key = (protocol_label(protocol), name)
    if key not in probe.members:
        source = _member_source(protocol, name)
        if source is None:
            return None
        short = protocol.name if isinstance(protocol, ProtocolText) else protocol.__name__
        cls_name = f"_P_{short}_{name}"
        probe.add(f"class {cls_name}(Protocol):")
        for line in source.rstrip("\n").splitlines():
            probe.add(f"    {line}" if line else "")
        probe.members[key] = cls_name
    return probe.members[key]


def write_probe(subjects: Sequence[Subject], protocols: Mapping[str, ProtocolSpec]) -> _Probe:
    from typing_extensions import get_protocol_members

    probe = _Probe()
    probe.add("# Generated by nemo_rl_workers' static check: each line below is one question.")
    probe.add("from __future__ import annotations")
    probe.add("from typing import Protocol")
    # The Protocols' own names (their annotations' types) for the copied members.
    preamble: dict[str, None] = {}
    for subject in subjects:
        protocol = protocols[subject.protocol]
        if isinstance(protocol, ProtocolText):
            preamble.update(dict.fromkeys(protocol.imports()))
        else:
            preamble[f"from {protocol.__module__} import *  # noqa: F403"] = None
    for line in sorted(preamble):
        probe.add(line)
    for index, subject in enumerate(subjects):
        protocol = protocols[subject.protocol]
        module, _, name = subject.fqn.rpartition(".")
        probe.add(f"from {module} import {name} as _S{index}", (index, "", "source"))
        # A constant or an instance bound at module level: a usage error, not a contract.
        probe.add(f"_k{index}: type = _S{index}", (index, "", "not-a-class"))
        probe.add(f"_S{index}.{_CANARY}", (index, "", "known-class"))
        if isinstance(protocol, ProtocolText):
            for line in protocol.named(f"_W{index}").splitlines():
                probe.add(line)
            members = sorted(protocol.members())
        else:
            probe.add(
                f"from {protocol.__module__} import {protocol.__name__} as _W{index}",
            )
            members = sorted(get_protocol_members(protocol))
        probe.add(f"_W{index}.{_CANARY}", (index, "", "known-protocol"))
        for member in members:
            member_protocol = _one_member_protocol(probe, protocol, member)
            if member_protocol is not None:
                probe.add(
                    f"_c{index}_{member}: type[{member_protocol}] = _S{index}",
                    (index, member, "static"),
                )
        probe.add(f"_c{index}: type[_W{index}] = _S{index}", (index, "", "static"))
        if subject.base_fqn is not None:
            base_module, _, base_name = subject.base_fqn.rpartition(".")
            probe.add(f"from {base_module} import {base_name} as _B{index}")
            probe.add(f"_kb{index}: type = _B{index}", (index, "", "base-not-a-class"))
            probe.add(f"_B{index}.{_CANARY}", (index, "", "known-base"))
            probe.add(f"_b{index}: type[_B{index}] = _S{index}", (index, "", "base"))
    return probe


# ---------------------------------------------------------------------------------------
# Running a checker


@dataclass(frozen=True)
class _Diagnostic:
    line: int
    message: str


def checker_command(checker: str) -> str | None:
    """The checker next to this interpreter (the environment's), else on PATH."""
    beside = Path(sys.executable).parent / checker
    if beside.is_file():
        return str(beside)
    return shutil.which(checker)


def _run_checker(
    checker: str, probe: Path, roots: Sequence[Path], python: str
) -> list[_Diagnostic] | str:
    exe = checker_command(checker)
    if exe is None:
        return f"{checker} is not installed here (pip install {checker}), or choose --checker"
    refused = refused_config(roots)  # a FIFO there would hang the checker
    if refused is not None:
        return refused
    # Installed packages are found through the interpreter; mypy refuses site-packages
    # in MYPYPATH, and pyrefly needs no help for them either.
    search = [str(r) for r in roots if "-packages" not in r.parts[-1]]
    env = dict(os.environ)
    if checker == "pyrefly":
        command = [exe, "check", str(probe), *PYREFLY_OPTIONS, "--output-format", "json",
                   "--python-interpreter-path", python]
        for path in search:
            command += ["--search-path", path]
    else:
        config = probe.parent / "mypy.ini"
        write_atomic(config, MYPY_CONFIG.encode("utf-8"), links="replace",
                     within=probe.parent, durable=False)
        command = [exe, "--config-file", str(config), "--python-executable", python,
                   "-O", "json", "--no-error-summary",
                   "--cache-dir", str(probe.parent / ".mypy_cache"), str(probe)]
        env["MYPYPATH"] = os.pathsep.join(search)
    try:
        done = subprocess.run(
            command, cwd=probe.parent, env=env, capture_output=True, text=True,
            timeout=CHECKER_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{checker} did not finish: {err}"
    return _parse(checker, done.stdout, done.stderr, done.returncode, probe.name)


def _parse(checker: str, out: str, err: str, code: int, name: str) -> list[_Diagnostic] | str:
    errors: list[_Diagnostic] = []
    if checker == "pyrefly":
        try:
            report = json.loads(out)
        except json.JSONDecodeError:
            return f"pyrefly did not run: {(err.strip().splitlines() or ['no output'])[-1]}"
        for item in report.get("errors", []):
            if item.get("severity") == "error" and Path(item["path"]).name == name:
                lines = str(item["description"]).splitlines()
                errors.append(_Diagnostic(int(item["line"]), lines[-1].strip()))
        return errors
    for raw in out.splitlines():
        if raw.startswith("{"):
            item = json.loads(raw)
            if item["severity"] == "error" and Path(item["file"]).name == name:
                errors.append(_Diagnostic(int(item["line"]), str(item["message"])))
    if code not in (0, 1) or (code == 1 and not errors and "error" in out + err):
        return f"mypy did not run: {((out + err).strip().splitlines() or ['no output'])[-1]}"
    return errors


# ---------------------------------------------------------------------------------------
# Judging


def _unresolved_imports(outline: Outline | SourceProblem, roots: ImportRoots,
                        listing: RootListing | None = None) -> list[str]:
    """Top-level packages the module imports that are not on the import path here."""
    if isinstance(outline, SourceProblem):
        return []  # already reported by _class_problem
    known = set(sys.stdlib_module_names) | {"__future__"}
    return sorted(
        n for n in outline.absolute_tops - known
        if isinstance(locate(n, roots, listing), str) and not _has_stubs(n, roots)
    )


def _has_stubs(name: str, roots: ImportRoots) -> bool:
    """A PEP 561 stub-only package (`vllm-stubs`) or a stub file describes `name`."""
    return any(
        (Path(p) / f"{name}-stubs").is_dir() or (Path(p) / f"{name}.pyi").is_file()
        for p in roots.paths
    )


def _class_problem(outline: Outline | SourceProblem, source: Located, name: str) -> str | None:
    """Why the module cannot provide class `name` (unreadable, not Python, no such
    name), or None when it binds the name (a class, or a re-export)."""
    if isinstance(outline, NotPython):
        return f"{source.file} is not valid Python (line {outline.line}: {outline.detail})"
    if isinstance(outline, SourceProblem):
        return f"{source.file} cannot be read: {outline.message}"
    if name in outline.binds:
        return None
    if name in outline.functions:
        return (
            f"module {source.module} defines function {name!r} (not a class) in "
            f"{source.file}"
        )
    return f"module {source.module} has no {name!r} in {source.file}"


def _clean(message: str, subjects: Sequence[Subject], probe: _Probe) -> str:
    """The checker's words, with the probe's generated names replaced by the real ones."""
    for (protocol, member), generated in probe.members.items():
        message = message.replace(f"{generated}.{member}", f"{protocol}.{member}")
        message = message.replace(generated, f"{protocol} (member {member})")
    for index, subject in reversed(list(enumerate(subjects))):
        base = (subject.base_fqn or "").rpartition(".")[2]
        names = (("_S", subject.fqn.rpartition(".")[2]), ("_W", subject.protocol), ("_B", base))
        for prefix, real in names:
            message = message.replace(f"{prefix}{index}", real)
    return message


class VerdictCache(Protocol):
    """What `judge` asks of a cache (`static_kept.KeptVerdicts` is one): answer what it
    validly holds, run `judge_located` for the rest. A Protocol, so this module needs no
    import of the cache, which imports it."""

    def judge(self, subjects: Sequence[Subject], protocols: Mapping[str, ProtocolSpec],
              checker: str, search: Sequence[Path], python: str,
              roots: ImportRoots) -> list[StaticReport]:
        ...


def judge(
    subjects: Sequence[Subject],
    *,
    checker: str = "pyrefly",
    python: str | None = None,
    protocols: Mapping[str, ProtocolSpec] | None = None,
    cache: VerdictCache | None = None,
    first_roots: Sequence[str] = (),
) -> list[StaticReport]:
    """One report per subject, in order; one checker run for all of them (for those
    that `cache`, when given, does not validly hold). `first_roots`: folders searched
    before the interpreter's path (a NeMo-RL tree given as --nemo-rl)."""
    known = _known_protocols(subjects) if protocols is None else protocols
    python = python or sys.executable
    roots = ImportRoots.of(python)
    if first_roots and not isinstance(roots, str):
        roots = roots.searched_first(first_roots)
    reports: dict[int, StaticReport] = {}
    if isinstance(roots, str):
        return [StaticReport(s, unusable=roots) for s in subjects]
    pending: list[int] = []
    skipped: dict[int, list[str]] = {}
    search: set[Path] = set()
    # Every subject's modules are found in the same roots: list each root once.
    where = _Where(roots, ImportRoots.of_this_interpreter(), RootListing())
    # The tree given first is searched by the checker too: the class's bases (and a tree's
    # Protocols' names) are that tree's, not those of a `nemo_rl` installed here.
    search.update(Path(r) for r in first_roots)
    for index, subject in enumerate(subjects):
        problem = _source_problem(subject, known, where, search, skipped.setdefault(index, []))
        if problem is not None:
            reports[index] = StaticReport(subject, unusable=problem)
        else:
            pending.append(index)
    if pending:
        judged = [subjects[i] for i in pending]
        if cache is None:
            outcome = judge_located(judged, known, checker, sorted(search), python, roots)
        else:
            outcome = cache.judge(judged, known, checker, sorted(search), python, roots)
        # Judged against a NeMo-RL tree given (--nemo-rl) only: the environment's own
        # nemo_rl may be no tree the extension runs on (a fork's class is undecided).
        imports = _import_findings([subjects[i] for i in pending], roots) if first_roots \
            else {}
        for i, report in zip(pending, outcome, strict=True):
            reports[i] = StaticReport(
                report.subject, imports.get(subjects[i].fqn, ()) + report.findings,
                tuple(skipped[i]), report.unusable
            )
    return [reports[i] for i in range(len(subjects))]


def _import_findings(subjects: Sequence[Subject], roots: ImportRoots
                     ) -> dict[str, tuple[StaticFinding, ...]]:
    """Class FQN -> the imports of NeMo-RL's package that its own modules (the class's,
    its bases' outside that package) run and the NeMo-RL first on these roots cannot
    satisfy (`tree_imports`): the class cannot be imported, whatever the checker says."""
    from nemo_rl_workers.checks.static.tree_imports import missing_tree_imports
    from nemo_rl_workers.tree.source import Resolver, demand_tree, resolve_fqn

    tree = demand_tree(roots)
    resolver = Resolver(tree)
    out: dict[str, tuple[StaticFinding, ...]] = {}
    for fqn in dict.fromkeys(s.fqn for s in subjects):
        info = resolve_fqn(tree, fqn)
        modules = [fqn.rpartition(".")[0]] if info is None else [
            c.module for c in resolver.mro(info).classes]
        out[fqn] = tuple(StaticFinding("", "import", f"{m.where}: {m.message()}")
                         for m in missing_tree_imports(tree, modules))
    return out


def _known_protocols(subjects: Sequence[Subject]) -> dict[str, ProtocolSpec]:
    """The built-in contracts, and each extension Protocol the subjects name by FQN. An
    extension Protocol's module is imported (the design keeps it light: the resolver
    reads it too); the class's module never is."""
    from contracts.protocols import PROTOCOLS
    from nemo_rl_workers.model.protocols import load_protocol

    known: dict[str, ProtocolSpec] = dict(PROTOCOLS)
    for subject in subjects:
        if subject.protocol not in known:
            found, _ = load_protocol(subject.protocol)
            if found is not None:
                known[subject.protocol] = found
    return known


@dataclass(frozen=True)
class _Where:
    """Where one `judge` looks: the class's roots, the driver's own (for the Protocols)."""

    roots: ImportRoots
    own: ImportRoots
    listing: RootListing
    outlines: Outlines = field(default_factory=Outlines)  # each module read once


def _source_problem(
    subject: Subject,
    protocols: Mapping[str, ProtocolSpec],
    where: _Where,
    search: set[Path],
    skipped: list[str],
) -> str | None:
    """Why `subject` cannot be judged, or None after recording its roots and notes."""
    roots = where.roots
    if subject.protocol not in protocols:
        return (
            f"unknown protocol {subject.protocol!r}; known: {', '.join(sorted(protocols))}"
        )
    for fqn in filter(None, (subject.fqn, subject.base_fqn)):
        module, _, name = fqn.rpartition(".")
        shown = fqn if fqn == subject.fqn else f"--base {fqn}"
        found = locate(module, roots, where.listing) if module else f"{fqn!r} names no module"
        if isinstance(found, str):
            if fqn != subject.fqn:
                continue  # a base that is not here (a fork's class): undecided, not unusable
            return f"{shown} cannot be found: {found}"
        too_large = oversized_import(found, roots, where.listing, where.outlines)
        if too_large is not None:  # memory stays bounded as the tree stage's reading is
            return f"{shown} cannot be judged from source: {too_large}"
        outline = where.outlines.of(found.file, found.module)
        problem = _class_problem(outline, found, name)
        if problem is not None:
            return f"{shown} is not a class: {problem}"
        search.add(found.root)
        if fqn == subject.fqn:
            skipped.extend(
                f"{module} imports {missing}, which is not installed here: what it provides "
                "is unknown to the checker (Any)"
                for missing in _unresolved_imports(outline, roots, where.listing)
            )
    # The Protocols are the driver's (this interpreter's), wherever the class lives; a
    # tree's, given as text, are written into the probe.
    protocol = protocols[subject.protocol]
    if not isinstance(protocol, ProtocolText):
        found = locate(protocol.__module__, where.own)
        if isinstance(found, Located):
            search.add(found.root)
    return None


def judge_located(
    subjects: Sequence[Subject],
    protocols: Mapping[str, ProtocolSpec],
    checker: str,
    search: Sequence[Path],
    python: str,
    roots: ImportRoots | None = None,
) -> list[StaticReport]:
    probe = write_probe(subjects, protocols)
    with tempfile.TemporaryDirectory(prefix="nemo-rl-static-") as folder:
        path = Path(folder) / "nemo_rl_static_probe.py"
        # Through the one writer, as every file the tool writes (a folder of its own).
        write_atomic(path, probe.text().encode("utf-8"), links="replace",
                     within=Path(folder), durable=False)
        errors = _run_checker(checker, path, search, python)
    if isinstance(errors, str):
        return [StaticReport(s, unusable=errors) for s in subjects]
    found: dict[int, list[StaticFinding]] = {}
    not_a_class: dict[int, str] = {}
    known: set[tuple[int, _Question]] = set()  # the canaries that were errors, as they must
    for error in errors:
        question = probe.questions.get(error.line)
        if question is None:
            continue
        index, member, rule = question
        if rule == "known-class" or rule == "known-protocol" or rule == "known-base":
            known.add((index, rule))
            continue
        message = f"{checker}: {_clean(error.message, subjects, probe)}"
        if rule == "not-a-class" or rule == "base-not-a-class":
            named = subjects[index].fqn if rule == "not-a-class" else (
                f"--base {subjects[index].base_fqn}")
            not_a_class.setdefault(index, f"{named} is not a class ({message})")
            continue
        if rule == "base":
            message = f"not a subclass of {subjects[index].base_fqn} ({message})"
        found.setdefault(index, []).append(StaticFinding(member, rule, message))
    reports = []
    for index, subject in enumerate(subjects):
        findings = found.get(index, [])
        if index in not_a_class:
            reports.append(StaticReport(subject, unusable=not_a_class[index]))
            continue
        by_member = [f for f in findings if f.member]
        # The whole-Protocol line repeats what the member lines said; keep it only alone.
        whole = [f for f in findings if not f.member and f.rule == "static"]
        rest = [f for f in findings if not f.member and f.rule != "static"]
        undecided = _undecided(index, subject, known, findings, protocols, checker, python,
                               roots)
        reports.append(StaticReport(
            subject, tuple(by_member + (whole if not by_member else []) + rest + undecided)
        ))
    return reports


def _undecided(
    index: int,
    subject: Subject,
    known: set[tuple[int, _Question]],
    findings: Sequence[StaticFinding],
    protocols: Mapping[str, ProtocolSpec],
    checker: str,
    python: str,
    roots: ImportRoots | None,
) -> list[StaticFinding]:
    """What the checker took as unknown (`Any`) for `subject`, each named with why; a
    verdict with any of these is undecided, never a pass."""
    from nemo_rl_workers.checks.static.static_ancestry import unresolved_ancestor

    where = roots if roots is not None else ImportRoots.of(python)
    # (what, so what, its FQN, the roots to look for it in)
    unknown: list[tuple[str, str, str, ImportRoots | str]] = []
    if (index, "known-class") not in known:
        unknown.append((subject.fqn, "which passes every member", subject.fqn, where))
    if (index, "known-protocol") not in known:
        protocol = protocols[subject.protocol]
        unknown.append((f"the Protocol {subject.protocol}", "so no member is checked",
                        protocol.name, "") if isinstance(protocol, ProtocolText) else (
                        f"the Protocol {subject.protocol}", "so no member is checked",
                        f"{protocol.__module__}.{protocol.__qualname__}",
                        ImportRoots.of_this_interpreter()))
    # A base the class is found not to subclass is known enough to say so.
    has_base_finding = any(f.rule == "base" for f in findings)
    if subject.base_fqn is not None and (index, "known-base") not in known and not (
        has_base_finding
    ):
        unknown.append((f"--base {subject.base_fqn}", "so the subclass check passes",
                        subject.base_fqn, where))
    out = []
    for what, so_what, fqn, look_in in unknown:
        why = unresolved_ancestor(fqn, look_in) if isinstance(look_in, ImportRoots) else None
        because = why or (
            f"{fqn} or a class it inherits from is not one {checker} follows (a module it "
            "skips, such as torch under mypy, or a base it cannot evaluate)"
        )
        out.append(StaticFinding(
            "", "undecided", f"{checker} takes {what} as unknown (Any), {so_what}: {because}"
        ))
    return out


def subjects_of(resolutions: Iterable[tuple[str, str, str | None]]) -> list[Subject]:
    """Distinct subjects from (fqn, protocol, base) triples, in first-seen order."""
    return list(dict.fromkeys(Subject(*triple) for triple in resolutions))
