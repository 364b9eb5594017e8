"""Bad input gets a clear StrataGateError naming the id or field, and leaves the memory exactly as it was."""

from __future__ import annotations

import copy

import pytest

import stratagate
from stratagate.demo import counter_ids
from stratagate.errors import (
    DuplicateIdError,
    InvalidInputError,
    JobStateError,
    ReadOnlyError,
    StrataGateError,
    UnknownIdError,
)
from stratagate.memory import StrataGate
from tests.core.helpers import Clock, reference_memory


@pytest.fixture
def memory() -> StrataGate:
    return reference_memory(now=Clock("2026-03-22T00:00:00Z"), id_factory=counter_ids())


def unchanged(memory: StrataGate, action, error: type[Exception], match: str) -> None:
    before = copy.deepcopy(memory.export_snapshot())
    revision = memory.revision
    stored = memory.backend.load_section(memory.namespace, "events")
    with pytest.raises(error, match=match):
        action()
    assert memory.export_snapshot() == before
    assert memory.revision == revision
    assert memory.backend.load_section(memory.namespace, "events") == stored


@pytest.mark.parametrize(
    ("action", "error", "match"),
    [
        (lambda m: m.append_turn(123, "ok"), InvalidInputError, "user must be a string"),
        (lambda m: m.append_turn("x" * 2_000_001, "ok"), InvalidInputError, "user is too long"),
        (lambda m: m.append_turn("hi", "ok", created_at="not a date"), InvalidInputError, "Invalid date"),
        (lambda m: m.append_turn("hi", "ok", created_at=float("nan")), InvalidInputError, "Invalid date"),
        (lambda m: m.append_turn("hi", "ok", receipt_id="  "), InvalidInputError, "receipt_id must not be empty"),
        (lambda m: m.append_turn("hi", "ok", user_tool_calls=[{"arguments": {}}]), InvalidInputError, "user_tool_calls"),
        (lambda m: m.add_event("t", source_block_id="blk_25", confidence=float("nan")), InvalidInputError,
         "confidence must be a finite number"),
        (lambda m: m.add_event("t" * 5000, source_block_id="blk_25"), InvalidInputError, "title is too long"),
        (lambda m: m.add_event("t", source_block_id="blk_404"), UnknownIdError, "Unknown source block: blk_404"),
        (lambda m: m.add_event("t", source_block_id="blk_25", id="evt_51"), DuplicateIdError, "Duplicate event ID: evt_51"),
        (lambda m: m.add_event("t", source_block_id="blk_25", supersedes=["evt_51", "evt_404"]), UnknownIdError, "evt_404"),
        (lambda m: m.add_event("t", source_block_id="blk_25", criticality="urgent"), InvalidInputError, "criticality"),
        (lambda m: m.add_event("t", source_block_id="blk_25", temporal={"participants": "Bob"}), InvalidInputError,
         "temporal.participants"),
        (lambda m: m.pin_event("evt_404"), UnknownIdError, "Unknown event: evt_404"),
        (lambda m: m.pin_event("evt_51", "yes"), InvalidInputError, "pinned"),
        (lambda m: m.forget_event("evt_404"), UnknownIdError, "evt_404"),
        (lambda m: m.supersede_event("evt_51", "evt_404"), UnknownIdError, "evt_404"),
        (lambda m: m.supersede_event("evt_51", "evt_51"), InvalidInputError, "cannot supersede itself"),
        (lambda m: m.expand_block("blk_404"), UnknownIdError, "Unknown block: blk_404"),
        (lambda m: m.expand_block("blk_25", 3, source="bot"), InvalidInputError, "source must be one of user, agent"),
        (lambda m: m.record_memory_use(["evt_51", "evt_404"], receipt_id="r"), UnknownIdError, "evt_404"),
        (lambda m: m.record_memory_use(["evt_51"], receipt_id="r", audit={"x": float("nan")}), InvalidInputError, "audit"),
        (lambda m: m.record_memory_use(["evt_51"]), InvalidInputError, "requires a non-empty receipt_id"),
        (lambda m: m.record_memory_use(["evt_84"], receipt_id="answer:1"), InvalidInputError, "different memory IDs"),
        (lambda m: m.search_events("x", limit="5"), InvalidInputError, "limit must be a number"),
        (lambda m: m.search_events(None), InvalidInputError, "query must be a string"),
        (lambda m: m.search_elements("x", name=5), InvalidInputError, "name must be a string"),
        (lambda m: m.search_raw_memory("x", True), InvalidInputError, "limit must be a number"),
        (lambda m: m.expand_element("elem_404"), UnknownIdError, "Unknown element: elem_404"),
        (lambda m: m.complete_element_projection("proj_404", {}), UnknownIdError, "proj_404"),
        (lambda m: m.complete_element_projection("proj_1", {}) and m.fail_element_projection("proj_404", "x"),
         UnknownIdError, "proj_404"),
        (lambda m: m.set_block_decay_lambda(-0.1), InvalidInputError, "block_decay_lambda"),
    ],
)
def test_bad_input_is_rejected_and_nothing_changes(memory, action, error, match):
    unchanged(memory, lambda: action(memory), error, match)


