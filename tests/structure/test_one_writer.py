"""One writer (issue 45, item 1): every file the tool writes goes through
`reading.atomic_write` (whole or not at all, never through a symlink out of the folder it
writes in). Read from source: a call that writes a file anywhere else in the package fails
here, naming its line."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "nemo_rl_workers"
WRITER = PACKAGE / "reading" / "atomic_write.py"
# Writes that are not through the writer, each with why it cannot lead anywhere else:
# "file:function" -> reason.
OTHER_WRITES = {
    "commands/cli.py:_save_traceback": "a new file of a random name, created exclusively "
                                       "(tempfile): nothing there to follow or replace",
    "cache/store.py:open": "the cache folder's writability probe: a new file of a random "
                           "name (mkstemp), removed at once",
    "findings/streams.py:silence_stdout": "opens /dev/null to point stdout at it; writes "
                                          "no file",
}
_WRITING_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"})
_WRITING_METHODS = frozenset({"write_text", "write_bytes"})
_WRITING_MODES = frozenset("wax+")


def _writes(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, enclosing function) of each call that writes a file."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Call) and _writes_a_file(node):
            found.append((node.lineno, function))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "<module>")
    return found


def _writes_a_file(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _WRITING_METHODS:
        return True
    name = func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else "")
    if name in ("NamedTemporaryFile", "mkstemp"):
        return True
    on_os = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
        func.value.id == "os"
    if name == "open" and on_os:  # `os.open(path, flags)`: writes where a flag says so
        return any(isinstance(n, ast.Attribute) and n.attr in _WRITING_FLAGS
                   for arg in call.args[1:2] for n in ast.walk(arg))
    if name == "open":
        mode = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "mode"), None)
        return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(
            _WRITING_MODES & set(mode.value))
    return False


def test_every_file_is_written_through_the_one_writer() -> None:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == WRITER:
            continue
        shown = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found.extend(f"{shown}:{function}" for _, function in _writes(tree)
                     if f"{shown}:{function}" not in OTHER_WRITES)
    assert found == [], "writes outside reading.atomic_write:\n" + "\n".join(found)


def test_the_test_sees_a_write() -> None:
    """The check above would pass on a package that writes nothing: it must see one."""
    tree = ast.parse("def f(p):\n    p.write_text('x')\n    open(p, 'w')\n    open(p)\n"
                     "    os.open(p, os.O_RDONLY)\n    os.open(p, os.O_WRONLY | os.O_CREAT)\n"
                     "    tempfile.mkstemp()\n")
    assert _writes(tree) == [(2, "f"), (3, "f"), (6, "f"), (7, "f")]


def test_every_listed_write_is_still_one() -> None:
    listed = set()
    for entry in OTHER_WRITES:
        file, _, function = entry.partition(":")
        tree = ast.parse((PACKAGE / file).read_text(encoding="utf-8"))
        if any(name == function for _, name in _writes(tree)):
            listed.add(entry)
    assert listed == set(OTHER_WRITES)
