"""Cluster checks: can a cluster ever hold the config's virtual cluster."""
