"""What a launch script's words mean: expansion of the bounded shell subset, as data.

A value is known text or `Unknown` (with the `FILE:LINE: why` of the construct the reader
does not interpret). Known text may hold references to the caller's environment: a
variable the scripts read, never set and give no default (`$NRL_DEEPSCALER_8K_CKPT`) stays
as `$NAME` in the text and is named in `inputs`. A variable read with a default
(`${TEST_DRYRUN:-}`) is taken as unset: the launch described is the standard one, run the
way upstream's CI runs it.

Interpreted here: `$NAME`, `${NAME}` and its `:-`/`-`/`:=`/`=`/`:+`/`+`/`#`/`%` forms,
`${#NAME}`, `${BASH_SOURCE[N]}`, quoting, `$(( arithmetic ))`, and `$( ... )` whose
commands are `echo`, `basename`, `dirname`, `realpath`, `pwd`, `cd` and `sed s///`
(the `SCRIPT_DIR` idiom and `common.env`'s `CONFIG_PATH` derivation are these). Anything
else is `Unknown`, never a guess. `[[ ... ]]` tests are decided where their operands are
known and the test does not ask about the file system.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from nemo_rl_workers.reading.recorded_reads import FOLDER, kind_of
from nemo_rl_workers.tree.shell_syntax import (
    AndOr,
    Pipeline,
    ShellSyntaxError,
    Simple,
    Unparsed,
    Word,
    balanced_end,
    parse_all,
)

MAX_VALUE_CHARS = 64 * 1024
"""A value longer than this is not part of a launch; it becomes Unknown."""
MAX_SUBSTITUTION_DEPTH = 8
MAX_PATTERN_CHARS = 256
MAX_TEST_WORDS = 256
"""A `[[ ... ]]` with more words than this is not decided (upstream's longest has 7)."""


@dataclass(frozen=True)
class Unknown:
    """A value the reader cannot know; `why` is `FILE:LINE: why`."""

    why: str


@dataclass(frozen=True)
class Text:
    text: str
    inputs: frozenset[str] = frozenset()


Value = Text | Unknown


@dataclass
class ShellState:
    """The variables, directory and files of one shell process, as far as they are known."""

    variables: dict[str, Value] = field(default_factory=dict)
    exported: set[str] = field(default_factory=set)
    cwd: Value = field(default_factory=lambda: Unknown("the caller's directory"))
    oldpwd: Value = field(default_factory=lambda: Unknown("no previous directory"))
    positional: list[Value] = field(default_factory=list)
    zero: str = ""
    sources: list[str] = field(default_factory=list)  # BASH_SOURCE, innermost first
    where: str = ""  # "FILE:LINE" of the command being read, for reasons
    substitution_depth: int = 0

    def copy(self) -> ShellState:
        return replace(
            self,
            variables=dict(self.variables),
            exported=set(self.exported),
            positional=list(self.positional),
            sources=list(self.sources),
        )

    def unknown(self, why: str) -> Unknown:
        return Unknown(f"{self.where}: {why}")


# ---------------------------------------------------------------- expansion


@dataclass
class _Pieces:
    """A word being expanded: (text, quoted) pieces, the caller inputs they read."""

    pieces: list[tuple[str, bool]] = field(default_factory=list)
    inputs: set[str] = field(default_factory=set)
    unknown: Unknown | None = None
    vanished: bool = False  # the word was only `$@`/`"$@"` with no positional parameters

    def add(self, value: Value, quoted: bool) -> None:
        if isinstance(value, Unknown):
            self.unknown = self.unknown or value
            return
        self.pieces.append((value.text, quoted))
        self.inputs |= value.inputs

    def text(self) -> str:
        return "".join(text for text, _ in self.pieces)

    def value(self) -> Value:
        if self.unknown is not None:
            return self.unknown
        text = self.text()
        if len(text) > MAX_VALUE_CHARS:
            return Unknown(f"a value over {MAX_VALUE_CHARS} characters")
        return Text(text, frozenset(self.inputs))


def expand_string(word: Word | str, state: ShellState) -> Value:
    """The word's value without field splitting (an assignment's right-hand side)."""
    return _expand(_raw(word), state).value()


def expand_fields(word: Word, state: ShellState) -> list[Value]:
    """The fields a command word expands to: unquoted expansions split on blanks."""
    pieces = _expand(word.raw, state)
    if pieces.unknown is not None:
        return [pieces.unknown]
    if pieces.vanished:
        return []
    fields: list[str] = []
    current: list[str] = []
    started = False
    for text, quoted in pieces.pieces:
        if quoted:
            current.append(text)
            started = True
            continue
        parts = re.split(r"[ \t\n]+", text)
        for i, part in enumerate(parts):
            if i > 0:
                if started:
                    fields.append("".join(current))
                current, started = [], False
            if part:
                current.append(part)
                started = True
    if started:
        fields.append("".join(current))
    inputs = frozenset(pieces.inputs)
    return [Text(f, frozenset(n for n in inputs if f"${n}" in f) or frozenset()) for f in fields]


def _raw(word: Word | str) -> str:
    return word.raw if isinstance(word, Word) else word


def _expand(raw: str, state: ShellState, *, in_double: bool = False) -> _Pieces:
    out = _Pieces()
    i = 0
    if raw in _ALL_POSITIONAL and not state.positional:
        out.vanished = True
        return out
    while i < len(raw):
        c = raw[i]
        if c == "'" and not in_double:
            end = raw.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError(0, "an unterminated single quote")
            out.add(Text(raw[i + 1 : end]), True)
            i = end + 1
        elif c == '"' and not in_double:
            end = _double_end(raw, i + 1)
            inner = _expand(raw[i + 1 : end], state, in_double=True)
            _merge(out, inner, quoted=True)
            i = end + 1
        elif c == "\\":
            nxt = raw[i + 1 : i + 2]
            if nxt == "\n":
                i += 2
                continue
            if in_double and nxt not in ("$", "`", '"', "\\"):
                out.add(Text("\\"), True)
                i += 1
                continue
            out.add(Text(nxt), True)
            i += 2
        elif c == "$":
            i = _dollar(raw, i, state, out, quoted=in_double)
        else:
            stops = "\\$" if in_double else "'\"\\$"
            j = i + 1
            while j < len(raw) and raw[j] not in stops:
                j += 1
            out.add(Text(raw[i:j]), in_double)
            i = j
    return out


_ALL_POSITIONAL = ("$@", '"$@"', "${@}", '"${@}"', "$*", '"$*"', "${*}", '"${*}"')


def _double_end(raw: str, i: int) -> int:
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i
        if c == "$" and raw[i + 1 : i + 2] in ("(", "{"):
            i = balanced_end(raw, i + 2, ")" if raw[i + 1] == "(" else "}")
            continue
        i += 1
    raise ShellSyntaxError(0, "an unterminated double quote")


def _merge(out: _Pieces, inner: _Pieces, *, quoted: bool) -> None:
    if inner.unknown is not None:
        out.unknown = out.unknown or inner.unknown
    out.pieces.extend((text, quoted or q) for text, q in inner.pieces)
    out.inputs |= inner.inputs


_SPECIAL = "@*#?$!-0123456789"


def _dollar(raw: str, i: int, state: ShellState, out: _Pieces, *, quoted: bool) -> int:
    rest = raw[i + 1 :]
    if rest.startswith("(("):
        end = _arith_end(raw, i + 3)
        out.add(arithmetic(raw[i + 3 : end], state), quoted)
        return end + 2
    if rest.startswith("("):
        end = balanced_end(raw, i + 2, ")")
        out.add(substitute(raw[i + 2 : end - 1], state), quoted)
        return end
    if rest.startswith("{"):
        end = balanced_end(raw, i + 2, "}")
        out.add(_parameter(raw[i + 2 : end - 1], state), quoted)
        return end
    m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", rest)
    if m:
        out.add(_plain(m.group(0), state), quoted)
        return i + 1 + m.end()
    if rest[:1] and rest[0] in _SPECIAL:
        out.add(_plain(rest[0], state), quoted)
        return i + 2
    out.add(Text("$"), quoted)
    return i + 1


def _arith_end(raw: str, i: int) -> int:
    level = 0
    while i < len(raw):
        if raw[i] == "(":
            level += 1
        elif raw[i] == ")":
            if level == 0 and raw[i + 1 : i + 2] == ")":
                return i
            level -= 1
        i += 1
    raise ShellSyntaxError(0, "an unterminated `$((`")


def lookup(name: str, state: ShellState) -> Value | None:
    """A variable's value; None where it is unset."""
    if name in state.variables:
        return state.variables[name]
    if name == "0":
        return Text(state.zero)
    if name.isdigit():
        index = int(name) - 1
        return state.positional[index] if index < len(state.positional) else None
    if name == "#":
        return Text(str(len(state.positional)))
    if name in ("@", "*"):
        parts = state.positional
        if any(isinstance(p, Unknown) for p in parts):
            return next(p for p in parts if isinstance(p, Unknown))
        return Text(" ".join(p.text for p in parts if isinstance(p, Text)))
    m = re.fullmatch(r"BASH_SOURCE(?:\[(\d+)\])?", name)
    if m:
        index = int(m.group(1) or 0)
        return Text(state.sources[index]) if index < len(state.sources) else None
    if name in ("?", "$", "!", "-", "RANDOM", "LINENO", "SECONDS", "PPID"):
        return state.unknown(f"`${name}` is known only when the script runs")
    return None


def _plain(name: str, state: ShellState) -> Value:
    value = lookup(name, state)
    if value is not None:
        return value
    if name.isdigit() or name in _SPECIAL:
        return Text("")
    return Text(f"${name}", frozenset({name}))  # the caller's, required (`set -u`)


_PARAM = re.compile(
    r"(?P<len>#)?(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?|[@*#?$!0-9])"
    r"(?P<op>:-|:=|:\+|:\?|-|=|\+|\?|##|#|%%|%)?(?P<word>.*)",
    re.S,
)


def _parameter(body: str, state: ShellState) -> Value:
    m = _PARAM.fullmatch(body)
    if m is None or (m.group("op") is None and m.group("word")):
        return state.unknown(
            f"`${{{body}}}` is a parameter expansion the reader does not interpret"
        )
    name, op, word = m.group("name"), m.group("op"), m.group("word")
    value = lookup(name, state)
    if m.group("len"):
        if op is not None:
            return state.unknown(f"`${{{body}}}` is not a parameter expansion the reader knows")
        if isinstance(value, Unknown):
            return value
        if value is not None and value.inputs:
            return state.unknown(f"`${{{body}}}` measures the caller's ${next(iter(value.inputs))}")
        return Text(str(len(value.text) if value else 0))
    if op is None:
        return value if value is not None else _plain(name, state)
    if isinstance(value, Unknown):
        return value
    is_set = value is not None
    is_null = value is None or (not value.inputs and value.text == "")
    if value is not None and value.inputs and op in (":-", ":=", ":+", ":?"):
        return state.unknown(
            f"`${{{body}}}` depends on whether the caller's ${next(iter(value.inputs))} is empty"
        )
    if op in (":-", "-"):
        use_default = is_null if op == ":-" else not is_set
        return _expand(word, state).value() if use_default else value or Text("")
    if op in (":=", "="):
        assign = is_null if op == ":=" else not is_set
        if not assign:
            return value or Text("")
        default = _expand(word, state).value()
        if "[" in name:
            return state.unknown(f"`${{{body}}}` assigns an array element")
        state.variables[name] = default
        return default
    if op in (":+", "+"):
        use_alt = not is_null if op == ":+" else is_set
        return _expand(word, state).value() if use_alt else Text("")
    if op in (":?", "?"):
        return value or state.unknown(f"`${{{body}}}` stops the script where {name} is unset")
    # `#`, `##`, `%`, `%%`: only a literal pattern is decided
    pattern = _expand(word, state).value()
    if not isinstance(pattern, Text) or pattern.inputs or any(ch in pattern.text for ch in "*?["):
        return state.unknown(f"`${{{body}}}` removes a pattern the reader does not interpret")
    text = value.text if value is not None else ""
    if value is not None and value.inputs:
        return state.unknown(f"`${{{body}}}` edits the caller's ${next(iter(value.inputs))}")
    if op.startswith("#"):
        return Text(text.removeprefix(pattern.text))
    return Text(text.removesuffix(pattern.text))


# ---------------------------------------------------------------- arithmetic

_ARITH_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)|([A-Za-z_][A-Za-z0-9_]*)|(\*\*|<=|>=|==|!=|&&|\|\||[-+*/%()<>!]))"
)
_LIMIT = 2**63


