"""Parsing a module's text, guarded: the one place source becomes a syntax tree.

Every reader of a tree's Python (the model, the outline the static path follows imports
with, the locator of a finding's class, `suggest`) parses here, so a module that is not
Python, or that the parser cannot hold (nested past the recursion limit, out of memory),
is one `SourceProblem`, never an exception.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.tree.source.reading import SourceProblem, read_source


@dataclass(frozen=True)
class NotPython(SourceProblem):
    """The text is no Python the parser accepts: `detail` is the parser's words."""

    detail: str = ""


def parse_text(text: str, file: str | Path) -> ast.Module | SourceProblem:
    """The syntax tree of one module's text, or why it has none."""
    shown = str(file)
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
