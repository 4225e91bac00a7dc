"""The guard's model of a tree's drivers, cached by content: built once from source, then
read back whole by the next process; a changed file is a new key; a damaged entry is one
line and the tree is read again. On a small tree this test writes (a fork's driver)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from nemo_rl_workers.cache import codec
from nemo_rl_workers.cache.store import FORMAT, Store, checksum
from nemo_rl_workers.guard import driver_model

DRIVER = Path(__file__).resolve().parent / "fork_echo_driver.py.txt"
WORKER = "nemo_rl.models.echo.echo_driver.EchoDefaultWorker"


def _tree(root: Path) -> Path:
    echo = root / "nemo_rl" / "models" / "echo"
    echo.mkdir(parents=True)
    for folder in (root / "nemo_rl", root / "nemo_rl" / "models", echo):
        (folder / "__init__.py").write_text("")
    shutil.copy(DRIVER, echo / "echo_driver.py")
    return root


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("NEMO_RL_WORKERS_CACHE_DIR", str(folder))
    driver_model.driver_model.cache_clear()  # a new process, as far as the model goes
    return folder


def test_the_model_is_built_once_and_read_back(tmp_path: Path, cache_dir: Path) -> None:
    root = _tree(tmp_path / "fork")
    built = driver_model.driver_model(str(root))
    calls = {(c.method, c.keywords, c.always) for c in built.calls["EchoDriver"]}
    assert calls == {("echo", ("value",), True), ("ping", (), True)}
    assert built.roles["EchoDriver"] == ((WORKER, "EchoDefaultWorkerProtocol"),)
    # Each Protocol a module of its own: the imports it names, and the class.
    protocol = built.protocols["EchoDefaultWorkerProtocol"]
    assert "class EchoDefaultWorkerProtocol(Protocol):" in protocol
    assert "from typing import " in protocol and "class " not in protocol.partition(
        "class EchoDefaultWorkerProtocol")[2]
    [entry] = _models(cache_dir)
    driver_model.driver_model.cache_clear()
    assert driver_model.driver_model(str(root)) == built  # read back, whole
    # A changed module is another key: the next run builds and stores anew.
    driver = root / "nemo_rl" / "models" / "echo" / "echo_driver.py"
    driver.write_text(driver.read_text().replace('"ping"', '"pong"'))
    driver_model.driver_model.cache_clear()
    changed = driver_model.driver_model(str(root))
    assert {c.method for c in changed.calls["EchoDriver"]} == {"echo", "pong"}
    assert len(_models(cache_dir)) == 2
    assert entry.is_file()


def _models(cache_dir: Path) -> list[Path]:
    """The entries that hold a model (not the index of digests, nor the pointer to the
    model last stored)."""
    return [p for p in (cache_dir / f"v{FORMAT}").glob("*.json")
            if json.loads(p.read_text())["computation"] == driver_model.DRIVERS.name]


def _forge(cache: Store, computation: str, key: str, payload: object) -> None:
    """An entry whose checksum holds (anyone can write one), of any payload."""
    cache.entry_path(key).write_text(json.dumps({
        "format": FORMAT, "codec": codec.VERSION, "computation": computation, "key": key,
        "payload": payload, "sha256": checksum(payload)}))


def test_a_damaged_entry_is_one_line_and_read_again(tmp_path: Path, cache_dir: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path / "fork")
    built = driver_model.driver_model(str(root))
    key = driver_model.model_key(root)
    cache = Store.open(cache_dir)
    payload: Any = codec.encode(built)
    payload["calls"]["EchoDriver"][0]["positional"] = "two"  # a count that is no int
    _forge(cache, "guard-drivers", key, payload)  # a valid entry of a damaged model
    driver_model.driver_model.cache_clear()
    assert driver_model.driver_model(str(root)) == built
    [line] = capsys.readouterr().err.splitlines()
    assert line == (f"nemo-rl-workers guard: cache entry {cache.describe(key)} holds a damaged "
                    "model (a str where an int belongs (payload.calls['EchoDriver'][0]"
                    ".positional)); ignored, the tree is read again")
    stored = json.loads(cache.entry_path(key).read_text())
    assert stored["payload"] == codec.encode(built)  # stored over it


@pytest.mark.parametrize("protocols", ["class P: ...", ["class P: ..."], {"P": 1}],
                         ids=["one text", "a list", "not text"])
def test_stored_protocols_of_another_shape_are_one_line(
        tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str],
        protocols: object) -> None:
    root = _tree(tmp_path / "fork")
    built = driver_model.driver_model(str(root))
    key = driver_model.model_key(root)
    cache = Store.open(cache_dir)
    payload: Any = codec.encode(built)
    payload["protocols"] = protocols  # an older model's one text, or a tampered entry
    _forge(cache, "guard-drivers", key, payload)
    driver_model.driver_model.cache_clear()
    assert driver_model.driver_model(str(root)) == built
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"nemo-rl-workers guard: cache entry {cache.describe(key)} holds a "
                           "damaged model (")
    assert line.endswith("); ignored, the tree is read again")


def test_stored_protocols_run_only_if_emission_could_have_written_them() -> None:
    assert driver_model.safe_protocols(
        '"""doc"""\n\nfrom typing import Protocol\n\n\nclass P(Protocol):\n'
        "    def m(self, x: int) -> int: ...\n")
    assert not driver_model.safe_protocols(
        "from typing import Protocol\nimport os\nos.system('true')\n")


@pytest.mark.parametrize("tree", ["nemo-rl", "nemo-rl-2025-09"], ids=["2026-08", "2025-09"])
def test_both_corpus_trees_are_modelled(tree: str, cache_dir: Path) -> None:
    from tests.guard.upstream import CORPUS

    root = CORPUS / tree
    if not root.is_dir():
        pytest.skip("the corpus is absent")
    model = driver_model.driver_model(str(root))
    policy = {c.method for c in model.calls["Policy"] if c.always}
    assert {"train", "get_logprobs"} <= policy, sorted(policy)
    # Every driver's Protocols are of the workers it starts, and are what emission writes.
    assert {worker.rpartition(".")[2] for worker, _ in model.roles["Policy"]} >= {
        "DTensorPolicyWorker", "MegatronPolicyWorker"}
    assert model.protocols and all(
        driver_model.safe_protocols(text) for text in model.protocols.values())


def test_the_provisional_model_is_the_last_one_stored_and_never_a_verdict(
        tmp_path: Path, cache_dir: Path) -> None:
    """The task in the workers' interpreter is sent with the model last stored (no key
    computed); the verdict is asked on the model the key finds, and the task is sent again
    where the tree has changed since."""
    from nemo_rl_workers.guard import hooks, judgement, worker_check
    from nemo_rl_workers.guard.driver_calls import (
        DriverFrame,
        bases_for,
        calls_of,
        protocols_of,
    )

    root = _tree(tmp_path / "fork")
    assert driver_model.provisional_model(str(root)) is None  # nothing stored yet
    built = driver_model.driver_model(str(root))
    assert driver_model.provisional_model(str(root)) == built
    driver = root / "nemo_rl" / "models" / "echo" / "echo_driver.py"
    driver.write_text(driver.read_text().replace('"ping"', '"pong"'))
    driver_model.driver_model.cache_clear()  # a new process
    stale = driver_model.provisional_model(str(root))
    assert stale == built  # still the last one stored: read without its key
    own = str(root / "nemo_rl")
    frame = DriverFrame("EchoDriver", f"{driver}:24")
    sent = ("guard_workers.PingWorker", "python", tuple(calls_of(frame, own, stale)),
            tuple(protocols_of(frame, own, stale)), tuple(bases_for(frame, own, stale)))
    # The task's answer on the stale calls, as if it had run: a problem.
    answered = worker_check.Pending(sent, answer=[
        (worker_check.IMPORT_RULE, "cannot be imported (ping)", "")])
    verdict = hooks.worker_verdict(sent[0], frame, own, answered)
    # Held to the verified model ("pong"), the stale answer is never the verdict (the
    # task would be sent again; with no Ray here, nothing is checked in the workers).
    assert verdict == judgement.PASS
    assert {c[0] for c in calls_of(frame, own)} == {"echo", "pong"}
    assert driver_model.provisional_model(str(root)) == driver_model.driver_model(str(root))
    same = ("guard_workers.PingWorker", "python", tuple(calls_of(frame, own)),
            tuple(protocols_of(frame, own)), tuple(bases_for(frame, own)))
    refused = hooks.worker_verdict(same[0], frame, own, worker_check.Pending(same, answer=[
        (worker_check.IMPORT_RULE, "cannot be imported (pong)", "")]))
    assert (refused.refused, refused.what) == (True, "cannot be imported (pong)")


@pytest.mark.parametrize("pointer", [{"key": "../../outside"}, {"key": 7}, {"key": "0" * 64},
                                     "damaged"],
                         ids=["a path", "not text", "a key with no entry", "a damaged model"])
def test_a_hostile_pointer_gives_no_provisional_model(
        tmp_path: Path, cache_dir: Path, pointer: object) -> None:
    """The pointer names an entry by its key alone: one that is not a key, names nothing,
    or names a model that does not load gives no provisional model (the task is then sent
    on the verified one), and the verified model is unchanged."""
    root = _tree(tmp_path / "fork")
    built = driver_model.driver_model(str(root))
    cache = Store.open(cache_dir)
    latest = driver_model.LATEST
    name = latest.key(driver_model.LatestInputs(str(root)))
    if pointer == "damaged":
        key = driver_model.model_key(root, cache)
        payload: Any = codec.encode(built)
        payload["calls"] = "not calls"
        _forge(cache, "guard-drivers", key, payload)
    else:
        assert isinstance(pointer, dict)
        _forge(cache, latest.name, name, pointer)
    assert driver_model.provisional_model(str(root)) is None
    driver_model.driver_model.cache_clear()
    assert driver_model.driver_model(str(root)) == built