def arithmetic(expression: str, state: ShellState) -> Value:
    """`$(( expression ))`: integers, variables, + - * / % **, comparisons, && ||."""
    expanded = _expand(expression, state, in_double=True).value()
    if isinstance(expanded, Unknown):
        return expanded
    if expanded.inputs:
        return state.unknown(
            f"`$(({expression}))` reads the caller's ${next(iter(expanded.inputs))}"
        )
    tokens: list[str] = []
    pos = 0
    text = expanded.text
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _ARITH_TOKEN.match(text, pos)
        if m is None:
            return state.unknown(f"`$(({expression}))` is arithmetic the reader does not interpret")
        tokens.append(m.group(m.lastindex or 0))
        pos = m.end()
    try:
        result, rest = _arith_or(tokens, state)
    except _ArithUnknown as e:
        return state.unknown(f"`$(({expression}))`: {e}")
    if rest:
        return state.unknown(f"`$(({expression}))` is arithmetic the reader does not interpret")
    return Text(str(result))


class _ArithUnknown(Exception):
    pass


def _bounded(n: int) -> int:
    if not -_LIMIT <= n < _LIMIT:
        raise _ArithUnknown("overflows 64 bits")
    return n


def _arith_or(t: list[str], state: ShellState) -> tuple[int, list[str]]:
    left, t = _arith_and(t, state)
    while t[:1] == ["||"]:
        right, t = _arith_and(t[1:], state)
        left = int(bool(left) or bool(right))
    return left, t


