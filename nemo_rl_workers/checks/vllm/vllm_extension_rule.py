"""vLLM's `worker_extension_cls` rule, applied before vLLM applies it on a GPU.

vLLM 0.33 (`vllm/v1/worker/worker_base.py`, `WorkerWrapperBase.init_worker`) mixes the
extension into its worker class by appending it to the class's `__bases__`, after this
check, inside every engine process:

    if worker_extension_cls not in worker_class.__bases__:
        for attr in dir(worker_extension_cls):
            if attr.startswith("__"):
                continue
            assert not hasattr(worker_class, attr), ...

So the names judged are those of `dir(extension)` (its whole MRO: methods, properties,
class attributes, single-underscore helpers included; only names starting with `__` are
skipped), against what the worker class has as a class (its MRO's methods, properties and
class attributes, plus `type`'s `mro`; instance attributes set in `__init__` do not count).
The worker side comes from the installed `vllm-stubs` manifest (`extension_rule`, written by
stubs/generate.py from vLLM's source), so nothing here imports vLLM or torch.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular

DISTRIBUTION = "vllm-stubs"
MANIFEST_IN_PACKAGE = "vllm-stubs/manifest.json"
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
RULE_NAME = "vllm-extension-clash"


class ExtensionRuleUnavailable(ValueError):
    """No installed vllm-stubs describes the vLLM version asked for (or none is installed)."""

    def __init__(self, wanted: str | None, installed: Iterable[str], why: str = "") -> None:
        self.wanted = wanted
        self.installed = tuple(sorted(installed))
        listed = ", ".join(self.installed) or "none"
        if why:
            text = why
        elif wanted is None:
            text = (
                f"no {DISTRIBUTION} with vLLM's extension rule is installed; install it "
                "(pip install ./stubs from a checkout of this project)"
            )
        else:
            text = (
                f"--vllm-version {wanted}: no installed {DISTRIBUTION} describes vLLM {wanted}; "
                f"installed: {listed}"
            )
        super().__init__(text)


@dataclass(frozen=True)
class WorkerName:
    """A name a vLLM worker class has, and where vLLM defines it."""

    name: str
    owner: str
    file: str
    line: int
    kind: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Clash:
    """One extension name that vLLM's assertion refuses."""

    extension: str
    name: str
    extension_owner: str
    worker: str
    defined: WorkerName
    version: str
    rule_site: str

    @property
    def rule(self) -> str:
        return RULE_NAME

    def message(self) -> str:
        inherited = (
            "" if self.extension_owner == self.extension else f" (from {self.extension_owner})"
        )
        return (
            f"{self.extension}.{self.name}{inherited} clashes with vLLM {self.version}'s "
            f"{self.worker}.{self.name} ({self.defined.kind} of {self.defined.owner}, "
            f"{self.defined.where}): vLLM asserts that no extension attribute already exists "
            f"on its worker class ({self.rule_site}), in every engine process after the GPUs "
            "are taken; rename it"
        )


@dataclass(frozen=True)
class ExtensionRule:
    """vLLM's rule for one vLLM version, as its installed stubs record it."""

    version: str
    manifest: Path
    skip_prefix: str
    rule_site: str
    platforms: Mapping[str, str]
    default_platform: str
    metaclass_names: frozenset[str]
    workers: Mapping[str, Mapping[str, WorkerName]]

    @property
    def default_worker(self) -> str:
        return self.platforms[self.default_platform]

    def judged(self, name: str) -> bool:
        """Whether vLLM checks this extension name at all."""
        return not name.startswith(self.skip_prefix)

    def worker_names(self, worker: str | None = None) -> Mapping[str, WorkerName]:
        return self.workers[worker or self.default_worker]

    def clashes(
        self,
        extension: str,
        names: Mapping[str, str],
        *,
        worker: str | None = None,
        worker_extra: Mapping[str, WorkerName] | None = None,
    ) -> list[Clash]:
        """Every clash of an extension whose `dir()` names are `names` (name -> the class
        of the extension's MRO that defines it), against `worker` (the default platform's
        when None) plus `worker_extra` (names a subclass of it adds, e.g. a tree's own
        worker_cls)."""
        target = worker or self.default_worker
        have: dict[str, WorkerName] = dict(self.worker_names(target))
        for name in self.metaclass_names:
            have.setdefault(name, WorkerName(name, "type", "builtins", 0, "method"))
        have.update(worker_extra or {})
        return [
            Clash(extension, name, names[name], target, have[name], self.version, self.rule_site)
            for name in sorted(names)
            if self.judged(name) and name in have
        ]


