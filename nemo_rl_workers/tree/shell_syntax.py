"""The syntax of the bounded shell subset launch scripts are read in, as data.

Tokens, then a small recursive-descent parser into statements: simple commands, `[[ ... ]]`
tests, pipelines, `&&`/`||` lists, `if`, `for`, `while`/`until`, subshells, brace groups
and function definitions. Words keep their raw text (quotes, `$...`); expanding them is
`shell_values`' job. Statements are produced one at a time: a construct this parser does
not know (a here-document, `case`, `((`) becomes a `Unparsed` statement at its line, so
what follows a script's launch never needs to parse.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

MAX_WORD_CHARS = 64 * 1024
"""A single word longer than this is not part of any launch convention."""
MAX_NESTING = 64
"""How deep `$( ... )`, `${ ... }` and compound statements may nest."""


class ShellSyntaxError(Exception):
    """A construct outside the subset, at a line; never escapes this package's readers."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(why)
        self.line = line
        self.why = why


@dataclass(frozen=True)
class Word:
    raw: str
    line: int


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "op", "redir", "cond", "newline", "eof"
    text: str
    line: int
    words: tuple[Word, ...] = ()  # a `[[ ... ]]` test's words


@dataclass(frozen=True)
class Redirect:
    op: str  # ">", ">>", "2>&1", "&>", "<", ...
    target: Word | None  # None where the operator names its target (`2>&1`)


@dataclass(frozen=True)
class Simple:
    """`NAME=v ... cmd args > file`: prefix assignments, words, redirections."""

    assigns: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    line: int


@dataclass(frozen=True)
class Conditional:
    """`[[ ... ]]`, its words as written."""

    words: tuple[Word, ...]
    line: int


@dataclass(frozen=True)
class Pipeline:
    commands: tuple[Command, ...]
    negated: bool
    line: int


@dataclass(frozen=True)
class AndOr:
    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...]  # ("&&" | "||", pipeline)
    line: int


@dataclass(frozen=True)
class If:
    branches: tuple[tuple[tuple[Statement, ...], tuple[Statement, ...]], ...]
    otherwise: tuple[Statement, ...] | None
    line: int


@dataclass(frozen=True)
class Loop:
    """`for NAME in ...; do ...; done`, `while ...`, `until ...`."""

    kind: str
    name: str | None
    items: tuple[Word, ...] | None
    condition: tuple[Statement, ...]
    body: tuple[Statement, ...]
    line: int


@dataclass(frozen=True)
class Subshell:
    body: tuple[Statement, ...]
    line: int


@dataclass(frozen=True)
class Group:
    body: tuple[Statement, ...]
    line: int


@dataclass(frozen=True)
class Function:
    name: str
    body: tuple[Statement, ...]
    line: int


@dataclass(frozen=True)
class Unparsed:
    """A construct outside the subset: everything from its line on is unread."""

    why: str
    line: int


Command = Simple | Conditional | Subshell | Group | If | Loop | Function
Statement = AndOr | Unparsed

_METACHARS = set(" \t\n|&;()<>")
_RESERVED_END = {"then", "elif", "else", "fi", "do", "done", "}", "esac"}


