"""Expected verdicts of the runtime verifier, mypy and pyrefly per extension class.

The three checks judge the same contract from different sides, and each is blind to
some problems by design; `why` says which and why wherever their verdicts differ
(`test_differential.py` insists on it). Static verdicts are about the case's
assignment line `_<name>: type[<Protocol>] = <Class>` in `differential_cases.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts import (
    POLICY_INIT,
    AsyncGenerationWorker,
    GenerationWorker,
    InitCall,
    PolicyWorker,
    QuantPolicyWorker,
)
from contracts.verify import Rule
from tests.static import differential_cases as c

# The codes of an incompatible assignment, the only error a case line may have.
MYPY_CODE = "assignment"
PYREFLY_CODE = "bad-assignment"


@dataclass(frozen=True)
class Case:
    cls: type
    protocol: type
    # (rule, member) pairs `contracts.verify.check` reports; empty when it accepts.
    runtime: frozenset[tuple[Rule, str]]
    mypy: bool  # mypy rejects the assignment
    pyrefly: bool  # pyrefly rejects the assignment
    why: str = ""
    base: type | None = None
    init_call: InitCall | None = None
    # The verifier could not judge something (e.g. an unresolvable annotation).
    skips: bool = False

    @property
    def name(self) -> str:
        return self.cls.__name__

    @property
    def runtime_rejects(self) -> bool:
        return bool(self.runtime)


def _r(rule: Rule, member: str = "") -> frozenset[tuple[Rule, str]]:
    return frozenset({(rule, member)})


OK: frozenset[tuple[Rule, str]] = frozenset()
SAVE = "save_checkpoint"

_MYPY_NAMES = (
    "mypy ignores the names of positional-or-keyword parameters when it matches a "
    "Protocol member (only __call__ is checked by name), so it cannot see that "
    "`{call}`, which the Protocol allows, fails. pyrefly and the verifier check names."
)
_RUNTIME_UNRESOLVABLE = (
    "The annotation names a type imported under TYPE_CHECKING only, so at runtime it "
    "cannot be resolved: the verifier notes it as skipped and cannot judge it. The "
    "static checkers see the import and reject the type."
)
_STATIC_BASE = (
    "type[Protocol] says nothing about base classes: only the verifier's `base=` "
    "check (rule R2: a subclass of the default worker) can see this."
)
_STATIC_INIT = (
    "The Protocols declare no constructor, so the static checkers do not judge "
    "__init__; only the verifier binds the worker builder's call (`init_call`)."
)

CASES: tuple[Case, ...] = (
    # --- members present / callable -------------------------------------------------
    Case(c.GoodPolicy, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(c.MissingSave, PolicyWorker, _r("missing", SAVE), mypy=True, pyrefly=True),
    Case(c.SaveIsString, PolicyWorker, _r("not-callable", SAVE), mypy=True, pyrefly=True),
    Case(c.SaveIsNone, PolicyWorker, _r("not-callable", SAVE), mypy=True, pyrefly=True),
    Case(
        c.QuantMissingStats,
        QuantPolicyWorker,
        _r("missing", "get_quantizer_stats"),
        mypy=True,
        pyrefly=True,
    ),
    Case(c.QuantWithStats, QuantPolicyWorker, OK, mypy=False, pyrefly=False),
    # --- kind: instance / static / class method ---------------------------------------
    # A static or class method satisfies an instance method: an instance exposes the
    # same call (the typing spec; Ray dispatches static methods of actors too).
    Case(c.SaveStatic, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(c.SaveClassmethod, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(
        c.SaveIsCallableAttribute,
        PolicyWorker,
        OK,
        mypy=False,
        pyrefly=True,
        why="A callable object as a class attribute (no __get__, so no self): mypy compares "
        "its __call__ like a staticmethod, pyrefly rejects a class attribute of a non-method "
        "type. The spec is silent; the verifier follows mypy.",
    ),
    # --- sync vs async ----------------------------------------------------------------
    Case(
        c.SaveAsync,
        PolicyWorker,
        frozenset({("async", SAVE), ("annotation", SAVE)}),
        mypy=True,
        pyrefly=True,
    ),
    Case(
        c.GenerateAsync,
        GenerationWorker,
        frozenset({("async", "generate"), ("annotation", "generate")}),
        mypy=True,
        pyrefly=True,
    ),
    Case(c.GoodAsync, AsyncGenerationWorker, OK, mypy=False, pyrefly=False),
    Case(
        c.LoadSync,
        AsyncGenerationWorker,
        frozenset({("async", "load_model_async"), ("annotation", "load_model_async")}),
        mypy=True,
        pyrefly=True,
    ),
    Case(
        c.LoadReturnsCoroutine,
        AsyncGenerationWorker,
        _r("async", "load_model_async"),
        mypy=False,
        pyrefly=False,
        why="A plain function returning a coroutine has exactly the type of an async def, "
        "so the static checkers accept it. Ray decides whether an actor method is "
        "awaited by its function kind (inspect.iscoroutinefunction), so the verifier "
        "requires a real `async def`: the named stricter rule `async`.",
    ),
    Case(
        c.LoadWrongAwaitedType,
        AsyncGenerationWorker,
        _r("annotation", "load_model_async"),
        mypy=True,
        pyrefly=True,
    ),
    Case(
        c.GenerateAsyncCoroutine,
        AsyncGenerationWorker,
        frozenset({("async", "generate_async"), ("annotation", "generate_async")}),
        mypy=True,
        pyrefly=True,
    ),
    Case(
        c.GenerateAsyncSyncGenerator,
        AsyncGenerationWorker,
        frozenset({("async", "generate_async"), ("annotation", "generate_async")}),
        mypy=True,
        pyrefly=True,
    ),
    # --- call shape -------------------------------------------------------------------
    Case(c.SaveNoParam, PolicyWorker, _r("shape", SAVE), mypy=True, pyrefly=True),
    Case(c.SaveExtraRequired, PolicyWorker, _r("shape", SAVE), mypy=True, pyrefly=True),
    Case(c.SaveExtraOptional, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(c.SaveExtraKeywordOnly, PolicyWorker, _r("shape", SAVE), mypy=True, pyrefly=True),
    Case(
        c.SaveRenamed,
        PolicyWorker,
        _r("shape", SAVE),
        mypy=False,
        pyrefly=True,
        why=_MYPY_NAMES.format(call="save_checkpoint(path=...)"),
    ),
    Case(c.SaveKeywordOnly, PolicyWorker, _r("shape", SAVE), mypy=True, pyrefly=True),
    Case(
        c.SavePositionalOnly,
        PolicyWorker,
        _r("shape", SAVE),
        mypy=False,
        pyrefly=True,
        why=_MYPY_NAMES.format(call="save_checkpoint(path=...)"),
    ),
    Case(
        c.SaveStarArgs,
        PolicyWorker,
        _r("shape", SAVE),
        mypy=False,
        pyrefly=True,
        why=_MYPY_NAMES.format(call="save_checkpoint(path=...)"),
    ),
    Case(c.SaveStarKwargs, PolicyWorker, _r("shape", SAVE), mypy=True, pyrefly=True),
    Case(c.SaveStarArgsKwargs, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(
        c.GenerateGreedyRequired,
        GenerationWorker,
        _r("shape", "generate"),
        mypy=True,
        pyrefly=True,
    ),
    Case(
        c.GenerateWithoutGreedy,
        GenerationWorker,
        _r("shape", "generate"),
        mypy=True,
        pyrefly=True,
    ),
    Case(
        c.GenerateGreedyKeywordOnly,
        GenerationWorker,
        _r("shape", "generate"),
        mypy=True,
        pyrefly=True,
    ),
    Case(
        c.GenerateGreedyRenamed,
        GenerationWorker,
        _r("shape", "generate"),
        mypy=False,
        pyrefly=True,
        why=_MYPY_NAMES.format(call="generate(batch, greedy=True)"),
    ),
    Case(c.GoodGeneration, GenerationWorker, OK, mypy=False, pyrefly=False),
    # --- annotations ------------------------------------------------------------------
    Case(c.SaveWrongParamType, PolicyWorker, _r("annotation", SAVE), mypy=True, pyrefly=True),
    Case(c.SaveWiderParamType, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(c.SaveWrongReturn, PolicyWorker, _r("annotation", SAVE), mypy=True, pyrefly=True),
    Case(c.TrainReturnsDict, PolicyWorker, _r("annotation", "train"), mypy=True, pyrefly=True),
    Case(c.TrainTakesAny, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(c.TrainTakesLogprobBatch, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(
        c.TrainTakesGenerationBatch,
        PolicyWorker,
        _r("annotation", "train"),
        mypy=True,
        pyrefly=True,
    ),
    Case(c.NarrowerIsAlive, PolicyWorker, OK, mypy=False, pyrefly=False),
    Case(
        c.SaveTypeCheckingOnlyParam,
        PolicyWorker,
        OK,
        mypy=True,
        pyrefly=True,
        skips=True,
        why=_RUNTIME_UNRESOLVABLE,
    ),
    Case(
        c.TrainReturnsTypeCheckingOnly,
        PolicyWorker,
        OK,
        mypy=True,
        pyrefly=True,
        skips=True,
        why=_RUNTIME_UNRESOLVABLE,
    ),
    # --- base class and constructor -------------------------------------------------------
    Case(
        c.NotDerivedFromBase,
        PolicyWorker,
        _r("base"),
        mypy=False,
        pyrefly=False,
        base=c.GoodPolicy,
        why=_STATIC_BASE,
    ),
    Case(c.DerivedFromBase, PolicyWorker, OK, mypy=False, pyrefly=False, base=c.GoodPolicy),
    Case(
        c.InitCannotBind,
        PolicyWorker,
        _r("init"),
        mypy=False,
        pyrefly=False,
        init_call=POLICY_INIT,
        why=_STATIC_INIT,
    ),
    Case(c.InitBinds, PolicyWorker, OK, mypy=False, pyrefly=False, init_call=POLICY_INIT),
)