def _arith_and(t: list[str], state: ShellState) -> tuple[int, list[str]]:
    left, t = _arith_compare(t, state)
    while t[:1] == ["&&"]:
        right, t = _arith_compare(t[1:], state)
        left = int(bool(left) and bool(right))
    return left, t


_COMPARE = {
    "<": int.__lt__,
    "<=": int.__le__,
    ">": int.__gt__,
    ">=": int.__ge__,
    "==": int.__eq__,
    "!=": int.__ne__,
}


def _arith_compare(t: list[str], state: ShellState) -> tuple[int, list[str]]:
    left, t = _arith_sum(t, state)
    while t[:1] and t[0] in _COMPARE:
        op = t[0]
        right, t = _arith_sum(t[1:], state)
        left = int(_COMPARE[op](left, right))
    return left, t


def _arith_sum(t: list[str], state: ShellState) -> tuple[int, list[str]]:
    left, t = _arith_product(t, state)
    while t[:1] and t[0] in ("+", "-"):
        op = t[0]
        right, t = _arith_product(t[1:], state)
        left = _bounded(left + right if op == "+" else left - right)
    return left, t


def _arith_product(t: list[str], state: ShellState) -> tuple[int, list[str]]:
    left, t = _arith_power(t, state)
    while t[:1] and t[0] in ("*", "/", "%"):
        op = t[0]
        right, t = _arith_power(t[1:], state)
        if op == "*":
            left = _bounded(left * right)
        elif right == 0:
            raise _ArithUnknown("divides by zero")
        else:
            quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)
            left = quotient if op == "/" else left - right * quotient
    return left, t


