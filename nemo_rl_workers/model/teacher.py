"""R8: a frozen teacher's policy config, derived from the student's policy section.

A teacher is only ever run for log-probs, unquantized and on the default worker,
with its own weights: its config is a deep copy of the student's with every
quantization setting, the worker override and every key that would load the
student's weights removed. The student's config is never touched.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from typing import Any

from nemo_rl_workers.errors import show
from nemo_rl_workers.model.sections import quant_cfg_of

DROPPED_KEYS: frozenset[str] = frozenset(
    {"real_quant", "real_quant_ignore", "worker_extension_cls_fqn"}
)
"""Keys removed from the teacher section and from its `generation` subsection."""
QUANT_PREFIX = "quant_"
"""Every `quant_*` key but `quant_cfg` (which is cleared to null) is removed too."""
WEIGHT_KEYS: frozenset[str] = frozenset({"pretrained_checkpoint", "checkpoint_path"})
"""Keys that load the student's own weights (a Megatron-Bridge / Megatron-LM checkpoint,
a checkpoint directory): removed, with a warning, from the teacher section and from each
of its `<backend>_cfg` blocks, so the teacher loads the model it names, as upstream does."""


def _strip(block: dict[Any, Any], path: str) -> None:
    cleared = quant_cfg_of(block)
    if cleared is not None:
        warnings.warn(
            f"{path}.quant_cfg cleared to null for the frozen teacher (the student policy "
            f"has {show(cleared)}): a teacher runs unquantized on its default worker.",
            UserWarning,
            stacklevel=3,
        )
    if "quant_cfg" in block:
        block["quant_cfg"] = None
    for key in [k for k in block if isinstance(k, str)]:
        if key in DROPPED_KEYS or (key.startswith(QUANT_PREFIX) and key != "quant_cfg"):
            del block[key]


def _drop_weights(section: dict[Any, Any], path: str) -> None:
    blocks = [(section, path)] + [
        (block, f"{path}.{key}")
        for key, block in section.items()
        if isinstance(key, str) and key.endswith("_cfg") and isinstance(block, dict)
    ]
    for block, where in blocks:
        for key in sorted(WEIGHT_KEYS & {k for k in block if isinstance(k, str)}):
            if block[key] is not None:
                warnings.warn(
                    f"{where}.{key} dropped for the frozen teacher (the student policy has "
                    f"{show(block[key])}): it would load the student's weights; a teacher "
                    "loads its own model.",
                    UserWarning,
                    stacklevel=3,
                )
            del block[key]


def derive_teacher_config(student: Mapping[str, Any], *, teacher_index: int) -> dict[str, Any]:
    """The policy section of `teachers[teacher_index]`, derived from `student`.

    Warns (UserWarning, naming the teacher and the value) for each `quant_cfg` it
    clears and each set key of WEIGHT_KEYS it drops. Raises ValueError for a negative
    index.
    """
    if teacher_index < 0:
        raise ValueError(f"teacher_index must be 0 or more, but is {teacher_index}")
    name = f"teachers[{teacher_index}]"
    teacher: dict[str, Any] = dict(copy.deepcopy(student))
    _strip(teacher, name)
    _drop_weights(teacher, name)
    generation = teacher.get("generation")
    if isinstance(generation, Mapping):
        teacher["generation"] = dict(generation)
        _strip(teacher["generation"], f"{name}.generation")
    return teacher
