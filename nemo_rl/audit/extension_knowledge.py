"""What the extension side of `audit` knows, as data (rule names and severities, the
decorators that keep a method's call signature, where vLLM is handed classes)."""

from __future__ import annotations

from typing import Final

EXTENSION_RULES: Final[dict[str, str]] = {
    "extension-missing-method": "error",
    "extension-unknown-keyword": "error",
    "extension-missing-argument": "error",
    "extension-too-many-positional": "error",
    "override-unknown-keyword": "error",
    "override-missing-argument": "error",
    "vllm-extension-clash": "error",
    "collective-rpc-missing": "error",
}
"""Rule -> severity, for the findings about extensions and vLLM extensions."""

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
