"""migrate_text: exact output on small configs with comments, quoting and odd layouts."""

from __future__ import annotations

import pytest

from nemo_rl_workers import default_registry
from nemo_rl_workers.model.migration import migrate_text
from nemo_rl_workers.reading.yaml_edits import MigrationError


def quantized_fqn(role: str, backend: str, mode: str | None = None) -> str:
    """The registry's quantized worker for a row (the FQN `quant_cfg` implies)."""
    row = default_registry().row(role, backend, mode)
    assert row is not None and row.quantized_fqn is not None
    return row.quantized_fqn


MEGATRON_Q = quantized_fqn("policy", "megatron")
AUTOMODEL_Q = quantized_fqn("policy", "automodel")
VLLM_ASYNC_Q = quantized_fqn("generation", "vllm", "async")
VLLM_SYNC_Q = quantized_fqn("generation", "vllm", "sync")


def test_rename_and_drop_keep_comments_quotes_and_spelling() -> None:
    text = (
        "# top comment\n"
        "policy:\n"
        '  model_name: "Qwen/Qwen2.5-1.5B"  # quoted\n'
        "  dtensor_cfg:   # the training backend\n"
        "    _v2: true  # old switch\n"
        "    enabled: True\n"
        "    cpu_offload: False\n"
        "    tensor_parallel_size: ~\n"
        "  make_sequence_length_divisible_by: ${policy.dtensor_cfg.tensor_parallel_size}\n"
        "  other: 'single'   \n"
        "value:  # no worker section, but upstream's check visits it: migrated too\n"
        "  dtensor_cfg:\n"
        "    _v2: true\n"
        "  tp: ${value.dtensor_cfg.tensor_parallel_size}\n"
        "env:\n"
        "  reward_model:\n"
        "    dtensor_cfg: {enabled: true}\n"
        "  other:\n"
        "    dtensor_cfg: {enabled: true}  # not a model section: left alone\n"
    )
    migration = migrate_text(text)
    assert migration.text == (
        "# top comment\n"
        "policy:\n"
        '  model_name: "Qwen/Qwen2.5-1.5B"  # quoted\n'
        "  automodel_cfg:   # the training backend\n"
        "    enabled: True\n"
        "    cpu_offload: False\n"
        "    tensor_parallel_size: ~\n"
        "  make_sequence_length_divisible_by: ${policy.automodel_cfg.tensor_parallel_size}\n"
        "  other: 'single'   \n"
        "value:  # no worker section, but upstream's check visits it: migrated too\n"
        "  automodel_cfg: {}\n"
        "  tp: ${value.automodel_cfg.tensor_parallel_size}\n"
        "env:\n"
        "  reward_model:\n"
        "    automodel_cfg: {enabled: true}\n"
        "  other:\n"
        "    dtensor_cfg: {enabled: true}  # not a model section: left alone\n"
    )
    assert migration.changes == (
        "policy.dtensor_cfg -> policy.automodel_cfg",
        "dropped policy.automodel_cfg._v2",
        "value.dtensor_cfg -> value.automodel_cfg",
        "dropped value.automodel_cfg._v2",
        "env.reward_model.dtensor_cfg -> env.reward_model.automodel_cfg",
        "policy.make_sequence_length_divisible_by: ${policy.dtensor_cfg.tensor_parallel_size}"
        " -> ${policy.automodel_cfg.tensor_parallel_size}",
        "value.tp: ${value.dtensor_cfg.tensor_parallel_size}"
        " -> ${value.automodel_cfg.tensor_parallel_size}",
    )


def test_teachers_flow_style_quoted_keys_and_four_space_indent() -> None:
    text = (
        "teacher:\n"
        "    dtensor_cfg: {enabled: true, _v2: false}\n"
        "teachers:\n"
        "    -   model_name: a\n"
        '        "dtensor_cfg":\n'
        "            _v2: false\n"
        "        x: ${mul:${.dtensor_cfg.tensor_parallel_size}, 2}\n"
        "    - dtensor_cfg: {_v2: true}\n"
    )
    migration = migrate_text(text)
    # A block left with nothing in it becomes `{}`: null would wipe an inherited block.
    assert migration.text == (
        "teacher:\n"
        "    automodel_cfg: {enabled: true}\n"
        "teachers:\n"
        "    -   model_name: a\n"
        '        "automodel_cfg": {}\n'
        "        x: ${mul:${.automodel_cfg.tensor_parallel_size}, 2}\n"
        "    - automodel_cfg: {}\n"
    )
    assert "teachers[1].dtensor_cfg -> teachers[1].automodel_cfg" in migration.changes
    assert "dropped teachers[0].automodel_cfg._v2" in migration.changes


def test_v2_under_an_already_renamed_block_is_dropped() -> None:
    text = "policy:\n  automodel_cfg:\n    enabled: true\n    _v2: false # last\n  x: 1\n"
    migration = migrate_text(text)
    assert migration.text == "policy:\n  automodel_cfg:\n    enabled: true\n  x: 1\n"
    assert migration.changes == ("dropped policy.automodel_cfg._v2",)


