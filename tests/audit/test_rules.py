"""Every audit rule, and every shape that must not be a finding, on small trees."""

from __future__ import annotations

from pathlib import Path

from tests.audit.tree import audited, keys

WORKERS = '''
import abc


class Base:
    def shared(self, *, data, greedy=False):
        return data

    def finalize(self):
        """A default no-op: cannot fail."""
        pass


class Mixin:
    def from_mixin(self):
        return 1


class SyncWorker(Mixin, Base):
    def generate(self, data, greedy=False):
        return data

    def wake_up(self):
        return True


class AsyncWorker(Base):
    async def generate_async(self, data, greedy=False):
        yield data

    async def wake_up_async(self):
        return True
'''


def test_a_method_no_selectable_worker_has_is_missing(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS, driver_body='''
        def go(self):
            return self.worker_group.run_all_workers_single_data("nope")
    ''', extra={"nemo_rl/algorithms.py": "def train(gen):\n    return gen.go()\n"})
    assert keys(report) == {("missing-method", "Gen.go", "nope", "SyncWorker"),
                            ("missing-method", "Gen.go", "nope", "AsyncWorker")}
    (finding,) = report.findings  # one cause: both MROs end at Base
    assert finding.workers == ("nemo_rl.workers.AsyncWorker", "nemo_rl.workers.SyncWorker")
    assert finding.condition == ()  # async_engine=true or false: always
    assert finding.call == "nemo_rl/driver.py:16"
    assert finding.definition == "nemo_rl/workers.py:5"  # where its MRO ends (Base)
    assert finding.severity == "error"
    assert report.sites == report.resolved == 1


def test_conditional_names_reach_only_the_workers_of_their_branch(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS, driver_body='''
        def wake(self):
            return self.worker_group.run_all_workers_single_data(
                "wake_up_async" if self.cfg["vllm_cfg"]["async_engine"] else "wake_up")

        def wake_by_variable(self):
            method_name = (
                "wake_up_async" if self.cfg["vllm_cfg"]["async_engine"] else "wake_up")
            return self.worker_group.run_all_workers_single_data(method_name)

        def wake_by_branches(self):
            if not self.cfg["vllm_cfg"]["async_engine"]:
                method_name = "wake_up"
            else:
                method_name = "wake_up_async"
            return self.worker_group.run_all_workers_single_data(method_name)

        def only_async(self):
            if not self.cfg["vllm_cfg"].get("async_engine", False):
                return None
            return self.worker_group.run_all_workers_single_data("wake_up_async")

        def from_the_mixin(self):
            if self.cfg["vllm_cfg"]["async_engine"]:
                raise RuntimeError("sync only")
            return self.worker_group.run_all_workers_single_data("from_mixin")
    ''')
    assert report.findings == []
    assert report.sites == report.resolved == 5


def test_a_name_passed_to_a_helper_is_resolved_at_each_caller(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS, driver_body='''
        def _run(self, method_name, **kwargs):
            return self.worker_group.run_all_workers_single_data(method_name, **kwargs)

        def ok(self):
            return self._run("shared", data=1)

        def typo(self):
            return self._run("shraed", data=1)

        def bad_keyword(self):
            return self._run("shared", data=1, colour=2)
    ''')
    assert keys(report) == {
        ("missing-method", "Gen._run", "shraed", "SyncWorker"),
        ("missing-method", "Gen._run", "shraed", "AsyncWorker"),
        ("unknown-keyword", "Gen._run", "shared", "SyncWorker"),
        ("unknown-keyword", "Gen._run", "shared", "AsyncWorker"),
    }
    # The call is where the literal is written: the caller's line.
    assert {f.call for f in report.findings if f.rule == "missing-method"} == {
        "nemo_rl/driver.py:22"}


