"""`pytest --nemo-rl-workers`: configs, extensions and trees as pytest items.

Opt-in, as pytest-mypy is: without `--nemo-rl-workers` this plugin adds nothing to a
run but the `worker_contract` fixture. With it:

- every YAML file among pytest's paths matching `nemo_rl_workers_configs` (default
  `*.yaml *.yml`; dot-files never) is one item running `nemo-rl-workers check` on it
  (with the arguments in `nemo_rl_workers_check_args`);
- every extension registered through the `nemo_rl.workers` entry points with its
  Protocol, and every line of `nemo_rl_workers_extensions` (`verify`'s arguments:
  `FQN --protocol P [--base B] [--role R]`), is one item running `verify`, and one more
  running `verify --static` when `nemo_rl_workers_static` is true;
- every line of `nemo_rl_workers_trees` (`PATH [--baseline FILE]`, relative to the
  rootdir) is one item running `nemo-rl-workers audit --nemo-rl PATH` on that checkout.

Each item runs the command in this process, exactly as the CLI does (same rules, same
exit codes), and fails with the command's own lines, never a traceback. `-k`, `-x`,
`--junit-xml` and `-n` (pytest-xdist) treat them as any other item.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import json
import shlex
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

OPTION = "--nemo-rl-workers"


class WorkersCheckFailed(Exception):
    """A command's verdict: its lines, shown as the item's whole failure report."""

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nemo-rl-workers", "NeMo-RL worker configs and contracts")
    group.addoption(OPTION, action="store_true", default=False,
                    help="check YAML configs, worker extensions and trees as test items")
    parser.addini("nemo_rl_workers_configs", type="args", default=["*.yaml", "*.yml"],
                  help="glob patterns of the YAML files checked as configs")
    parser.addini("nemo_rl_workers_check_args", type="args", default=[],
                  help="more arguments for each config's `check` (e.g. --no-verify --static)")
    parser.addini("nemo_rl_workers_extensions", type="linelist", default=[],
                  help="one extension per line, as verify's arguments: FQN --protocol P ...")
    parser.addini("nemo_rl_workers_registered", type="bool", default=True,
                  help="also verify every extension registered with its Protocol")
    parser.addini("nemo_rl_workers_static", type="bool", default=False,
                  help="also verify every extension from source (verify --static)")
    parser.addini("nemo_rl_workers_trees", type="linelist", default=[],
                  help="NeMo-RL checkouts to audit, one per line: PATH [--baseline FILE]")


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption(OPTION))


def _run(argv: Sequence[str]) -> tuple[int, str, str]:
    from nemo_rl_workers.commands.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------------------ items


class _CommandItem(pytest.Item):
    """One command run; `verdict` turns its output into failure lines (none: passed)."""

    argv: list[str]
    verdict: Callable[[int, str, str], list[str]]

    def runtest(self) -> None:
        code, out, err = _run(self.argv)
        lines = self.verdict(code, out, err)
        if code != 0 and not lines:  # never a silent failure
            lines = [f"nemo-rl-workers exited {code}", *err.splitlines()]
        if lines:
            raise WorkersCheckFailed(lines)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str:
        if isinstance(excinfo.value, WorkersCheckFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"nemo-rl-workers {shlex.join(self.argv)}"


def _payload(code: int, out: str, err: str) -> Any:
    """The command's JSON, or None when it wrote none (it failed: its stderr says why)."""
    from nemo_rl_workers.findings.exit_codes import EXIT_UNUSABLE

    if code == EXIT_UNUSABLE or not out.strip():
        return None
    try:
        return json.loads(out)
    except ValueError:  # settings are checked up front; this is the last defence
        return None


def _check_verdict(code: int, out: str, err: str) -> list[str]:
    """The problem lines of `check --json` (config:line: message), or its stderr. A line
    names the config the item checks; an inherited value's, also the parent writing it."""
    from nemo_rl_workers.findings.results import Place, naming_origin

    payload = _payload(code, out, err)
    if payload is None:
        return err.splitlines()
    lines = []
    for config in payload.get("configs", [payload]):
        for problem in config["problems"]:
            at = Place(config["config"], problem["config_line"])
            value_from = Place(problem["file"], problem["line"]) if problem["inherited"] else None
            lines.append(f"{at}: {naming_origin(problem['message'], value_from)} "
                         f"[{problem['rule']}]")
    return lines


def _verify_verdict(code: int, out: str, err: str) -> list[str]:
    payload = _payload(code, out, err)
    if payload is None:
        return err.splitlines()
    if payload["ok"]:
        return []
    return [f"{v['message']} [{v['rule']}]" for v in payload["violations"]]


class ConfigItem(_CommandItem):
    """`nemo-rl-workers check [nemo_rl_workers_check_args] CONFIG`."""


