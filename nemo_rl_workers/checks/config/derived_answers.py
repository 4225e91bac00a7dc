"""Answers derived from a tree's model and one config, kept with the model.

Each is a computation of the cache (`cache.key.Computation`) whose inputs start with the
model's key (`Revision.key`: every module of the tree and this program's own code), kept
in the store that holds the model (`Revision.answers`):

- the config's load (`KeptLoads`: each file's parse and the resolution, asked by
  `reading.load_answers`' questions, under the installed distributions too: the
  libraries that parse and resolve it);
- the tree's own rules' verdicts on it (`cached_verdicts`) and the world size its setup
  computes (`cached_world_size`);
- the audit's findings the config reaches (`cached_findings`: without `--no-verify`), which
  also depend on what the audit reads beyond the package (the tree's entry scripts, the
  installed stubs), digested into their inputs.

Running the rules means walking the algorithm's `setup` and the drivers' constructors in the
source model: most of a cached `check`'s time if done on every run. The verdicts depend
on the tree, the loaded config (its canonical JSON: the `defaults:` chain and the
overrides already applied), the sections judged, the entry's algorithm, and the
environment variables the walk read. The last are known only once it ran: an entry
records each one's value, and is used only where the process's are the same (the entry
is then replaced).

An entry that is damaged or not of its type is ignored with one line, as every cache
entry is (`cache.store`); a config JSON cannot hold exactly (an integer key) is judged
afresh.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nemo_rl_workers.cache.digest import FileDigests, digests
from nemo_rl_workers.cache.key import Computation
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.reading.load_answers import KeptParse, KeptResolution
from nemo_rl_workers.reading.recorded_reads import ENVIRON, note_environ_read

if TYPE_CHECKING:
    from nemo_rl_workers.tree.revision import Revision

Environ = Mapping[str, str | None]  # each variable read, and its value (None: unset)


@dataclass(frozen=True)
class LoadInputs:
    model: str  # the tree model's key
    libraries: str  # the installed distributions that parse and resolve
    question: str  # `load_answers`' question


@dataclass(frozen=True)
class ConfigInputs:
    """What the answers on one config depend on (beside the variables their making read)."""

    model: str  # the tree model's key
    config: str  # the loaded config's canonical JSON
    sections: tuple[tuple[str, str], ...]  # (section path, driver) judged
    algorithm: str | None  # the entry's: the same config, another setup


@dataclass(frozen=True)
class FindingsInputs:
    config: ConfigInputs
    unlisted: tuple[str, ...]  # what the audit's inputs could not list
    files: FileDigests  # what the audit reads beyond the package


@dataclass(frozen=True)
class KeptRuleVerdicts:
    problems: tuple[Problem, ...]
    undecided: tuple[str, ...]
    environ: Environ


@dataclass(frozen=True)
class KeptWorldSize:
    size: int | None
    how: str | None
    environ: Environ


@dataclass(frozen=True)
class KeptFindings:
    lines: tuple[str, ...]
    notes: tuple[str, ...]


CONFIG_PARSE = Computation("config-parse", LoadInputs, KeptParse)
CONFIG_RESOLUTION = Computation("config-resolution", LoadInputs, KeptResolution)
TREE_RULES = Computation("tree-rules", ConfigInputs, KeptRuleVerdicts)
WORLD_SIZE = Computation("world-size", ConfigInputs, KeptWorldSize)
SCOPED_FINDINGS = Computation("scoped-findings", FindingsInputs, KeptFindings,
                              "findings")


class ReadEnviron(Mapping[str, str]):
    """The process's environment, with the names looked up in it recorded."""

    def __init__(self, base: Mapping[str, str]) -> None:
        self.base = base
        self.read: dict[str, str | None] = {}
        self.whole = False  # iterated: every variable counts

    def __getitem__(self, name: str) -> str:
        self.read[name] = self.base.get(name)
        return self.base[name]

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self.read[name] = self.base.get(name)
        return name in self.base

    def __iter__(self) -> Iterator[str]:
        self.whole = True
        return iter(self.base)

    def __len__(self) -> int:
        self.whole = True
        return len(self.base)


_Load = TypeVar("_Load", KeptParse, KeptResolution)