def _arith_power(t: list[str], state: ShellState) -> tuple[int, list[str]]:
    base, t = _arith_unary(t, state)
    if t[:1] == ["**"]:
        exponent, t = _arith_power(t[1:], state)
        if exponent < 0 or exponent > 64:
            raise _ArithUnknown("an exponent outside 0..64")
        return _bounded(base**exponent), t
    return base, t


def _arith_unary(t: list[str], state: ShellState) -> tuple[int, list[str]]:
    if not t:
        raise _ArithUnknown("ends early")
    head = t[0]
    if head in ("+", "-", "!"):
        value, rest = _arith_unary(t[1:], state)
        return {"+": value, "-": -value, "!": int(not value)}[head], rest
    if head == "(":
        value, rest = _arith_or(t[1:], state)
        if rest[:1] != [")"]:
            raise _ArithUnknown("an unbalanced parenthesis")
        return value, rest[1:]
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", head):
        return _bounded(int(head, 16)), t[1:]
    if head.isdigit():
        if len(head) > 1 and head.startswith("0"):
            raise _ArithUnknown(f"`{head}` is octal")
        return _bounded(int(head)), t[1:]
    if head.isidentifier():
        variable = lookup(head, state)
        if variable is None:
            return 0, t[1:]
        if isinstance(variable, Unknown):
            raise _ArithUnknown(variable.why)
        if variable.inputs or not re.fullmatch(r"\s*-?\d{1,19}\s*", variable.text):
            raise _ArithUnknown(f"{head} is not a known integer")
        return _bounded(int(variable.text)), t[1:]
    raise _ArithUnknown(f"`{head}` where a number belongs")


