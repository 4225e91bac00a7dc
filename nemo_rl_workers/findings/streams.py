"""What the CLI writes, made safe for a terminal, a pipe and a log.

Every stream the CLI writes to is wrapped in `SafeStream`: control characters other
than the line breaks the CLI itself writes are escaped, values read from the
environment through `${oc.env:...}` are redacted, and characters the real stream
cannot encode come out as backslash escapes instead of a UnicodeEncodeError. A stream
that cannot be written (a full disk, `/dev/full`, a closed stdout) raises `OutputFailed`,
which the CLI reports with its own exit code; a reader that went away stays a
BrokenPipeError (exit 141).
"""

from __future__ import annotations

import io
import os
import re
import sys
from typing import TextIO

from nemo_rl_workers.errors import one_line

_SGR = re.compile("\x1b\\[[0-9;]*m")


def _escape(text: str) -> str:
    """Escape control characters, keeping the line breaks, CRLF endings and tabs written
    on purpose (a migrate diff shows the file's own lines)."""
    if text.isprintable():
        return text
    lines = []
    for line in text.split("\n"):
        cr = line.endswith("\r")
        body = line[:-1] if cr else line
        # The CLI's own colours (SGR sequences) pass; every other control character is escaped.
        pieces = _SGR.split(body)
        colours = _SGR.findall(body)
        escaped = ["\t".join(one_line(part) for part in piece.split("\t")) for piece in pieces]
        joined = "".join(e + c for e, c in zip(escaped, [*colours, ""], strict=True))
        lines.append(joined + "\r" * cr)
    return "\n".join(lines)


def _redact(text: str) -> str:
    """Environment values read through `${oc.env:...}` redacted. Only a process that has
    read a config has any, and it has imported the interpolation module to do so: a
    command that read no config does not pay for importing it."""
    interpolation = sys.modules.get("nemo_rl_workers.reading.interpolation")
    if interpolation is None:
        return text
    redacted: str = interpolation.redact(text)
    return redacted


class OutputFailed(Exception):
    """What the CLI writes cannot be written; `reason` says why, in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _failure(error: OSError | ValueError) -> OutputFailed:
    if isinstance(error, OSError):
        return OutputFailed(error.strerror or type(error).__name__)
    return OutputFailed("the stream is closed")  # "I/O operation on closed file"


class SafeStream(io.TextIOBase):
    """A text stream that escapes, redacts and never fails to encode what it writes;
    `inner` is None where the process was started with that stream closed."""

    def __init__(self, inner: TextIO | None) -> None:
        super().__init__()
        self.inner = inner
        self._encoding = getattr(inner, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        safe = _escape(_redact(text))
        # Surrogates (a non-UTF-8 file name) and characters outside a strict encoding.
        safe = safe.encode(self._encoding, "backslashreplace").decode(self._encoding, "replace")
        if self.inner is None:
            raise OutputFailed("the stream is closed")
        try:
            self.inner.write(safe)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as error:
            raise _failure(error) from error
        return len(text)

    def flush(self) -> None:
        if self.inner is None:
            return
        try:
            self.inner.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as error:
            raise _failure(error) from error

    def isatty(self) -> bool:
        isatty = getattr(self.inner, "isatty", None)
        return bool(isatty and isatty())

    def writable(self) -> bool:
        return True


def silence_stdout() -> None:
    """After a broken pipe or a failed write: point stdout at /dev/null so the exit flush
    cannot fail again (the way Python's documentation recommends)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
