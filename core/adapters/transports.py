"""One structured tool call to a chat model, through the official `openai` or `anthropic` client.

A transport sends a system prompt, one user message (the JSON payload) and one tool the model must call, and
returns the call's arguments with the token counts. Timeouts and retries are the clients' own: `timeout`
seconds per request, `max_retries` retries of a timeout, a dropped connection, a 408/409/429 or a 5xx, with
exponential backoff that honours the server's `retry-after`. The clients are imported on first use, so the
engine runs without them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Protocol

from stratagate.adapters.structured import StructuredTool
from stratagate.errors import InvalidInputError

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_TOKENS = 4096


@dataclass(frozen=True)
class ToolAnswer:
    """A model's answer: the arguments of its call to the tool (None when it did not call it), its raw text for
    the debug history, and the token counts the endpoint reported."""

    arguments: Any
    raw: str
    input_tokens: int | None
    output_tokens: int | None


class Transport(Protocol):
    model: str
    endpoint: str
    errors: tuple[type[BaseException], ...]
    """The client's exception types: a call failing with one of them is reported as `ModelCallError`."""

    def call(self, system: str, payload: str, tool: StructuredTool) -> ToolAnswer: ...


def _api_key(explicit: str | None, variable: str, endpoint: str) -> str:
    key = explicit or os.environ.get(variable)
    if not key:
        raise InvalidInputError(f"{endpoint}: no API key: set {variable} (any non-empty value for a local server)")
    return key


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


class OpenAIChat:
    """Chat completions with a forced function call: OpenAI, or any compatible server (vLLM, Ollama,
    llama.cpp) through `base_url`. The key comes from `api_key` or OPENAI_API_KEY."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_MAX_RETRIES,
                 max_tokens: int = DEFAULT_MAX_TOKENS):
        import openai

        self.model = model
        self.endpoint = base_url or os.environ.get("OPENAI_BASE_URL") or "the OpenAI API"
        self.max_tokens = max_tokens
        self._client = openai.OpenAI(base_url=base_url, api_key=_api_key(api_key, "OPENAI_API_KEY", self.endpoint),
                                     timeout=timeout, max_retries=max_retries)
        self.errors: tuple[type[BaseException], ...] = (openai.OpenAIError,)

    def call(self, system: str, payload: str, tool: StructuredTool) -> ToolAnswer:
        response = self._client.chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": payload}],
            tools=[{"type": "function", "function": {"name": tool.name, "description": tool.description,
                                                     "parameters": tool.parameters}}],
            tool_choice={"type": "function", "function": {"name": tool.name}},
            max_tokens=self.max_tokens,
        )
        usage = response.usage
        message = response.choices[0].message if response.choices else None
        calls = [call for call in (message.tool_calls or []) if getattr(call, "function", None)] if message else []
        decoded = [_json_or_none(call.function.arguments) for call in calls]
        # The raw answer keeps malformed arguments verbatim and shows valid ones as JSON, for reading.
        raw = json.dumps({"content": message.content if message else None,
                          "toolCalls": [{"name": call.function.name,
                                         "arguments": call.function.arguments if value is None else value}
                                        for call, value in zip(calls, decoded, strict=True)]},
                         ensure_ascii=False)
        matching = [value for call, value in zip(calls, decoded, strict=True) if call.function.name == tool.name]
        arguments = matching[0] if len(matching) == 1 else None
        return ToolAnswer(arguments, raw, usage.prompt_tokens if usage else None,
                          usage.completion_tokens if usage else None)


class AnthropicChat:
    """The Messages API with a forced tool: Anthropic, or a compatible server through `base_url`. The key
    comes from `api_key` or ANTHROPIC_API_KEY."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_MAX_RETRIES,
                 max_tokens: int = DEFAULT_MAX_TOKENS):
        import anthropic

        self.model = model
        self.endpoint = base_url or os.environ.get("ANTHROPIC_BASE_URL") or "the Anthropic API"
        self.max_tokens = max_tokens
        self._client = anthropic.Anthropic(
            base_url=base_url, api_key=_api_key(api_key, "ANTHROPIC_API_KEY", self.endpoint), timeout=timeout,
            max_retries=max_retries)
        self.errors: tuple[type[BaseException], ...] = (anthropic.AnthropicError,)

    def call(self, system: str, payload: str, tool: StructuredTool) -> ToolAnswer:
        response = self._client.messages.create(
            model=self.model, max_tokens=self.max_tokens, system=system,
            messages=[{"role": "user", "content": payload}],
            tools=[{"name": tool.name, "description": tool.description, "input_schema": tool.parameters}],
            tool_choice={"type": "tool", "name": tool.name},
        )
        uses = [block for block in response.content if block.type == "tool_use"]
        texts = [block.text for block in response.content if block.type == "text"]
        raw = json.dumps({"content": "\n".join(texts) or None,
                          "toolCalls": [{"name": block.name, "arguments": block.input} for block in uses]},
                         ensure_ascii=False)
        matching = [block for block in uses if block.name == tool.name]
        arguments = matching[0].input if len(matching) == 1 else None
        return ToolAnswer(arguments, raw, response.usage.input_tokens, response.usage.output_tokens)
