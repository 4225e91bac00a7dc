"""NVIDIA ModelOpt quantized workers.

Import-light: modelopt is imported only by the modules that use it.
"""