class KeptLoads:
    """`reading.load_answers.LoadAnswers` in the model's store: a config's parses and
    resolution. Lines about entries not trusted are in `notes`."""

    def __init__(self, revision: Revision, store: Store, model: str) -> None:
        self.revision = revision
        self.store = store
        self.model = model
        self.notes: list[str] = []

    @classmethod
    def of(cls, revision: Revision | None) -> KeptLoads | None:
        if revision is None or revision.key is None or revision.answers is None:
            return None
        return cls(revision, revision.answers, revision.key)

    def get(self, question: str, kind: type[_Load]) -> _Load | None:
        computation: Computation[LoadInputs, _Load] = _LOADS[kind]
        inputs = LoadInputs(self.model, installed_libraries(), question)
        got = self.store.get(computation, inputs)
        if got.ignored is not None:
            self.notes.append(f"cache entry {self.store.describe(computation.key(inputs))} "
                              f"{got.ignored}; ignored, the config is loaded again")
        return got.payload

    def put(self, question: str, answer: KeptParse | KeptResolution) -> None:
        inputs = LoadInputs(self.model, installed_libraries(), question)
        if isinstance(answer, KeptParse):
            self.store.put(CONFIG_PARSE, inputs, answer)
        else:
            self.store.put(CONFIG_RESOLUTION, inputs, answer)


_LOADS: dict[type[Any], Any] = {KeptParse: CONFIG_PARSE, KeptResolution: CONFIG_RESOLUTION}


def installed_libraries() -> str:
    """The installed distributions (a config is parsed and resolved by libraries: PyYAML,
    OmegaConf), as the static verdicts and the audit key them; once per import path, so a
    path changed for a while (a plugin's folder, a test's) never keys what follows."""
    return _libraries_on(tuple(sys.path))


@functools.lru_cache(maxsize=8)
def _libraries_on(path: tuple[str, ...]) -> str:
    from nemo_rl_workers.checks.static.static_check import ImportRoots
    from nemo_rl_workers.checks.static.static_inputs import installed_fingerprint

    return installed_fingerprint(ImportRoots.of_this_interpreter())


def config_inputs(revision: Revision, config: Mapping[str, Any],
                  sections: Sequence[tuple[str, str]]) -> ConfigInputs | None:
    """The inputs of an answer on `config`, or None where no entry can be kept (no cache;
    a config the canonical JSON cannot hold)."""
    from nemo_rl_workers.interpret.expressions import Unknown
    from nemo_rl_workers.reading.load_answers import storable

    # JSON would not tell an integer key from its string. A value the entry script left
    # unknown (a log folder named by the time, a token id from the tokenizer) is keyed by
    # its repr: its reason and what it read, all the rules can see of it.
    if revision.key is None or revision.answers is None or not storable(
            dict(config), leaves=(Unknown,)):
        return None
    from nemo_rl_workers.checks.config.entry_sections import chosen_algorithm

    try:
        text = json.dumps(dict(config), sort_keys=True, ensure_ascii=True, allow_nan=True,
                          default=repr)
    except (TypeError, ValueError, RecursionError):  # keys of mixed types, a cycle
        return None
    return ConfigInputs(revision.key, text, tuple((p, d) for p, d in sections),
                        chosen_algorithm())


@dataclass
class Verdicts:
    """What is kept of the tree's rules on one config."""

    problems: list[Problem] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)


Judge = Callable[[Mapping[str, str]], tuple[Verdicts, Iterable[str]]]
"""The rules run on the environment given: their verdicts, and the variables their
sentences say are set or unset."""


def cached_verdicts(revision: Revision, config: Mapping[str, Any],
                    sections: Sequence[tuple[str, str]], judge: Judge
                    ) -> tuple[Verdicts, list[str]]:
    """The verdicts from the entry that holds them for this process's environment, else
    `judge`'s, stored; second, the line about an entry not trusted, if any."""
    def made(environ: Mapping[str, str]) -> tuple[Verdicts, Iterable[str]]:
        return judge(environ)

    return _by_environment(
        TREE_RULES, config_inputs(revision, config, sections), revision, made,
        lambda v, env: KeptRuleVerdicts(tuple(v.problems), tuple(v.undecided), env),
        lambda kept: Verdicts(list(kept.problems), list(kept.undecided)),
        "the tree's own rules are run again")


