"""Registering an OmegaConf resolver under every OmegaConf the distribution admits.

The new-style registration (resolvers taking typed values) is `register_new_resolver` up
to 2.3, which NeMo-RL locks; 2.4 renames it `register_resolver` and deprecates the old
name, while 2.3's `register_resolver` is the legacy string-only API. Which one a release
has is read from the method's signature, not from a version number.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def register_resolver(name: str, resolver: Callable[..., Any], *, replace: bool = False) -> None:
    """`OmegaConf.register_new_resolver(name, resolver, replace=replace)` in 2.3 terms."""
    from omegaconf import OmegaConf  # loaded where a config interpolates, not before

    new_style = "replace" in inspect.signature(OmegaConf.register_resolver).parameters
    register: Callable[..., None] = (
        OmegaConf.register_resolver if new_style else OmegaConf.register_new_resolver)
    register(name, resolver, replace=replace)
