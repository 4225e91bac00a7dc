"""The guide's 'What each Protocol declares' table, generated from `contracts`.

    python -m tests.docs.protocol_reference   # rewrite the table in the guide

`tests/newcomer/test_guide_sections.py` fails when the guide's table is not what this renders, so
the members a newcomer must keep cannot drift from the Protocols the verifier uses.
"""

from __future__ import annotations

import inspect
import re
import sys

from contracts.protocols import PROTOCOLS
from contracts.verify import protocol_members
from tests.docs.snippets import REPO

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
BEGIN = "<!-- generated: protocol members (python -m tests.docs.protocol_reference) -->"
END = "<!-- end generated: protocol members -->"


def _signature(protocol: type, name: str) -> str:
    member = inspect.getattr_static(protocol, name)
    function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
    prefix = "async def" if inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(
        function) else "def"
    # `from __future__ import annotations`: annotations are the source's own strings.
    text = str(inspect.signature(function)).replace("'", "")
    return f"`{prefix} {name}{text}`"


def _extends(protocol: type) -> str:
    bases = [b.__name__ for b in protocol.__bases__ if b in PROTOCOLS.values()]
    return ", ".join(f"`{b}` (all its members)" for b in bases) or "-"


def render() -> str:
    """One row per member a Protocol declares itself; a derived one names what it extends."""
    lines = ["| Protocol | extends | member |", "| --- | --- | --- |"]
    for name, protocol in PROTOCOLS.items():
        extends = _extends(protocol)
        for member in protocol_members(protocol):
            if member in vars(protocol):
                lines.append(f"| `{name}` | {extends} | {_signature(protocol, member)} |")
    return "\n".join(lines)


def guide_table(text: str) -> str:
    """The generated part of the guide, between its markers."""
    match = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), text, re.DOTALL)
    if match is None:
        raise ValueError(f"{GUIDE}: the protocol-member markers are missing")
    return match[1]


def main() -> int:
    text = GUIDE.read_text(encoding="utf-8")
    new = text.replace(guide_table(text), render())
    GUIDE.write_text(new, encoding="utf-8")
    print(f"{GUIDE.relative_to(REPO)}: {'unchanged' if new == text else 'updated'}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
