"""Benchmarks; `python -m bench.<name>` runs one."""
