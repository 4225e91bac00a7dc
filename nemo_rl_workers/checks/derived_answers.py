"""Answers derived from a tree's model and one config, kept with the model.

Two answers make up most of a cached `check`'s time, and both are kept in the content
cache that holds the model (`Revision.answers`), under keys that extend its content key
(`Revision.key`: every module of the tree and this program's own code):

- the config's load (`KeptLoads`: each file's parse and the resolution, asked by
  `reading.load_answers`' questions, under the installed distributions too: the
  libraries that parse and resolve it);
- the tree's own rules' verdicts on it (`cached_verdicts`) and the world size its setup
  computes (`cached_world_size`);
- the audit's findings the config reaches (`cached_findings`: without `--no-verify`), which
  also depend on what the audit reads beyond the package (the tree's entry scripts, the
  installed stubs), hashed into their key.

Running the rules means walking the algorithm's `setup` and the drivers' constructors in the
source model: most of a cached `check`'s time if done on every run. The verdicts depend
on the tree (its model's content key, `Revision.key`, which covers every module and this
program's own code), the loaded config (its canonical JSON: the `defaults:` chain and
the overrides already applied), the sections judged, and the environment variables the
walk read. The last are known only once it ran: an entry records each one's value, and
is used only where the process's are the same (the entry is then replaced).

An entry that is damaged or not of its type is ignored with one line, as every cache
entry is (`tree.cache`); a config JSON cannot hold exactly (an integer key) is judged
afresh.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

from nemo_rl_workers.errors import Problem

if TYPE_CHECKING:
    from nemo_rl_workers.tree.revision import Revision

_KIND = "tree-rules"
_LOADS = "config-load"
_FINDINGS = "scoped-findings"
_WORLD = "world-size"
_FIELDS = 7  # a problem's path, expected, given, message, rule, file, line


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


class KeptLoads:
    """`reading.load_answers.LoadAnswers` in the model's cache: a config's parses and
    resolution. Lines about entries not trusted are in `notes`."""

    def __init__(self, revision: Revision) -> None:
        self.revision = revision
        self.notes: list[str] = []

    @classmethod
    def of(cls, revision: Revision | None) -> KeptLoads | None:
        if revision is None or revision.key is None or revision.answers is None:
            return None
        return cls(revision)

    def _key(self, question: str) -> str:
        return hashlib.sha256(f"{_LOADS}\0{self.revision.key}\0{_libraries()}\0{question}"
                              .encode()).hexdigest()

    def get(self, question: str) -> dict[str, Any] | None:
        cache = self.revision.answers
        if cache is None:
            return None
        key = self._key(question)
        loaded = cache.load_entry(key)
        if loaded.ignored is not None:
            self.notes.append(f"cache entry {cache.describe(key)} {loaded.ignored}; "
                              "ignored, the config is loaded again")
        return loaded.payload

    def put(self, question: str, answer: dict[str, Any]) -> None:
        if self.revision.answers is not None:
            self.revision.answers.store(self._key(question), answer)


@functools.cache
def _libraries() -> str:
    """The installed distributions (a config is parsed and resolved by libraries: PyYAML,
    OmegaConf), as the static verdicts and the audit key them; once a process."""
    from nemo_rl_workers.checks.static_check import ImportRoots
    from nemo_rl_workers.checks.static_inputs import installed_fingerprint

    return installed_fingerprint(ImportRoots.of_this_interpreter())


def answer_key(revision: Revision, config: Mapping[str, Any],
               sections: Sequence[tuple[str, str]]) -> str | None:
    """The entry's key, or None where no entry can be kept (no cache; a config the
    canonical JSON cannot hold)."""
    from nemo_rl_workers.reading.load_answers import storable

    if revision.key is None or revision.answers is None or not storable(dict(config)):
        return None  # JSON would not tell an integer key from its string
    from nemo_rl_workers.checks.entry_sections import chosen_algorithm

    try:  # the entry's algorithm is part of the question (the same config, another setup)
        question = json.dumps([dict(config), [list(s) for s in sections],
                               chosen_algorithm()], sort_keys=True,
                              ensure_ascii=True, allow_nan=True, default=repr)
    except (TypeError, ValueError, RecursionError):  # keys of mixed types, a cycle
        return None
    digest = hashlib.sha256(f"{_KIND}\0{revision.key}\0".encode())
    digest.update(question.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


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
    def made(environ: Mapping[str, str]) -> tuple[Verdicts, dict[str, Any], Iterable[str]]:
        verdicts, shown = judge(environ)
        return verdicts, _verdicts_payload(verdicts), shown

    return _by_environment(answer_key(revision, config, sections), revision, made,
                           _verdicts_from, "the tree's own rules are run again")


def cached_world_size(revision: Revision, config: Mapping[str, Any],
                      size: Callable[[Mapping[str, str]], tuple[int | None, str | None]]
                      ) -> tuple[tuple[int | None, str | None], list[str]]:
    """The world size the tree's setup computes for the config, and how (`size`'s
    answer), kept as the rules' verdicts are: it walks the same setup."""
    def made(environ: Mapping[str, str]
             ) -> tuple[tuple[int | None, str | None], dict[str, Any], Iterable[str]]:
        found = size(environ)
        return found, {"size": found[0], "how": found[1]}, ()

    base = answer_key(revision, config, ())
    key = None if base is None else hashlib.sha256(f"{_WORLD}\0{base}".encode()).hexdigest()
    return _by_environment(key, revision, made, _size_from, "the world size is computed again")


