"""Run mypy and pyrefly on static test cases and read their verdicts line by line.

A case line that must fail carries each checker's codes (see cases/README.md):

    x: type[P] = C  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # why

To see what each checker says on its own, the files are copied with these markers
removed (line numbers kept) and each checker runs once over all the copies.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "pyproject.toml"
# The checkers of the interpreter running the tests (the project's .venv).
BIN = Path(sys.executable).parent

# A type-ignore comment with codes is mypy's expectation, a pyrefly-ignore comment with
# codes pyrefly's; a line may carry either or both, followed by a reason.
MYPY_MARKER = re.compile(r"# type: ignore\[(?P<codes>[^\]]*)\]")
PYREFLY_MARKER = re.compile(r"# pyrefly: ignore\[(?P<codes>[^\]]*)\]")
ANY_IGNORE = re.compile(r"#\s*(type|pyrefly)\s*:\s*ignore")

# Line number -> error codes; per file name.
Codes = dict[int, frozenset[str]]


@dataclass(frozen=True)
class Expected:
    """The codes a file's markers expect, per line, for each checker."""

    mypy: Codes
    pyrefly: Codes


def _codes(text: str) -> frozenset[str]:
    return frozenset(code.strip() for code in text.split(",") if code.strip())


def read_markers(source: str) -> Expected:
    """Markers of a case file; a suppression without codes is an error."""
    mypy: Codes = {}
    pyrefly: Codes = {}
    for number, line in enumerate(source.splitlines(), start=1):
        found = 0
        for marker, into in ((MYPY_MARKER, mypy), (PYREFLY_MARKER, pyrefly)):
            match = marker.search(line)
            if match is not None:
                into[number] = _codes(match["codes"])
                found += 1
        if len(ANY_IGNORE.findall(line)) != found:
            raise ValueError(f"line {number}: a suppression without error codes: {line.strip()}")
    return Expected(mypy, pyrefly)


def strip_markers(source: str) -> str:
    """The source without its markers (and their reasons); line numbers are kept."""
    lines = []
    for line in source.splitlines():
        start = ANY_IGNORE.search(line)
        lines.append(line if start is None else line[: start.start()].rstrip())
    return "\n".join(lines) + "\n"


def stripped_copies(sources: Iterable[Path], into: Path) -> list[Path]:
    """Copies of `sources` without markers; file names must be unique."""
    copies: list[Path] = []
    for source in sources:
        target = into / source.name
        if target.exists():
            raise ValueError(f"two case files named {source.name}")
        target.write_text(strip_markers(source.read_text()))
        copies.append(target)
    return copies


def _add(found: dict[str, dict[int, set[str]]], path: str, line: int, code: str) -> None:
    found.setdefault(Path(path).name, {}).setdefault(line, set()).add(code)


def _freeze(found: Mapping[str, Mapping[int, set[str]]]) -> dict[str, Codes]:
    return {name: {n: frozenset(c) for n, c in lines.items()} for name, lines in found.items()}


# One checker error: (file, line, code, message).
Item = tuple[str, int, str, str]


def mypy_errors(files: list[Path], *extra: str, timeout: int = 120) -> list[Item]:
    """Every error mypy reports on `files` in one run (notes left out)."""
    proc = subprocess.run(
        [
            str(BIN / "mypy"),
            "--config-file",
            str(CONFIG),
            "-O",
            "json",
            "--no-error-summary",
            *extra,
            *map(str, files),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    found: list[Item] = []
    for raw in proc.stdout.splitlines():
        if not raw.startswith("{"):
            continue
        item = json.loads(raw)
        if item["severity"] == "error":
            found.append((item["file"], item["line"], item["code"] or "misc", item["message"]))
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not found):
        raise RuntimeError(f"mypy did not run:\n{proc.stdout}\n{proc.stderr}")
    return found


def pyrefly_errors(files: list[Path], *, timeout: int = 120) -> list[Item]:
    """Every error pyrefly reports on `files` in one run (warnings left out)."""
    proc = subprocess.run(
        [
            str(BIN / "pyrefly"),
            "check",
            "--config",
            str(CONFIG),
            "--output-format",
            "json",
            *map(str, files),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"pyrefly did not run:\n{proc.stdout}\n{proc.stderr}") from exc
    return [
        (item["path"], item["line"], item["name"], item["description"])
        for item in report["errors"]
        if item["severity"] == "error"
    ]


def _by_line(items: list[Item]) -> dict[str, Codes]:
    found: dict[str, dict[int, set[str]]] = {}
    for path, line, code, _message in items:
        _add(found, path, line, code)
    return _freeze(found)


def run_mypy(files: list[Path]) -> dict[str, Codes]:
    """mypy's error codes per file name and line (notes left out)."""
    return _by_line(mypy_errors(files))


def run_pyrefly(files: list[Path]) -> dict[str, Codes]:
    """pyrefly's error kinds per file name and line (warnings left out)."""
    return _by_line(pyrefly_errors(files))


@dataclass(frozen=True)
class StaticRun:
    """What each checker reported on the stripped copies, per file name and line."""

    mypy: dict[str, Codes]
    pyrefly: dict[str, Codes]


def check_copies(sources: Iterable[Path], workdir: Path) -> StaticRun:
    """Strip `sources` into the empty folder `workdir`; run each checker once on them."""
    copies = stripped_copies(sources, workdir)
    return StaticRun(mypy=run_mypy(copies), pyrefly=run_pyrefly(copies))
