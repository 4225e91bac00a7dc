"""`interpret.models` against pydantic itself: generated models (fields with literal,
`Field(default=...)` and factory defaults, optional and nested models, `extra="allow"` or
pydantic's default) and generated blocks. What the tree's code holds at run time is what
pydantic makes of them; the check reads the class statements only, so wherever it decides
(`dump`, `construct`, the instance's fields and extras) its answer must be pydantic's, and
on these shapes it must decide. The generated source is this test's own: it is executed."""

from __future__ import annotations

import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nemo_rl_workers.interpret.models import Instance, construct, dump, instance_dump
from nemo_rl_workers.tree.source_kept import tree_source
from tests.revision.trees import write

pydantic = pytest.importorskip("pydantic")

# kind -> (annotation, default as written or None for a required field, a value to give)
FIELD_KINDS: dict[str, tuple[str, str | None, object]] = {
    "int": ("int", "3", 7),
    "required": ("int", None, 5),
    "optional": ("Optional[int]", "None", 4),
    "text": ("str", "'x'", "y"),
    "field_default": ("int", "Field(default=9)", 2),
    "dict": ("dict", "Field(default_factory=dict)", {"k": 1}),
    "list": ("list", "Field(default_factory=list)", [1, 2]),
    "nested": ("Inner", "Field(default_factory=Inner)", {"a": 6}),
    "nested_optional": ("Optional[Inner]", "None", {"b": "z"}),
}


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, dict[str, Any], bool]:
    kinds = draw(st.lists(st.sampled_from(sorted(FIELD_KINDS)), min_size=1, max_size=6))
    outer_extra = draw(st.sampled_from(["", ', extra="allow"', ', extra="ignore"']))
    inner_extra = draw(st.sampled_from(["", ', extra="allow"']))
    lines = ["from typing import Optional", "from pydantic import BaseModel, Field", "",
             f"class Inner(BaseModel{inner_extra}):", "    a: int = 1",
             "    b: Optional[str] = None", "", f"class Outer(BaseModel{outer_extra}):"]
    given_block: dict[str, Any] = {}
    for i, kind in enumerate(kinds):
        annotation, default, value = FIELD_KINDS[kind]
        lines.append(f"    f{i}: {annotation}" + (f" = {default}" if default else ""))
        if default is None or draw(st.booleans()):
            given_block[f"f{i}"] = value
        if kind == "nested" and f"f{i}" in given_block and draw(st.booleans()):
            given_block[f"f{i}"] = {"a": 6, "extra_inner": True}
        if kind in ("optional", "nested_optional") and draw(st.booleans()):
            given_block[f"f{i}"] = None
    if draw(st.booleans()):
        given_block["zz"] = "an extra key"
    return "\n".join(lines) + "\n", given_block, draw(st.booleans())


def _models(source: str) -> dict[str, Any]:
    """The generated classes, made by pydantic (a module of their own, which pydantic
    resolves their annotations in)."""
    module = types.ModuleType("generated_models")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "<generated models>", "exec"), module.__dict__)  # our source
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def _dumped(value: object) -> object:
    return instance_dump(value, False) if isinstance(value, Instance) else value


@settings(max_examples=80, deadline=None)
@given(cases())
def test_what_the_check_makes_of_a_model_is_what_pydantic_makes(
        case: tuple[str, dict[str, Any], bool]) -> None:
    source, block, exclude_none = case
    real = _models(source)["Outer"](**block)
    with tempfile.TemporaryDirectory() as folder:
        root = write(Path(folder), {"nemo_rl/__init__.py": "", "nemo_rl/gen.py": source})
        tree = tree_source(root)
        module = tree.module("nemo_rl.gen")
        assert module is not None
        outer = module.classes["Outer"]
        assert dump(tree, outer, block, exclude_none) == real.model_dump(
            exclude_none=exclude_none)
        made = construct(tree, outer, [], block)
        assert isinstance(made, Instance), made
        assert instance_dump(made, exclude_none) == real.model_dump(exclude_none=exclude_none)
        assert made.extra == real.model_extra
        for name in type(real).model_fields:
            field = getattr(real, name)
            assert _dumped(made.values[name]) == (
                field.model_dump() if isinstance(field, pydantic.BaseModel) else field)


def test_a_required_field_left_out_is_not_made() -> None:
    """pydantic refuses it (a ValidationError); the check says so instead of making one."""
    with tempfile.TemporaryDirectory() as folder:
        source = "from pydantic import BaseModel\n\nclass Outer(BaseModel):\n    f0: int\n"
        root = write(Path(folder), {"nemo_rl/__init__.py": "", "nemo_rl/gen.py": source})
        tree = tree_source(root)
        module = tree.module("nemo_rl.gen")
        assert module is not None
        with pytest.raises(pydantic.ValidationError):
            _models(source)["Outer"]()
        assert construct(tree, module.classes["Outer"], [], {}) == (
            "Outer.f0 is required or has no default this check computes")
        assert dump(tree, module.classes["Outer"], {}, False) == (
            "Outer.f0 is required or has no default this check computes")
