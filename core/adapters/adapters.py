"""`ModelAdapters`: the summarizer, extractor and projector a memory is given, backed by one chat model.

Each callback sends its prompt and target-first payload (`stratagate.adapters.structured`) through a transport,
validates the forced tool call, and asks once more with a firmer instruction when the answer is not a valid
call. A second bad answer raises `ModelAnswerError` naming the model and the block; the engine keeps the raw
turn and fails the job with that message. Every successful call is kept with its token counts and latency
until `take_responses()` (or `record_into(memory)`) moves them into the memory's model-response history.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import jsonschema

from stratagate.adapters.prompt_files import load_prompt
from stratagate.adapters.structured import (
    EXTRACTOR_TOOL,
    PROJECTOR_TOOL,
    SUMMARIZER_TOOL,
    StructuredTool,
    extraction_result,
    extractor_payload,
    projection_result,
    projector_payload,
    summarizer_payload,
    summary_result,
)
from stratagate.adapters.transports import AnthropicChat, OpenAIChat, ToolAnswer, Transport
from stratagate.callbacks import ExtractionRequest, ProjectionRequest
from stratagate.errors import StrataGateError
from stratagate.model import Message, ModelCallUsage, ModelResponse
from stratagate.snapshot import MODEL_RESPONSE_HISTORY_LIMIT
from stratagate.timeutil import to_utc8_iso

ANSWER_ATTEMPTS = 2
RETRY_INSTRUCTION = ("Your previous answer was not one valid call to the requested tool. Call that tool exactly "
                     "once now, with complete arguments that match its schema. Do not answer with text.")
RAW_PREVIEW = 500


class ModelAnswerError(StrataGateError):
    """A model answered something that is not a valid call of the tool it was asked to call, twice.
    `full_message` (what the engine stores as the job's error) adds the raw answer."""

    def __init__(self, message: str, raw: str):
        preview = raw[:RAW_PREVIEW]
        super().__init__(f"{message}\nAnswer (first {RAW_PREVIEW} characters): {preview}")
        self.raw = raw
        self.full_message = f"{message}\nAnswer: {raw}"


class ModelCallError(StrataGateError):
    """The model could not be reached or refused the request after the client's retries (timeout, 429, 5xx)."""


class ModelAdapters:
    """Summarizer, extractor and projector over one transport (`openai_adapters`, `anthropic_adapters`).

    `prompts` overrides the packaged prompt files (`load_prompt`); `clock` stamps recorded responses."""

    def __init__(self, transport: Transport, *, prompt_dir: str | None = None,
                 clock: Callable[[], datetime] | None = None):
        self.transport = transport
        self._prompts = {kind: load_prompt(kind, prompt_dir) for kind in ("summarizer", "extractor", "projector")}
        self._clock = clock or (lambda: datetime.now(UTC))
        self._responses: list[ModelResponse] = []

    # the three callbacks ------------------------------------------------------------------------------------
    def summarizer(self, messages: list[Message]) -> dict[str, Any]:
        where = (f"the block being sealed (messages {messages[0].id} to {messages[-1].id})" if messages
                 else "an empty block")
        arguments = self._call(SUMMARIZER_TOOL, summarizer_payload(messages), where)
        return summary_result(arguments)

    def extractor(self, request: ExtractionRequest) -> dict[str, Any]:
        arguments = self._call(EXTRACTOR_TOOL, extractor_payload(request), f"block {request.target.id}")
        return extraction_result(arguments, request.target)

    def projector(self, request: ProjectionRequest) -> dict[str, Any]:
        where = f"projection job {request.job_id} (events {', '.join(event.id for event in request.events)})"
        arguments = self._call(PROJECTOR_TOOL, projector_payload(request), where)
        return projection_result(arguments, request)

    def engine_options(self) -> dict[str, Any]:
        """Keyword arguments for `stratagate.open` / `in_memory`: the three callbacks."""
        return {"summarizer": self.summarizer, "extractor": self.extractor, "projector": self.projector}

    # the model-response history -----------------------------------------------------------------------------
    def take_responses(self) -> list[ModelResponse]:
        """The successful calls since the last take (at most the history's length), oldest first."""
        taken, self._responses = self._responses, []
        return taken

    def record_into(self, memory: Any) -> None:
        """Move the successful calls into `memory`'s model-response history (one commit, none if empty)."""
        responses = self.take_responses()
        if responses:
            memory.record_successful_model_responses(responses)

    # one call -----------------------------------------------------------------------------------------------
    def _call(self, tool: StructuredTool, payload: Mapping[str, Any], where: str) -> Mapping[str, Any]:
        model = self.transport.model
        body = json.dumps(payload, ensure_ascii=False)
        system = self._prompts[tool.kind]
        problem, answer = "", None
        for attempt in range(1, ANSWER_ATTEMPTS + 1):
            started = time.perf_counter()
            try:
                answer = self.transport.call(system if attempt == 1 else f"{system}\n\n{RETRY_INSTRUCTION}",
                                             body, tool)
            except self.transport.errors as error:
                raise ModelCallError(f"model {model} at {self.transport.endpoint} failed for {where} "
                                     f"({tool.kind}): {error}") from error
            latency_ms = round((time.perf_counter() - started) * 1000)
            problem = _problem(tool, answer)
            if not problem:
                self._keep(tool, answer, ModelCallUsage(model, answer.input_tokens, answer.output_tokens, latency_ms))
                return answer.arguments
        assert answer is not None
        raise ModelAnswerError(f"model {model} answered nonsense for {where} ({tool.kind}) after "
                               f"{ANSWER_ATTEMPTS} attempts: {problem}", answer.raw)

    def _keep(self, tool: StructuredTool, answer: ToolAnswer, usage: ModelCallUsage) -> None:
        self._responses.append(ModelResponse(f"model_response_{uuid.uuid4()}", tool.kind,
                                             f"{usage.header()}\n{answer.raw}", to_utc8_iso(self._clock())))
        del self._responses[:-MODEL_RESPONSE_HISTORY_LIMIT]


def _problem(tool: StructuredTool, answer: ToolAnswer) -> str:
    """Why an answer is not a valid call of `tool` ('' when it is)."""
    if answer.arguments is None:
        return f"it did not make exactly one call to {tool.name} with JSON arguments"
    try:
        tool.validate(answer.arguments)
    except jsonschema.ValidationError as error:
        path = "/".join(str(part) for part in error.absolute_path) or "arguments"
        return f"{tool.name} {path}: {error.message}"
    return ""


def openai_adapters(model: str, *, base_url: str | None = None, api_key: str | None = None,
                    prompt_dir: str | None = None, **client_options: Any) -> ModelAdapters:
    """Adapters over an OpenAI-compatible chat-completions endpoint (`timeout`, `max_retries`, `max_tokens`
    as options)."""
    return ModelAdapters(OpenAIChat(model, base_url=base_url, api_key=api_key, **client_options),
                         prompt_dir=prompt_dir)


def anthropic_adapters(model: str, *, base_url: str | None = None, api_key: str | None = None,
                       prompt_dir: str | None = None, **client_options: Any) -> ModelAdapters:
    """Adapters over the Anthropic Messages API (`timeout`, `max_retries`, `max_tokens` as options)."""
    return ModelAdapters(AnthropicChat(model, base_url=base_url, api_key=api_key, **client_options),
                         prompt_dir=prompt_dir)
