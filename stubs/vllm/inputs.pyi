from typing import TypedDict

class TokensPrompt(TypedDict):
    """A prompt given as token ids (upstream `vllm.inputs.data.TokensPrompt`)."""

    prompt_token_ids: list[int]
