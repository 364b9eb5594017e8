"""The reference's 30-test parity checklist (spec §9), one test each, ids B1…P11.

Where v7 or a documented fix differs from v5 (schema version, block decay by block position, in-memory
revisions), the test asserts the v7 behaviour and says so.
"""

from __future__ import annotations

import math
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import stratagate
from stratagate.assessment import normalize_retrieval_assessment
from stratagate.blocks import block_weight, decayed_block_level, normalize_block_level
from stratagate.callbacks import ExtractionRequest
from stratagate.condense import condense_transcript
from stratagate.demo import counter_ids
from stratagate.errors import InvalidInputError, JobStateError, StorageConflictError
from stratagate.memory import StrataGate
from stratagate.model import Message, ToolTrace
from stratagate.search.bm25 import bm25_rank
from stratagate.search.rrf import rrf_rank
from stratagate.search.tokenize import weighted_search_tokens
from stratagate.storage.memory_backend import MemoryBackend
from stratagate.storage.upgrade import upgrade_file
from stratagate.timeutil import to_utc8_iso
from tests.core.helpers import Clock


def summarize_for_extraction(messages):
    return {"l0Title": messages[0].content[:40], "l0Tags": ["t"], "l1Summary": "summary", "l2Keypoints": ["kp"],
            "shouldExtract": True}


def one_event_extractor(calls=None):
    def extract(request: ExtractionRequest):
        if calls is not None:
            calls.append(request)
        first = request.target.l5_raw[0]
        return {"shouldExtract": True, "events": [{
            "title": f"Decision: {first.content}", "summary": "The team chose PostgreSQL as the database.",
            "sourceMessageIds": [first.id], "tags": ["database"],
            "temporal": {"mentionedAt": first.created_at, "participants": ["StrataGate"], "eventType": "decision"},
        }]}
    return extract


def memory(**options) -> StrataGate:
    options.setdefault("now", Clock(step=__import__("datetime").timedelta(minutes=1)))
    options.setdefault("id_factory", counter_ids())
    options.setdefault("element_id_factory", counter_ids())
    return stratagate.in_memory(**options)


# --- blocks -----------------------------------------------------------------------------------------------

def test_b1_l3_removes_only_bounded_redundancy():
    paste = "This is a long pasted paragraph that goes on and on about the deployment checklist for the service."
    raw = [
        Message("m1", "user", "Okay.\nPlease use PostgreSQL for the project.", "t"),
        Message("m2", "assistant", "Searching.", "t",
                tool_calls=[ToolTrace("search_events", {"privateQuery": "secret"}, {"events": [1]})]),
        Message("m3", "user", f"{paste}\n\n{paste}", "t"),
    ]
    l3 = condense_transcript(raw)
    assert "Okay" not in l3 and "Please use PostgreSQL for the project." in l3
    assert "Tool call: search_events (events: 1)" in l3 and "privateQuery" not in l3
    assert l3.count(paste) == 1 and "[repeated paste omitted; original remains in L5]" in l3
    assert raw[2].content.count(paste) == 2


def test_b2_decays_through_six_levels_and_lifts_to_the_requested_level():
    # v7: ages are counted in blocks with λ 0.3 (the v5 test used turns with λ 0.05: 0/12/24/36/48/60).
    assert [decayed_block_level(5, 0, age) for age in (0, 2, 3, 5, 7, 9)] == [5, 4, 3, 2, 1, 0]
    assert [decayed_block_level(5, 0, age, 0.05) for age in (0, 12, 24, 36, 48, 60)] == [5, 4, 3, 2, 1, 0]
    assert normalize_block_level("next", 2) == 3 and normalize_block_level("raw", 2) == 5
    assert block_weight(0, 2) == pytest.approx(math.exp(-0.6))


# --- elements ---------------------------------------------------------------------------------------------

def storage_projector(request):
    changes = []
    for event in request.events:
        database = "PostgreSQL" if "PostgreSQL" in event.title else "SQLite"
        changes.append({"name": "StrataGate", "type": "project", "key": "database", "mode": "state",
                        "operation": "set_state", "value": database, "sourceEventIds": [event.id],
                        "validFrom": event.temporal.happened_start})
    return {"changes": changes, "reason": "ok"}


