"""The cyclic garbage collector paused while a tree is modelled.

Modelling a tree allocates hundreds of thousands of long-lived objects (syntax nodes, call
sites), which makes Python run full collections over all of them again and again while
finding almost nothing to free (the model has few cycles): a third of a cold `check`'s CPU
time on upstream's tree. As mypy tunes its collector, the stage pauses it for the build and
restores it afterwards; what was cyclic garbage is collected then.
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Generator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
