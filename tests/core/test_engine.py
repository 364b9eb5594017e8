"""Engine behaviour beyond the reference checklist: v7 decay and lift source, curation and undo data, recorded
searches, explanations, lazy listing, job leases."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

import stratagate
from stratagate.demo import counter_ids
from stratagate.errors import StrataGateError
from stratagate.weights import SUPERSEDED_CAP
from tests.core.helpers import Clock, reference_memory


@pytest.fixture
def memory():
    return reference_memory(now=Clock("2026-03-22T00:00:00Z"), id_factory=counter_ids())


def test_blocks_age_only_when_their_thread_seals_a_newer_block():
    m = stratagate.in_memory(block_turn_size=1)
    first = m.append_turn("a1", "r", thread_id="a").sealed_block
    for index in range(3):
        m.append_turn(f"b{index}", "r", thread_id="b")
    m.append_turn("open", "r", thread_id="a", defer_processing=True)
    assert m.block_level(m.get_block(first.id)) == 5  # thread b and a's open tail do not age it
    m.resume_pending_work()
    m.append_turn("a3", "r", thread_id="a")
    entry = next(e for e in m.get_block_context("a") if e.id == first.id)
    assert (entry.age, entry.level) == (2, 4)


def test_user_lift_is_recorded_and_survives_reopen(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    m = stratagate.open(database, "ns", block_turn_size=1)
    block = m.append_turn("one", "r").sealed_block
    for index in range(9):
        m.append_turn(f"t{index}", "r")
    assert m.block_level(m.get_block(block.id)) == 0
    entry = m.expand_block(block.id, 4, source="user")
    assert (entry.level, entry.label) == (4, "L4 readable near-verbatim transcript")
    m.close()
    m = stratagate.open(database, "ns")
    lifted = m.get_block(block.id)
    assert (lifted.last_lifted_by, lifted.lift_source, lifted.pointer_anchor_block_position) == ("user", "user", 10)
    assert m.block_level(lifted) == 4
    m.close()


def test_legacy_lift_shows_as_legacy(memory):
    assert memory.get_block("blk_25").lift_source == "legacy"
    assert memory.get_block("blk_50").lift_source is None


def test_curation_returns_before_and_after_and_journals(memory):
    entry = {"actor": "reviewer", "action": "pin"}
    change = memory.pin_event("evt_51", journal_entry=entry)
    assert (change.before.weight.pinned, change.after.weight.pinned) == (False, True)
    assert memory.event_weight("evt_51") == 1
    assert memory.backend.journal(memory.namespace) == [entry]
    assert memory.unpin_event("evt_51").after.weight.pinned is False
    archived = memory.archive_event("evt_55").after
    assert archived.status == "archived" and memory.event_weight("evt_55") == 0
    assert "evt_55" not in [hit.event.id for hit in memory.search_events("Berlin", limit=20)]
    assert memory.restore_event("evt_55").after.status == "active"


def test_supersede_and_undo(memory):
    change = memory.supersede_event("evt_55", "evt_86")
    assert (change.after.status, change.after.superseded_by) == ("superseded", "evt_86")
    assert memory.event_weight("evt_55") <= SUPERSEDED_CAP
    undone = memory.unsupersede_event("evt_55").after
    assert (undone.status, undone.superseded_by, undone.weight.forced_cap) == ("active", None, None)


def test_superseding_a_forgotten_event_keeps_it_forgotten(memory):
    event = memory.add_event("Password rotated again", source_block_id="blk_82", supersedes=["evt_61"])
    old = memory.get_event("evt_61")
    assert (old.status, old.superseded_by) == ("forgotten", event.id)
    assert memory.restore_event("evt_61").after.status == "superseded"


def test_add_event_keeps_mentioned_and_happened_apart_and_applies_floors(memory):
    event = memory.add_event(
        "Nut-free catering", "Catering must be nut-free.", source_block_id="blk_82", criticality="safety",
        temporal={"mentionedAt": "2026-03-21T10:00:00+08:00", "happenedStart": "2026-04-02"})
    assert (event.temporal.mentioned_at, event.temporal.happened_start) == ("2026-03-21T10:00:00+08:00", "2026-04-02")
    assert event.weight.floor_weight == 1.0
    assert memory.event_weight(event.id, at_turn=10_000) == 1.0
    assert memory.list_element_projection_jobs()[-1].source_event_ids == [event.id]


def test_recorded_search_sets_last_retrieved_at_in_one_commit(memory):
    revision = memory.revision
    hits = memory.search_events("database storage", record=True)
    assert memory.revision == revision + 1
    assert all(hit.event.weight.last_retrieved_at == "2026-03-22T08:00:00.000+08:00" for hit in hits)
    element_hits = memory.search_elements("Berlin", record=True)
    assert memory.get_element(element_hits[0].element.id).weight.last_retrieved_at == "2026-03-22T08:00:00.000+08:00"
    assert memory.revision == revision + 2


def test_explain_gives_ranks_term_contributions_and_exclusions(memory):
    hits = memory.search_events("backend", participants=["bob"], temporal_intent="latest", limit=2, explain=True)
    explanation = hits.explanation
    assert explanation.mode == "hard filters" and explanation.tokens == ["word:backend"]
    top = hits[0]
    assert set(top.explanation.ranks) == {"bm25", "structured"}
    assert top.explanation.bm25 is not None
    assert {c.field for c in top.explanation.bm25.contributions} <= {"title", "summary", "tags", "quotes", "narrative",
                                                                      "participants", "eventType", "originalText",
                                                                      "happened"}
    assert sum(c.score for c in top.explanation.bm25.contributions) == pytest.approx(top.explanation.bm25.score)
    reasons = {item.id: item.reason for item in explanation.excluded}
    assert reasons["evt_84"] == "filter mismatch: participants"
    assert any(reason.startswith("cut by limit 2") for reason in reasons.values())
    forgotten = memory.search_events("password", explain=True).explanation.excluded
    assert [(item.id, item.reason) for item in forgotten] == [("evt_61", "status forgotten")]


def test_lazy_listing_by_id(memory):
    assert memory.event_ids({"status": "superseded"}) == ["evt_53", "evt_54"]
    assert [event.id for event in memory.get_events(["evt_86", "evt_404", "evt_51"])] == ["evt_86", "evt_51"]
    assert memory.thread_ids() == [None]


def test_filter_values_are_what_the_exact_filters_can_match(memory):
    types = memory.event_filter_values("eventType")
    participants = memory.event_filter_values("participant")
    assert types == sorted(types) and "demo" in types and "Carol" in participants
    for name, values in (("eventType", types), ("participant", participants)):
        assert all(memory.event_ids({name: value}) for value in values)
    with pytest.raises(StrataGateError, match="filter 'status'"):
        memory.event_filter_values("status")


def test_indexes_follow_writes(memory):
    assert memory.search_events("kayak") == []
    event = memory.add_event("Team kayak trip", source_block_id="blk_82")
    assert [hit.event.id for hit in memory.search_events("kayak")] == [event.id]
    memory.forget_event(event.id)
    assert memory.search_events("kayak") == []


def test_a_second_opener_does_not_sabotage_a_running_job(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    clock = Clock("2026-03-02T00:00:00Z")
    stratagate.open(database, "ns", block_turn_size=1).close()
    worker = stratagate.open(database, "ns", now=clock)
    block = worker.append_turn("one", "r").sealed_block
    worker.add_event("Fact", source_block_id=block.id)
    claim = worker.claim_next_element_projection()
    other = stratagate.open(database, "ns", now=clock)
    assert other.list_element_projection_jobs()[0].status == "running"
    assert other.recover_interrupted_jobs() == 0  # lease not expired: the worker may still be running
    assert worker.complete_element_projection(claim.job_id, {"changes": []}) == []
    other.close()
    # A job abandoned for longer than the lease is recovered and retried.
    stale = stratagate.open(database, "ns", now=clock)
    another = stale.add_event("Another", source_block_id=block.id)
    stale.claim_next_element_projection()
    clock.advance(minutes=16)
    later = stratagate.open(database, "ns", now=clock)
    assert later.recover_interrupted_jobs(timedelta(minutes=15)) == 1
    job = next(job for job in later.list_element_projection_jobs() if job.source_event_ids == [another.id])
    assert (job.status, job.last_error) == ("failed", "Element projection was interrupted before completion.")
    for handle in (worker, stale, later):
        handle.close()


def test_async_callbacks_are_awaited():
    async def summarizer(messages):
        return {"l0Title": "async title", "shouldExtract": True}

    async def extractor(request):
        return {"shouldExtract": True, "events": [{"title": "async event", "sourceMessageIds": []}]}
    m = stratagate.in_memory(block_turn_size=1, summarizer=summarizer, extractor=extractor)
    assert m.append_turn("one", "r").sealed_block.l0_title == "async title"
    event = m.append_turn("two", "r").extracted_events[0]
    assert event.title == "async event"
    # No valid message id cited: the card cites the whole block, as the reference does.
    assert event.source_message_ids == [message.id for message in m.list_blocks()[0].l5_raw]


def test_exported_snapshot_is_a_valid_v7_snapshot(memory):
    from stratagate.snapshot import normalize_snapshot

    exported = memory.export_snapshot()
    assert normalize_snapshot(exported) == exported


def test_fact_index_follows_projections_exactly():
    def projector(request):
        return {"changes": [{"name": "Atlas", "type": "project", "key": "storage", "mode": "state",
                             "operation": "set_state", "value": event.title.split()[-1],
                             "sourceEventIds": [event.id]} for event in request.events]}
    m = stratagate.in_memory(block_turn_size=1, projector=projector)
    block = m.append_turn("one", "r").sealed_block
    m.add_event("Storage is SQLite", source_block_id=block.id)
    m.resume_pending_work()
    assert [hit.fact.value for hit in m.search_elements("SQLite")] == ["SQLite"]  # index built here
    m.add_event("Storage is PostgreSQL", source_block_id=block.id)
    m.resume_pending_work()
    live = [(hit.fact.id, hit.fact.status, hit.score) for hit in m.search_elements("storage Atlas")]
    assert sorted(status for _id, status, _score in live) == ["active", "superseded"]
    fresh = stratagate.StrataGate.open_with_backend(m.backend, m.namespace)
    assert [(hit.fact.id, hit.fact.status, hit.score) for hit in fresh.search_elements("storage Atlas")] == live
    assert [hit.fact.value for hit in m.search_elements("PostgreSQL")] == ["PostgreSQL"]


def test_a_projector_written_for_the_reference_names_the_element_in_a_nested_object():
    def projector(request):  # the reference's ElementProjectionChange: element: {name, type, aliases}
        return {"reason": "r", "changes": [
            {"element": {"name": "Atlas", "type": "project", "aliases": ["ATL"]}, "operation": "set_state",
             "key": "storage", "mode": "state", "value": "SQLite", "sourceEventIds": [event.id]}
            for event in request.events]}
    m = stratagate.in_memory(block_turn_size=1, projector=projector)
    block = m.append_turn("one", "r").sealed_block
    m.add_event("Storage is SQLite", source_block_id=block.id)
    m.resume_pending_work()
    [element] = m.list_elements()
    assert (element.name, element.type, element.aliases, element.current_state) == (
        "Atlas", "project", ["ATL"], "storage: SQLite")


def test_a_fact_without_valid_from_starts_at_the_event_chronology_as_the_reference_reads_it():
    # The reference's `happenedStart ?? happenedEnd ?? …`: an empty happenedStart is set, and sorts lowest,
    # so the fact starts now rather than at happenedEnd.
    def projector(request):
        return {"changes": [{"element": {"name": "Atlas", "type": "project"}, "operation": "set_state",
                             "key": "stage", "mode": "state", "value": "beta", "sourceEventIds": [event.id]}
                            for event in request.events]}
    m = stratagate.in_memory(block_turn_size=1, projector=projector, now=lambda: "2026-03-02T01:00:00Z")
    block = m.append_turn("one", "r").sealed_block
    m.add_event("Beta", source_block_id=block.id, temporal={"happenedStart": "", "happenedEnd": "yesterday"})
    m.resume_pending_work()
    assert [fact.valid_from for fact in m.list_elements()[0].facts] == ["2026-03-02T09:00:00.000+08:00"]


def test_a_tool_call_given_a_null_result_keeps_it_as_the_reference_does(tmp_path):
    path = tmp_path / "m.sqlite"
    m = stratagate.open(path, "ns")
    m.append_turn("u", "a", user_tool_calls=[{"name": "search", "arguments": {"q": 1}, "result": None},
                                             {"name": "read"}])
    m.close()
    m = stratagate.open(path, "ns", read_only=True)
    [user, _assistant] = m.list_open_tail()
    assert [call.to_record() for call in user.tool_calls] == [
        {"name": "search", "arguments": {"q": 1}, "result": None}, {"name": "read"}]
    m.close()
