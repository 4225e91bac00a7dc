"""Quantized policy worker classes (imported by FQN, not from here)."""
