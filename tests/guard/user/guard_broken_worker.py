"""An actor class whose module imports what the workers' interpreter lacks: its source is
fine, its import is not (upstream's initializer actor would meet the ImportError)."""

# The fault under test: a dependency no interpreter here has.
import guard_no_such_dependency  # type: ignore[import-not-found]  # noqa: F401
import ray


@ray.remote(num_cpus=0)
class BrokenWorker:
    def echo(self, value: int) -> int:
        return value
