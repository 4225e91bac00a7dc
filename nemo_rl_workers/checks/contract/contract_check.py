"""Verify a resolved worker class against its contract, in the class's own environment.

`check_worker_class` is the check itself; it runs in whichever interpreter holds the
class: in-process when that is the driver's, inside one CPU-only Ray task for worker
groups (`nemo_rl.distributed.verification`), or, for the CLI, in a subprocess of the
environment's Python (`problems_in_subprocess`, this module's `__main__`, JSON in and
out). Only FQNs the resolver accepted (registered ones) ever reach an import here.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from contracts.init_call import InitCall
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.model.registry import ActorEnvironment
from nemo_rl_workers.model.resolver import FIELD, Resolution

# A verification subprocess that takes longer than this is reported, not waited on.
SUBPROCESS_TIMEOUT_S = 120.0

# Importing and verifying a class in this process (the CLI, a driver-side check) runs its
# code: a thread bounds it. NEMO_RL_VERIFY_TIMEOUT_S overrides the bound (tests use 2 s).
VERIFY_TIMEOUT_S = 60.0
ABANDONED: list[threading.Thread] = []
"""Verification threads still running past their bound; the CLI exits without joining them."""

T = TypeVar("T")

# Problems cross the environment boundary as plain tuples of Problem's fields.
ProblemFields = tuple[str, str, str, str, str]


@dataclass(frozen=True)
class WorkerCheck:
    """Everything the verifier needs, as plain data (it travels to other environments)."""

    fqn: str
    protocol: str
    base_fqn: str | None
    init_call: InitCall
    section_path: str
    section: Mapping[str, Any]

    @property
    def field_path(self) -> str:
        return f"{self.section_path}.{FIELD}"

    @property
    def expected(self) -> str:
        base = f" and a subclass of {self.base_fqn}" if self.base_fqn else ""
        return f"a class implementing {self.protocol}{base}"

    @classmethod
    def of(cls, resolution: Resolution, section: Mapping[str, Any]) -> WorkerCheck:
        from contracts.init_call import INIT_CALLS

        return cls(
            resolution.fqn,
            resolution.protocol,
            resolution.base_fqn,
            INIT_CALLS[resolution.role],
            resolution.section,
            plain(section),
        )


def check_worker_class(
    check: WorkerCheck, *, skipped: list[str] | None = None
) -> list[ProblemFields]:
    """The check itself, run in the worker's environment; problems as plain tuples.

    With `skipped` (the CLI's `check`, which may run where the worker's heavy dependencies
    are not installed), a class whose module cannot be imported for lack of a third-party
    package is not verified: a note saying so goes to `skipped`, not a problem. Without it
    (before allocation, in the worker's own environment) that is the problem it is."""
    from contracts.protocols import PROTOCOLS
    from nemo_rl_workers.model.protocols import load_protocol

    path, fqn = check.field_path, check.fqn
    protocol, unknown = load_protocol(check.protocol)
    if protocol is None:
        return [
            (
                path,
                f"one of {', '.join(PROTOCOLS)} or a Protocol's FQN",
                check.protocol,
                f"{path}={fqn} must satisfy {check.protocol!r}, which is not a known contract: "
                f"{unknown}.",
                "contract",
            )
        ]
    cls, problem = import_class(fqn, path, check.expected, skipped=skipped)
    if problem is not None:
        return [problem]
    if cls is None:
        return []  # a missing dependency, noted in `skipped`
    base: type | None = None
    if check.base_fqn is not None:
        base, problem = import_class(check.base_fqn, path, check.expected, skipped=skipped)
        if problem is not None:
            return [problem]
        if base is None:
            return []
    problems: list[ProblemFields] = []
    from contracts.verify import ContractError, verify

    try:
        verify(cls, protocol, base=base, init_call=check.init_call)
    except ContractError as err:
        violations = [str(v) for v in getattr(err, "violations", ())] or [str(err)]
        problems.extend(
            (
                path,
                check.expected,
                fqn,
                f"{path}={fqn} does not satisfy the {check.protocol} contract: {line}",
                "contract",
            )
            for line in violations
        )
    problems.extend(vllm_extension_problems(cls, check.fqn, check.field_path))
    preflight = getattr(cls, "preflight", None)
    if callable(preflight):
        try:
            found: object = preflight(check.section, check.section_path)
        except Exception as err:  # a crashing preflight is a worker bug, reported as such
            problems.append(
                (
                    path,
                    "a preflight that returns problems",
                    fqn,
                    f"{fqn}.preflight crashed on {check.section_path}: {type(err).__name__}: {err}",
                    "preflight",
                )
            )
        else:
            if isinstance(found, list):
                problems.extend(
                    (p.path, p.expected, p.given, p.message, p.rule)
                    for p in found
                    if isinstance(p, Problem)
                )
    return problems


def vllm_extension_problems(cls: type, fqn: str, path: str) -> list[ProblemFields]:
    """vLLM's clash rule for the extension a generation worker hands to vLLM
    (`extension_fqn`), judged against the installed vllm-stubs' worker class: the
    assertion vLLM would otherwise fail in every engine process, after the GPUs are
    taken. Skipped where no vllm-stubs is installed (nothing to judge against). `path`:
    the config field the problems name ("" outside a config: the message starts with
    the class)."""
    from nemo_rl_workers.checks.vllm.vllm_extension_rule import (
        RULE_NAME,
        ExtensionRuleUnavailable,
        load_rule,
        runtime_names,
    )

    extension_fqn = getattr(cls, "extension_fqn", None)
    if not isinstance(extension_fqn, str):
        return []
    try:
        rule = load_rule()
    except ExtensionRuleUnavailable:
        return []
    expected = f"a vLLM worker extension none of whose names vLLM {rule.version}'s worker has"
    extension, problem = import_class(extension_fqn, path, expected)
    if problem is not None:
        return [problem]
    assert extension is not None
    who = f"{path}={fqn}" if path else fqn
    return [
        (
            path,
            expected,
            extension_fqn,
            f"{who} hands vLLM the worker extension {extension_fqn}, which vLLM refuses: "
            f"{clash.message()}.",
            RULE_NAME,
        )
        for clash in rule.clashes(extension_fqn, runtime_names(extension))
    ]


def describe(error: BaseException) -> str:
    """`Type: message` of an exception from untrusted code, whose `__str__` may raise too."""
    try:
        name = type(error).__name__
    except BaseException:  # noqa: BLE001 - a hostile metaclass
        name = "an exception"
    try:
        text = str(error)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = ""
    return f"{name}: {text}" if text else name


def verify_timeout_s() -> float:
    try:
        return float(os.environ.get("NEMO_RL_VERIFY_TIMEOUT_S", VERIFY_TIMEOUT_S))
    except ValueError:
        return VERIFY_TIMEOUT_S


def isolated(fn: Callable[[], T], timeout_s: float | None = None) -> tuple[T | None, str]:
    """`(fn(), "")`, or `(None, why)` when it raised anything (SystemExit and
    KeyboardInterrupt included) or was still running after `timeout_s`.

    It runs in a daemon thread: a hang (a `__wrapped__` cycle, an import that waits
    forever) is abandoned, never waited on, and ends with the process.
    """
    bound = verify_timeout_s() if timeout_s is None else timeout_s
    results: list[T] = []
    failures: list[str] = []

    def run() -> None:
        try:
            results.append(fn())
        except BaseException as error:  # noqa: BLE001 - untrusted code; reported, not raised
            failures.append(f"raised {describe(error)}")

    thread = threading.Thread(target=run, name="nemo-rl-verify", daemon=True)
    thread.start()
    thread.join(bound)
    if thread.is_alive():
        ABANDONED.append(thread)
        return None, f"did not finish within {bound:g} s (a hang, or an endless loop)"
    if failures:
        return None, failures[0]
    return results[0], ""


def missing_dependency(error: BaseException, module_name: str) -> str | None:
    """The third-party package whose absence made importing `module_name` fail: a
    ModuleNotFoundError for a top-level name other than the module's own package (torch,
    ray, vllm where they are not installed). None for anything else, the module's own
    package or one of its modules missing included: that is a problem of the name."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    top = error.name.split(".")[0]
    return top if top != module_name.split(".")[0] else None


_MISSING = object()


def _type_name(obj: object) -> str:
    """The name of `obj`'s type, read past a metaclass that overrides attribute access."""
    try:
        return str(type.__getattribute__(type(obj), "__name__"))
    except BaseException:  # noqa: BLE001 - a type whose name cannot be read at all
        return "an object"


def import_class(
    fqn: str, path: str, expected: str, *, skipped: list[str] | None = None
) -> tuple[type | None, ProblemFields | None]:
    """The class `fqn`, or the problem that it cannot be imported or is not a class. With
    `skipped`, a module that needs a third-party package not installed here is a note
    appended to it instead, and the result is (None, None)."""
    from nemo_rl_workers.model.suggest import did_you_mean
    from nemo_rl_workers.tree.class_names import importable_fqns

    module_name, _, attr = fqn.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except BaseException as err:  # noqa: BLE001 - whatever the module raises, SystemExit too
        dependency = missing_dependency(err, module_name)
        if dependency is not None and skipped is not None:
            skipped.append(
                f"{fqn} was not verified: importing {module_name} needs {dependency!r}, "
                "which is not installed in this environment; check --static judges the class "
                "from its source without it"
            )
            return None, None
        missing = err.name if isinstance(err, ModuleNotFoundError) else None
        hint = did_you_mean(importable_fqns(fqn, missing)) if missing else ""
        return None, (
            path,
            expected,
            fqn,
            f"{path}={fqn} cannot be imported: importing {module_name} raised "
            f"{describe(err)}" + (f"; {hint}" if hint else ""),
            "import",
        )
    try:
        obj: Any = getattr(module, attr, _MISSING)
    except BaseException as err:  # noqa: BLE001 - a module __getattr__ that raises
        return None, (
            path,
            expected,
            fqn,
            f"{path}={fqn} cannot be imported: looking up {attr!r} in {module_name} raised "
            f"{describe(err)}",
            "import",
        )
    # type(obj), not isinstance: an instance whose `__class__` says `type` is no class.
    if not issubclass(type(obj), type):
        # The named object alone is judged: only a missing name is worth a look at the
        # module's other members (for a suggestion), which may be hostile themselves.
        absent = obj is _MISSING
        what = "has no attribute" if absent else f"has {_type_name(obj)} (not a class) at"
        hint = did_you_mean(importable_fqns(fqn, None)) if absent else ""
        return None, (
            path,
            expected,
            fqn,
            f"{path}={fqn} is not a class: module {module_name} {what} {attr!r}"
            + (f"; {hint}" if hint else "."),
            "import",
        )
    return obj, None


def plain(value: object) -> Any:
    """A deep copy of a config as plain dicts and lists (OmegaConf nodes included)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(v) for v in value]
    return value


def problems_in_subprocess(check: WorkerCheck, env: ActorEnvironment) -> list[Problem]:
    """Run `check_worker_class` with another interpreter; its failure is a problem too."""
    path, expected = check.field_path, f"a Python environment {env.name!r} that can verify"
    try:
        done = subprocess.run(
            [env.python, "-m", "nemo_rl_workers.checks.contract.contract_check"],
            input=json.dumps(dataclasses.asdict(check)),
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return [
            Problem(
                path,
                expected,
                env.python,
                f"{path}={check.fqn} could not be verified with {env.python}: {err}",
                rule="environment",
            )
        ]
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [
            Problem(
                path,
                expected,
                env.python,
                f"{path}={check.fqn} could not be verified with {env.python}: {last}",
                rule="environment",
            )
        ]
    return [Problem(*fields) for fields in json.loads(done.stdout)]


def resolution_problems(
    resolution: Resolution, section: Mapping[str, Any], skipped: list[str] | None = None
) -> list[Problem]:
    """Verify a resolution's class where it lives, without Ray (the CLI's path). With
    `skipped`, a class of the driver's environment whose module needs a third-party
    package not installed here is noted there, not a problem (`check_worker_class`)."""
    check = WorkerCheck.of(resolution, section)
    if not resolution.env.is_driver:
        return problems_in_subprocess(check, resolution.env)
    notes: list[str] = []
    found, why = isolated(
        lambda: check_worker_class(check, skipped=notes if skipped is not None else None)
    )
    if skipped is not None:
        skipped.extend(f"{resolution.section}: {note}" for note in notes)
    if found is None:
        return [
            Problem(
                check.field_path,
                check.expected,
                check.fqn,
                f"{check.field_path}={check.fqn} could not be verified: verifying it {why}.",
                rule="isolation",
            )
        ]
    return [Problem(*fields) for fields in found]


def _main() -> int:
    raw = json.loads(sys.stdin.read())
    raw["init_call"] = InitCall(**{k: tuple(v) for k, v in raw["init_call"].items()})
    print(json.dumps(check_worker_class(WorkerCheck(**raw))))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
