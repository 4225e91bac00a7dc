"""NeMo-RL worker selection: config rules, the resolver and the Ray runtime.

Importing this package is cheap: heavy dependencies (torch, ray, vllm, modelopt)
are imported only by the runtime modules that need them.
"""
