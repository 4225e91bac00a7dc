"""vLLM's `worker_extension_cls` rule, applied before vLLM applies it on a GPU."""
