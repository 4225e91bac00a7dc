"""Quantized vLLM generation workers and their vLLM worker extension."""