# ---------------------------------------------------------------- $( ... )


def substitute(body: str, state: ShellState) -> Value:
    """The output of `$( body )`, where its commands are the few the reader interprets."""
    if state.substitution_depth >= MAX_SUBSTITUTION_DEPTH:
        return state.unknown("command substitutions nest too deeply")
    sub = state.copy()
    sub.substitution_depth += 1
    output: list[str] = []
    for statement in parse_all(body):
        if isinstance(statement, Unparsed):
            return state.unknown(f"`$({body.strip()})` holds {statement.why}")
        _, text = _run_and_or(statement, sub)  # `$( )` yields its output, whatever its status
        if isinstance(text, Unknown):
            return text
        output.append(text)
    return Text("".join(output).rstrip("\n"))


def _run_and_or(statement: AndOr, state: ShellState) -> tuple[bool | None, str | Unknown]:
    status, out = _run_pipeline(statement.first, state)
    output = [out]
    for op, pipeline in statement.rest:
        if isinstance(output[-1], Unknown):
            return None, output[-1]
        if status is None:
            return None, state.unknown(f"`{op}` after a command whose outcome is not known")
        if (op == "&&") != status:
            continue
        status, out = _run_pipeline(pipeline, state)
        output.append(out)
    if any(isinstance(o, Unknown) for o in output):
        return status, next(o for o in output if isinstance(o, Unknown))
    return status, "".join(o for o in output if isinstance(o, str))


def _run_pipeline(pipeline: Pipeline, state: ShellState) -> tuple[bool | None, str | Unknown]:
    stdin: str | None = None
    status: bool | None = True
    for command in pipeline.commands:
        if not isinstance(command, Simple) or command.assigns:
            return None, state.unknown("a `$( ... )` holding more than simple commands")
        status, out = _run_simple(command, state, stdin)
        if isinstance(out, Unknown):
            return status, out
        stdin = out
    if pipeline.negated and status is not None:
        status = not status
    return status, stdin or ""


def _run_simple(
    command: Simple, state: ShellState, stdin: str | None
) -> tuple[bool | None, str | Unknown]:
    args: list[str] = []
    for word in command.words:
        for value in expand_fields(word, state):
            if isinstance(value, Unknown):
                return None, value
            if value.inputs:
                return None, state.unknown(
                    f"`$({_raw_command(command)})` reads the caller's ${sorted(value.inputs)[0]}"
                )
            args.append(value.text)
    discard = False
    for redirect in command.redirects:
        target = redirect.target.raw if redirect.target else ""
        if redirect.op in ("2>&1", ">&2", "2>") or (redirect.op == "2>" and target == "/dev/null"):
            continue
        if redirect.op in (">", "&>", "1>") and target == "/dev/null":
            discard = True
            continue
        return None, state.unknown(f"`$({_raw_command(command)})` redirects `{redirect.op}`")
    if not args:
        return True, ""
    program = _BUILTINS.get(args[0])
    if program is None:
        return None, state.unknown(
            f"`$({_raw_command(command)})` runs `{args[0]}`, which the reader does not interpret"
        )
    status, out = program(args[1:], state, stdin)
    if discard and isinstance(out, str):
        out = ""
    return status, out