def _shown(path: Path, config: pytest.Config) -> str:
    """The config's path as the user would write it: from where pytest was started."""
    here = config.invocation_params.dir
    return str(path.relative_to(here)) if path.is_relative_to(here) else str(path)


class ConfigFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        extra = self.config.stash[_SETTINGS].check_args
        item = ConfigItem.from_parent(self, name="check")
        item.argv = ["check", *extra, "--json", _shown(self.path, self.config)]
        item.verdict = _check_verdict
        item.add_marker("nemo_rl_workers")
        yield item


def _audit_verdict(code: int, out: str, err: str) -> list[str]:
    """The audit's failing lines: its findings but the guarded ones (notes, which fail
    nothing), its undecided calls, and, where it failed on them (`--fail-on-stale`), the
    baseline's stale entries; stale entries of a passing audit are a warning."""
    payload = _payload(code, out, err)
    if payload is None:
        return err.splitlines()
    lines = [f"{f['call']}: {f['severity']}[{f['rule']}]: {f['message']} "
             f"[definition: {f['definition']}]" for f in payload["findings"]
             if f["severity"] != "note"]
    lines += [f"{u['call']}: undecided: {u['driver']} calls {u['method']!r} on {u['worker']}: "
              f"{u['reason']}" for u in payload["undecided"]]
    stale = [f"stale baseline entry: {e['rule']} {e['driver']} {e['method']!r} {e['worker']}: "
             "no finding matches it any more" for e in payload["baseline_stale"]]
    if code != 0 and not lines:
        return stale
    if stale:
        warnings.warn(pytest.PytestWarning(
            f"nemo-rl-workers audit: {len(stale)} stale baseline "
            f"{'entry' if len(stale) == 1 else 'entries'} (--fail-on-stale fails on them, "
            f"--prune-baseline removes them): {'; '.join(stale)}"), stacklevel=1)
    return lines


class AuditItem(_CommandItem):
    """`nemo-rl-workers audit --nemo-rl PATH [--baseline FILE]`."""