@dataclass
class _Scanner:
    text: str
    pos: int = 0
    line: int = 1
    depth: int = 0
    pending: list[Token] = field(default_factory=list)

    def peek_char(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.text[i] if i < len(self.text) else ""

    def fail(self, why: str) -> ShellSyntaxError:
        return ShellSyntaxError(self.line, why)


def _skip_balanced(s: _Scanner, close: str) -> None:
    """Advance past text up to and including `close`, honouring quotes and nesting of
    `$( )`, `${ }` and backquotes (the scanner stands just after the opener)."""
    s.depth += 1
    if s.depth > MAX_NESTING:
        raise s.fail("nests `$(`/`${` too deeply")
    opener = {")": "(", "}": "{"}[close]
    level = 0
    while True:
        c = s.peek_char()
        if c == "":
            raise s.fail(f"an unterminated `{opener}`")
        if c == "\n":
            s.line += 1
        if c == "\\":
            if s.peek_char(1) == "\n":
                s.line += 1
            s.pos += 2
            continue
        if c == "'":
            _skip_single(s)
            continue
        if c == '"':
            _skip_double(s)
            continue
        if c == "`":
            raise s.fail("a backquote command substitution")
        if c == "$" and s.peek_char(1) in "({":
            s.pos += 2
            _skip_balanced(s, ")" if s.text[s.pos - 1] == "(" else "}")
            continue
        if c == opener and close == ")":
            level += 1
        elif c == close:
            if level == 0:
                s.pos += 1
                s.depth -= 1
                return
            level -= 1
        s.pos += 1


def balanced_end(text: str, pos: int, close: str) -> int:
    """The index just past the `close` (")" or "}") that ends the `$(`/`${` opened just
    before `pos`, quotes and nesting honoured; ShellSyntaxError when there is none."""
    scanner = _Scanner(text, pos)
    _skip_balanced(scanner, close)
    return scanner.pos


def _skip_single(s: _Scanner) -> None:
    end = s.text.find("'", s.pos + 1)
    if end < 0:
        raise s.fail("an unterminated single quote")
    s.line += s.text.count("\n", s.pos, end)
    s.pos = end + 1


def _skip_double(s: _Scanner) -> None:
    s.pos += 1
    while True:
        c = s.peek_char()
        if c == "":
            raise s.fail("an unterminated double quote")
        if c == "\n":
            s.line += 1
        if c == "\\":
            if s.peek_char(1) == "\n":
                s.line += 1
            s.pos += 2
            continue
        if c == '"':
            s.pos += 1
            return
        if c == "`":
            raise s.fail("a backquote command substitution")
        if c == "$" and s.peek_char(1) in "({":
            s.pos += 2
            _skip_balanced(s, ")" if s.text[s.pos - 1] == "(" else "}")
            continue
        s.pos += 1


def _read_word(s: _Scanner, *, in_test: bool = False) -> str:
    start = s.pos
    while True:
        c = s.peek_char()
        if c == "" or c in " \t\n" or (in_test and c == ";"):
            break
        if not in_test and c in _METACHARS:
            # `NAME=(a b)`: an array assignment is one word.
            if c == "(" and s.pos > start and s.text[s.pos - 1] == "=":
                s.pos += 1
                _skip_balanced(s, ")")
                continue
            break
        if c == "\\":
            if s.peek_char(1) == "\n":  # a continuation inside a word ends it
                break
            s.pos += 2
        elif c == "'":
            _skip_single(s)
        elif c == '"':
            _skip_double(s)
        elif c == "`":
            raise s.fail("a backquote command substitution")
        elif c == "$" and s.peek_char(1) in "({":
            s.pos += 2
            _skip_balanced(s, ")" if s.text[s.pos - 1] == "(" else "}")
        else:
            s.pos += 1
        if s.pos - start > MAX_WORD_CHARS:
            raise s.fail(f"a word over {MAX_WORD_CHARS} characters")
    return s.text[start : s.pos]


def _skip_blank(s: _Scanner) -> None:
    while True:
        c = s.peek_char()
        if c in (" ", "\t", "\r"):
            s.pos += 1
        elif c == "\\" and s.peek_char(1) == "\n":
            s.pos += 2
            s.line += 1
        elif c == "#":
            end = s.text.find("\n", s.pos)
            s.pos = len(s.text) if end < 0 else end
        else:
            return


_OPS = ("&&", "||", ";;", "|&", "|", ";", "&", "(", ")")
_REDIRS = ("&>>", "&>", ">>", ">&", "<<<", "<<", "<&", "<>", ">|", ">", "<")


def _tokens(s: _Scanner) -> Iterator[Token]:
    while True:
        _skip_blank(s)
        c = s.peek_char()
        line = s.line
        if c == "":
            yield Token("eof", "", line)
            return
        if c == "\n":
            s.pos += 1
            s.line += 1
            yield Token("newline", "\n", line)
            continue
        redirect = _redirect_at(s)
        if redirect is not None:
            yield redirect
            continue
        op = next((o for o in _OPS if s.text.startswith(o, s.pos)), None)
        if op is not None:
            s.pos += len(op)
            yield Token("op", op, line)
            continue
        raw = _read_word(s)
        if raw == "[[":
            yield _test_token(s, line)
            continue
        yield Token("word", raw, line)


def _redirect_at(s: _Scanner) -> Token | None:
    start = s.pos
    i = start
    while i < len(s.text) and s.text[i].isdigit():
        i += 1
    op = next((o for o in _REDIRS if s.text.startswith(o, i)), None)
    if op is None or (i > start and op.startswith("&")):
        return None
    line = s.line
    if op == "<<":
        raise s.fail("a here-document")
    end = i + len(op)
    if op in (">&", "<&"):  # `2>&1`, `>&2`, `>&-`: the target is part of the operator
        j = end
        while j < len(s.text) and (s.text[j].isdigit() or s.text[j] == "-"):
            j += 1
        end = j
    elif op in ("<", ">") and end < len(s.text) and s.text[end] == "(":
        raise s.fail("a process substitution")
    s.pos = end
    return Token("redir", s.text[start:end], line)


def _test_token(s: _Scanner, line: int) -> Token:
    words: list[Word] = []
    while True:
        _skip_blank(s)
        c = s.peek_char()
        if c == "" or c == "\n":
            raise s.fail("a `[[` without its `]]`")
        wline = s.line
        raw = _read_word(s, in_test=True)
        if raw == "]]":
            return Token("cond", "[[", line, tuple(words))
        words.append(Word(raw, wline))


class _Parser:
    def __init__(self, text: str) -> None:
        self.scanner = _Scanner(text)
        self.stream = _tokens(self.scanner)
        self.ahead: list[Token] = []
        self.depth = 0

    def peek(self) -> Token:
        if not self.ahead:
            self.ahead.append(next(self.stream))
        return self.ahead[0]

    def take(self) -> Token:
        token = self.peek()
        self.ahead.pop(0)
        return token

    def at_word(self, *texts: str) -> bool:
        token = self.peek()
        return token.kind == "word" and token.text in texts

    def expect_word(self, text: str) -> Token:
        token = self.take()
        if token.kind != "word" or token.text != text:
            raise ShellSyntaxError(
                token.line, f"expected `{text}`, found `{token.text or 'end of file'}`"
            )
        return token

    def skip_newlines(self) -> None:
        while self.peek().kind == "newline" or (
            self.peek().kind == "op" and self.peek().text == ";"
        ):
            self.take()

    def nest(self, line: int) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ShellSyntaxError(line, "compound statements nest too deeply")

    # list := and_or ((';' | '&' | newline) and_or)*, up to a closing reserved word
    def statements(self, closers: tuple[str, ...]) -> tuple[Statement, ...]:
        found: list[Statement] = []
        while True:
            self.skip_newlines()
            token = self.peek()
            if token.kind == "eof" or (token.kind == "word" and token.text in closers):
                return tuple(found)
            if token.kind == "op" and token.text == ")" and ")" in closers:
                return tuple(found)
            found.append(self.and_or())

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while self.peek().kind == "op" and self.peek().text in ("&&", "||"):
            op = self.take().text
            while self.peek().kind == "newline":
                self.take()
            rest.append((op, self.pipeline()))
        token = self.peek()
        if token.kind == "op" and token.text in (";", "&"):
            self.take()
        elif (
            token.kind not in ("newline", "eof")
            and not (token.kind == "word" and token.text in _RESERVED_END)
            and not (token.kind == "op" and token.text == ")")
        ):
            raise ShellSyntaxError(token.line, f"unexpected `{token.text}`")
        return AndOr(first, tuple(rest), first.line)

    def pipeline(self) -> Pipeline:
        negated = False
        line = self.peek().line
        if self.at_word("!"):
            self.take()
            negated = True
        commands = [self.command()]
        while self.peek().kind == "op" and self.peek().text in ("|", "|&"):
            self.take()
            while self.peek().kind == "newline":
                self.take()
            commands.append(self.command())
        return Pipeline(tuple(commands), negated, line)

    def command(self) -> Command:
        token = self.peek()
        if token.kind == "cond":
            self.take()
            self.trailing_redirects()
            return Conditional(token.words, token.line)
        if token.kind == "op" and token.text == "(":
            self.take()
            if self.peek().kind == "op" and self.peek().text == "(":
                raise ShellSyntaxError(token.line, "an arithmetic command `((`")
            self.nest(token.line)
            body = self.statements((")",))
            closing = self.take()
            if closing.text != ")":
                raise ShellSyntaxError(token.line, "a `(` without its `)`")
            self.depth -= 1
            self.trailing_redirects()
            return Subshell(body, token.line)
        if token.kind == "word":
            compound: dict[str, Callable[[], Command]] = {
                "if": self.if_statement,
                "for": self.for_loop,
                "while": self.while_loop,
                "until": self.while_loop,
                "{": self.group,
                "function": self.function_keyword,
            }
            if token.text in compound:
                return compound[token.text]()
            if token.text in ("case", "select", "coproc"):
                raise ShellSyntaxError(token.line, f"a `{token.text}` statement")
            if token.text in _RESERVED_END:
                raise ShellSyntaxError(token.line, f"unexpected `{token.text}`")
        return self.simple()

    def trailing_redirects(self) -> tuple[Redirect, ...]:
        found: list[Redirect] = []
        while self.peek().kind == "redir":
            found.append(self.redirect())
        return tuple(found)

    def redirect(self) -> Redirect:
        token = self.take()
        if token.text[-1].isdigit() and ("&" in token.text[1:]) or token.text.endswith("-"):
            return Redirect(token.text, None)
        target = self.take()
        if target.kind != "word":
            raise ShellSyntaxError(token.line, f"`{token.text}` without a target")
        return Redirect(token.text, Word(target.text, target.line))

    def simple(self) -> Command:
        line = self.peek().line
        assigns: list[Word] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            token = self.peek()
            if token.kind == "redir":
                redirects.append(self.redirect())
            elif token.kind == "word":
                self.take()
                if not words and _is_assignment(token.text):
                    assigns.append(Word(token.text, token.line))
                else:
                    words.append(Word(token.text, token.line))
            elif token.kind == "op" and token.text == "(" and len(words) == 1 and not assigns:
                return self.function_body(words[0].raw, line)
            else:
                break
        if not (assigns or words or redirects):
            token = self.peek()
            raise ShellSyntaxError(token.line, f"unexpected `{token.text or 'end of file'}`")
        return Simple(tuple(assigns), tuple(words), tuple(redirects), line)

    def function_body(self, name: str, line: int) -> Function:
        self.take()  # (
        closing = self.take()
        if closing.text != ")":
            raise ShellSyntaxError(line, "a malformed function definition")
        self.skip_newlines()
        if not self.at_word("{"):
            raise ShellSyntaxError(line, "a function body other than `{ ... }`")
        group = self.group()
        return Function(name, group.body, line)

    def function_keyword(self) -> Function:
        line = self.take().line
        name = self.take()
        if name.kind != "word":
            raise ShellSyntaxError(line, "a malformed function definition")
        if self.peek().kind == "op" and self.peek().text == "(":
            return self.function_body(name.text, line)
        self.skip_newlines()
        group = self.group()
        return Function(name.text, group.body, line)

    def group(self) -> Group:
        line = self.expect_word("{").line
        self.nest(line)
        body = self.statements(("}",))
        self.expect_word("}")
        self.depth -= 1
        self.trailing_redirects()
        return Group(body, line)

    def if_statement(self) -> If:
        line = self.expect_word("if").line
        self.nest(line)
        branches: list[tuple[tuple[Statement, ...], tuple[Statement, ...]]] = []
        otherwise: tuple[Statement, ...] | None = None
        while True:
            condition = self.statements(("then",))
            self.expect_word("then")
            body = self.statements(("elif", "else", "fi"))
            branches.append((condition, body))
            closer = self.take()
            if closer.text == "elif":
                continue
            if closer.text == "else":
                otherwise = self.statements(("fi",))
                self.expect_word("fi")
            elif closer.text != "fi":
                raise ShellSyntaxError(line, "an `if` without its `fi`")
            break
        self.depth -= 1
        self.trailing_redirects()
        return If(tuple(branches), otherwise, line)

    def for_loop(self) -> Loop:
        line = self.expect_word("for").line
        name = self.take()
        if name.kind != "word" or not name.text.isidentifier():
            raise ShellSyntaxError(line, "a `for` loop other than `for NAME in ...`")
        items: list[Word] = []
        self.skip_newlines()
        if self.at_word("in"):
            self.take()
            while self.peek().kind == "word":
                token = self.take()
                items.append(Word(token.text, token.line))
        self.skip_newlines()
        body = self.loop_body(line)
        return Loop("for", name.text, tuple(items), (), body, line)

    def while_loop(self) -> Loop:
        keyword = self.take()
        condition = self.statements(("do",))
        body = self.loop_body(keyword.line)
        return Loop(keyword.text, None, None, condition, body, keyword.line)

    def loop_body(self, line: int) -> tuple[Statement, ...]:
        self.expect_word("do")
        self.nest(line)
        body = self.statements(("done",))
        self.expect_word("done")
        self.depth -= 1
        self.trailing_redirects()
        return body


def _is_assignment(raw: str) -> bool:
    name, eq, _ = raw.partition("=")
    name = name.removesuffix("+")
    return bool(eq) and name.isidentifier() and name.isascii()


def statements(text: str) -> Iterator[Statement]:
    """The top-level statements of `text`, one at a time; the first construct outside the
    subset ends the stream as an `Unparsed` statement naming its line. A file read again
    (`common.env`, which every suite script sources) is parsed once, as far as a walk
    has read it (the statements are immutable)."""
    return iter(_parsed(text))


class _Parsed:
    """The statements of one text, parsed as far as a reader has asked."""

    def __init__(self, text: str) -> None:
        self._source = _statements(text)
        self._done: list[Statement] = []

    def __iter__(self) -> Iterator[Statement]:
        index = 0
        while True:
            if index == len(self._done):
                statement = next(self._source, None)
                if statement is None:
                    return
                self._done.append(statement)
            yield self._done[index]
            index += 1


@functools.lru_cache(maxsize=32)
def _parsed(text: str) -> _Parsed:
    return _Parsed(text)


def _statements(text: str) -> Iterator[Statement]:
    parser = _Parser(text)
    line = 1
    while True:
        try:
            parser.skip_newlines()
            if parser.peek().kind == "eof":
                return
            line = parser.peek().line
            statement = parser.and_or()
        except ShellSyntaxError as e:
            yield Unparsed(e.why, e.line)
            return
        except RecursionError:
            yield Unparsed("nests too deeply", line)
            return
        yield statement


def parse_all(text: str) -> tuple[Statement, ...]:
    """Every statement of `text` (a `$( ... )` body), an `Unparsed` one last if any."""
    return tuple(statements(text))
