"""Parsing a module's text, guarded: the one place source becomes a syntax tree.

Every reader of a tree's Python (the model, the outline the static path follows imports
with, the locator of a finding's class, `suggest`) parses here, so a module that is not
Python, or that the parser cannot hold (nested past the recursion limit, out of memory),
is one `SourceProblem`, never an exception.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.tree.source.reading import (
    MAX_SOURCE_BYTES,
    MAX_SOURCE_ENV,
    SourceProblem,
    read_source,
)

MAX_SOURCE_TOKENS = MAX_SOURCE_BYTES // 8
"""The most tokens one module may hold to be parsed (a comment or a string is one). Memory
follows the syntax tree, not the bytes: about 0.6 KB a token, so 8 MiB of short statements
under the size cap (2.5 million tokens) peaked at 1.6 GB, while upstream's largest module
holds 21,000 tokens and 8 MiB of real code about 830,000. With the 8 MiB default, 1 Mi
tokens keep a parse under 1 GB (bench 17), with room for syntax denser than the bench's."""
# A comment or a string literal is one token (the parser builds at most one node of it);
# else a name or a number, or one other visible character.
_TOKEN = re.compile("|".join((
    r"#[^\n]*",
    r"'''(?:\\.|[^\\])*?'''",
    r'"""(?:\\.|[^\\])*?"""',
    r"'(?:\\.|[^'\\\n])*'",
    r'"(?:\\.|[^"\\\n])*"',
    r"[A-Za-z_0-9]+",
    r"[^\sA-Za-z_0-9]",
)))


def count_tokens(text: str, stop: int | None = None) -> int:
    """The tokens of `text` (names and numbers, and each other visible character), counted
    without building any; counting ends past `stop`."""
    count = 0
    for count, _ in enumerate(_TOKEN.finditer(text), start=1):
        if stop is not None and count > stop:
            break
    return count


def _too_many_tokens(text: str) -> bool:
    """Whether `text` holds over MAX_SOURCE_TOKENS tokens (a token is at least one
    character: a shorter text is never counted)."""
    return len(text) > MAX_SOURCE_TOKENS and count_tokens(
        text, MAX_SOURCE_TOKENS) > MAX_SOURCE_TOKENS


@dataclass(frozen=True)
class NotPython(SourceProblem):
    """The text is no Python the parser accepts: `detail` is the parser's words."""

    detail: str = ""


def parse_text(text: str, file: str | Path) -> ast.Module | SourceProblem:
    """The syntax tree of one module's text, or why it has none."""
    shown = str(file)
    if _too_many_tokens(text):
        return SourceProblem(shown, f"holds over {MAX_SOURCE_TOKENS:,} tokens, the limit for "
                                    f"a module's syntax tree ({MAX_SOURCE_ENV}=<MiB> raises "
                                    "it)")
    try:
        return ast.parse(text, shown)
    except SyntaxError as err:
        return NotPython(shown, f"is not valid Python: {err.msg}", err.lineno, err.msg)
    except (ValueError, RecursionError, MemoryError) as err:
        return SourceProblem(shown, f"cannot be parsed: {type(err).__name__}")


def parse_file(path: Path, what: str = "a module") -> ast.Module | SourceProblem:
    """One file read through the guarded reader (`read_source`) and parsed."""
    text = read_source(path, what)
    if isinstance(text, SourceProblem):
        return text
    return parse_text(text, path)


@functools.lru_cache(maxsize=8192)
def node_text(node: ast.AST) -> str:
    """`ast.unparse(node)`, once per node: the walks name the same tests and targets of a
    tree's code for every config they judge (a node hashes by identity, and the cache
    holds it, so an answer never outlives its node)."""
    return ast.unparse(node)
