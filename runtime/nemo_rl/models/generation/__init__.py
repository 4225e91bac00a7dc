"""Generation: the rollout side. Import-light: worker modules import vLLM lazily."""