def test_e1_projects_elements_and_exposes_time_views():
    m = memory(block_turn_size=1)
    block = m.append_turn("start", "ok").sealed_block
    first = m.add_event("Chose SQLite database", source_block_id=block.id,
                        temporal={"mentionedAt": "2026-01-01T00:00:00Z", "happenedStart": "2026-01-01T00:00:00Z"})
    m2 = m.append_turn("next", "ok")
    assert m2.projected_elements == []  # no projector configured: jobs wait
    m = StrataGate.open_with_backend(m.backend, m.namespace, projector=storage_projector, id_factory=counter_ids(),
                                     element_id_factory=counter_ids())
    projected = m.resume_pending_work().projected_elements
    assert len(projected) == 1
    m.add_event("Switched to PostgreSQL database", source_block_id=block.id,
                temporal={"mentionedAt": "2026-02-01T00:00:00Z", "happenedStart": "2026-02-01T00:00:00Z"})
    m.resume_pending_work()
    element = m.list_elements()[0]
    assert "PostgreSQL" in element.current_state
    assert [fact.status for fact in element.facts] == ["superseded", "active"]
    assert m.get_event(first.id).title == "Chose SQLite database"
    assert "SQLite" in m.expand_element(element.id, "2026-01-15T00:00:00Z").current_state
    assert m.expand_element(element.id, "2026-02-15T00:00:00Z").current_state == "database: PostgreSQL"
    # Bounds are inclusive: at the switch instant both states show.
    assert m.expand_element(element.id, "2026-02-01T00:00:00Z").current_state == "database: SQLite\ndatabase: PostgreSQL"


def test_e2_element_search_uses_bm25_plus_structured_rankings():
    m = memory(block_turn_size=1)
    block = m.append_turn("start", "ok").sealed_block
    m.add_event("Chose SQLite database", source_block_id=block.id,
                temporal={"participants": ["StrataGate"], "eventType": "decision"})
    m = StrataGate.open_with_backend(m.backend, m.namespace, projector=storage_projector,
                                     element_id_factory=counter_ids())
    m.resume_pending_work()
    assert m.search_elements("SQLite database")[0].element.name == "StrataGate"
    assert m.search_elements("watermelon") == []
    assert len(m.search_elements("", type="project")) == 1
    assert m.search_events("watermelon") == []
    assert len(m.search_events("", participants=["StrataGate"])) == 1


def test_e3_records_a_diagnostic_when_a_projection_has_no_valid_changes():
    m = memory(block_turn_size=1, projector=lambda request: {"changes": [], "reason": "Model returned no entity changes."})
    block = m.append_turn("start", "ok").sealed_block
    m.add_event("Something", source_block_id=block.id)
    m.resume_pending_work()
    job = m.list_element_projection_jobs()[0]
    assert (job.status, job.element_ids) == ("completed", [])
    assert job.reason == "0 changes projected from 1 events: Model returned no entity changes."
    assert m.list_elements() == []


def test_e4_retries_only_a_failed_projection_and_rejects_out_of_batch_facts():
    m = memory(block_turn_size=1)
    block = m.append_turn("start", "ok").sealed_block
    other = m.add_event("Other", source_block_id=block.id)
    m.claim_next_element_projection()
    m.complete_element_projection(m.list_element_projection_jobs()[0].id, {"changes": []})
    event = m.add_event("Target", source_block_id=block.id)
    claim = m.claim_next_element_projection()
    assert [e.id for e in claim.events] == [event.id]
    m.fail_element_projection(claim.job_id, RuntimeError("model down"))
    again = m.claim_next_element_projection()
    assert again.job_id == claim.job_id
    assert m.list_element_projection_jobs()[1].attempts == 2
    change = {"name": "X", "type": "project", "key": "k", "mode": "state", "operation": "set_state", "value": "v",
              "sourceEventIds": [other.id]}
    assert m.complete_element_projection(again.job_id, {"changes": [change]}) == []
    assert len(m.list_events()) == 2 and m.list_elements() == []


# --- ingestion --------------------------------------------------------------------------------------------

def test_i1_can_defer_sealing_and_derivation():
    m = memory(block_turn_size=1)
    result = m.append_turn("hello", "hi", defer_processing=True)
    assert result.sealed_block is None and len(m.list_open_tail()) == 2 and m.list_blocks() == []
    assert len(m.resume_pending_work().sealed_blocks) == 1
    assert m.list_open_tail() == []


def test_i2_does_not_append_the_same_external_turn_twice():
    m = memory()
    m.append_turn("hello", "hi", receipt_id="turn-1")
    revision = m.revision
    duplicate = m.append_turn("hello", "hi", receipt_id="turn-1")
    assert duplicate.duplicate and duplicate.sealed_block is None
    assert m.current_turn == 1 and len(m.list_open_tail()) == 2 and m.has_ingestion_receipt("turn-1")
    assert m.revision == revision  # fix: a duplicate writes nothing (the reference bumped the revision)