def _raw_command(command: Simple) -> str:
    text = " ".join(w.raw for w in command.words)
    return text if len(text) <= 80 else text[:77] + "..."


def _path(arg: str, state: ShellState) -> str | Unknown:
    if os.path.isabs(arg):
        return os.path.normpath(arg)
    if isinstance(state.cwd, Unknown) or state.cwd.inputs:
        return state.unknown(f"`{arg}` is relative to the caller's directory")
    return os.path.normpath(os.path.join(state.cwd.text, arg))


def _operands(args: list[str]) -> list[str]:
    return args[1:] if args[:1] == ["--"] else args


def _echo(
    args: list[str], state: ShellState, stdin: str | None
) -> tuple[bool | None, str | Unknown]:
    newline = "\n"
    if args[:1] == ["-n"]:
        args, newline = args[1:], ""
    if args[:1] and args[0] in ("-e", "-E"):
        return None, state.unknown("`echo -e` is not interpreted")
    return True, " ".join(args) + newline


def _basename(
    args: list[str], state: ShellState, stdin: str | None
) -> tuple[bool | None, str | Unknown]:
    operands = _operands(args)
    if not 1 <= len(operands) <= 2 or operands[0].startswith("-"):
        return None, state.unknown("`basename` with options")
    name = operands[0].rstrip("/") or "/"
    name = name.rsplit("/", 1)[-1] if name != "/" else "/"
    if len(operands) == 2 and name != operands[1] and name.endswith(operands[1]):
        name = name[: -len(operands[1])]
    return True, name + "\n"


def _dirname(
    args: list[str], state: ShellState, stdin: str | None
) -> tuple[bool | None, str | Unknown]:
    operands = _operands(args)
    if len(operands) != 1:
        return None, state.unknown("`dirname` of several paths")
    path = operands[0].rstrip("/")
    if "/" not in path:
        return True, ("/" if operands[0].startswith("/") else ".") + "\n"
    head = path.rsplit("/", 1)[0].rstrip("/")
    return True, (head or "/") + "\n"


def _realpath(
    args: list[str], state: ShellState, stdin: str | None
) -> tuple[bool | None, str | Unknown]:
    operands = _operands(args)
    if len(operands) != 1 or operands[0].startswith("-"):
        return None, state.unknown("`realpath` with options or several paths")
    path = _path(operands[0], state)
    if isinstance(path, Unknown):
        return None, path
    return True, os.path.realpath(path) + "\n"


def _pwd(
    args: list[str], state: ShellState, stdin: str | None
) -> tuple[bool | None, str | Unknown]:
    if isinstance(state.cwd, Unknown):
        return None, state.cwd
    return True, state.cwd.text + "\n"


def _cd(args: list[str], state: ShellState, stdin: str | None) -> tuple[bool | None, str | Unknown]:
    operands = _operands(args)
    if len(operands) != 1:
        return None, state.unknown("`cd` without one directory")
    path = _path(operands[0], state)
    if isinstance(path, Unknown):
        return None, path
    if kind_of(path) != FOLDER:
        return False, ""
    state.oldpwd, state.cwd = state.cwd, Text(path)
    return True, ""


def _true(
    args: list[str], state: ShellState, stdin: str | None
) -> tuple[bool | None, str | Unknown]:
    return True, ""


def _sed(
    args: list[str], state: ShellState, stdin: str | None
) -> tuple[bool | None, str | Unknown]:
    extended = False
    scripts: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("-E", "-r"):
            extended = True
        elif arg == "-e" and rest:
            scripts.append(rest.pop(0))
        elif arg.startswith("-") or scripts:
            return None, state.unknown(f"`sed {arg}` is not interpreted (only `sed [-E] s///`)")
        else:
            scripts.append(arg)
    if len(scripts) != 1 or stdin is None:
        return None, state.unknown("`sed` other than one `s` command on piped text")
    command = substitution_command(scripts[0], extended=extended)
    if isinstance(command, str):
        return None, state.unknown(f"`sed '{scripts[0]}'`: {command}")
    pattern, replacement, count = command
    lines = stdin.split("\n")
    edited = [pattern.sub(replacement, line, count=count) for line in lines]
    return True, "\n".join(edited)


