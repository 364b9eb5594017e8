"""A chat-model server on 127.0.0.1 that serves scripted answers over the real wire formats.

It speaks OpenAI chat completions (`POST …/chat/completions`) and Anthropic messages (`POST …/messages`), so
the official clients talk to it over real sockets exactly as they would to a provider. The tests use it to
script malformed answers, timeouts and rate limits; the live demo uses it so that it runs without a network.

    with ScriptedModelServer([Scripted(arguments={...}), Scripted(status=429), ...]) as server:
        adapters = openai_adapters("scripted", base_url=server.openai_base_url, api_key="unused")

`script` is a list consumed in order, or a function from the request (its tool name and decoded payload) to
an answer.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Scripted:
    """One answer. `arguments`: the tool call's arguments (a dict, or a string sent verbatim as the OpenAI
    arguments: malformed JSON); `text`: answer with text instead of a tool call; `status`: an HTTP error
    status (429 …) with a short `retry-after-ms`; `delay`: seconds to wait first (a timeout)."""

    arguments: Any = None
    text: str | None = None
    status: int = 200
    delay: float = 0.0


@dataclass
class ModelRequest:
    """What the server received: the wire format, the tool the client asked for, and the decoded payload."""

    wire: str
    tool: str | None
    system: str
    payload: Any
    body: dict[str, Any] = field(repr=False, default_factory=dict)


Script = Sequence[Scripted] | Callable[[ModelRequest], Scripted]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedModelServer:
    """The server, run in a daemon thread while the context is open."""

    def __init__(self, script: Script, model: str = "scripted-model"):
        self.model = model
        self.requests: list[ModelRequest] = []
        self._script = script
        self._position = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-model-server",
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ScriptedModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def remaining(self) -> int:
        """Scripted answers not served yet (0 for a function script)."""
        return len(self._script) - self._position if isinstance(self._script, Sequence) else 0

    def _next(self, request: ModelRequest) -> Scripted:
        with self._lock:
            self.requests.append(request)
            if callable(self._script):
                return self._script(request)
            if self._position >= len(self._script):
                return Scripted(status=500, text="the script has no more answers")
            answer = self._script[self._position]
            self._position += 1
            return answer

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read their own asserts
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.endswith("/chat/completions"):
                    request = _openai_request(body)
                elif self.path.endswith("/messages"):
                    request = _anthropic_request(body)
                else:
                    self._send(404, {"error": {"type": "not_found", "message": f"no route {self.path}"}})
                    return
                answer = server._next(request)
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.status != 200:
                    self._send(answer.status, {"type": "error", "error": {
                        "type": "rate_limit_error" if answer.status == 429 else "api_error",
                        "message": answer.text or f"scripted status {answer.status}"}},
                        {"retry-after-ms": "20"})
                    return
                encode = _openai_answer if request.wire == "openai" else _anthropic_answer
                self._send(200, encode(server.model, request, answer))

            def _send(self, status: int, document: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(document).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a scripted timeout): nothing to answer

        return Handler


def _decode(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


def _openai_request(body: dict[str, Any]) -> ModelRequest:
    messages = body.get("messages", [])
    system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
    user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
    choice = body.get("tool_choice")
    tool = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    return ModelRequest("openai", tool, system, _decode(user), body)


def _anthropic_request(body: dict[str, Any]) -> ModelRequest:
    user = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"), "")
    choice = body.get("tool_choice")
    tool = choice.get("name") if isinstance(choice, dict) else None
    return ModelRequest("anthropic", tool, body.get("system", ""), _decode(user), body)


def _openai_answer(model: str, request: ModelRequest, answer: Scripted) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text}
    output = answer.text or ""
    if answer.text is None:
        arguments = answer.arguments if isinstance(answer.arguments, str) else json.dumps(answer.arguments)
        message["tool_calls"] = [{"id": "call_1", "type": "function",
                                  "function": {"name": request.tool, "arguments": arguments}}]
        output = arguments
    prompt = _tokens(json.dumps(request.body))
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "stop" if answer.text is not None else "tool_calls"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": _tokens(output),
                      "total_tokens": prompt + _tokens(output)}}


def _anthropic_answer(model: str, request: ModelRequest, answer: Scripted) -> dict[str, Any]:
    if answer.text is not None:
        content: list[dict[str, Any]] = [{"type": "text", "text": answer.text}]
        output = answer.text
    else:
        arguments = answer.arguments if isinstance(answer.arguments, dict) else _decode(answer.arguments)
        if not isinstance(arguments, dict):  # the Messages format carries only objects: send the text instead
            content = [{"type": "text", "text": str(answer.arguments)}]
        else:
            content = [{"type": "tool_use", "id": "toolu_scripted", "name": request.tool, "input": arguments}]
        output = json.dumps(answer.arguments)
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "end_turn" if answer.text is not None else "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": _tokens(json.dumps(request.body)), "output_tokens": _tokens(output)}}