def test_every_error_is_a_strata_gate_error():
    for error in (InvalidInputError, UnknownIdError, DuplicateIdError, JobStateError, ReadOnlyError):
        assert issubclass(error, StrataGateError)


def test_a_bad_event_in_an_extraction_batch_adds_none_of_them():
    def extractor(request):
        first = request.target.l5_raw[0].id
        return {"shouldExtract": True, "events": [
            {"id": "dup", "title": "one", "sourceMessageIds": [first]},
            {"id": "dup", "title": "two", "sourceMessageIds": [first]},
        ]}
    memory = stratagate.in_memory(block_turn_size=1, summarizer=lambda m: {"shouldExtract": True},
                                  extractor=extractor)
    memory.append_turn("one", "ok")
    with pytest.raises(DuplicateIdError, match="Duplicate event ID: dup"):
        memory.append_turn("two", "ok")
    assert memory.list_events() == []
    job = memory.list_extraction_jobs()[0]
    assert job.status == "failed" and "dup" in job.last_error
    assert memory.list_element_projection_jobs() == []


def test_an_invalid_summary_fails_sealing_but_keeps_the_turns():
    memory = stratagate.in_memory(block_turn_size=1, summarizer=lambda m: {"l0Title": 5})
    with pytest.raises(InvalidInputError, match="l0Title must be a string"):
        memory.append_turn("keep", "ok")
    assert memory.list_blocks() == [] and len(memory.list_open_tail()) == 2


def test_a_projector_nan_confidence_is_dropped_not_stored():
    memory = stratagate.in_memory(block_turn_size=1, projector=lambda request: {"changes": [{
        "name": "Atlas", "type": "project", "key": "k", "mode": "state", "operation": "set_state", "value": "v",
        "sourceEventIds": [request.events[0].id], "confidence": float("nan")}]})
    block = memory.append_turn("one", "ok").sealed_block
    memory.add_event("t", source_block_id=block.id)
    memory.resume_pending_work()
    assert memory.list_elements()[0].facts[0].confidence is None


def test_read_only_memory_refuses_every_write(memory):
    memory.backend.read_only = True
    for action in (lambda: memory.append_turn("a", "b"), lambda: memory.pin_event("evt_51"),
                   lambda: memory.expand_block("blk_25"), lambda: memory.search_events("demo", record=True),
                   lambda: memory.add_event("t", source_block_id="blk_25"),
                   lambda: memory.record_memory_use(["evt_51"], receipt_id="x")):
        unchanged(memory, action, ReadOnlyError, "read-only")
    assert memory.search_events("demo")  # reads still work