_BUILTINS = {
    "echo": _echo,
    "basename": _basename,
    "dirname": _dirname,
    "realpath": _realpath,
    "pwd": _pwd,
    "cd": _cd,
    "true": _true,
    ":": _true,
    "sed": _sed,
}


def substitution_command(script: str, *, extended: bool) -> tuple[re.Pattern[str], str, int] | str:
    """`s<d>pattern<d>replacement<d>[g]` as (regex, Python replacement, count), or why not."""
    if len(script) < 4 or script[0] != "s" or script[1].isalnum() or script[1] in "\\\n ":
        return "not an `s` command"
    delim = script[1]
    parts: list[str] = []
    current: list[str] = []
    i = 2
    while i < len(script):
        c = script[i]
        if c == "\\" and i + 1 < len(script):
            nxt = script[i + 1]
            current.append(nxt if nxt == delim else c + nxt)
            i += 2
            continue
        if c == delim:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    if len(parts) != 2:
        return "not one `s` command"
    flags = "".join(current)
    if flags not in ("", "g"):
        return f"the flags `{flags}`"
    pattern = posix_regex(parts[0], extended=extended)
    if isinstance(pattern, str):
        return pattern
    replacement = _sed_replacement(parts[1])
    if replacement is None:
        return "a replacement the reader does not interpret"
    return pattern, replacement, 0 if flags == "g" else 1


