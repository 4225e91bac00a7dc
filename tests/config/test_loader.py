"""load_config: NeMo-RL's `defaults:` inheritance, interpolation and overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.reading.loader import (
    ConfigLoadError,
    key_line,
    key_lines,
    load_config,
    load_config_located,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BASE = FIXTURES / "base.yaml"
MIXIN = FIXTURES / "mixin.yaml"
CHILD = FIXTURES / "recipes" / "llm" / "child.yaml"
GRANDCHILD = FIXTURES / "recipes" / "llm" / "grandchild.yaml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def plain_types(value: object) -> set[type]:
    """Every container/leaf type in a loaded config."""
    found: set[type] = {type(value)}
    if isinstance(value, dict):
        for k, v in value.items():
            found |= plain_types(k) | plain_types(v)
    elif isinstance(value, list):
        for v in value:
            found |= plain_types(v)
    return found


def test_string_defaults_relative_to_a_nested_folder() -> None:
    cfg = load_config(CHILD)
    policy = cfg["policy"]
    assert policy["model_name"] == "child-model"
    assert policy["precision"] == "bfloat16"  # inherited from ../../base.yaml
    # Interpolation resolves after merging: the child's length reaches the parent's reference.
    assert policy["generation"]["max_new_tokens"] == 1024
    assert policy["logprob_batch_size"] == 4
    assert "defaults" not in cfg
    assert cfg["tags"] == ["c"]  # lists are replaced, not merged


def test_override_marker_replaces_the_inherited_section_and_disappears() -> None:
    cfg = load_config(CHILD)
    assert cfg["policy"]["megatron_cfg"] == {"enabled": False}
    assert cfg["policy"]["automodel_cfg"] == {"enabled": True, "tensor_parallel_size": 1}


def test_list_defaults_nested_chain_and_precedence() -> None:
    cfg = load_config(GRANDCHILD)
    # base <- child, then mixin (a later entry wins over an earlier one), then the file itself.
    assert cfg["data"] == {"dataset": "base_ds", "shuffle": False, "seed": 8}
    assert cfg["logger"] == {"wandb_enabled": False}
    assert cfg["policy"]["model_name"] == "child-model"
    assert cfg["steps"] == 8  # upstream's `mul` resolver
    assert plain_types(cfg) <= {dict, list, str, int, float, bool, type(None)}


def test_top_level_override_marker(tmp_path: Path) -> None:
    write(tmp_path / "parent.yaml", "data: {a: 1, b: 2}\nkeep: {x: 1}\n")
    child = write(
        tmp_path / "child.yaml",
        "defaults: [parent.yaml]\ndata:\n  _override_: true\n  c: 3\nkeep: {y: 2}\n",
    )
    assert load_config(child) == {"data": {"c": 3}, "keep": {"x": 1, "y": 2}}


def test_override_marker_false_merges(tmp_path: Path) -> None:
    write(tmp_path / "parent.yaml", "data: {a: 1}\n")
    child = write(
        tmp_path / "child.yaml", "defaults: parent.yaml\ndata: {_override_: false, b: 2}\n"
    )
    assert load_config(child) == {"data": {"a": 1, "b": 2}}


def test_override_marker_must_be_a_bool(tmp_path: Path) -> None:
    write(tmp_path / "parent.yaml", "data: {a: 1}\n")
    child = write(tmp_path / "child.yaml", "defaults: parent.yaml\ndata: {_override_: 'yes'}\n")
    with pytest.raises(ConfigLoadError) as info:
        load_config(child)
    assert info.value.kind == "defaults"
    assert "data._override_ must be true or false" in info.value.reason


def test_absolute_defaults_and_a_diamond_load(tmp_path: Path) -> None:
    base = write(tmp_path / "shared" / "base.yaml", "x: 1\ny: 1\n")
    write(tmp_path / "a.yaml", f"defaults: {base}\ny: 2\n")
    write(tmp_path / "b.yaml", "defaults: shared/base.yaml\nz: 3\n")
    top = write(tmp_path / "top.yaml", "defaults: [a.yaml, b.yaml]\n")
    # b re-inherits base after a, so base's y=1 wins over a's y=2: depth-first, later wins.
    assert load_config(top) == {"x": 1, "y": 1, "z": 3}


def test_empty_file_is_an_empty_config(tmp_path: Path) -> None:
    assert load_config(write(tmp_path / "empty.yaml", "# nothing\n")) == {}


@pytest.mark.parametrize(
    ("override", "path", "expected"),
    [
        ("policy.quant_cfg=FP8_DEFAULT_CFG", ("policy", "quant_cfg"), "FP8_DEFAULT_CFG"),
        (
            "policy.generation.vllm_cfg.async_engine=true",
            ("policy", "generation", "vllm_cfg", "async_engine"),
            True,
        ),
        ("policy.model_name=", ("policy", "model_name"), ""),
        ("++policy.model_name=null", ("policy", "model_name"), None),
        ("+policy.new_key=1.5e-3", ("policy", "new_key"), 0.0015),
        ("policy.added_leaf=3", ("policy", "added_leaf"), 3),
        ("++brand.new.section=[1, 2]", ("brand", "new", "section"), [1, 2]),
        ("tags.0=z", ("tags",), ["z"]),
    ],
)
def test_overrides(override: str, path: tuple[str, ...], expected: object) -> None:
    node: Any = load_config(CHILD, [override])
    for key in path:
        node = node[key]
    assert node == expected


def test_a_deletion_override_removes_the_key_as_hydra_does() -> None:
    # Upstream's SFT suite scripts launch with `~policy.tokenizer.chat_template`.
    base: Any = load_config(CHILD)
    assert "model_name" in base["policy"]
    assert "model_name" not in load_config(CHILD, ["~policy.model_name"])["policy"]
    shown = base["policy"]["model_name"]
    assert "model_name" not in load_config(CHILD, [f"~policy.model_name={shown}"])["policy"]


def test_override_reaches_interpolations() -> None:
    cfg = load_config(GRANDCHILD, ["policy.train_micro_batch_size=16"])
    assert cfg["policy"]["logprob_batch_size"] == 16
    assert cfg["steps"] == 32


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ("policy.quant_cfg", "malformed override 'policy.quant_cfg'"),
        ("=x", "malformed override"),
        ("policy..x=1", "malformed override"),
        ("policy.missing.key=1", "policy.missing is not in the config; write +policy.missing.key"),
        ("+policy.model_name=x", "policy.model_name already exists"),
        ("policy.model_name.sub=1", "policy.model_name is not a mapping"),
        ("policy.x={a: [1", "the value is not valid YAML"),
        ("~policy.missing", "policy.missing is not in the config, so it cannot be deleted"),
        ("~policy.model_name=not-its-value", "not the value given, so it is not deleted"),
    ],
)
def test_bad_override_is_a_one_line_error(override: str, says: str) -> None:
    with pytest.raises(ConfigLoadError) as info:
        load_config(CHILD, [override])
    err = info.value
    assert err.kind == "override"
    assert says in err.reason
    assert err.file is not None and err.file.endswith("child.yaml")
    assert "\n" not in str(err) and str(err) == f"{err.file}: {err.reason}"


def test_unresolvable_interpolation(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "a: ${nowhere.to_be.found}\n")
    with pytest.raises(ConfigLoadError) as info:
        load_config(cfg)
    assert info.value.kind == "interpolation"
    assert "at a" in info.value.reason and "nowhere" in info.value.reason
    assert "\n" not in str(info.value)


def test_key_line_follows_the_defaults_chain() -> None:
    g, c, m, b = (str(p) for p in (GRANDCHILD, CHILD, MIXIN, BASE))
    assert key_line(GRANDCHILD, "data.seed") == (g, 5)
    assert key_line(GRANDCHILD, "data.shuffle") == (m, 2)  # mixin comes after child
    assert key_line(GRANDCHILD, "data.dataset") == (b, 21)
    assert key_line(GRANDCHILD, "policy.model_name") == (c, 3)
    assert key_line(GRANDCHILD, "policy.precision") == (b, 4)
    assert key_line(GRANDCHILD, "policy.megatron_cfg.enabled") == (c, 7)
    assert key_line(GRANDCHILD, "tags[0]") == (c, 8)


def test_key_line_is_none_for_what_the_result_does_not_hold() -> None:
    # Dropped by `_override_`, replaced by a shorter list, or never a config key.
    assert key_line(GRANDCHILD, "policy.megatron_cfg.tensor_model_parallel_size") is None
    assert key_line(GRANDCHILD, "policy.megatron_cfg._override_") is None
    assert key_line(GRANDCHILD, "tags[1]") is None
    assert key_line(GRANDCHILD, "defaults") is None
    assert key_line(GRANDCHILD, "no.such.key") is None


def test_key_lines_cover_every_loaded_leaf_and_agree_with_load_config_located() -> None:
    loaded = load_config_located(GRANDCHILD)
    assert loaded.lines == key_lines(GRANDCHILD)

    def leaves(node: object, prefix: str) -> list[str]:
        if isinstance(node, dict):
            return [p for k, v in node.items() for p in leaves(v, f"{prefix}.{k}" if prefix else k)]
        if isinstance(node, list):
            return [p for i, v in enumerate(node) for p in leaves(v, f"{prefix}[{i}]")]
        return [prefix]

    assert sorted(leaves(loaded.config, "")) == sorted(
        p for p in loaded.lines if not any(q.startswith((p + ".", p + "[")) for q in loaded.lines)
    )
