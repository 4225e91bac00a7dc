"""Data-member rules: a Protocol's attributes and properties against what the class
provides (class annotations and values, properties, attributes a method sets).

A settable Protocol attribute needs a settable member of exactly its type; a read-only
property accepts a subtype; a ClassVar needs a ClassVar. What the class alone cannot
settle is an undecidable line.
"""

from __future__ import annotations

import typing
from typing import Any, Final

from typing_extensions import is_protocol

from contracts.context import CheckContext
from contracts.hints import resolve_hints, self_type_vars, show_hint, substitute
from contracts.members import (
    UNKNOWN,
    assigned_in_methods,
    assigned_type,
    class_annotation,
    inherited_protocol_body,
    is_method,
    location,
    vars_lookup,
)

_CLASSVAR: Final = (typing.ClassVar,)
# Class values whose type mypy infers as the value's class.
_INFERRED: Final = frozenset({int, float, complex, str, bytes, bool, list, dict, set, tuple})


class AttributeRules(CheckContext):
    def attribute(self, name: str, proto_raw: object) -> None:
        want, settable, classvar = self.declared(name, proto_raw)
        owner = inherited_protocol_body(self.cls, name) if proto_raw is not None else None
        if owner is None and proto_raw is None and not is_protocol(self.cls):
            owner = self.declared_only_in_protocol(name)
        if owner is not None:
            self.add(
                name,
                "missing",
                f"missing: only Protocol {owner.__qualname__} declares it, nothing sets it",
            )
            return
        impl_raw = vars_lookup(self.cls, name)
        found, got = class_annotation(self.cls, name)
        got_classvar = typing.get_origin(got) in _CLASSVAR
        if got_classvar:
            args = typing.get_args(got)
            got = args[0] if args else Any
        if isinstance(impl_raw, property):
            self.where = location(impl_raw)
            got_settable = impl_raw.fset is not None
            got = self.property_type(name, impl_raw)
        elif impl_raw is not None and is_method(impl_raw) and not found:
            self.where = location(impl_raw)
            self.add(name, "attribute", "a method, the Protocol declares a data attribute")
            return
        elif impl_raw is not None or found:
            got_settable = (not got_classvar or classvar) and not _read_only_fields(self.cls)
            if not found:
                got = type(impl_raw) if type(impl_raw) in _INFERRED else UNKNOWN
        elif (assigned := assigned_in_methods(self.cls, name)) is None:
            hook = vars_lookup_defined(self.cls, "__getattr__")
            if hook is None:
                self.add(name, "missing", "missing")
                return
            # Reads of an attribute the class does not define go to `__getattr__` (the
            # checkers type them by its return); writes need a `__setattr__` as well.
            self.where = location(hook)
            got = self.hook_type(name, hook)
            setter = vars_lookup_defined(self.cls, "__setattr__")
            if classvar:
                self.add(name, "attribute", "found through __getattr__, the Protocol declares "
                         "a ClassVar")
                return
            if settable and setter is None:
                self.add(name, "attribute", "read-only (found through __getattr__, no "
                         "__setattr__), the Protocol declares a settable attribute")
                return
            # The checkers type the member by `__getattr__` alone, for writes too.
            self.type_fits(name, got, want, settable=settable, stored=got)
            return
        else:
            self.where = assigned
            if classvar:
                self.add(
                    name, "attribute", "an instance variable, the Protocol declares a ClassVar"
                )
                return
            got = assigned_type(self.cls, name)
            if got is UNKNOWN:
                if want is not Any and want is not object:
                    self.add(
                        name,
                        "undecidable",
                        f"set on the instance in a method; its type cannot be read from the "
                        f"class (the Protocol declares {show_hint(want)})",
                    )
                return
            got_settable = True
        if classvar and not got_classvar:
            self.add(name, "attribute", "an instance variable, the Protocol declares a ClassVar")
            return
        if settable and not got_settable:
            self.add(name, "attribute", "read-only, the Protocol declares a settable attribute")
            return
        if got is not UNKNOWN:
            got = substitute(got, {**self.self_map, **self.type_args(self.cls, name)})
        stored = self.setter_type(name, impl_raw) if isinstance(impl_raw, property) else got
        self.type_fits(name, got, want, settable=settable, stored=stored)

    def type_fits(
        self, name: str, got: object, want: object, *, settable: bool, stored: object
    ) -> None:
        """The member's type against the Protocol's; a settable one is invariant (what the
        Protocol's users assign, `stored`, must fit too)."""
        if got is UNKNOWN or want is UNKNOWN:
            if want is not UNKNOWN and want is not Any and want is not object:
                self.add(name, "undecidable", "its type cannot be read from the class")
            return
        ok = self.subhint(name, got, want)
        if ok is not False and settable:
            ok = stored is UNKNOWN or self.subhint(name, want, stored)
        if ok is False:
            what = "settable attribute" if settable else "attribute"
            self.add(
                name,
                "annotation",
                f"annotation: {show_hint(got)}, the Protocol's {what} is {show_hint(want)}",
            )

    def declared(self, name: str, proto_raw: object) -> tuple[object, bool, bool]:
        """(type, settable, ClassVar) of the Protocol's data member or property."""
        mapping = {**self.self_map, **self.type_args(self.protocol, name)}
        if isinstance(proto_raw, property):
            hint = self.property_type(name, proto_raw, protocol=True)
            return substitute(hint, mapping), proto_raw.fset is not None, False
        found, hint = class_annotation(self.protocol, name)
        if not found or hint is UNKNOWN:
            return UNKNOWN, True, False
        classvar = typing.get_origin(hint) in _CLASSVAR
        if classvar:
            args = typing.get_args(hint)
            hint = args[0] if args else Any
        # A ClassVar is settable through the class, so it is invariant as well.
        return substitute(hint, mapping), True, classvar

    def declared_only_in_protocol(self, name: str) -> type | None:
        """The Protocol a subclass inherits the bare declaration `name: T` from, when no
        class body or method of the subclass sets it (mypy: an abstract attribute)."""
        if self.protocol not in self.cls.__mro__:
            return None
        for klass in self.cls.__mro__:
            if is_protocol(klass):
                continue
            if name in vars(klass) or name in vars(klass).get("__annotations__", {}):
                return None
        if assigned_in_methods(self.cls, name) is not None:
            return None
        return self.protocol

    def hook_type(self, name: str, hook: object) -> object:
        """The return type of `__getattr__`; Any where it is not annotated, as the
        checkers read it."""
        return self.hints(name, resolve_hints(hook), self.cls_name).get("return", Any)

    def setter_type(self, name: str, prop: property) -> object:
        if prop.fset is None:
            return UNKNOWN
        hints = self.hints(name, resolve_hints(prop.fset), self.cls_name)
        params = [k for k in hints if k != "return"]
        return hints[params[-1]] if params else UNKNOWN

    def property_type(self, name: str, prop: property, *, protocol: bool = False) -> object:
        hints = self.hints(
            name,
            resolve_hints(prop.fget),
            self.proto_name if protocol else self.cls_name,
        )
        mapping: dict[object, object] = {}
        for key, hint in hints.items():
            if key != "return":  # the getter's only parameter is self
                mapping.update(self_type_vars(hint, {}))
        return substitute(hints.get("return", UNKNOWN), mapping)

    # --- helpers -------------------------------------------------------------------------


def vars_lookup_defined(cls: type, name: str) -> object | None:
    """`name` from the class's MRO, but not object's own (every class has `__setattr__`)."""
    for klass in cls.__mro__:
        found: object = vars(klass).get(name) if klass is not object else None
        if found is not None:
            return found
    return None


def _read_only_fields(cls: type) -> bool:
    """A NamedTuple's or frozen dataclass's fields cannot be assigned on an instance."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is not None and getattr(params, "frozen", False):
        return True
    return issubclass(cls, tuple) and hasattr(cls, "_fields")