def _sed_replacement(text: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt.isdigit():
                out.append(f"\\g<{nxt}>")
            elif nxt == "n":
                out.append("\n")
            else:
                out.append(nxt.replace("\\", "\\\\"))
            i += 2
            continue
        out.append("\\g<0>" if c == "&" else c.replace("\\", "\\\\"))
        i += 1
    return "".join(out)


_ERE_SAFE = re.compile(r"[A-Za-z0-9_\-./|()^$*+?\[\]{},:=@%~# ]*")


def posix_regex(pattern: str, *, extended: bool) -> re.Pattern[str] | str:
    """A POSIX regex in the bounded subset, as a Python regex; or why it is not read.

    Refused: repetition of a group (`(a*)*` could take exponential time), POSIX classes
    (`[[:alpha:]]`), back-references, patterns over MAX_PATTERN_CHARS.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"a pattern over {MAX_PATTERN_CHARS} characters"
    if not extended:
        # BRE: `\(`, `\)`, `\{`, `\}`, `\|`, `\+`, `\?` are the operators; ( ) { } | + ? literal
        swapped = []
        i = 0
        while i < len(pattern):
            c = pattern[i]
            if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "(){}|+?":
                swapped.append(pattern[i + 1])
                i += 2
                continue
            swapped.append("\\" + c if c in "(){}|+?" else c)
            i += 1
        translated = "".join(swapped)
    else:
        translated = pattern
    if "\\" in translated.replace("\\(", "").replace("\\)", "").replace("\\{", "").replace(
        "\\}", ""
    ).replace("\\|", "").replace("\\+", "").replace("\\?", "").replace("\\.", ""):
        return "a backslash sequence the reader does not interpret"
    if not _ERE_SAFE.fullmatch(translated.replace("\\", "")):
        return "characters outside the regex subset"
    if "[:" in translated or re.search(r"(?<!\\)\)[*+?{]", translated):
        return "a POSIX class or a repeated group"
    try:
        return re.compile(translated)
    except re.error as e:
        return f"an invalid pattern ({e})"


# ---------------------------------------------------------------- [[ ... ]]

_FILE_TESTS = set("abcdefghkprstuwxGLNOS")


def decide_test(words: tuple[Word, ...], state: ShellState) -> bool | None:
    """A `[[ ... ]]` test's outcome; None where it depends on what the reader cannot know
    (the file system, a program's output, the caller's environment)."""
    if len(words) > MAX_TEST_WORDS:
        return None
    try:
        result, rest = _test_or(list(words), state)
    except _Undecidable:
        return None
    return result if not rest else None


class _Undecidable(Exception):
    pass


def _test_or(t: list[Word], state: ShellState) -> tuple[bool | None, list[Word]]:
    left, t = _test_and(t, state)
    while t and t[0].raw == "||":
        right, t = _test_and(t[1:], state)
        left = True if (left or right) else (None if left is None or right is None else False)
    return left, t


def _test_and(t: list[Word], state: ShellState) -> tuple[bool | None, list[Word]]:
    left, t = _test_not(t, state)
    while t and t[0].raw == "&&":
        right, t = _test_not(t[1:], state)
        left = (
            False
            if (left is False or right is False)
            else (None if left is None or right is None else True)
        )
    return left, t


def _test_not(t: list[Word], state: ShellState) -> tuple[bool | None, list[Word]]:
    if t and t[0].raw == "!":
        value, rest = _test_not(t[1:], state)
        return (None if value is None else not value), rest
    return _test_primary(t, state)


_BINARY = {
    "==",
    "=",
    "!=",
    "=~",
    "<",
    ">",
    "-eq",
    "-ne",
    "-lt",
    "-le",
    "-gt",
    "-ge",
    "-nt",
    "-ot",
    "-ef",
}


def _test_primary(t: list[Word], state: ShellState) -> tuple[bool | None, list[Word]]:
    if not t:
        raise _Undecidable
    if t[0].raw == "(":
        value, rest = _test_or(t[1:], state)
        if not rest or rest[0].raw != ")":
            raise _Undecidable
        return value, rest[1:]
    if len(t) >= 3 and t[1].raw in _BINARY:
        return _binary(t[0], t[1].raw, t[2], state), t[3:]
    if len(t) >= 2 and re.fullmatch(r"-[A-Za-z]", t[0].raw):
        op = t[0].raw[1]
        if op in ("z", "n"):
            operand = _known(t[1], state)
            if operand is None:
                return None, t[2:]
            return (operand == "") == (op == "z"), t[2:]
        return None, t[2:]  # the file system, a terminal, a variable's attributes
    single = _known(t[0], state)
    return (None if single is None else single != ""), t[1:]


def _known(word: Word, state: ShellState) -> str | None:
    value = expand_string(word, state)
    if isinstance(value, Unknown) or value.inputs:
        return None
    return value.text


def _binary(left: Word, op: str, right: Word, state: ShellState) -> bool | None:
    a = _known(left, state)
    if a is None or op in ("-nt", "-ot", "-ef"):
        return None
    if op in ("==", "=", "!="):
        pattern = _pattern(right, state, regex=False)
        if pattern is None:
            return None
        return (pattern.fullmatch(a) is not None) == (op != "!=")
    if op == "=~":
        pattern = _pattern(right, state, regex=True)
        return None if pattern is None else pattern.search(a) is not None
    b = _known(right, state)
    if b is None:
        return None
    if op in ("<", ">"):
        return (a < b) if op == "<" else (a > b)
    if not (re.fullmatch(r"\s*-?\d{1,19}\s*", a) and re.fullmatch(r"\s*-?\d{1,19}\s*", b)):
        return None
    x, y = int(a), int(b)
    return {"-eq": x == y, "-ne": x != y, "-lt": x < y, "-le": x <= y, "-gt": x > y, "-ge": x >= y}[
        op
    ]


def _pattern(word: Word, state: ShellState, *, regex: bool) -> re.Pattern[str] | None:
    pieces = _expand(word.raw, state)
    if pieces.unknown is not None or pieces.inputs:
        return None
    parts: list[str] = []
    for text, quoted in pieces.pieces:
        if quoted:
            parts.append(re.escape(text))
        elif regex:
            compiled = posix_regex(text, extended=True)
            if isinstance(compiled, str):
                return None
            parts.append(text)
        else:
            parts.append(_glob(text))
    try:
        return re.compile("".join(parts), re.S)
    except re.error:
        return None


def _glob(text: str) -> str:
    out: list[str] = []
    for c in text:
        out.append({"*": ".*", "?": "."}.get(c, re.escape(c)))
    return "".join(out)