class ExtensionItem(_CommandItem):
    """`nemo-rl-workers verify FQN --protocol P ... [--static]`."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "nemo_rl_workers: an item of pytest --nemo-rl-workers (a config, an "
        "extension or an audited tree)"
    )
    if _enabled(config):
        _load_commands()
        config.stash[_SETTINGS] = _read_settings(config)


@dataclass(frozen=True)
class _Settings:
    """The ini settings, each checked once before collection: a setting that cannot be used
    is one `UsageError` line naming its key (pytest exits 4), never an INTERNALERROR or an
    item failing on a traceback."""

    configs: list[str]
    check_args: list[str]
    extensions: list[list[str]]
    registered: bool
    static: bool
    trees: list[list[str]]


_SETTINGS = pytest.StashKey[_Settings]()
_NOT_HERE = ("-h", "--help", "--version", "--json", "--output-format")
"""Options a setting may not give: the item asks for JSON itself, and help is no check."""


def _ini(config: pytest.Config, key: str) -> Any:
    try:
        return config.getini(key)
    except (ValueError, pytest.UsageError) as bad:  # pytest's "args" split, "bool" value
        raise _unusable(key, str(bad)) from None


def _unusable(key: str, why: str, line: str | None = None) -> pytest.UsageError:
    from nemo_rl_workers.errors import one_line

    where = key if line is None else f"{key} line {one_line(repr(line))}"
    return pytest.UsageError(f"{OPTION}: ini setting {where}: {one_line(why)}")


def _split(key: str, line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as bad:  # "No closing quotation", "No escaped character"
        raise _unusable(key, f"{bad} (quote values as a shell does)", line) from None


def _command_args(key: str, command: list[str], line: str | None) -> None:
    """Refuse (UsageError) what the command's own parser refuses, and the options an item
    sets itself or that print help instead of a verdict."""
    from nemo_rl_workers.commands.options import build_parser

    given = command[1:]
    for arg in given:
        option = arg.split("=", 1)[0]
        if option in _NOT_HERE or (option.startswith("-") and not option.startswith("--")
                                   and "h" in option[1:]):
            raise _unusable(key, f"{option} is not an option here (each item runs "
                            f"`{command[0]} ... --json` itself)", line)
    usage = io.StringIO()
    try:
        with contextlib.redirect_stdout(usage), contextlib.redirect_stderr(usage):
            build_parser().parse_args(command)
    except SystemExit:
        lines = [ln for ln in usage.getvalue().splitlines() if ln.strip()]
        raise _unusable(key, lines[-1] if lines else f"not {command[0]}'s arguments",
                        line) from None


def _read_settings(config: pytest.Config) -> _Settings:
    check_args = [str(a) for a in _ini(config, "nemo_rl_workers_check_args")]
    _command_args("nemo_rl_workers_check_args", ["check", *check_args, "config.yaml"], None)
    extensions: list[list[str]] = []
    for line in _ini(config, "nemo_rl_workers_extensions"):
        args = _split("nemo_rl_workers_extensions", line)
        if args:
            _command_args("nemo_rl_workers_extensions", ["verify", *args], line)
            extensions.append(args)
    trees: list[list[str]] = []
    for line in _ini(config, "nemo_rl_workers_trees"):
        args = _split("nemo_rl_workers_trees", line)
        if not args:
            continue
        if args[0].startswith("-"):
            raise _unusable("nemo_rl_workers_trees", "a line is PATH [--baseline FILE]: "
                            f"the checkout's path first, not {args[0]}", line)
        _command_args("nemo_rl_workers_trees", ["audit", "--nemo-rl", *args], line)
        trees.append(args)
    return _Settings(
        configs=[str(p) for p in _ini(config, "nemo_rl_workers_configs")],
        check_args=check_args,
        extensions=extensions,
        registered=bool(_ini(config, "nemo_rl_workers_registered")),
        static=bool(_ini(config, "nemo_rl_workers_static")),
        trees=trees,
    )


def _load_commands() -> None:
    """Import the commands only once asked to run them. Loading the plugin imports
    nothing but pytest, so installing the tool can never stop a test run from starting;
    if the commands cannot load here, `--nemo-rl-workers` ends with one line saying why."""
    try:
        import nemo_rl_workers.commands.cli  # noqa: F401 - imported for its failure only
    except Exception as error:  # noqa: BLE001 - any failure to load is reported, not raised
        from nemo_rl_workers.errors import one_line

        raise pytest.UsageError(
            f"{OPTION}: the checks could not be loaded: {type(error).__name__}: "
            f"{one_line(str(error))}") from None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if not _enabled(config) or file_path.suffix not in (".yaml", ".yml"):
        return None
    if file_path.name.startswith("."):
        return None
    patterns = config.stash[_SETTINGS].configs
    relative = file_path.relative_to(config.rootpath).as_posix() \
        if file_path.is_relative_to(config.rootpath) else file_path.as_posix()
    if not any(fnmatch.fnmatch(file_path.name, p) or fnmatch.fnmatch(relative, p)
               for p in patterns):
        return None
    file: pytest.Collector = ConfigFile.from_parent(parent, path=file_path)
    return file


def _extension_args(config: pytest.Config) -> list[tuple[str, list[str]]]:
    """(label, verify's arguments) per extension: the listed ones, then the registered."""
    settings = config.stash[_SETTINGS]
    found: dict[str, list[str]] = {}
    for args in settings.extensions:
        found.setdefault(args[0], args)
    if settings.registered:
        from nemo_rl_workers.commands.listing import worker_listing
        from nemo_rl_workers.model.registry import RegistryError, default_registry

        try:
            registered = worker_listing(default_registry()).extensions
        except RegistryError:
            registered = ()  # `verify` of a listed extension reports the broken registry
        for ext in registered:
            if ext.protocol is not None:
                found.setdefault(ext.fqn, [ext.fqn, "--protocol", ext.protocol])
    return list(found.items())


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect items
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not _enabled(config):
        return
    settings = config.stash[_SETTINGS]
    static = settings.static
    for label, args in _extension_args(config):
        for kind, more in (("verify", []), ("verify-static", ["--static"])):
            if more and not static:
                continue
            name = f"nemo-rl-workers-{kind}[{label}]"
            item = ExtensionItem.from_parent(session, name=name, nodeid=name)
            item.argv = ["verify", *args, *more, "--json"]
            item.verdict = _verify_verdict
            item.add_marker("nemo_rl_workers")
            items.append(item)
    for args in settings.trees:
        path, rest = args[0], list(args[1:])
        if "--baseline" in rest[:-1]:  # relative to the rootdir, as the tree is
            at = rest.index("--baseline") + 1
            rest[at] = str(config.rootpath / rest[at])
        name = f"nemo-rl-workers-audit[{path}]"
        audit = AuditItem.from_parent(session, name=name, nodeid=name)
        audit.argv = ["audit", "--nemo-rl", str(config.rootpath / path), *rest, "--json"]
        audit.verdict = _audit_verdict
        audit.add_marker("nemo_rl_workers")
        items.append(audit)


# ------------------------------------------------------------------------------ fixture


@pytest.fixture
def worker_contract() -> Callable[..., None]:
    """`worker_contract(cls, Protocol, base=None, init_call=None)`: fails the test with
    the verifier's report (every violation, one line each) when `cls` does not
    implement the Protocol; no traceback into the verifier."""
    from contracts.testing import ContractAssertionError, assert_implements

    def check(cls: type, protocol: type, **options: Any) -> None:
        __tracebackhide__ = True
        try:
            assert_implements(cls, protocol, **options)
        except ContractAssertionError as failed:
            pytest.fail(str(failed), pytrace=False)

    return check