def cached_world_size(revision: Revision, config: Mapping[str, Any],
                      size: Callable[[Mapping[str, str]], tuple[int | None, str | None]]
                      ) -> tuple[tuple[int | None, str | None], list[str]]:
    """The world size the tree's setup computes for the config, and how (`size`'s
    answer), kept as the rules' verdicts are: it walks the same setup."""
    def made(environ: Mapping[str, str]
             ) -> tuple[tuple[int | None, str | None], Iterable[str]]:
        return size(environ), ()

    return _by_environment(
        WORLD_SIZE, config_inputs(revision, config, ()), revision, made,
        lambda found, env: KeptWorldSize(found[0], found[1], env),
        lambda kept: (kept.size, kept.how), "the world size is computed again")


_T = TypeVar("_T")
_K = TypeVar("_K", KeptRuleVerdicts, KeptWorldSize)


def _by_environment(computation: Computation[ConfigInputs, _K], inputs: ConfigInputs | None,
                    revision: Revision,
                    made: Callable[[Mapping[str, str]], tuple[_T, Iterable[str]]],
                    kept: Callable[[_T, Environ], _K], answer: Callable[[_K], _T],
                    again: str) -> tuple[_T, list[str]]:
    """An answer that depends on the environment variables its making read: from the
    entry for `inputs` where each of them has the value it had, else made (on a recording
    environment) and stored with them; second, the line about an entry not trusted."""
    store = revision.answers
    if inputs is None or store is None:
        return made(ENVIRON)[0], []
    got = store.get(computation, inputs)
    if got.payload is not None and _same_environment(got.payload.environ):
        for name in got.payload.environ:  # read again, as the answer stands for them
            note_environ_read(name)
        return answer(got.payload), []
    environ = ReadEnviron(ENVIRON)
    found, shown = made(environ)
    if not environ.whole:
        for name in shown:
            environ.read.setdefault(name, ENVIRON.get(name))
        store.put(computation, inputs, kept(found, dict(environ.read)))
    note = got.ignored
    return found, ([f"cache entry {store.describe(computation.key(inputs))} {note}; "
                    f"ignored, {again}"] if note is not None else [])


def _same_environment(environ: Environ) -> bool:
    """Whether this process's environment gives each recorded variable its recorded value."""
    return all(os.environ.get(name) == value for name, value in environ.items())


def cached_findings(revision: Revision, config: Mapping[str, Any],
                    scope: Callable[[], tuple[list[str], list[str]]]
                    ) -> tuple[list[str], list[str], list[str]]:
    """`scope()`'s lines (the findings reached, the notes on those left out), from the
    entry that holds them, else made and stored; third, the line about an entry not
    trusted, if any. The audit behind them is the tree's (its files are in the model's
    key) and what it reads beside the package (digested here); the lines depend on the
    config's values alone, and on which sections it starts (made from the same)."""
    asked = config_inputs(revision, config, ())
    store = revision.answers
    if asked is None or store is None or revision.root is None:
        return (*scope(), [])
    from nemo_rl_workers.checks.audit.run import audit_inputs
    from nemo_rl_workers.tree.source import MAX_SOURCE_BYTES, SourceProblem

    problems: list[SourceProblem] = []  # what could not be listed is part of the audit too
    files = audit_inputs(Path(revision.root), problems=problems)
    inputs = FindingsInputs(asked, tuple(str(p) for p in problems),
                            digests(files, MAX_SOURCE_BYTES))
    got = store.get(SCOPED_FINDINGS, inputs)
    if got.payload is not None:
        return list(got.payload.lines), list(got.payload.notes), []
    lines, notes = scope()
    store.put(SCOPED_FINDINGS, inputs, KeptFindings(tuple(lines), tuple(notes)))
    said = [f"cache entry {store.describe(SCOPED_FINDINGS.key(inputs))} {got.ignored}; "
            "ignored, the audit's findings are scoped again"] if got.ignored is not None else []
    return lines, notes, said
