# mypy: disallow-subclassing-any=False
"""A subclass of an actor class (Ray refuses its definition when the module is imported)."""

from guard_workers import EchoWorker  # type: ignore[import-not-found]  # PYTHONPATH in tests


class LouderWorker(EchoWorker):  # the mistake under test
    def echo(self, value: int) -> tuple[int, int]:
        return 0, value * 2