_T = TypeVar("_T")


def _by_environment(key: str | None, revision: Revision,
                    made: Callable[[Mapping[str, str]], tuple[_T, dict[str, Any], Iterable[str]]],
                    decode: Callable[[Mapping[str, Any]], _T], again: str
                    ) -> tuple[_T, list[str]]:
    """An answer that depends on the environment variables its making read: from the
    entry at `key` where each of them has the value it had, else made (on a recording
    environment) and stored with them; second, the line about an entry not trusted."""
    cache = revision.answers
    if key is None or cache is None:
        return made(os.environ)[0], []
    note = ""
    loaded = cache.load_entry(key)
    if loaded.payload is not None:
        try:
            same = _same_environment(loaded.payload.get("environ"))
            if same:
                return decode(loaded.payload), []
        except ValueError as bad:
            note = f"holds a damaged answer ({bad})"
    elif loaded.ignored is not None:
        note = loaded.ignored
    environ = ReadEnviron(os.environ)
    answer, payload, shown = made(environ)
    if not environ.whole:
        for name in shown:
            environ.read.setdefault(name, os.environ.get(name))
        cache.store(key, {**payload, "environ": dict(environ.read)})
    return answer, ([f"cache entry {cache.describe(key)} {note}; ignored, {again}"]
                    if note else [])


def _same_environment(environ: object) -> bool:
    """Whether this process's environment gives each recorded variable its recorded value;
    ValueError for a record of another shape."""
    if not isinstance(environ, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in environ.items()):
        raise ValueError("an environment of another shape")
    return all(os.environ.get(name) == value for name, value in environ.items())


def _verdicts_payload(verdicts: Verdicts) -> dict[str, Any]:
    return {"undecided": list(verdicts.undecided),
            "problems": [[p.path, p.expected, p.given, p.message, p.rule, p.file, p.line]
                         for p in verdicts.problems]}


def _verdicts_from(payload: Mapping[str, Any]) -> Verdicts:
    """The stored verdicts; ValueError for a payload `_verdicts_payload` does not write."""
    undecided = payload.get("undecided")
    problems = payload.get("problems")
    if not isinstance(undecided, list) or not all(isinstance(u, str) for u in undecided):
        raise ValueError("undecided lines of another shape")
    if not isinstance(problems, list):
        raise ValueError("problems of another shape")
    return Verdicts(problems=[_problem(item) for item in problems], undecided=list(undecided))


def _size_from(payload: Mapping[str, Any]) -> tuple[int | None, str | None]:
    size, how = payload.get("size"), payload.get("how")
    if not (size is None or (isinstance(size, int) and not isinstance(size, bool))) or \
            not (how is None or isinstance(how, str)):
        raise ValueError("a world size of another shape")
    return size, how


def _problem(item: object) -> Problem:
    if not isinstance(item, list) or len(item) != _FIELDS:
        raise ValueError("a problem of another shape")
    path, expected, given, message, rule, file, line = item
    if not all(isinstance(text, str) for text in (path, expected, given, message, rule)):
        raise ValueError("a problem's text is not a string")
    if not (file is None or isinstance(file, str)) or not (
            line is None or (isinstance(line, int) and not isinstance(line, bool))):
        raise ValueError("a problem's place is not a file and line")
    return Problem(path, expected, given, message, rule, file, line)


def cached_findings(revision: Revision, config: Mapping[str, Any],
                    scope: Callable[[], tuple[list[str], list[str]]]
                    ) -> tuple[list[str], list[str], list[str]]:
    """`scope()`'s lines (the findings reached, the notes on those left out), from the
    entry that holds them, else made and stored; third, the line about an entry not
    trusted, if any. The audit behind them is the tree's (its files are in the model's
    key) and what it reads beside the package (hashed here); the lines depend on the
    config's values alone, and on which sections it starts (made from the same)."""
    base = answer_key(revision, config, ())
    cache = revision.answers
    if base is None or cache is None or revision.root is None:
        return (*scope(), [])
    from nemo_rl_workers.checks.audit.run import audit_inputs
    from nemo_rl_workers.tree.cache import digest_files
    from nemo_rl_workers.tree.source import MAX_SOURCE_BYTES, SourceProblem

    problems: list[SourceProblem] = []  # what could not be listed is part of the audit too
    files = audit_inputs(Path(revision.root), problems=problems)
    digest = hashlib.sha256(f"{_FINDINGS}\0{base}\0{[str(p) for p in problems]}\0".encode(
        "utf-8", "surrogateescape"))
    digest_files(digest, files, MAX_SOURCE_BYTES)
    key = digest.hexdigest()
    loaded = cache.load_entry(key)
    why = loaded.ignored
    if loaded.payload is not None:
        lines, notes = loaded.payload.get("lines"), loaded.payload.get("notes")
        if _strings(lines) and _strings(notes):
            return list(lines), list(notes), []
        why = "holds damaged findings (lines of another shape)"
    lines, notes = scope()
    cache.store(key, {"lines": lines, "notes": notes})
    said = [f"cache entry {cache.describe(key)} {why}; ignored, the audit's findings are "
            "scoped again"] if why is not None else []
    return lines, notes, said


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