def test_anchors_and_merge_keys_are_migrated_at_their_anchor() -> None:
    text = (
        "policy: &POLICY\n"
        "    dtensor_cfg: &DT\n"
        "        enabled: true\n"
        "        _v2: true\n"
        "    tp: ${.dtensor_cfg.enabled}\n"
        "teacher:\n"
        "    <<: *POLICY\n"
        "    dtensor_cfg:\n"
        "        <<: *DT\n"
        "        cpu_offload: true\n"
    )
    assert migrate_text(text).text == (
        "policy: &POLICY\n"
        "    automodel_cfg: &DT\n"
        "        enabled: true\n"
        "    tp: ${.automodel_cfg.enabled}\n"
        "teacher:\n"
        "    <<: *POLICY\n"
        "    automodel_cfg:\n"
        "        <<: *DT\n"
        "        cpu_offload: true\n"
    )


def test_anchor_shared_with_a_non_worker_section_is_refused() -> None:
    # Dropping `_v2` at the anchor would silently change `value` too.
    text = "policy:\n  dtensor_cfg: &DT\n    _v2: true\n    enabled: true\nvalue:\n  cfg: *DT\n"
    with pytest.raises(MigrationError, match="cannot be rewritten safely"):
        migrate_text(text)


def test_unchanged_text_is_returned_byte_for_byte() -> None:
    text = (
        "defaults: ../../grpo_math_1B.yaml   \n"
        "policy:\n"
        "    automodel_cfg:\n"
        "        enabled: False\n"
        "    quant_cfg: ~\n"
        "    tokens: [ 'a',\"b\" ]   # odd spacing\n"
        "grpo:\n"
        "  - {x:  1}\n"
    )
    migration = migrate_text(text, explicit_workers=True)
    assert migration.text == text
    assert not migration.changed
    assert migrate_text("").text == ""
    assert not migrate_text("# only a comment\n").changed


def test_crlf_line_endings_are_kept() -> None:
    text = "policy:\r\n  dtensor_cfg:\r\n    _v2: true\r\n    enabled: true\r\n"
    assert migrate_text(text).text == "policy:\r\n  automodel_cfg:\r\n    enabled: true\r\n"


def test_both_old_and_new_block_is_an_error_naming_both() -> None:
    text = "policy:\n  dtensor_cfg: {enabled: true}\n  automodel_cfg: {enabled: true}\n"
    with pytest.raises(MigrationError) as info:
        migrate_text(text)
    assert str(info.value) == (
        "policy has both dtensor_cfg and automodel_cfg; "
        "merge policy.dtensor_cfg into policy.automodel_cfg by hand"
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("policy: [unclosed\n", "invalid YAML"),
        ("policy:\n  a: 1\n  a: 2\n", "line 3, .*duplicate key a"),
        ("- a\n- b\n", "the top level must be a mapping"),
    ],
)
def test_unusable_yaml_raises_one_line(text: str, reason: str) -> None:
    with pytest.raises(MigrationError, match=reason) as info:
        migrate_text(text)
    assert "\n" not in str(info.value)


def test_migrating_twice_changes_nothing() -> None:
    text = (
        "policy:\n  quant_cfg: FP8_DEFAULT_CFG\n  dtensor_cfg:\n    _v2: true\n    enabled: true\n"
        "  generation:\n    backend: vllm\n    quant_cfg: FP8_DEFAULT_CFG\n"
    )
    once = migrate_text(text, explicit_workers=True)
    assert once.changed
    twice = migrate_text(once.text, explicit_workers=True)
    assert not twice.changed
    assert twice.text == once.text


# ----------------------------------------------------------------- explicit workers


def test_explicit_workers_writes_the_implied_fqn_next_to_quant_cfg() -> None:
    text = (
        "policy:\r\n"
        "  quant_cfg: FP8_DEFAULT_CFG  # fp8\r\n"
        "  megatron_cfg:\r\n"
        "    enabled: true\r\n"
        "  generation:\r\n"
        "    backend: vllm\r\n"
        "    quant_cfg: FP8_DEFAULT_CFG\r\n"
        "    vllm_cfg:\r\n"
        "      async_engine: true\r\n"
    )
    migration = migrate_text(text, explicit_workers=True)
    assert migration.text == (
        "policy:\r\n"
        "  quant_cfg: FP8_DEFAULT_CFG  # fp8\r\n"
        f"  worker_extension_cls_fqn: {MEGATRON_Q}\r\n"
        "  megatron_cfg:\r\n"
        "    enabled: true\r\n"
        "  generation:\r\n"
        "    backend: vllm\r\n"
        "    quant_cfg: FP8_DEFAULT_CFG\r\n"
        f"    worker_extension_cls_fqn: {VLLM_ASYNC_Q}\r\n"
        "    vllm_cfg:\r\n"
        "      async_engine: true\r\n"
    )
    assert migration.changes == (
        f"set policy.worker_extension_cls_fqn={MEGATRON_Q}",
        f"set policy.generation.worker_extension_cls_fqn={VLLM_ASYNC_Q}",
    )
    assert not migrate_text(text).changed  # only on request


