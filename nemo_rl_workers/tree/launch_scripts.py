"""Upstream's launch descriptions read as data: suite scripts and campaign lists.

A suite script (`tests/test_suites/llm/X.sh`) sources `common.env` (which derives the
recipe's path from the script's name), sizes the cluster (`NUM_NODES`, `GPUS_PER_NODE`),
exports variables and runs `uv run ENTRY.py --config $CONFIG_PATH key=value ...`; a TQ
wrapper exports `EXP_NAME` and runs its base script with `bash` (or `exec`, or by its
path: each is followed the same way). `read_launch_script` walks
the script and what it sources or delegates to, statement by statement, in the bounded
subset `shell_values` interprets, up to the first training command (a Python entry given
`--config`); what follows it (metric checks, converters, evals) is not the launch. Nothing
is ever run.

Where a construct the reader does not interpret could change the launch (its recipe,
entry, overrides, exported variables or cluster shape), the Launch says so in `undecided`
(`FILE:LINE: why`) and is never completed by a guess. A condition the reader cannot decide
is harmless when its body only prints, exits or runs programs: a separate process cannot
change the script's variables. Unreadable input (not a regular file, over
MAX_SCRIPT_BYTES, not UTF-8 text, a `source` loop, delegation deeper than MAX_DEPTH)
raises LaunchScriptError, one line.

`NUM_NODES`/`GPUS_PER_NODE` are the named script's where it sets them (the script a
campaign names is the one the launcher sizes the allocation from), else those in effect at
the training command. A file that holds only a relative path to another file, with no
newline, is a symlink as git writes one without symlink support (`vlm/common.env` in a
tree copied that way) and is read as the file it names.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading.guarded_file import FileRefused, os_reason, read_regular
from nemo_rl_workers.reading.recorded_reads import FOLDER, kind_of
from nemo_rl_workers.tree.launch import Launch
from nemo_rl_workers.tree.shell_syntax import (
    AndOr,
    Command,
    Conditional,
    Function,
    Group,
    If,
    Loop,
    Pipeline,
    ShellSyntaxError,
    Simple,
    Statement,
    Subshell,
    Unparsed,
    Word,
    statements,
)
from nemo_rl_workers.tree.shell_values import (
    ShellState,
    Text,
    Unknown,
    Value,
    decide_test,
    expand_fields,
    expand_string,
)

MAX_SCRIPT_BYTES = 1024 * 1024
"""A launch script, a file it sources or a campaign list larger than this is refused."""
MAX_DEPTH = 8
"""How deep `source` and `bash SCRIPT` may nest (upstream's deepest is 2)."""
MAX_TOTAL_BYTES = 16 * 1024 * 1024
"""All the files one launch reads, together."""

_CLUSTER_SHAPE = ("NUM_NODES", "GPUS_PER_NODE")
# Options of `uv run` that take a value (`uv run --extra vllm x.py`).
_UV_VALUE_OPTIONS = {
    "--extra",
    "--group",
    "--only-group",
    "--no-group",
    "--with",
    "--with-editable",
    "--with-requirements",
    "--python",
    "-p",
    "--project",
    "--directory",
    "--package",
    "--env-file",
    "--index",
    "--default-index",
    "--index-url",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--config-file",
    "--cache-dir",
    "--no-extra",
}
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
# Builtins that may change variables in ways the reader does not follow.
_OPAQUE_BUILTINS = {
    "eval",
    "read",
    "mapfile",
    "readarray",
    "let",
    "getopts",
    "alias",
    "enable",
    "builtin",
    "command",
    "coproc",
    "trap",
    "pushd",
    "popd",
    "shopt",
}
_FIXED_STATUS = {"true": True, ":": True, "false": False}
_DECLARATIONS = {"export", "declare", "typeset", "local", "readonly"}


class LaunchScriptError(ValueError):
    """A launch script or campaign list that cannot be read; `str()` is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(" ".join(message.split())))


@dataclass(frozen=True)
class CampaignEntry:
    """One script a campaign list names, at its line."""

    campaign: str  # the list's path
    line: int
    script: str  # as the list writes it
    path: str  # resolved against the project root (three folders above the list)
    missing: str | None = None  # why it cannot be read ("no such file"), None when it can


# ---------------------------------------------------------------- public API


def read_launch_script(path: str) -> Launch:
    """The launch a suite script describes (see the module docstring)."""
    absolute = os.path.abspath(path)
    reader = _Reader(absolute)
    try:
        return reader.launch()
    except RecursionError as e:  # bounded nesting makes this unlikely; never a traceback
        raise LaunchScriptError(f"{path}: nests too deeply to read") from e


def read_campaign(path: str) -> list[CampaignEntry]:
    """The scripts a campaign list (`nightly.txt`, `release.txt`, ...) names, in order."""
    list_path = Path(os.path.abspath(path))
    text = _read_text(list_path, path, what="a campaign list")
    root = list_path.parents[2] if len(list_path.parents) > 2 else list_path.parent
    entries: list[CampaignEntry] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"\s+#.*$", "", raw).strip()
        if not line or line.startswith("#"):
            continue
        target = root / line
        entries.append(CampaignEntry(path, number, line, str(target), _missing(target)))
    return entries


def suite_script_of(recipe: str) -> str | None:
    """The suite script upstream launches `recipe` with: `tests/test_suites/<family>/<name>.sh`
    beside `examples/configs/recipes/<family>/<name>.yaml`, kept only where reading it
    gives that recipe (or cannot tell); None where there is none."""
    found = _suite_of(recipe)
    return None if found is None else found[0]


def suite_launch_of(recipe: str) -> Launch | None:
    """The launch `suite_script_of(recipe)` describes, as read there."""
    found = _suite_of(recipe)
    return None if found is None else found[1]


def _suite_of(recipe: str) -> tuple[str, Launch] | None:
    resolved = Path(os.path.abspath(recipe))
    parts = resolved.parts
    for i in range(len(parts) - 3, -1, -1):
        if parts[i : i + 3] == ("examples", "configs", "recipes") and resolved.suffix == ".yaml":
            candidate = Path(*parts[:i], "tests", "test_suites", *parts[i + 3 :]).with_suffix(".sh")
            break
    else:
        return None
    if _missing(candidate) is not None:
        return None
    try:
        launch = read_launch_script(str(candidate))
    except LaunchScriptError:
        return None
    if launch.undecided is not None or _same_file(launch.config, str(resolved)):
        return str(candidate), launch
    return None


# ---------------------------------------------------------------- reading files


def _missing(path: Path) -> str | None:
    kind_of(path)  # whether a launch script is there is an input of the verdict
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "no such file"
    except (OSError, ValueError) as e:
        return os_reason(e) if isinstance(e, OSError) else "a bad file name"
    return None if stat.S_ISREG(info.st_mode) else "is not a regular file"


def _same_file(a: str, b: str) -> bool:
    return bool(a) and os.path.realpath(a) == os.path.realpath(b)


def _read_text(path: Path, shown: str, *, what: str) -> str:
    try:
        raw = read_regular(path, limit=MAX_SCRIPT_BYTES, what=what)
    except FileRefused as e:
        raise LaunchScriptError(f"{shown}: {e.reason}") from e
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LaunchScriptError(
            f"{shown}: is not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})"
        ) from e
    if "\x00" in text:
        raise LaunchScriptError(
            f"{shown}: holds a NUL byte (offset {text.index(chr(0))}): not a script"
        )
    return text.removeprefix("\ufeff")


# ---------------------------------------------------------------- the walk


@dataclass(frozen=True)
class _Command:
    """A training command as found: its words and the state it runs in."""

    entry: Value
    config: Value
    overrides: tuple[Value, ...]
    prefix: dict[str, Value]
    state: ShellState
    file: str
    line: int


class _Found(Exception):
    def __init__(self, command: _Command) -> None:
        super().__init__()
        self.command = command


class _Exit(Exception):
    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


class _Return(Exception):
    pass


@dataclass
class _Delegation:
    """A `bash SCRIPT` the walk followed: where, and the cluster shape the caller set."""

    file: str
    line: int
    target: str
    shape: dict[str, Value | None]


@dataclass
class _Reader:
    script: str
    opaque: str | None = None
    notes: list[str] = field(default_factory=list)
    reading: list[str] = field(default_factory=list)  # real paths of the files being read
    delegations: list[_Delegation] = field(default_factory=list)
    functions: dict[str, tuple[tuple[Statement, ...], str] | None] = field(default_factory=dict)
    bytes_read: int = 0
    top_lines: int = 1

    def __post_init__(self) -> None:
        path = Path(self.script)
        in_suites = path.parent.parent.name == "test_suites" and len(path.parents) > 3
        self.display_root = path.parents[3] if in_suites else path.parent

    def shown(self, path: str) -> str:
        try:
            return (
                os.path.relpath(path, self.display_root)
                if Path(path).is_relative_to(self.display_root)
                else path
            )
        except ValueError:
            return path

    # -- entry point

    def launch(self) -> Launch:
        state = ShellState(zero=self.script, sources=[self.script])
        shown = self.shown(self.script)
        ended: str | None = None
        try:
            self.run_file(self.script, state, where=None)
        except _Found as found:
            return self.assemble(found.command)
        except _Exit as e:
            ended = f"{e.where}: exits before any training command"
        last = self.top_lines
        reason = (
            self.opaque
            or ended
            or (
                f"{shown}:{last}: the script ends without a training command "
                "(`ENTRY.py --config ...`)"
            )
        )
        if self.notes:
            reason += "; " + "; ".join(self.notes)
        return Launch(config="", script=self.script, undecided=reason)

    def read(self, path: str, where: str | None) -> str:
        shown = self.shown(path)
        label = shown if where is None else f"{shown} (read at {where})"
        text = _read_text(Path(path), label, what="a launch script")
        self.bytes_read += len(text)
        if self.bytes_read > MAX_TOTAL_BYTES:
            raise LaunchScriptError(
                f"{label}: the launch reads over {MAX_TOTAL_BYTES} bytes of script"
            )
        return text

    def run_file(self, path: str, state: ShellState, *, where: str | None) -> None:
        """Walk one file in `state` (`where`: the line that reads it; None for the script)."""
        real = os.path.realpath(path)
        if real in self.reading:
            chain = " -> ".join(self.shown(p) for p in [*self.reading, real])
            raise LaunchScriptError(
                f"{where}: reads {self.shown(path)} again while reading it "
                f"(a `source`/`bash` loop: {chain})"
            )
        if len(self.reading) >= MAX_DEPTH:
            raise LaunchScriptError(f"{where}: `source`/`bash` nest deeper than {MAX_DEPTH} files")
        text = self.read(path, where)
        if where is None:
            self.top_lines = text.count("\n") or 1
        target = _git_symlink_target(text, path)
        if target is not None:  # what a checkout with symlinks would read
            self.reading.append(real)
            try:
                self.run_file(target, state, where=where)
                return
            finally:
                self.reading.pop()
        self.reading.append(real)
        shown = self.shown(path)
        try:
            for statement in statements(text):
                if isinstance(statement, Unparsed):
                    self.set_opaque(
                        f"{shown}:{statement.line}: {statement.why} (outside the "
                        "shell subset the reader interprets)"
                    )
                    return
                self.run_and_or(statement, state, shown)
        except _Return:
            pass
        finally:
            self.reading.pop()

    def set_opaque(self, reason: str) -> None:
        if self.opaque is None:
            self.opaque = reason

    # -- statements

    def run_list(self, body: tuple[Statement, ...], state: ShellState, shown: str) -> bool | None:
        status: bool | None = True
        for statement in body:
            if isinstance(statement, Unparsed):
                self.set_opaque(f"{shown}:{statement.line}: {statement.why}")
                return None
            status = self.run_and_or(statement, state, shown)
        return status

    def run_and_or(self, statement: AndOr, state: ShellState, shown: str) -> bool | None:
        status = self.run_pipeline(statement.first, state, shown)
        for op, pipeline in statement.rest:
            if status is None:
                self.uncertain(
                    (AndOr(pipeline, (), pipeline.line),),
                    state,
                    shown,
                    f"after `{op}`, under an outcome the reader cannot know",
                )
                status = None
            elif (op == "&&") == status:
                status = self.run_pipeline(pipeline, state, shown)
        return status

    def run_pipeline(self, pipeline: Pipeline, state: ShellState, shown: str) -> bool | None:
        if len(pipeline.commands) == 1:
            status = self.run_command(pipeline.commands[0], state, shown)
        else:  # each part runs in a subshell: it may launch, it cannot assign
            status = None
            for command in pipeline.commands:
                self.run_command(command, state.copy(), shown)
        return None if status is None else (status != pipeline.negated)

    def run_command(self, command: Command, state: ShellState, shown: str) -> bool | None:
        state.where = f"{shown}:{command.line}"
        if isinstance(command, Simple):
            return self.run_simple(command, state, shown)
        if isinstance(command, Conditional):
            try:
                return decide_test(command.words, state)
            except (ShellSyntaxError, ValueError):
                return None
        if isinstance(command, Subshell):
            self.run_list(command.body, state.copy(), shown)
            return None
        if isinstance(command, Group):
            return self.run_list(command.body, state, shown)
        if isinstance(command, If):
            return self.run_if(command, state, shown)
        if isinstance(command, Loop):
            self.uncertain(
                (*command.condition, *command.body),
                state,
                shown,
                f"in the `{command.kind}` loop at line {command.line}",
                loop_variable=command.name,
            )
            return None
        self.functions[command.name] = (command.body, f"{shown}:{command.line}")
        return True

    def run_if(self, command: If, state: ShellState, shown: str) -> bool | None:
        for index, (condition, body) in enumerate(command.branches):
            decided = self.run_list(condition, state, shown)
            if decided is True:
                return self.run_list(body, state, shown)
            if decided is None:
                rest: list[Statement] = list(body)
                for _, later in command.branches[index + 1 :]:
                    rest.extend(later)
                rest.extend(command.otherwise or ())
                self.uncertain(
                    tuple(rest),
                    state,
                    shown,
                    f"under the condition at line {command.line}, which the reader cannot decide",
                )
                return None
        if command.otherwise is not None:
            return self.run_list(command.otherwise, state, shown)
        return True

    # -- what a body that may or may not run could change

    def uncertain(
        self,
        body: tuple[Statement, ...],
        state: ShellState,
        shown: str,
        context: str,
        *,
        loop_variable: str | None = None,
        seen: frozenset[str] = frozenset(),
    ) -> None:
        if loop_variable is not None:
            state.variables[loop_variable] = Unknown(
                f"{state.where}: {loop_variable} is set {context}"
            )
        for statement in body:
            if isinstance(statement, Unparsed):
                self.set_opaque(f"{shown}:{statement.line}: {statement.why}")
                continue
            for pipeline in (statement.first, *(p for _, p in statement.rest)):
                for command in pipeline.commands:
                    self.uncertain_command(
                        command,
                        state,
                        shown,
                        context,
                        subshell=len(pipeline.commands) > 1,
                        seen=seen,
                    )

    def uncertain_command(
        self,
        command: Command,
        state: ShellState,
        shown: str,
        context: str,
        *,
        subshell: bool,
        seen: frozenset[str],
    ) -> None:
        where = f"{shown}:{command.line}"
        if isinstance(command, Subshell):
            self.uncertain_launches(command.body, shown, context)
            return
        if isinstance(command, Group):
            self.uncertain(command.body, state, shown, context, seen=seen)
            return
        if isinstance(command, If):
            body: list[Statement] = []
            for condition, branch in command.branches:
                body.extend(condition)
                body.extend(branch)
            body.extend(command.otherwise or ())
            self.uncertain(tuple(body), state, shown, context, seen=seen)
            return
        if isinstance(command, Loop):
            self.uncertain(
                (*command.condition, *command.body),
                state,
                shown,
                context,
                loop_variable=command.name,
                seen=seen,
            )
            return
        if isinstance(command, Function):
            self.functions[command.name] = None  # defined or not: a call is opaque
            return
        for word in command.words:  # `${NAME:=default}` assigns wherever it is expanded
            for name in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=", word.raw):
                state.variables[name] = Unknown(f"{where}: {name} is set {context}")
        if isinstance(command, Conditional):
            return
        if _looks_like_training(command.words):
            self.set_opaque(f"{where}: a training command runs {context}")
            return
        if subshell:
            return
        for assign in command.assigns if not command.words else ():
            name = assign.raw.split("=", 1)[0].removesuffix("+")
            state.variables[name] = Unknown(f"{where}: {name} is set {context}")
        if not command.words:
            return
        name = _literal(command.words[0])
        args = [_literal(w) for w in command.words[1:]]
        if name is None:
            self.set_opaque(f"{where}: runs a command named by a variable, {context}")
        elif name in _DECLARATIONS or name == "unset":
            for arg in args:
                if arg is None:
                    self.set_opaque(f"{where}: `{name}` of a computed name, {context}")
                elif not arg.startswith("-"):
                    variable = arg.split("=", 1)[0]
                    state.variables[variable] = Unknown(f"{where}: {variable} is set {context}")
                    if name == "export":
                        state.exported.add(variable)
        elif name in ("cd", "pushd", "popd"):
            state.cwd = Unknown(f"{where}: the directory changes {context}")
        elif name in ("source", ".", "bash", "sh", "exec", "set") or name in _OPAQUE_BUILTINS:
            if name == "set" and all(a is not None and a != "--" for a in args):
                return
            self.set_opaque(f"{where}: `{name}` runs {context}")
        elif name in self.functions:
            definition = self.functions[name]
            if definition is None or name in seen:
                self.set_opaque(
                    f"{where}: calls `{name}`, which the reader cannot follow, {context}"
                )
            else:
                self.uncertain(
                    definition[0],
                    state,
                    shown,
                    f"by `{name}` (defined at {definition[1]})",
                    seen=seen | {name},
                )

    def uncertain_launches(self, body: tuple[Statement, ...], shown: str, context: str) -> None:
        """A subshell that may run: it cannot assign here, it may still launch."""
        for statement in body:
            if isinstance(statement, Unparsed):
                self.set_opaque(f"{shown}:{statement.line}: {statement.why}")
                continue
            for pipeline in (statement.first, *(p for _, p in statement.rest)):
                for command in pipeline.commands:
                    if isinstance(command, Simple) and (
                        _looks_like_training(command.words)
                        or _literal(command.words[0] if command.words else Word("", 0))
                        in ("bash", "sh")
                    ):
                        self.set_opaque(
                            f"{shown}:{command.line}: a training command may run {context}"
                        )

    # -- simple commands

    def run_simple(self, command: Simple, state: ShellState, shown: str) -> bool | None:
        where = state.where
        if not command.words:
            for assign in command.assigns:
                self.assign(assign, state)
            return True
        prefix = {a.raw.split("=", 1)[0]: self.assignment_value(a, state) for a in command.assigns}
        args = [value for word in command.words for value in self.fields(word, state)]
        if not args:
            return True
        head = args[0]
        if isinstance(head, Unknown) or head.inputs:
            if _looks_like_training(command.words):
                self.found(args, prefix, state, command)
            self.set_opaque(
                head.why
                if isinstance(head, Unknown)
                else f"{where}: runs a program named by the caller's ${sorted(head.inputs)[0]}"
            )
            return None
        name = head.text
        if name in _DECLARATIONS:
            return self.declare(name, command, state)
        if name == "unset":
            for arg in args[1:]:
                if isinstance(arg, Text) and arg.text == "-f":
                    continue
                if isinstance(arg, Text):
                    state.variables.pop(arg.text, None)
                    state.exported.discard(arg.text)
                    self.functions.pop(arg.text, None)
            return True
        if name in ("source", "."):
            return self.source(args, state, shown, command.line)
        if name == "cd":
            return self.change_directory(args[1:], state)
        if name in ("bash", "sh"):
            return self.delegate(args, state, shown, command.line)
        if name in _FIXED_STATUS:
            return _FIXED_STATUS[name]
        if name == "exit":
            raise _Exit(where)
        if name == "return":
            raise _Return
        if name == "exec":
            if len(args) > 1:
                if _runs_script(args[1]):
                    self.delegate([Text("bash"), *args[1:]], state, shown, command.line)
                self.found_if_training(args[1:], prefix, state, command)
                raise _Exit(where)
            return True
        if _runs_script(head):  # `./x.sh`: bash runs it by its `#!` line
            return self.delegate([Text("bash"), *args], state, shown, command.line)
        if name == "set":
            texts = [a.text if isinstance(a, Text) else None for a in args[1:]]
            if "--" in texts:
                state.positional = list(args[2 + texts.index("--") :])
            return True
        if name == "shift":
            state.positional = state.positional[1:]
            return True
        if name in _OPAQUE_BUILTINS or (
            name == "printf" and any(isinstance(a, Text) and a.text == "-v" for a in args)
        ):
            self.set_opaque(f"{where}: `{name}` could change any variable")
            return None
        if name in self.functions:
            definition = self.functions[name]
            if definition is None:
                self.set_opaque(f"{where}: calls `{name}`, which may or may not be defined")
                return None
            self.uncertain(
                definition[0],
                state,
                shown,
                f"by `{name}` (defined at {definition[1]})",
                seen=frozenset({name}),
            )
            return None
        self.found_if_training(args, prefix, state, command)
        return None  # a program: its outcome is not known, it cannot assign here

    def fields(self, word: Word, state: ShellState) -> list[Value]:
        try:
            return expand_fields(word, state)
        except (ShellSyntaxError, ValueError) as e:
            return [Unknown(f"{state.where}: `{word.raw}` is not read ({e})")]

    def assignment_value(self, assign: Word, state: ShellState) -> Value:
        name, _, rhs = assign.raw.partition("=")
        if rhs.startswith("("):
            return Unknown(f"{state.where}: {name.removesuffix('+')} is an array")
        try:
            value = expand_string(rhs, state)
        except (ShellSyntaxError, ValueError) as e:
            return Unknown(f"{state.where}: `{assign.raw}` is not read ({e})")
        if name.endswith("+"):
            before = state.variables.get(name[:-1], Text(""))
            if isinstance(before, Unknown) or isinstance(value, Unknown):
                return before if isinstance(before, Unknown) else value
            return Text(before.text + value.text, before.inputs | value.inputs)
        return value

    def assign(self, assign: Word, state: ShellState) -> None:
        name = assign.raw.split("=", 1)[0].removesuffix("+")
        state.variables[name] = self.assignment_value(assign, state)

    def declare(self, name: str, command: Simple, state: ShellState) -> bool | None:
        exporting = name == "export"
        for word in command.words[1:]:
            raw = word.raw
            if raw.startswith("-"):
                flags = raw[1:]
                if name == "export" and flags in ("", "-"):
                    continue
                if flags and set(flags) <= set("xr") and name != "export":
                    exporting = exporting or "x" in flags
                    continue
                self.set_opaque(f"{state.where}: `{name} {raw}` is not interpreted")
                return None
            if "=" in raw and raw.split("=", 1)[0].removesuffix("+").isidentifier():
                variable = raw.split("=", 1)[0].removesuffix("+")
                state.variables[variable] = self.assignment_value(word, state)
            elif raw.isidentifier():
                variable = raw
            else:
                self.set_opaque(f"{state.where}: `{name} {raw}` names a computed variable")
                return None
            if exporting:
                state.exported.add(variable)
        return True

    def change_directory(self, args: list[Value], state: ShellState) -> bool | None:
        operands = [a for a in args if not (isinstance(a, Text) and a.text in ("--", "-P", "-L"))]
        if not operands:
            state.oldpwd, state.cwd = (
                state.cwd,
                Unknown(f"{state.where}: `cd` to the caller's $HOME"),
            )
            return None
        target = operands[0]
        if isinstance(target, Text) and target.text == "-":
            state.cwd, state.oldpwd = state.oldpwd, state.cwd
            return True
        if isinstance(target, Unknown):
            state.oldpwd, state.cwd = state.cwd, target
            return None
        if target.inputs:
            state.oldpwd, state.cwd = (
                state.cwd,
                Unknown(f"{state.where}: `cd` into the caller's ${sorted(target.inputs)[0]}"),
            )
            return None
        path = target.text
        if not os.path.isabs(path):
            if isinstance(state.cwd, Unknown):
                state.oldpwd = state.cwd
                return None
            path = os.path.join(state.cwd.text, path)
        state.oldpwd, state.cwd = state.cwd, Text(os.path.normpath(path))
        # Lexical, as bash's logical `cd`; its status is known where the folder is there.
        return True if kind_of(path) == FOLDER else None

    def resolve(self, value: Value, state: ShellState, what: str) -> str | Unknown:
        if isinstance(value, Unknown):
            return value
        if value.inputs:
            return Unknown(
                f"{state.where}: {what} comes from the caller's ${sorted(value.inputs)[0]}"
            )
        if os.path.isabs(value.text):
            return os.path.normpath(value.text)
        if isinstance(state.cwd, Unknown):
            if _LOCATED.match(state.cwd.why):
                return Unknown(
                    f"{state.cwd.why} ({what} `{value.text}` at {state.where} is "
                    "relative to that directory)"
                )
            return Unknown(
                f"{state.where}: {what} `{value.text}` is relative to the caller's "
                "directory (no `cd` before it)"
            )
        return os.path.normpath(os.path.join(state.cwd.text, value.text))

    def source(self, args: list[Value], state: ShellState, shown: str, line: int) -> bool | None:
        where = state.where
        if len(args) < 2:
            return True
        path = self.resolve(args[1], state, "the sourced file")
        if isinstance(path, Unknown):
            self.set_opaque(f"{where}: sources a file the reader cannot name ({path.why})")
            return None
        saved_positional = state.positional
        if len(args) > 2:
            state.positional = list(args[2:])
        state.sources.insert(0, path)
        try:
            self.run_file(path, state, where=where)
        finally:
            state.sources.pop(0)
            state.positional = saved_positional
            state.where = where
        return True

    def delegate(self, args: list[Value], state: ShellState, shown: str, line: int) -> bool | None:
        where = state.where
        rest = list(args[1:])
        while rest and isinstance(rest[0], Text) and rest[0].text.startswith("-"):
            if rest[0].text in ("-c", "-s", "-i"):
                self.notes.append(
                    f"{where} runs `bash {rest[0].text} ...`, which the reader does not follow"
                )
                return None
            rest.pop(0)
        if not rest:
            return None
        path = self.resolve(rest[0], state, "the script it runs")
        if isinstance(path, Unknown):
            self.set_opaque(f"{where}: runs a script the reader cannot name ({path.why})")
            return None
        missing = _missing(Path(path))
        if missing is not None:
            self.notes.append(
                f"{where} runs {self.shown(path)}, which "
                + missing.replace("no such file", "does not exist")
            )
            return None
        child = ShellState(
            variables={n: v for n, v in state.variables.items() if n in state.exported},
            exported=set(state.exported),
            cwd=state.cwd,
            oldpwd=state.oldpwd,
            positional=list(rest[1:]),
            zero=path,
            sources=[path],
        )
        self.delegations.append(
            _Delegation(shown, line, path, {k: state.variables.get(k) for k in _CLUSTER_SHAPE})
        )
        saved_functions = self.functions
        self.functions = {}
        try:
            self.run_file(path, child, where=where)
        except _Exit:
            pass
        finally:
            self.functions = saved_functions
            state.where = where
        self.delegations.pop()
        return None

    # -- the training command

    def found_if_training(
        self, args: list[Value], prefix: dict[str, Value], state: ShellState, command: Simple
    ) -> None:
        texts = [a.text if isinstance(a, Text) else "" for a in args]
        if any(t == "--config" or t.startswith("--config=") for t in texts):
            self.found(args, prefix, state, command)

    def found(
        self, args: list[Value], prefix: dict[str, Value], state: ShellState, command: Simple
    ) -> None:
        where = state.where
        i = 0
        texts = [a.text if isinstance(a, Text) else None for a in args]
        if texts[:2] == ["uv", "run"]:
            i = 2
            while i < len(texts) and (texts[i] or "").startswith("-"):
                i += 2 if texts[i] in _UV_VALUE_OPTIONS else 1
        if (
            i < len(texts)
            and texts[i] is not None
            and _PYTHON.fullmatch(os.path.basename(texts[i] or ""))
        ):
            i += 1
            while i < len(texts) and (texts[i] or "").startswith("-") and texts[i] != "-m":
                i += 2 if texts[i] in ("-X", "-W") else 1
        entry: Value
        if i >= len(args):
            entry = Unknown(f"{where}: a command given `--config` names no entry script")
        elif texts[i] == "-m":
            entry = Unknown(f"{where}: runs a module (`-m`), not an entry script")
            i += 1
        elif isinstance(args[i], Text) and not (texts[i] or "").endswith(".py"):
            entry = Unknown(f"{where}: runs `{texts[i]}`, not a Python entry script")
        else:
            entry = args[i]
        config: Value = Unknown(f"{where}: `--config` without a value")
        overrides: list[Value] = []
        rest = args[i + 1 :]
        j = 0
        while j < len(rest):
            value = rest[j]
            text = value.text if isinstance(value, Text) else None
            if text == "--config" and j + 1 < len(rest):
                config = rest[j + 1]
                j += 2
                continue
            if text is not None and text.startswith("--config="):
                config = Text(
                    text.removeprefix("--config="),
                    value.inputs if isinstance(value, Text) else frozenset(),
                )
            else:
                overrides.append(value)
            j += 1
        raise _Found(
            _Command(
                entry,
                config,
                tuple(overrides),
                prefix,
                state.copy(),
                where.rsplit(":", 1)[0],
                command.line,
            )
        )

    def assemble(self, command: _Command) -> Launch:
        state = command.state
        problems: list[str] = []
        if self.opaque is not None:
            problems.append(self.opaque)
        entry = self.resolve(command.entry, state, "the entry script")
        config = self.resolve(command.config, state, "the recipe")
        for path in (entry, config):
            if isinstance(path, Unknown):
                problems.append(_located(path.why, state.where))
        overrides: list[str] = []
        inputs: set[str] = set()
        for value in command.overrides:
            if isinstance(value, Unknown):
                problems.append(_located(value.why, state.where))
                continue
            overrides.append(value.text)
            inputs |= value.inputs
        environ: dict[str, str] = {}
        exported = {n: state.variables[n] for n in sorted(state.exported) if n in state.variables}
        for name, value in {**exported, **command.prefix}.items():
            if isinstance(value, Unknown):
                problems.append(_located(value.why, state.where) + f" (exported as {name})")
                continue
            environ[name] = value.text
            inputs |= value.inputs
        shape: dict[str, int | None] = {}
        for key in _CLUSTER_SHAPE:
            chosen = next(
                (d.shape[key] for d in self.delegations if d.shape[key] is not None),
                state.variables.get(key),
            )
            shape[key] = None
            if isinstance(chosen, Unknown):
                problems.append(_located(chosen.why, state.where) + f" (sets {key})")
            elif chosen is not None and chosen.inputs:
                problems.append(
                    f"{state.where}: {key} comes from the caller's ${sorted(chosen.inputs)[0]}"
                )
            elif chosen is not None and re.fullmatch(r"\s*\d{1,9}\s*", chosen.text):
                shape[key] = int(chosen.text)
        through = "".join(
            f" through {self.shown(d.target)} (`bash` at line {d.line})" for d in self.delegations
        )
        why = f"{self.shown(self.script)} runs it{through}" + (
            f"; the command is at {command.file}:{command.line}"
            if through
            else f" (line {command.line})"
        )
        return Launch(
            config=config if isinstance(config, str) else "",
            overrides=tuple(overrides),
            entry=entry if isinstance(entry, str) else None,
            entry_why=why,
            environ=environ,
            num_nodes=shape["NUM_NODES"],
            gpus_per_node=shape["GPUS_PER_NODE"],
            script=self.script,
            undecided=problems[0] if problems else None,
            caller_inputs=tuple(sorted(inputs)),
        )


def _runs_script(value: Value) -> bool:
    """Whether a command word names a shell script to run (`./x.sh`, `$SCRIPT_DIR/x.sh`)."""
    return isinstance(value, Text) and "/" in value.text and value.text.endswith(".sh")


def _git_symlink_target(text: str, path: str) -> str | None:
    """The file a git symlink points to, where the tree holds it as git writes one without
    symlink support: the relative target path alone, no newline, naming a regular file."""
    if not text or "\n" in text or not re.fullmatch(r"[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)+", text):
        return None
    target = os.path.normpath(os.path.join(os.path.dirname(path), text))
    return target if _missing(Path(target)) is None else None


def _located(why: str, where: str) -> str:
    """`why` as `FILE:LINE: ...`, with the training command's place where it has none."""
    return why if _LOCATED.match(why) else f"{where}: {why}"


_LOCATED = re.compile(r"[^\s:][^:]*:\d+: ")


def _literal(word: Word) -> str | None:
    """A word's text where it has no expansion (quotes removed), else None."""
    raw = word.raw
    if "$" in raw or "`" in raw:
        return None
    if re.fullmatch(r"[A-Za-z0-9_./:=+,@%-]*", raw):
        return raw
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and raw[0] not in raw[1:-1]:
        return raw[1:-1]
    return None


def _looks_like_training(words: tuple[Word, ...]) -> bool:
    return any(w.raw == "--config" or w.raw.startswith("--config=") for w in words)
