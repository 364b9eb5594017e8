"""The live demo's scripted agent: a session that writes into a memory while the app follows it.

The agent works as a real one would, through the memory tools (`stratagate.tools.MemoryTools`): before
answering a question it searches, assesses the batch and records the use; after each turn it stores the turn.
Its summarizer, extractor and projector are the model adapters talking to a `ScriptedModelServer` on
127.0.0.1 over the OpenAI wire format, whose answers come from the rule-based callbacks applied to the
payload the adapters sent: no network, no model, but every call goes through the real client and shows up in
the Model calls tab with its token counts and latency.
"""

from __future__ import annotations

import json
import threading
from importlib import resources
from types import SimpleNamespace
from typing import Any

from stratagate import rules
from stratagate.adapters import ModelAdapters, openai_adapters
from stratagate.adapters.scripted_server import ModelRequest, Scripted, ScriptedModelServer
from stratagate.callbacks import TimelineEntry
from stratagate.memory import StrataGate
from stratagate.memory import open as open_memory
from stratagate.model import EventTemporal, Message
from stratagate.tools import MemoryTools


def load_live_script() -> dict[str, Any]:
    source = resources.files("stratagate_resources") / "demo" / "live_session.json"
    return json.loads(source.read_text(encoding="utf-8"))


def rule_based_answer(request: ModelRequest) -> Scripted:
    """What a model would answer, computed by the rule-based callbacks from the payload the adapter sent."""
    payload = request.payload
    if request.tool == "stratagate_summarize_block":
        summary = rules.summarize([Message.from_record(record) for record in payload["messages"]])
        return Scripted(arguments={"l0Title": summary.title, "l0Tags": summary.tags, "l1Summary": summary.summary,
                                   "l2Keypoints": summary.keypoints, "shouldExtract": summary.should_extract})
    if request.tool == "stratagate_extract_event_cards":
        target = payload["target"]
        timeline = [TimelineEntry(entry["id"], entry["title"], EventTemporal.from_record(
            {key: entry[key] for key in ("happenedStart", "happenedEnd", "mentionedAt") if key in entry}))
            for entry in payload["timeline"]]
        extraction = rules.extract(SimpleNamespace(
            target=SimpleNamespace(id=target["blockId"],
                                   l5_raw=[Message.from_record(record) for record in target["l5Raw"]]),
            timeline=timeline))
        return Scripted(arguments={"shouldExtract": extraction.should_extract, "reason": extraction.reason,
                                   "events": extraction.events})
    events = [SimpleNamespace(id=event["id"], title=event["title"], summary=event["summary"], tags=event["tags"],
                              temporal=EventTemporal.from_record(event["temporal"])) for event in payload["events"]]
    labels = [(element["name"], element["type"]) for element in payload["existingElements"]]
    projection = rules.project(SimpleNamespace(events=events, element_labels=lambda: labels))
    return Scripted(arguments={"reason": projection.reason, "changes": projection.changes})


class ScriptedAgent:
    """Runs the live script against `database`/`namespace` in a thread of its own, with its own connection:
    to the app it is another writer, like an agent process. `pace` seconds pass between steps."""

    def __init__(self, database: str, namespace: str, *, pace: float = 1.5,
                 script: dict[str, Any] | None = None):
        self.database = database
        self.namespace = namespace
        self.pace = pace
        self.script = script or load_live_script()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.steps_done = 0
        self._thread = threading.Thread(target=self._run, name="scripted-agent", daemon=True)

    def start(self) -> ScriptedAgent:
        self._thread.start()
        return self

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def finish(self) -> None:
        """Stop after the current step and wait for the session to close its memory."""
        self.stop.set()
        self._thread.join()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            with ScriptedModelServer(rule_based_answer, model=self.script["model"]) as server:
                adapters = openai_adapters(self.script["model"], base_url=server.openai_base_url,
                                           api_key="scripted", max_retries=0)
                memory = open_memory(self.database, self.namespace, **adapters.engine_options())
                try:
                    self._session(memory, adapters)
                finally:
                    memory.close()
        except BaseException as error:  # reported by whoever started the session
            self.error = error

    def _session(self, memory: StrataGate, adapters: ModelAdapters) -> None:
        tools = MemoryTools(memory, session_id="live-demo", after_write=lambda: adapters.record_into(memory))
        start = memory.current_turn
        for number, turn in enumerate(self.script["turns"], start=1):
            if self.stop.wait(self.pace):
                return
            if turn.get("recall"):
                self._recall(tools, turn["recall"])
            tools.call("memory_append_turn", {
                "user": turn["user"], "assistant": turn["assistant"], "thread_id": turn["thread"],
                "created_at": turn["at"], "receipt_id": f"live-demo:turn:{start + number}",
                "defer_processing": False})
            self.steps_done = number

    def _recall(self, tools: MemoryTools, query: str) -> None:
        """Search, assess the batch as sufficient on its best hit, and record that use."""
        found = tools.call("memory_search_events", {"query": query, "limit": 5})
        best = found["evidenceRefs"][:1]
        tools.call("memory_assess", {"verdict": "sufficient" if best else "partial", "evidence_refs": best,
                                     "fit": f"answers: {query}", "missing": "",
                                     "next_strategy": "answer" if best else "search_raw_memory"})
        tools.call("memory_record_use", {"evidence_refs": best})
