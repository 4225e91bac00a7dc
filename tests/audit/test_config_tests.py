"""The config tests kept on the way to a call (`conditions.config_tests`), judged against
configs: each form a caller writes, with the config that agrees, the one that contradicts
it, and the one that does not say."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.interpret.conditions import ConfigTest, config_tests
from nemo_rl_workers.tree.source import read_tree

GEN = {"policy": {"generation": {"backend": "vllm", "colocated": {"enabled": True}}}}


def _tests(tmp_path: Path, body: str) -> tuple[ConfigTest, ...]:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "algo.py").write_text(
        "def train(policy, master_config, other):\n" + textwrap.indent(
            textwrap.dedent(body), "    "))
    tree = read_tree(tmp_path)
    tree.module("pkg.algo")
    (call,) = [c for c in tree.calls if c.callee == "policy.finish"]
    return config_tests(call.guards, tree.function_of(call), call.file)


@pytest.mark.parametrize(("body", "agrees", "contradicts", "silent"), [
    ('if master_config["policy"]["generation"]["backend"] == "vllm":\n    policy.finish()\n',
     GEN, {"policy": {"generation": {"backend": "megatron"}}}, {"policy": {}}),
    ('backend = master_config["policy"]["generation"]["backend"]\n'
     'if backend != "megatron":\n    policy.finish()\n',
     GEN, {"policy": {"generation": {"backend": "megatron"}}}, {}),
    ('gen = master_config["policy"]["generation"]\n'
     'if gen["backend"] in ("vllm", "sglang"):\n    policy.finish()\n',
     GEN, {"policy": {"generation": {"backend": "megatron"}}}, {}),
    ('if not master_config["policy"]["generation"]["colocated"]["enabled"]:\n'
     '    return\npolicy.finish()\n',
     GEN, {"policy": {"generation": {"colocated": {"enabled": False}}}}, {"policy": {}}),
    # `.get` without a default: an absent key is None, so the config does say.
    ('refit = master_config["policy"].get("refit_cfg")\n'
     'if refit is not None:\n    policy.finish()\n',
     {"policy": {"refit_cfg": {"a": 1}}}, {"policy": {}}, None),
    ('if master_config["grpo"]["a"] and master_config["grpo"]["b"]:\n    policy.finish()\n',
     {"grpo": {"a": True, "b": True}}, {"grpo": {"a": True, "b": False}}, {}),
])
def test_each_form_agrees_contradicts_or_is_silent(
    tmp_path: Path, body: str, agrees: dict[str, Any], contradicts: dict[str, Any],
    silent: dict[str, Any] | None,
) -> None:
    tests = _tests(tmp_path, body)
    assert tests
    assert all(t.verdict(agrees) is not False for t in tests)
    assert any(t.verdict(contradicts) is False for t in tests)
    if silent is not None:
        assert all(t.verdict(silent) is None for t in tests)


@pytest.mark.parametrize("body", [
    'if other.ready():\n    policy.finish()\n',  # no key path
    'if master_config["grpo"]["n"] > 3:\n    policy.finish()\n',  # no equality
    'if master_config["grpo"]["mode"] == other:\n    policy.finish()\n',  # no literal
    'if master_config["a"] or master_config["b"]:\n    policy.finish()\n',  # either
])
def test_what_excludes_nothing_is_not_kept(tmp_path: Path, body: str) -> None:
    assert _tests(tmp_path, body) == ()


def test_a_key_path_several_sections_have_is_contradicted_only_by_all(
        tmp_path: Path) -> None:
    (test,) = _tests(tmp_path, 'if other["backend"] == "megatron":\n    policy.finish()\n')
    both = {"policy": {"backend": "vllm"}, "teacher": {"backend": "megatron"}}
    assert test.verdict(both) is True
    assert test.verdict({"policy": {"backend": "vllm"}, "teacher": {"backend": "vllm"}}) \
        is False
    assert test.given(both) == "policy.backend='vllm', teacher.backend='megatron'"


def test_the_values_named_are_short_and_few(tmp_path: Path) -> None:
    (test,) = _tests(tmp_path, 'if other["mode"] == "a":\n    policy.finish()\n')
    hostile: dict[str, Any] = {f"s{i}": {"mode": "x" * 10_000 + "\n"} for i in range(50)}
    hostile["block"] = {"mode": {"deep": {"deeper": [1] * 10_000}}}
    assert test.verdict(hostile) is False
    given = test.given(hostile)
    assert "\n" not in given and len(given) < 300
    assert given.endswith("and 48 more")


def test_a_get_without_the_key_is_named_with_its_default(tmp_path: Path) -> None:
    (test,) = _tests(tmp_path, 'if master_config.get("refit") is not None:\n'
                               '    policy.finish()\n')
    assert test.verdict({"policy": {}}) is False
    assert test.given({"policy": {}}) == "no refit (so None)"