def test_keywords_and_required_parameters(tmp_path: Path) -> None:
    workers = WORKERS + '''

class Strict(SyncWorker):
    def train(self, data, *, loss_fn, mbs=None):
        return data


class Variadic(Strict):
    def train(self, *args, **kwargs):  # an override that takes anything
        return super().train(*args, **kwargs)
'''
    report = audited(tmp_path, workers=workers, driver_body='''
        def train(self):
            if self.cfg["vllm_cfg"]["async_engine"]:
                return None
            return self.worker_group.run_all_workers_sharded_data(
                "train", data=[1], in_sharded_axes=["data_parallel"],
                common_kwargs={"mbs": 2, "gbs": 4})

        def keyword_only_is_fine(self):
            return self.worker_group.run_all_workers_single_data("shared", data=1)
    ''', extra={"nemo_rl/other.py": '''
from nemo_rl.distributed.worker_groups import RayWorkerBuilder


class Trainer:
    def __init__(self, cfg):
        self.worker_group = RayWorkerBuilder("nemo_rl.workers.Strict", cfg)
        self.variadic = RayWorkerBuilder("nemo_rl.workers.Variadic", cfg)

    def train(self):
        return self.worker_group.run_all_workers_sharded_data(
            "train", data=[1], common_kwargs={"mbs": 2, "gbs": 4})
'''})
    assert keys(report) == {
        # Gen.train: SyncWorker has no train at all.
        ("missing-method", "Gen.train", "train", "SyncWorker"),
        # Trainer: Strict never gets loss_fn, and has no gbs; Variadic takes anything.
        ("required-not-sent", "Trainer.train", "train", "Strict"),
        ("unknown-keyword", "Trainer.train", "train", "Strict"),
    }
    messages = {f.rule: f.message for f in report.findings if f.driver == "Trainer.train"}
    assert "never sends loss_fn" in messages["required-not-sent"]
    assert "sends gbs=" in messages["unknown-keyword"]


def test_stream_consumption_must_match_a_generator(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS + '''

class Streamer(AsyncWorker):
    def not_a_stream(self, data, greedy=False):
        return data
''', driver_body='''
        async def stream(self, data):
            if not self.cfg["vllm_cfg"]["async_engine"]:
                raise RuntimeError("async only")
            ref = self.worker_group.run_single_worker_single_data(
                "generate_async", worker_idx=0, data=data, greedy=False)
            return await anext(ref)

        async def wrong_stream(self, data):
            ref = self.worker_group.run_single_worker_single_data(
                "shared", worker_idx=0, data=data)
            async for item in ref:
                yield item

        def wrong_value(self, data):
            if not self.cfg["vllm_cfg"]["async_engine"]:
                return None
            return ray.get(self.worker_group.run_all_workers_single_data(
                "generate_async", data=data))

        def async_def_alone_is_fine(self):
            if self.cfg["vllm_cfg"]["async_engine"]:
                return ray.get(self.worker_group.run_all_workers_single_data("wake_up_async"))
            return None
    ''')
    assert keys(report) == {
        ("stream-mismatch", "Gen.wrong_stream", "shared", "SyncWorker"),
        ("stream-mismatch", "Gen.wrong_stream", "shared", "AsyncWorker"),
        ("stream-mismatch", "Gen.wrong_value", "generate_async", "AsyncWorker"),
    }


def test_stub_bodies_warn_and_default_no_ops_do_not(tmp_path: Path) -> None:
    workers = WORKERS.replace("class SyncWorker(Mixin, Base):", '''class Interface(abc.ABC):
    @abc.abstractmethod
    def abstract_one(self):
        ...

    def interface_default(self):
        pass


class SyncWorker(Mixin, Base, Interface):
    def not_yet(self):
        raise NotImplementedError("later")
''')
    report = audited(tmp_path, workers=workers, driver_body='''
        def calls(self):
            if self.cfg["vllm_cfg"]["async_engine"]:
                return None
            for name in ():
                pass
            self.worker_group.run_all_workers_single_data("not_yet")
            self.worker_group.run_all_workers_single_data("abstract_one")
            self.worker_group.run_all_workers_single_data("interface_default")
            self.worker_group.run_all_workers_single_data("finalize")
            return self.worker_group.shutdown(cleanup_method="finalize")
    ''')
    assert keys(report) == {
        ("stub-body", "Gen.calls", "not_yet", "SyncWorker"),
        ("stub-body", "Gen.calls", "abstract_one", "SyncWorker"),
    }
    assert {f.severity for f in report.findings} == {"warning"}
    assert report.sites == 5  # shutdown(cleanup_method=...) is a dispatch too


STUB_DRIVER = '''
    def calls(self):
        self.worker_group.run_all_workers_single_data("offload")
        self.worker_group.run_all_workers_single_data("declared")
'''


def _stub_workers(offload: str) -> str:
    """A concrete worker whose ancestors are an ABC and an interface; `offload`'s body."""
    return f'''
import abc


class WorkerInterface(abc.ABC):
    @abc.abstractmethod
    def declared(self):
        ...


class SyncWorker(WorkerInterface):
    def offload(self):
        {offload}

    def declared(self):
        return 1


class AsyncWorker(SyncWorker):
    pass
'''


def test_a_not_implemented_body_in_a_concrete_worker_is_a_stub(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=_stub_workers("raise NotImplementedError"),
                     driver_body=STUB_DRIVER)
    assert keys(report) == {("stub-body", "Gen.calls", "offload", "SyncWorker"),
                            ("stub-body", "Gen.calls", "offload", "AsyncWorker")}


