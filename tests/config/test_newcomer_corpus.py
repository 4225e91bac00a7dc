"""Issue 16's config readers on upstream's real recipes: no false typo, a world size each."""

from __future__ import annotations

from nemo_rl_workers.model.cluster_size import policy_world_size
from nemo_rl_workers.model.keys import misspelled_key_problems
from tests.config.conftest import CorpusResults


def test_no_upstream_config_has_a_false_typo(corpus_results: CorpusResults) -> None:
    loaded = {p: c for p, c in corpus_results.items() if isinstance(c, dict)}
    assert len(loaded) > 100
    assert {p: misspelled_key_problems(c) for p, c in loaded.items()
            if misspelled_key_problems(c)} == {}


def test_every_upstream_recipe_gives_a_size_or_says_why(corpus_results: CorpusResults) -> None:
    sized = 0
    for path, config in corpus_results.items():
        if not isinstance(config, dict):
            continue
        size = policy_world_size(config)
        assert (size.world_size is None) == (size.how is None), path
        sized += size.world_size is not None
    assert sized > 100
