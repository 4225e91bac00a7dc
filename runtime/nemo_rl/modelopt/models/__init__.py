"""Quantized counterparts of nemo_rl.models workers."""