def test_a_pass_or_ellipsis_in_a_concrete_worker_is_a_no_op(tmp_path: Path) -> None:
    """Its ancestors (an ABC, an `...Interface`) do not make a concrete no-op a stub."""
    for index, body in enumerate(("pass", "...", '"""Nothing to offload."""')):
        report = audited(tmp_path / str(index), workers=_stub_workers(body),
                         driver_body=STUB_DRIVER)
        assert report.findings == [], body


def test_quantized_override_maps_add_their_workers(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS + '''

class QuantSyncWorker(Base):
    def wake_up(self):
        return True
''', driver_body='''
        def gen(self):
            if self.cfg["vllm_cfg"]["async_engine"]:
                return None
            return self.worker_group.run_all_workers_single_data("from_mixin")
    ''', extra={"nemo_rl/overrides.py": '''
GENERATION_WORKER_OVERRIDES = {
    "nemo_rl.workers.SyncWorker": "nemo_rl.workers.QuantSyncWorker",
}
'''})
    assert keys(report) == {("missing-method", "Gen.gen", "from_mixin", "QuantSyncWorker")}


def test_direct_handle_calls_are_checked(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS, driver_body='''
        def first(self):
            if not self.cfg["vllm_cfg"]["async_engine"]:
                return None
            worker = self.worker_group.workers[0]
            refs = worker.generate_async.options(num_returns="streaming").remote(data=1)
            return refs

        def each(self):
            return ray.get([w.wake_upp.remote() for w in self.worker_group.workers])
    ''')
    assert keys(report) == {("missing-method", "Gen.each", "wake_upp", "SyncWorker"),
                            ("missing-method", "Gen.each", "wake_upp", "AsyncWorker")}


def test_a_name_that_is_not_a_literal_is_listed_unresolved(tmp_path: Path) -> None:
    report = audited(tmp_path, workers=WORKERS, driver_body='''
        def dynamic(self, suffix):
            return self.worker_group.run_all_workers_single_data(f"wake_{suffix}")

        def passthrough(self, method_name):
            return self.worker_group.run_all_workers_single_data(method_name)
    ''')
    assert report.findings == []
    assert report.sites == 2 and report.resolved == 0
    assert [u.function for u in report.unresolved] == ["Gen.dynamic", "Gen.passthrough"]


def test_handles_held_in_an_attribute_are_checked_against_their_one_class(
    tmp_path: Path,
) -> None:
    report = audited(tmp_path, workers=WORKERS + '''

class EnvWorker:
    def execute(self, message, metadata):
        return message
''', driver_body='''
        def unused(self):
            return None
    ''', extra={"nemo_rl/env.py": '''
import ray
from nemo_rl.workers import EnvWorker


class Env:
    def __init__(self):
        self.workers = [EnvWorker.options(num_cpus=0).remote() for _ in range(2)]

    def step(self, chunks):
        ok = [self.workers[i].execute.remote(c, {}) for i, c in enumerate(chunks)]
        bad = [self.workers[i].exec.remote(c) for i, c in enumerate(chunks)]
        short = self.workers[0].execute.remote(chunks)
        return ray.get(ok + bad + [short])
'''})
    assert keys(report) == {("missing-method", "Env.step", "exec", "EnvWorker"),
                            ("required-not-sent", "Env.step", "execute", "EnvWorker")}


def test_bases_outside_the_tree_come_from_the_stubs_or_are_undecided(tmp_path: Path) -> None:
    from nemo_rl_workers.checks.audit import audit
    from nemo_rl_workers.checks.audit.run import stub_roots
    from tests.audit.tree import write_tree

    root = write_tree(tmp_path, workers='''
from vllm import LLM


class SyncWorker(LLM):
    pass


class AsyncWorker(LLM):
    pass
''', driver_body='''
        def go(self):
            self.worker_group.run_all_workers_single_data("generate", prompts=["x"])
            return self.worker_group.run_all_workers_single_data("no_such_method")
    ''')
    stubs = stub_roots()
    assert stubs, "vllm-stubs is installed by make setup"
    with_stubs = audit(root, stubs=stubs)
    assert {(f.rule, f.method) for f in with_stubs.findings} == {
        ("missing-method", "no_such_method")}
    assert with_stubs.undecided == []
    without = audit(root, stubs=[])
    assert without.findings == []
    assert {(u.method, u.worker.rsplit(".", 1)[-1]) for u in without.undecided} == {
        ("generate", "SyncWorker"), ("generate", "AsyncWorker"),
        ("no_such_method", "SyncWorker"), ("no_such_method", "AsyncWorker")}
    assert "vllm.LLM are outside the tree" in without.undecided[0].reason
