"""Ray runtime: the virtual cluster, worker groups and in-environment verification.

Importing this package does not import ray; the modules below do.
"""
