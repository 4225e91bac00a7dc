"""Which of the driver's Protocols the workers' interpreter judges a class against: the
role whose default worker the live class's MRO holds, else the driver's one Protocol; and
which of the driver's calls it asks the class for: none its base fails itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nemo_rl_workers.guard.worker_check import METHOD_RULE, chosen, probe


class MegatronWorker:
    pass


class DTensorWorker:
    pass


class UsersMegatronWorker(MegatronWorker):
    pass


class UsersOwnWorker:
    pass


def _fqn(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


ROLES = ((_fqn(MegatronWorker), "MegatronProtocol", "megatron text"),
         (_fqn(DTensorWorker), "DTensorProtocol", "dtensor text"))


def test_the_role_the_class_extends_is_the_one_judged() -> None:
    assert chosen(UsersMegatronWorker, ROLES) == ("megatron text", "MegatronProtocol")
    assert chosen(DTensorWorker, ROLES) == ("dtensor text", "DTensorProtocol")


def test_a_class_of_its_own_is_judged_only_where_the_driver_has_one_protocol() -> None:
    assert chosen(UsersOwnWorker, ROLES) is None
    assert chosen(UsersOwnWorker, ROLES[1:]) == ("dtensor text", "DTensorProtocol")
    assert chosen(UsersOwnWorker, ()) is None


LIVE = '''\
class DefaultImpl:
    def echo(self, value):
        return value


class Default(DefaultImpl):
    pass


class Tagged(DefaultImpl):
    def tag(self):
        return "tagged"


class Hiding(DefaultImpl):
    echo = None


class Own:
    def echo(self, value):
        return value
'''


def test_the_probe_asks_a_class_only_for_what_its_base_has(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's default worker lacks `load` (called only on a path of its own): an
    extension of its base is not asked for it, nor is a class extending none; a class
    hiding its base's `echo` is asked, and the answer says it is no method there."""
    (tmp_path / "live_workers.py").write_text(LIVE)
    monkeypatch.syspath_prepend(str(tmp_path))
    mro = ("live_workers.Default", "live_workers.DefaultImpl", "builtins.object")
    bases = (("live_workers.Default", mro, ("load",)),)
    calls = [("echo", 0, ("value",)), ("load", 0, ())]
    where = f"the workers' interpreter ({sys.executable})"
    assert probe("live_workers.Tagged", calls, (), bases) == []
    assert probe("live_workers.Own", calls, (), bases) == []
    assert probe("live_workers.Hiding", calls, (), bases) == [
        (METHOD_RULE, f"has no method echo in {where} (it is a NoneType there)", "echo")]
    # Without the bases (as before): `load` was asked of every class.
    assert probe("live_workers.Tagged", calls) == [
        (METHOD_RULE, f"has no method load in {where}", "load")]
