"""Model adapters: a summarizer, extractor and projector backed by a chat model (docs/adapters.md).

    adapters = openai_adapters("gpt-4o-mini")                      # or base_url="http://localhost:11434/v1"
    memory = stratagate.open("memory.sqlite", "ns", **adapters.engine_options())
    memory.append_turn(user, assistant)
    adapters.record_into(memory)                                   # token counts and latency per call

Needs the `adapters` extra (the official `openai` and `anthropic` clients).
"""

from stratagate.adapters.adapters import (
    ModelAdapters,
    ModelAnswerError,
    ModelCallError,
    anthropic_adapters,
    openai_adapters,
)
from stratagate.adapters.prompt_files import load_prompt, packaged_prompt
from stratagate.adapters.transports import AnthropicChat, OpenAIChat, ToolAnswer, Transport

__all__ = ["AnthropicChat", "ModelAdapters", "ModelAnswerError", "ModelCallError", "OpenAIChat", "ToolAnswer",
           "Transport", "anthropic_adapters", "load_prompt", "openai_adapters", "packaged_prompt"]