def test_i3_ingestion_receipts_are_durable_across_sqlite_restarts(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    m = stratagate.open(database, "ns")
    m.append_turn("hello", "hi", receipt_id="turn-1")
    m.close()
    m = stratagate.open(database, "ns")
    assert m.append_turn("hello", "hi", receipt_id="turn-1").duplicate
    assert m.current_turn == 1
    assert [r["id"] for r in m.export_snapshot()["ingestionReceipts"]] == ["turn-1"]
    m.close()


# --- retrieval and search ---------------------------------------------------------------------------------

def test_r1_sufficient_needs_fresh_evidence_and_the_answer_strategy():
    stale = normalize_retrieval_assessment(
        {"verdict": "sufficient", "evidence_refs": ["stale"], "fit": "", "missing": "", "next_strategy": "answer"},
        {"fresh"})
    assert stale.verdict == "partial"
    fresh = normalize_retrieval_assessment(
        {"verdict": "sufficient", "evidence_refs": ["fresh"], "fit": "", "missing": "", "next_strategy": "answer"},
        {"fresh"})
    assert (fresh.verdict, fresh.evidence_refs, fresh.next_strategy) == ("sufficient", ["fresh"], "answer")


def test_s1_bm25_returns_no_candidates_on_a_real_zero_match():
    items = [{"id": "alpha", "title": "PostgreSQL database", "body": "storage"},
             {"id": "beta", "title": "Lunch", "body": "sandwiches"}]

    def doc(item):
        return weighted_search_tokens([(item["title"], 3), (item["body"], 1)])
    assert [item["id"] for item, _ in bm25_rank(items, "PostgreSQL database", doc, lambda i: i["id"])] == ["alpha"]
    assert bm25_rank(items, "watermelon", doc, lambda i: i["id"]) == []


def test_s2_rrf_fuses_rankings_with_deterministic_ties():
    fused = rrf_rank([["alpha", "beta"], ["beta", "alpha"]])
    assert [item for item, _ in fused] == ["alpha", "beta"] and fused[0][1] > 0


# --- store ------------------------------------------------------------------------------------------------

def test_t1_canonical_timestamps_use_utc_plus_8():
    assert to_utc8_iso("2026-08-20T00:00:00.000Z") == "2026-08-20T08:00:00.000+08:00"


def test_t2_implicit_construction_is_rejected():
    with pytest.raises(TypeError, match="Use stratagate.open"):
        StrataGate()


def test_t3_seals_delays_extraction_searches_and_records_adoption():
    m = memory(block_turn_size=1, summarizer=summarize_for_extraction, extractor=one_event_extractor())
    first = m.append_turn("We use PostgreSQL", "ok")
    assert first.sealed_block is not None and first.extracted_events == []
    second = m.append_turn("Anything else?", "no")
    assert len(second.extracted_events) == 1
    event = second.extracted_events[0]
    assert [hit.event.id for hit in m.search_events("PostgreSQL")] == [event.id]
    m.search_events("PostgreSQL", record=True)
    assert m.get_event(event.id).weight.mention_count == 1
    m.record_memory_use([event.id])
    assert m.get_event(event.id).weight.mention_count == 2
    assert m.event_weight(event.id) == 1


def test_t4_forgotten_events_leave_search_but_keep_provenance():
    m = memory(block_turn_size=1, summarizer=summarize_for_extraction, extractor=one_event_extractor())
    m.append_turn("We use PostgreSQL", "ok")
    event = m.append_turn("next", "ok").extracted_events[0]
    m.forget_event(event.id)
    assert m.search_events("PostgreSQL") == []
    assert m.get_event(event.id).source_message_ids


def test_t5_extraction_fails_when_the_model_asks_for_events_but_returns_none():
    m = memory(block_turn_size=1, summarizer=summarize_for_extraction,
               extractor=lambda request: {"shouldExtract": True, "events": [], "reason": "model gave up"})
    m.append_turn("one", "ok")
    with pytest.raises(JobStateError, match="returned no valid events: model gave up"):
        m.append_turn("two", "ok")
    assert m.list_events() == []
    job = m.list_extraction_jobs()[0]
    assert job.status == "failed" and "model gave up" in job.last_error
    assert m.current_turn == 2  # the turn itself was stored


def test_t6_retries_skipped_extraction_once_when_asked():
    calls = []

    def extractor(request):
        calls.append(request)
        if len(calls) == 1:
            return {"shouldExtract": False, "events": []}
        return one_event_extractor()(request)
    m = memory(block_turn_size=1, summarizer=summarize_for_extraction, extractor=extractor)
    m.append_turn("one", "ok")
    m.append_turn("two", "ok")
    assert m.list_extraction_jobs()[0].status == "skipped"
    assert len(m.resume_pending_work(retry_skipped=True).extracted_events) == 1
    assert m.list_extraction_jobs()[0].status == "succeeded" and len(calls) == 2


def test_t7_threads_keep_tails_blocks_and_neighbours_apart():
    calls: list[ExtractionRequest] = []
    m = memory(block_turn_size=2, summarizer=summarize_for_extraction, extractor=one_event_extractor(calls))
    for text, thread in [("A1", "a"), ("B1", "b"), ("A2", "a"), ("A3", "a"), ("A4", "a"), ("B2", "b"),
                         ("B3", "b"), ("B4", "b")]:
        m.append_turn(text, f"{text} reply", thread_id=thread)
    first_a = m.list_blocks("a")[0]
    assert first_a.turn_range == (1, 2)
    assert [message.content for message in first_a.l5_raw] == ["A1", "A1 reply", "A2", "A2 reply"]
    assert len(m.get_block_context("a")) == 2 and len(m.get_block_context("b")) == 2
    for request in calls:
        assert request.next is not None and request.next.thread_id == request.target.thread_id
    m2 = memory(block_turn_size=2)
    for text, thread in [("A1", "a"), ("B1", "b"), ("A2", "a")]:
        m2.append_turn(text, f"{text} reply", thread_id=thread)
    assert [message.content for message in m2.list_open_tail("b")] == ["B1", "B1 reply"]
    assert len(m2.get_block_context("a")) == 1 and m2.get_block_context("b") == []


# --- persistence (SQLite) ---------------------------------------------------------------------------------

def test_p1_open_uses_sqlite_and_memory_mode_is_explicit(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    m = stratagate.open(database, "ns")
    assert m.revision == 1
    m.append_turn("hello", "hi")
    assert m.revision == 2
    m.close()
    with closing(sqlite3.connect(database)) as connection, connection:
        assert connection.execute("SELECT current_turn FROM memory_spaces").fetchone() == (1,)
    assert isinstance(stratagate.in_memory().backend, MemoryBackend)


def test_p2_creates_schema_version_seven(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    stratagate.open(database, "ns").close()
    with closing(sqlite3.connect(database)) as connection, connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (7,)


def test_p3_restores_an_open_tail_and_seals_at_the_same_boundary(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    m = stratagate.open(database, "ns", block_turn_size=2)
    m.append_turn("A1", "r", thread_id="thread-a")
    m.close()
    m = stratagate.open(database, "ns")
    assert m.block_turn_size == 2 and len(m.list_open_tail()) == 2
    block = m.append_turn("A2", "r", thread_id="thread-a").sealed_block
    assert block.thread_id == "thread-a" and block.turn_range == (1, 2)
    before = m.export_snapshot()
    m.close()
    m = stratagate.open(database, "ns")
    assert m.export_snapshot() == before
    m.close()


def test_p4_raw_turns_survive_a_failing_summarizer_and_resume_without_appending(tmp_path: Path):
    database = tmp_path / "memory.sqlite"

    def broken(messages):
        raise RuntimeError("summarizer down")
    m = stratagate.open(database, "ns", block_turn_size=1, summarizer=broken)
    with pytest.raises(RuntimeError, match="summarizer down"):
        m.append_turn("keep me", "ok")
    assert m.current_turn == 1 and len(m.list_open_tail()) == 2
    m.close()
    m = stratagate.open(database, "ns")
    sealed = m.resume_pending_work().sealed_blocks
    assert len(sealed) == 1 and sealed[0].l5_raw[0].content == "keep me" and m.current_turn == 1
    m.close()


def test_p5_failed_extraction_persists_and_is_retried(tmp_path: Path):
    database = tmp_path / "memory.sqlite"

    def broken(request):
        raise RuntimeError("extractor down")
    m = stratagate.open(database, "ns", block_turn_size=1, summarizer=summarize_for_extraction, extractor=broken)
    m.append_turn("one", "ok")
    with pytest.raises(RuntimeError):
        m.append_turn("two", "ok")
    m.close()
    m = stratagate.open(database, "ns", extractor=one_event_extractor())
    job = m.list_extraction_jobs()[0]
    assert (job.status, job.attempts, job.last_error) == ("failed", 1, "extractor down")
    assert len(m.resume_pending_work().extracted_events) == 1
    job = m.list_extraction_jobs()[0]
    assert (job.status, job.attempts, job.last_error) == ("succeeded", 2, None)
    m.close()


def test_p6_usage_receipts_are_idempotent_across_restarts(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    m = stratagate.open(database, "ns", block_turn_size=1)
    block = m.append_turn("one", "ok").sealed_block
    event = m.add_event("Fact", source_block_id=block.id)
    audit = {"verdict": "sufficient", "evidenceRefs": [f"event:{event.id}"]}
    m.record_memory_use([event.id], receipt_id="r1", audit=audit)
    m.record_memory_use([event.id], receipt_id="r1", audit=audit)
    assert m.get_event(event.id).weight.mention_count == 2
    m.close()
    m = stratagate.open(database, "ns")
    assert m.list_usage_receipts()[0].audit == audit
    m.record_memory_use([event.id], receipt_id="r1", audit=audit)
    assert m.get_event(event.id).weight.mention_count == 2
    with pytest.raises(InvalidInputError, match="different memory IDs"):
        m.record_memory_use([], receipt_id="r1", audit=audit)
    m.close()


def test_p7_reconfigured_block_turn_size_persists(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    m = stratagate.open(database, "ns", block_turn_size=4)
    m.append_turn("one", "ok")
    m.close()
    m = stratagate.open(database, "ns", block_turn_size=6)
    assert m.block_turn_size == 6 and len(m.list_open_tail()) == 2
    m.close()
    assert stratagate.open(database, "ns").block_turn_size == 6


def test_p8_a_stale_writer_gets_a_conflict_and_keeps_its_state(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    stratagate.open(database, "ns").close()
    a = stratagate.open(database, "ns")
    b = stratagate.open(database, "ns")
    a.append_turn("from a", "ok")
    with pytest.raises(StorageConflictError):
        b.append_turn("from b", "ok")
    # Nothing of b's turn exists; b caught up with a's commit, so a retry succeeds.
    assert b.current_turn == 1 and [m.content for m in b.list_open_tail()] == ["from a", "ok"]
    b.append_turn("from b", "ok")
    assert [m.content for m in b.list_open_tail()] == ["from a", "ok", "from b", "ok"] and b.current_turn == 2
    a.close()
    b.close()


def test_p9_p10_older_snapshots_read_as_v7_and_migrate_on_request(reference_db_copy: Path):
    # The v5 reference file (threads, elements, receipts) reads as v7 but keeps schema 5 (the reference must
    # still open it) until it is upgraded explicitly.
    m = stratagate.open(reference_db_copy, "project:atlas")
    assert m.revision == 103 and m.current_turn == 40 and len(m.list_events()) == 12
    assert [block.pointer_anchor_block_position for block in m.list_blocks()] == [3, 2, 3]
    m.close()
    with closing(sqlite3.connect(reference_db_copy)) as connection, connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (5,)
    upgrade_file(reference_db_copy)
    with closing(sqlite3.connect(reference_db_copy)) as connection, connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (7,)
    m = stratagate.open(reference_db_copy, "project:atlas")
    assert [block.pointer_anchor_block_position for block in m.list_blocks()] == [3, 2, 3]
    m.close()


def test_p11_projected_elements_and_element_receipts_survive_restarts(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    projector = lambda request: {"changes": [{  # noqa: E731
        "name": "StrataGate", "type": "project", "key": "storage", "mode": "state", "operation": "set_state",
        "value": "SQLite", "sourceEventIds": [request.events[0].id]}]}
    m = stratagate.open(database, "ns", block_turn_size=1, projector=projector)
    block = m.append_turn("one", "ok").sealed_block
    m.add_event("Storage", source_block_id=block.id)
    m.append_turn("two", "ok")
    element = m.list_elements()[0]
    assert element.current_state == "storage: SQLite"
    m.record_memory_use(element_ids=[element.id], receipt_id="e1")
    m.record_memory_use(element_ids=[element.id], receipt_id="e1")
    m.close()
    m = stratagate.open(database, "ns")
    assert m.get_element(element.id).weight.mention_count == 2
    assert m.list_element_projection_jobs()[0].status == "completed"
    m.close()
