"""What the `.pth` start-up line runs when `NEMO_RL_WORKERS_GUARD` is set: arm the hooks.

Costs one `wrapt` import and one post-import hook registration; imports nothing of
NeMo-RL (the hook runs when the user's program imports upstream's worker groups).
"""

from __future__ import annotations

import os

from nemo_rl_workers.guard import ENV
from nemo_rl_workers.guard.fail_open import fail_open

WORKER_GROUPS = "nemo_rl.distributed.worker_groups"
_armed = False


def armed() -> bool:
    return os.environ.get(ENV, "0") not in ("", "0")


def arm() -> None:
    """Register the post-import hooks once; never raises (but under --strict)."""
    global _armed
    if _armed:
        return
    _armed = True
    try:
        import wrapt

        from nemo_rl_workers.guard import hooks

        wrapt.register_post_import_hook(hooks.on_worker_groups, WORKER_GROUPS)
    except Exception as error:  # noqa: BLE001 - fail open: the user's program must run
        fail_open("cannot arm the post-import hooks", error)
