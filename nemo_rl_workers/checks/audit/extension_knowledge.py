"""What the extension side of `audit` knows, as data: the decorators that keep a
method's call signature (rule names and severities are in `rules.RULES`)."""

from __future__ import annotations

from typing import Final

TRANSPARENT_DECORATORS: Final = frozenset({
    "staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod",
    "override", "typing.override", "typing_extensions.override",
    # They forward every argument to the method (a wrong one still fails there).
    "torch.no_grad", "torch.inference_mode", "torch.enable_grad",
    "wrap_with_nvtx_name", "nemo_rl.utils.nsys.wrap_with_nvtx_name",
    "contextmanager", "contextlib.contextmanager",
    "asynccontextmanager", "contextlib.asynccontextmanager",
})
"""Decorators whose method is called with the arguments the call site gives; any other
decorator may change the signature, so its method's calls are unknown, not judged."""