def test_explicit_workers_leaves_existing_fqn_null_quant_and_other_backends() -> None:
    text = (
        "policy:\n"
        "  quant_cfg: null\n"
        "  automodel_cfg: {enabled: true}\n"
        "  generation:\n"
        "    backend: sglang\n"
        "teachers:\n"
        "  - quant_cfg: FP8_DEFAULT_CFG\n"
        "    automodel_cfg: {enabled: true}\n"
        f"    worker_extension_cls_fqn: {AUTOMODEL_Q}\n"
    )
    assert not migrate_text(text, explicit_workers=True).changed


def test_explicit_workers_in_a_sequence_item_and_with_an_old_block_name() -> None:
    text = (
        "teachers:\n"
        "  - quant_cfg: FP8_DEFAULT_CFG\n"
        "    dtensor_cfg:\n"
        "      enabled: true\n"
        "      _v2: true\n"
    )
    assert migrate_text(text, explicit_workers=True).text == (
        "teachers:\n"
        "  - quant_cfg: FP8_DEFAULT_CFG\n"
        f"    worker_extension_cls_fqn: {AUTOMODEL_Q}\n"
        "    automodel_cfg:\n"
        "      enabled: true\n"
    )


def test_explicit_workers_takes_the_backend_from_the_merged_config() -> None:
    # A child that sets quant_cfg only; the backend and vLLM mode come from its parent.
    child = (
        "defaults: parent.yaml\npolicy:\n  quant_cfg: FP8_DEFAULT_CFG\n"
        "  generation:\n    quant_cfg: FP8_DEFAULT_CFG\n"
    )
    merged = {
        "policy": {
            "quant_cfg": "FP8_DEFAULT_CFG",
            "megatron_cfg": {"enabled": False},
            "dtensor_cfg": {"enabled": True},  # a parent not yet migrated
            "generation": {"backend": "vllm", "quant_cfg": "FP8_DEFAULT_CFG",
                           "vllm_cfg": {"async_engine": False}},
        }
    }
    migration = migrate_text(child, explicit_workers=True, merged=merged)
    assert migration.text == (
        "defaults: parent.yaml\n"
        "policy:\n"
        "  quant_cfg: FP8_DEFAULT_CFG\n"
        f"  worker_extension_cls_fqn: {AUTOMODEL_Q}\n"
        "  generation:\n"
        "    quant_cfg: FP8_DEFAULT_CFG\n"
        f"    worker_extension_cls_fqn: {VLLM_SYNC_Q}\n"
    )


def test_explicit_workers_inherited_quant_cfg_goes_after_the_section_key() -> None:
    child = "policy:  # overrides\n  # the backend\n  megatron_cfg:\n    enabled: true\n"
    merged = {"policy": {"quant_cfg": "FP8_DEFAULT_CFG", "megatron_cfg": {"enabled": True},
                         "automodel_cfg": {"enabled": False}}}
    assert migrate_text(child, explicit_workers=True, merged=merged).text == (
        "policy:  # overrides\n"
        f"  worker_extension_cls_fqn: {MEGATRON_Q}\n"
        "  # the backend\n"
        "  megatron_cfg:\n"
        "    enabled: true\n"
    )


def test_explicit_workers_replaces_an_inherited_fqn_of_another_backend() -> None:
    # The parent was made explicit for Megatron; this child switches to Automodel (else R5).
    child = "policy:\n  megatron_cfg: {enabled: false}\n  automodel_cfg: {enabled: true}\n"
    merged = {"policy": {"quant_cfg": "FP8_DEFAULT_CFG", "megatron_cfg": {"enabled": False},
                         "automodel_cfg": {"enabled": True},
                         "worker_extension_cls_fqn": MEGATRON_Q}}
    migration = migrate_text(child, explicit_workers=True, merged=merged)
    assert migration.text == (
        "policy:\n"
        f"  worker_extension_cls_fqn: {AUTOMODEL_Q}\n"
        "  megatron_cfg: {enabled: false}\n"
        "  automodel_cfg: {enabled: true}\n"
    )
    assert migration.changes == (
        f"set policy.worker_extension_cls_fqn={AUTOMODEL_Q} "
        f"(the inherited {MEGATRON_Q} is for the megatron backend)",
    )


def test_explicit_workers_warns_when_the_backend_is_undecidable() -> None:
    text = "policy:\n  quant_cfg: FP8_DEFAULT_CFG\n"
    migration = migrate_text(text, explicit_workers=True)
    assert not migration.changed
    assert len(migration.warnings) == 1
    assert migration.warnings[0].startswith(
        "policy.worker_extension_cls_fqn not made explicit: policy: neither Megatron nor Automodel"
    )


def test_an_edit_that_would_break_the_yaml_is_refused() -> None:
    # `{}` cannot follow the colon here (an anchor sits there); refuse rather than corrupt.
    text = "policy:\n  dtensor_cfg: &DT\n    _v2: true\n"
    with pytest.raises(MigrationError, match="cannot be rewritten safely"):
        migrate_text(text)
