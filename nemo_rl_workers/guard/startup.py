"""What the `.pth` start-up line runs when `NEMO_RL_WORKERS_GUARD` is set: arm the hooks.

Arming imports nothing beyond the standard library's `importlib` machinery: one finder
goes first on `sys.meta_path` and waits for upstream's `nemo_rl.distributed.worker_groups`.
When the user's program imports that module, the finder lets the import system find and
load it as always and, once the module has run, hands it to `hooks.on_worker_groups`
(which imports wrapt then, and wraps what it wraps with wrapt's function wrappers). So an
armed interpreter that never builds a worker group (every Ray worker process) pays
nothing for wrapt, and the `.pth` line does not depend on where it sorts among the other
`.pth` files that put folders on the path (the folders are all there by the time any
program imports upstream). When it fires, the main program's recipe is checked first
(`recipe_check`). Nothing of NeMo-RL is imported here.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, cast

from nemo_rl_workers.guard import ENV
from nemo_rl_workers.guard.fail_open import fail_open

if TYPE_CHECKING:  # `importlib.abc` costs more at start-up than all the rest: duck types
    import importlib.abc
    import importlib.machinery
    import types
    from collections.abc import Callable, Sequence

WORKER_GROUPS = "nemo_rl.distributed.worker_groups"
_armed = False


def armed() -> bool:
    return os.environ.get(ENV, "0") not in ("", "0")


class _AfterLoad:
    """The module's own loader, then the hook; everything else is the loader's."""

    def __init__(self, loader: Any, hook: Callable[[types.ModuleType], None]) -> None:
        self._loader = loader
        self._hook = hook

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        created: types.ModuleType | None = self._loader.create_module(spec)
        return created

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        self._hook(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, is_package, ...
        return getattr(self._loader, name)


class _Trigger:
    """Finds nothing itself: for upstream's worker-groups module, the spec the finders
    after it give, with the hook run after the module's own code."""

    def __init__(self, name: str, hook: Callable[[types.ModuleType], None]) -> None:
        self.name = name
        self.hook = hook

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        spec: importlib.machinery.ModuleSpec | None = None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if callable(find) else None
            if spec is not None:
                break
        if spec is None:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = cast("importlib.abc.Loader", _AfterLoad(spec.loader, self.hook))
        return spec


def _on_worker_groups(module: types.ModuleType) -> None:
    """The recipe check first (it may refuse the run: nothing of Ray exists yet), then the
    hooks. Each fails open on its own."""
    try:
        from nemo_rl_workers.guard import recipe_check
    except Exception as error:  # noqa: BLE001 - fail open: the user's program must run
        fail_open("cannot check the program's recipe", error,
                  then="the program goes on unchecked")
    else:
        recipe_check.on_worker_groups()
    try:
        from nemo_rl_workers.guard import hooks

        hooks.on_worker_groups(module)
    except Exception as error:  # noqa: BLE001 - fail open: the user's program must run
        fail_open("cannot hook nemo_rl.distributed.worker_groups", error)


def arm() -> None:
    """Wait for upstream's worker groups, once; never raises (but under --strict)."""
    global _armed
    if _armed:
        return
    _armed = True
    try:
        loaded = sys.modules.get(WORKER_GROUPS)
        if loaded is not None:
            _on_worker_groups(loaded)  # imported before arming: hook it now
        else:
            sys.meta_path.insert(0, _Trigger(WORKER_GROUPS, _on_worker_groups))
    except Exception as error:  # noqa: BLE001 - fail open: the user's program must run
        fail_open("cannot arm the post-import hooks", error)
