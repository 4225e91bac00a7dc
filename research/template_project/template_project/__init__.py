"""A template research project: one new worker method, selected from YAML."""
