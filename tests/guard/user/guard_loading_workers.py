"""The user's extensions of the fork's `LoadingWorkerImpl` (tests/guard/fork_loading_driver.py.txt,
in the fork's nemo_rl): imported by upstream's initializer actors by FQN, never by the test
process (the reference runtime, which type checkers see as nemo_rl, has no such module)."""

from typing import TYPE_CHECKING

import ray

if TYPE_CHECKING:

    class LoadingWorkerImpl:
        def echo(self, value: int) -> int: ...
else:
    from nemo_rl.models.echo.loading_driver import LoadingWorkerImpl


@ray.remote(num_cpus=0)
class TaggedLoadingWorker(LoadingWorkerImpl):
    """A correct extension: its base's methods, and one of its own. Neither it nor its base
    has `load`, which the driver calls only in its deferred start."""

    def tag(self) -> str:
        return "tagged"


@ray.remote(num_cpus=0)
class EchoHidingWorker(LoadingWorkerImpl):
    """Hides `echo`, which its base has and the driver calls: the mistake under test."""

    echo = None  # type: ignore[assignment]  # the mistake under test
