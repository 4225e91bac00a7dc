"""The receiver forms a chain of calls follows (`audit.call_chain`), and those it does not,
on small trees the tests write: each chain as `check` names it, or where the walk stopped."""

from __future__ import annotations

import textwrap
from pathlib import Path

from nemo_rl_workers.checks.audit.call_chain import CallChains, Chain
from nemo_rl_workers.tree.entry_configs import required_keys
from nemo_rl_workers.tree.source import Resolver, read_tree

DRIVER = '''
class Interface:
    def refit(self):
        raise NotImplementedError


class Policy(Interface):
    def __init__(self, config):
        self.config = config

    def refit(self):
        return "the driver's call"
'''

CONFIG = '''
from typing import TypedDict


class PolicyConfig(TypedDict):
    name: str


class MasterConfig(TypedDict):
    policy: PolicyConfig
    cluster: PolicyConfig
'''


def _chains(tmp_path: Path, loop: str) -> tuple[list[str], str]:
    """The chains to Policy.refit as `check` names them, and where the walk stopped."""
    found, gap = _walked(tmp_path, loop)
    return [c.text() for c in found], gap


def _walked(tmp_path: Path, loop: str) -> tuple[tuple[Chain, ...], str]:
    files = {
        "pkg/__init__.py": "",
        "pkg/driver.py": DRIVER,
        "pkg/loop.py": CONFIG + "from pkg.driver import Interface, Policy\n\n"
                       + textwrap.dedent(loop),
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    tree = read_tree(tmp_path, packages=["pkg"])
    chains = CallChains(tree, Resolver(tree), lambda module: required_keys(tree, module))
    return chains.chains(tree.functions[("pkg.driver", "Policy.refit")], None)


def test_a_local_built_by_the_constructor(tmp_path: Path) -> None:
    found, gap = _chains(tmp_path, '''
        def train(master_config: MasterConfig):
            policy = Policy(master_config["policy"])
            policy.refit()
        ''')
    assert found == ["loop.py:17 train -> driver.py:11 Policy.refit"]
    assert gap == ""


def test_an_attribute_of_a_class_every_assignment_of_which_builds_it(tmp_path: Path) -> None:
    found, _ = _chains(tmp_path, '''
        class Trainer:
            def __init__(self, config):
                self.policy = Policy(config)

            def step(self):
                self.policy.refit()


        def train(trainer: Trainer, master_config: MasterConfig):
            trainer.step()
        ''')
    assert found == ["loop.py:24 train -> loop.py:20 Trainer.step -> driver.py:11 Policy.refit"]


def test_a_nested_function_called_from_the_one_it_is_in(tmp_path: Path) -> None:
    found, _ = _chains(tmp_path, '''
        def train(policy: Policy, master_config: MasterConfig):
            def once():
                policy.refit()

            once()
        ''')
    assert found == ["loop.py:19 train -> loop.py:17 train.once -> driver.py:11 Policy.refit"]


def test_a_function_run_as_a_value_is_where_the_walk_stops(tmp_path: Path) -> None:
    found, gap = _chains(tmp_path, '''
        def train(policy: Policy, master_config: MasterConfig):
            def once():
                policy.refit()

            tasks = {"refit": once}
            return tasks
        ''')
    assert found == []
    assert gap.startswith("train.once (")
    assert gap.endswith("loop.py:16) is not called by name where a call resolves; it may be "
                        "run as a value")


def test_a_receiver_declared_as_an_interface_is_not_followed(tmp_path: Path) -> None:
    found, gap = _chains(tmp_path, '''
        def train(policy: Interface, master_config: MasterConfig):
            policy.refit()
        ''')
    assert found == []
    assert gap.endswith("loop.py:16 calls policy.refit on policy, not known to be a Policy "
                        "(annotated Interface)")


def test_a_helper_that_is_called_by_an_entry_is_not_an_entry(tmp_path: Path) -> None:
    # `validate` takes the whole config too, but `train` runs it: the chain goes on up.
    found, _ = _chains(tmp_path, '''
        def validate(policy: Policy, master_config: MasterConfig):
            policy.refit()


        def train(policy: Policy, master_config: MasterConfig):
            if master_config["grpo"]["val_period"] > 0:
                validate(policy, master_config)
        ''')
    assert found == ["loop.py:21 train -> loop.py:16 validate -> driver.py:11 Policy.refit"]


def _verdict(tmp_path: Path, loop: str, config: dict[str, object]) -> tuple[bool | None, str]:
    """`check`'s verdict on `config` along the chains to Policy.refit (the entry module
    requiring the MasterConfig's two keys)."""
    from nemo_rl_workers.checks.audit.chain_verdict import chain_verdict

    found, gap = _walked(tmp_path, loop)
    assert found, gap
    entry = {c.entry_file: ("cluster", "policy") for c in found}
    return chain_verdict(found, entry, config, gap)


def test_an_or_that_holds_does_not_say_which_side_did(tmp_path: Path) -> None:
    runs, why = _verdict(tmp_path, '''
        def train(policy: Policy, master_config: MasterConfig):
            if master_config["grpo"]["a"] or master_config["grpo"]["b"]:
                policy.refit()
        ''', {"policy": {}, "cluster": {}, "grpo": {"a": True, "b": False}})
    assert runs is None
    assert why.startswith("not known to be reached: along loop.py:17 train -> driver.py:11 "
                          "Policy.refit: ")
    assert why.endswith("loop.py:16 (master_config['grpo']['a'] or master_config['grpo']['b']) "
                        "is not a test on config values")


def test_an_and_of_config_tests_is_decided(tmp_path: Path) -> None:
    loop = '''
        def train(policy: Policy, master_config: MasterConfig):
            if master_config["grpo"]["a"] and not master_config["grpo"]["b"]:
                policy.refit()
        '''
    held = _verdict(tmp_path / "held", loop,
                    {"policy": {}, "cluster": {}, "grpo": {"a": True, "b": False}})
    assert held == (True, "reached by this config along loop.py:17 train -> driver.py:11 "
                          "Policy.refit")
    failed = _verdict(tmp_path / "failed", loop,
                      {"policy": {}, "cluster": {}, "grpo": {"a": True, "b": True}})
    assert failed[0] is False
    assert "and this config has grpo.b=True" in failed[1]
