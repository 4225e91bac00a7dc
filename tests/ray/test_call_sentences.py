"""The sentence of a failed call, from every rank's outcome (pure: no cluster needed)."""

from __future__ import annotations

from nemo_rl.distributed.call_errors import (
    RankOutcome,
    WorkerCallError,
    as_instance_of_cause,
    failure_sentence,
)

FQN = "my_ext.MyWorker"
NODE = "3f2a9c1d" + "0" * 48


def sentence(*outcomes: RankOutcome, timeout: float | None = None) -> str:
    return failure_sentence("train", FQN, len(outcomes), outcomes, call_timeout_s=timeout,
                            settle_s=3.0)[2]


def ok(rank: int) -> RankOutcome:
    return RankOutcome(rank, "ok", NODE)


def test_one_raising_rank_reads_as_the_issue_asks() -> None:
    raised = RankOutcome(1, "raised", NODE, error_type="RuntimeError", message="boom")
    assert sentence(ok(0), raised) == (
        "train failed on rank 1 of 2 (my_ext.MyWorker on node 3f2a9c1d…): RuntimeError: boom")


def test_different_errors_on_several_ranks_are_listed_per_rank() -> None:
    a = RankOutcome(1, "raised", NODE, error_type="RuntimeError", message="a")
    b = RankOutcome(3, "raised", "9b1c" * 14, error_type="ValueError", message="b")
    assert sentence(ok(0), a, ok(2), b) == (
        "train failed on ranks 1, 3 of 4 (my_ext.MyWorker on nodes 3f2a9c1d…, 9b1c9b1c…): "
        "rank 1: RuntimeError: a; rank 3: ValueError: b")


def test_a_message_is_one_line_without_colours_and_bounded() -> None:
    raised = RankOutcome(0, "raised", None, error_type="E",
                         message="\x1b[31mred\x1b[0m\tfirst\nsecond line\n" + "x" * 1000)
    text = sentence(raised)
    assert text == "train failed on rank 0 of 1 (my_ext.MyWorker): E: red\\tfirst"
    long = sentence(RankOutcome(0, "raised", None, error_type="E", message="y" * 1000))
    assert len(long) < 400 and long.endswith("…")


def test_a_peer_that_failed_because_of_the_faulty_rank_is_named_after_it() -> None:
    bad = RankOutcome(1, "raised", NODE, error_type="ValueError", message="bad shard")
    peer = RankOutcome(0, "raised", NODE, error_type="DataParallelError", message="…",
                       consequence=True)
    assert sentence(peer, bad).endswith("ValueError: bad shard; rank 0 failed because of it")


def test_a_death_with_a_blocked_peer() -> None:
    died = RankOutcome(1, "died", NODE, cause="its node was lost")
    blocked = RankOutcome(0, "blocked", NODE, waiting_in="the data-parallel all-reduce",
                          waited_s=4.0)
    kind, faulty, text = failure_sentence("train", FQN, 2, [blocked, died])
    assert (kind, [o.rank for o in faulty]) == ("died", [1])
    assert text.endswith("the worker died (its node was lost); rank 0 is blocked in the "
                         "data-parallel all-reduce waiting for it")


def test_a_rank_blocked_for_ranks_not_called_and_a_cancelled_call() -> None:
    blocked = RankOutcome(0, "blocked", None, waiting_in="the data-parallel all-reduce")
    assert sentence(blocked, timeout=5) == (
        "train hung on rank 0 of 1 (my_ext.MyWorker): no answer within 5 s (call_timeout_s), "
        "blocked in the data-parallel all-reduce waiting for ranks not in this call")
    cancelled = RankOutcome(1, "cancelled", None)
    assert sentence(ok(0), cancelled) == (
        "train was cancelled on rank 1 of 2 (my_ext.MyWorker): the call was cancelled")


def test_the_error_carries_every_field() -> None:
    raised = RankOutcome(1, "raised", NODE, error_type="RuntimeError", message="boom",
                         traceback="Traceback ...")
    err = WorkerCallError.from_outcomes("train", FQN, 2, [ok(0), raised])
    assert (err.kind, err.ranks, err.nodes, err.method, err.fqn, err.world_size) == (
        "raised", (1,), (NODE,), "train", FQN, 2)
    assert (err.error_type, err.error_message, err.remote_traceback) == (
        "RuntimeError", "boom", "Traceback ...")
    assert err.__notes__ == ["rank 0 on node 3f2a9c1d…: answered\n"
                             "rank 1 on node 3f2a9c1d…: raised RuntimeError: boom"]


def test_the_error_is_also_an_instance_of_the_remote_exceptions_class() -> None:
    class RemoteError(ValueError):
        def __init__(self, code: int) -> None:
            super().__init__(f"code {code}")
            self.code = code

    raised = RankOutcome(0, "raised", None, error_type="RemoteError", message="code 7")
    err = WorkerCallError.from_outcomes("train", FQN, 1, [raised])
    dual = as_instance_of_cause(err, RemoteError(7))
    assert isinstance(dual, RemoteError)
    assert str(dual) == str(err) and dual.ranks == (0,) and dual.code == 7
    assert dual.__notes__ == err.__notes__
    # A class whose layout cannot combine with WorkerCallError's: the error as it is.
    assert as_instance_of_cause(err, FileNotFoundError(2, "gone")) is err
