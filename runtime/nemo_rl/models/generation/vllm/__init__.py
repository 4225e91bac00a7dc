"""vLLM generation workers and their internal vLLM worker extensions."""
