"""Protocols by reference: a built-in contract's short name or any Protocol's FQN.

Resolutions, worker checks and the CLI name a Protocol by string, because they travel to
other Python environments; this module turns such a reference back into the class and a
class into its reference. Import-light: it imports a Protocol's module only when asked,
and an extension Protocol's module must be light too (it is read while resolving).
"""

from __future__ import annotations

import importlib

from typing_extensions import get_protocol_members, is_protocol

from contracts.protocols import PROTOCOLS

_MISSING = object()


def protocol_ref(protocol: type) -> str:
    """The reference of `protocol`: its short name when built in, else its FQN."""
    if PROTOCOLS.get(protocol.__name__) is protocol:
        return protocol.__name__
    return f"{protocol.__module__}.{protocol.__qualname__}"


def load_protocol(ref: str) -> tuple[type | None, str | None]:
    """The Protocol a reference names, or None and one sentence saying why not."""
    known = PROTOCOLS.get(ref)
    if known is not None:
        return known, None
    module_name, _, attr = ref.rpartition(".")
    if not module_name:
        return None, (
            f"{ref!r} is neither a built-in contract ({', '.join(PROTOCOLS)}) "
            "nor the FQN of a Protocol"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # whatever the module raises while importing
        return None, f"{ref} cannot be imported: importing {module_name} raised " \
                     f"{type(err).__name__}: {err}"
    found: object = getattr(module, attr, None)
    if not isinstance(found, type) or not is_protocol(found):
        what = "nothing" if found is None else type(found).__name__
        return None, f"{ref} is not a typing.Protocol class (module {module_name} has {what} there)"
    return found, None


def extends(protocol: type, role: type) -> bool:
    """Whether `protocol` includes every member of `role`, as the same objects.

    True for `role` itself and for any Protocol derived from it that does not redefine
    its members; a redefined member could change its signature, so it does not count.
    """
    if role in protocol.__mro__:
        return True
    mine = get_protocol_members(protocol)
    return all(
        name in mine and getattr(protocol, name, _MISSING) is getattr(role, name, _MISSING)
        for name in get_protocol_members(role)
    )


def members(protocol: type) -> frozenset[str]:
    """The member names of a Protocol class."""
    return frozenset(get_protocol_members(protocol))
