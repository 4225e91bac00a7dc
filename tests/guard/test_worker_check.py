"""Which of the driver's Protocols the workers' interpreter judges a class against: the
role whose default worker the live class's MRO holds, else the driver's one Protocol."""

from __future__ import annotations

from nemo_rl_workers.guard.worker_check import chosen


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