def runtime_names(cls: type) -> dict[str, str]:
    """`dir(cls)` as vLLM walks it, each name mapped to the FQN of the class in `cls`'s
    MRO that defines it (`object`'s names all start with `__`)."""
    out: dict[str, str] = {}
    for name in dir(cls):
        for klass in cls.__mro__:
            if name in vars(klass):
                out[name] = f"{klass.__module__}.{klass.__qualname__}"
                break
        else:
            out[name] = f"{type(cls).__module__}.{type(cls).__qualname__}"
    return out


def installed_manifests() -> dict[str, Path]:
    """vLLM version -> manifest of each installed vllm-stubs that records the rule."""
    found: dict[str, Path] = {}
    # Found by name (the path finders match dist-info folders by it): reading every
    # installed distribution's metadata was most of the guard's own-code check.
    for dist in importlib.metadata.distributions(name=DISTRIBUTION):
        name = dist.metadata["Name"] or ""
        if re.sub(r"[-_.]+", "-", name).lower() != DISTRIBUTION:
            continue
        path = Path(str(dist.locate_file(MANIFEST_IN_PACKAGE)))
        if path.is_file():
            found.setdefault(dist.version, path)
    return found


def load_rule(version: str | None = None) -> ExtensionRule:
    """The rule for `version` (the installed stubs' own when None); raises
    ExtensionRuleUnavailable when no installed stubs describe it."""
    manifests = installed_manifests()
    if not manifests:
        raise ExtensionRuleUnavailable(version, ())
    if version is None:
        version = sorted(manifests)[-1] if len(manifests) > 1 else next(iter(manifests))
    if version not in manifests:
        raise ExtensionRuleUnavailable(version, manifests)
    return rule_from_manifest(manifests[version], manifests)


def rule_from_manifest(path: Path, installed: Mapping[str, Path] | None = None) -> ExtensionRule:
    versions = tuple(installed or ())
    try:
        # Through the guarded reader: a FIFO or a device in its place is never waited on.
        raw = read_regular(path, limit=MAX_MANIFEST_BYTES, what="a stubs manifest")
    except FileRefused as refused:
        if refused.kind == "too-large":
            raise ExtensionRuleUnavailable(None, versions, f"{path} is over 16 MiB") from None
        raise ExtensionRuleUnavailable(
            None, versions, f"{path} does not record vLLM's extension rule ({refused.reason})"
        ) from None
    try:
        data: Any = json.loads(raw.decode("utf-8"))
        section = data["extension_rule"]
        rule = section["rule"]
        workers = {
            fqn: {
                row["name"]: WorkerName(
                    row["name"], row["owner"], entry["files"][row["owner"]], int(row["line"]),
                    row["kind"],
                )
                for row in entry["names"]
            }
            for fqn, entry in section["workers"].items()
        }
        return ExtensionRule(
            version=str(data["vllm"]),
            manifest=path,
            skip_prefix=str(rule["skip_prefix"]),
            rule_site=f"{rule['file']}:{rule['line']}",
            platforms=dict(section["platforms"]),
            default_platform=str(section["default_platform"]),
            metaclass_names=frozenset(section["metaclass_names"]),
            workers=workers,
        )
    except ExtensionRuleUnavailable:
        raise
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as err:
        raise ExtensionRuleUnavailable(
            None, versions, f"{path} does not record vLLM's extension rule ({type(err).__name__})"
        ) from err
