"""The fit verdict is a pure function over node resources: a node group (one STRICT_PACK
placement group) must fit on one node, and all of them within the whole cluster."""

from __future__ import annotations

import pytest

from nemo_rl_workers.checks.cluster.cluster_fit import (
    ClusterDescriptionError,
    fit_problems,
    live_node_resources,
    node_groups,
    parse_cluster_resources,
)


def test_a_group_larger_than_every_node_names_the_need_and_the_largest_node() -> None:
    groups = node_groups([2], {"CPU": 4.0})
    assert fit_problems(groups, [{"CPU": 2.0}, {"CPU": 1.0}]) == [
        "node group 0 needs 2 bundles x {CPU: 4} = 8 CPU on one node; the largest live node "
        "has 2 CPU"
    ]


def test_gpu_groups_are_judged_on_every_resource_they_need() -> None:
    groups = node_groups([8, 8], {"CPU": 1.0, "GPU": 1.0})
    nodes = [{"CPU": 64.0, "GPU": 4.0}, {"CPU": 16.0, "GPU": 8.0}]
    # Group 0 and 1 each fit the second node alone, but not both at once: 16 GPU in all.
    assert fit_problems(groups, nodes) == [
        "the 2 node groups need 16 GPU in all; the 2 live nodes have 12 GPU in all"
    ]
    assert fit_problems(node_groups([8], {"CPU": 1.0, "GPU": 1.0}), nodes) == []
    assert fit_problems(node_groups([9], {"CPU": 1.0, "GPU": 1.0}), nodes) == [
        "node group 0 needs 9 bundles x {CPU: 1, GPU: 1} = 9 CPU, 9 GPU on one node; the "
        "largest live node has 16 CPU, 8 GPU"
    ]


def test_fractional_bundles_sum_without_rounding_errors_and_no_node_is_refused() -> None:
    assert fit_problems(node_groups([3], {"CPU": 0.01}), [{"CPU": 0.03}]) == []
    assert fit_problems(node_groups([1], {"CPU": 0.01}), []) == ["the cluster has no live node"]


def test_ray_nodes_entries_give_the_live_nodes_totals() -> None:
    entries = [
        {"Alive": True, "Resources": {"CPU": 2.0, "memory": 1e9, "node:1.2.3.4": 1.0}},
        {"Alive": False, "Resources": {"CPU": 64.0}},
    ]
    assert live_node_resources(entries) == [{"CPU": 2.0, "memory": 1e9, "node:1.2.3.4": 1.0}]


@pytest.mark.parametrize(
    ("text", "nodes"),
    [
        ('[{"CPU": 4, "GPU": 8}, {"CPU": 2}]', [{"CPU": 4.0, "GPU": 8.0}, {"CPU": 2.0}]),
        ('{"nodes": [{"CPU": 1.5}]}', [{"CPU": 1.5}]),
        ('[{"Alive": true, "Resources": {"CPU": 3}}, {"Alive": false, "Resources": {}}]',
         [{"CPU": 3.0}]),
    ],
)
def test_a_description_is_read_in_each_accepted_shape(
    text: str, nodes: list[dict[str, float]]
) -> None:
    assert parse_cluster_resources(text) == nodes


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not valid JSON"),
        ('"a string"', "expected a JSON list of nodes"),
        ("[5]", "node 0 is int, not an object"),
        ('[{"CPU": "4"}]', "resource 'CPU' is str, not a number"),
        ('[{"CPU": true}]', "resource 'CPU' is bool, not a number"),
        ('[{"CPU": 1e999}]', "must be a number from 0 to"),
        ('[{"CPU": -1}]', "must be a number from 0 to"),
        ('[{"CPU": ' + "9" * 400 + "}]", "must be a number from 0 to"),
        ('[{"CPU": ' + "9" * 5000 + "}]", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nests too deeply"),
    ],
    ids=["syntax", "not-a-list", "entry-not-object", "string", "bool", "inf", "negative",
         "huge-int", "too-many-digits", "deep"],
)
def test_a_hostile_description_is_one_line(text: str, says: str) -> None:
    with pytest.raises(ClusterDescriptionError) as info:
        parse_cluster_resources(text)
    assert says in str(info.value)
    assert "\n" not in str(info.value)
