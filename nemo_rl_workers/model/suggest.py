"""'Did you mean ...?': the closest known names to a misspelled one.

Pure string matching (difflib) over names the caller already has: registered worker
FQNs, a section's known keys, a module's classes (`tree.class_names` finds those, from
source). Nothing here imports user code or reads a file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# Close enough to be a typo of the same name, not merely a similar one.
CUTOFF = 0.8
MAX_SUGGESTIONS = 3


def closest(word: str, candidates: Iterable[str], *, cutoff: float = CUTOFF) -> list[str]:
    """Up to three candidates close to `word`, best first; never `word` itself."""
    pool = sorted({c for c in candidates if c != word})
    return difflib.get_close_matches(word, pool, n=MAX_SUGGESTIONS, cutoff=cutoff)


def did_you_mean(names: Iterable[str]) -> str:
    """'did you mean A?' / 'did you mean A or B?'; '' for no names."""
    found = list(names)
    if not found:
        return ""
    if len(found) == 1:
        return f"did you mean {found[0]}?"
    return f"did you mean {', '.join(found[:-1])} or {found[-1]}?"
