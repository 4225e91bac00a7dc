"""Quantized policy workers."""
