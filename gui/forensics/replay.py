"""Receipt replay: run a query against the memory as it was when a usage receipt was recorded, and now, and mark
the drift between them. Qt-free; runs on the database worker; never writes.

"As it was" is rebuilt from what the database keeps: events created after the receipt are left out; curation
done since (pin, forget, archive, supersede and their undos) is rolled back from the curation journal, each
event taking the `before` state of its first journal entry after the receipt; the current turn is the
receipt's `audit.turn` when it has one. Mention counts and retrieval times are today's: the database does not
keep their history. The rebuilt memory lives in a read-only in-memory backend and is searched by the same
engine code as the real one.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from stratagate.journal import JournalRecord
from stratagate.memory import StrataGate
from stratagate.model import EventWeight, UsageReceipt
from stratagate.storage.memory_backend import MemoryBackend
from stratagate.timeutil import parse_js_date
from stratagate.weights import weight_at
from stratagate_gui.forensics.explain import EVENT_OPTIONS, QuerySpec, build_spec

HIDDEN_STATUSES = ("forgotten", "archived", "superseded")


@dataclass
class ReplayRow:
    id: str
    title: str
    in_receipt: bool
    rank_then: int | None
    rank_now: int | None
    status_then: str | None
    """None: the event did not exist when the receipt was recorded."""
    status_now: str | None
    weight_then: float | None
    weight_now: float | None
    drift: list[str] = field(default_factory=list)


@dataclass
class ReplayResult:
    receipt_id: str
    spec: QuerySpec
    turn_then: int
    turn_is_known: bool
    rolled_back: int
    """How many events had curation rolled back from the journal."""
    rows: list[ReplayRow]

    @property
    def drifted(self) -> list[ReplayRow]:
        return [row for row in self.rows if row.drift]


def receipt_turn(receipt: UsageReceipt) -> int | None:
    turn = (receipt.audit or {}).get("turn")
    return turn if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 0 else None


def recorded_spec(receipt: UsageReceipt) -> QuerySpec | None:
    """The event search the agent ran, when the receipt's audit keeps its retrieval batch (the memory tools
    write it: `audit.retrieval.queries`); None for receipts without one."""
    retrieval = (receipt.audit or {}).get("retrieval")
    queries = retrieval.get("queries") if isinstance(retrieval, dict) else None
    for query in queries if isinstance(queries, list) else []:
        if isinstance(query, dict) and query.get("kind") == "events" and isinstance(query.get("query"), str):
            options = query.get("options") if isinstance(query.get("options"), dict) else {}
            return build_spec("events", query["query"],
                              **{key: value for key, value in options.items() if key in EVENT_OPTIONS})
    return None


def memory_as_of(memory: StrataGate, receipt: UsageReceipt, journal: list[JournalRecord]) -> tuple[StrataGate, int]:
    """A read-only in-memory copy of `memory` as of the receipt, and how many events were rolled back."""
    cutoff = _epoch(receipt.created_at)
    snapshot = memory.export_snapshot()
    states = _states_before(journal, cutoff)
    events = []
    for record in snapshot["events"]:
        created = _epoch(record["createdAt"])
        if created is not None and cutoff is not None and created > cutoff:
            continue
        state = states.get(record["id"])
        if state is not None:
            record = copy.deepcopy(record)
            record["status"] = state.get("status", record["status"])
            record["supersededBy"] = state.get("supersededBy", record.get("supersededBy"))
            record["weight"]["pinned"] = state.get("pinned", record["weight"]["pinned"])
            record["weight"]["forcedCap"] = state.get("forcedCap", record["weight"].get("forcedCap"))
        events.append(record)
    snapshot["events"] = events
    turn = receipt_turn(receipt)
    if turn is not None:
        snapshot["currentTurn"] = turn
    backend = MemoryBackend(read_only=True, location=f"{memory.backend.location} as of receipt {receipt.id}")
    backend.import_snapshot(memory.namespace, snapshot)
    rolled_back = sum(1 for record in events if record["id"] in states)
    return StrataGate.open_with_backend(backend, memory.namespace, ephemeral=True), rolled_back


def replay(memory: StrataGate, receipt: UsageReceipt, spec: QuerySpec, journal: list[JournalRecord]) -> ReplayResult:
    """Run `spec` (an event search) as of the receipt and now; one row per event in the receipt or in either
    result, with the drift between then and now."""
    then_memory, rolled_back = memory_as_of(memory, receipt, journal)
    options = {**spec.options, "record": False}
    hits_then = [hit.id for hit in then_memory.search_events(spec.query, **options)]
    hits_now = [hit.id for hit in memory.search_events(spec.query, **options)]
    turn_then = then_memory.current_turn
    receipt_ids = list(receipt.event_ids)
    rows = []
    for event_id in dict.fromkeys([*receipt_ids, *hits_then, *hits_now]):
        then_event = _event(then_memory, event_id)
        now_event = _event(memory, event_id)
        row = ReplayRow(
            id=event_id,
            title=(now_event or then_event).title if (now_event or then_event) else "(unknown event)",
            in_receipt=event_id in receipt_ids,
            rank_then=_rank(hits_then, event_id),
            rank_now=_rank(hits_now, event_id),
            status_then=then_event.status if then_event else None,
            status_now=now_event.status if now_event else None,
            weight_then=_weight(then_event, turn_then),
            weight_now=_weight(now_event, memory.current_turn),
        )
        row.drift = _drift(row)
        rows.append(row)
    return ReplayResult(receipt.id, spec, turn_then, receipt_turn(receipt) is not None, rolled_back, rows)


def _drift(row: ReplayRow) -> list[str]:
    marks = []
    if row.status_then is None and row.status_now is not None:
        marks.append("created after the receipt")
    if row.status_now is None:
        marks.append("missing now")
    elif row.status_now != row.status_then and row.status_now in HIDDEN_STATUSES:
        marks.append(f"{row.status_now} now")
    elif row.status_now != row.status_then and row.status_then is not None:
        marks.append(f"{row.status_then} → {row.status_now}")
    if row.in_receipt and row.rank_now is None:
        marks.append("used in the receipt, not a hit now")
    if row.rank_then is not None and row.rank_now is None and not row.in_receipt:
        marks.append("hit then, not now")
    if row.rank_now is not None and row.rank_then is None:
        marks.append("new hit")
    if row.rank_then is not None and row.rank_now is not None and row.rank_then != row.rank_now:
        marks.append(f"rank {row.rank_then} → {row.rank_now}")
    return marks


def _states_before(journal: list[JournalRecord], cutoff: int | None) -> dict[str, dict[str, Any]]:
    """Event id -> its curation state just before the first journal entry after `cutoff`."""
    states: dict[str, dict[str, Any]] = {}
    if cutoff is None:
        return states
    for record in sorted(journal, key=lambda entry: (_epoch(entry.time) or 0, entry.seq)):
        time = _epoch(record.time)
        if time is None or time <= cutoff or not isinstance(record.before, dict):
            continue
        before = record.before
        per_event = {record.ids[0]: before} if "status" in before and record.ids else before
        for event_id, state in per_event.items():
            if isinstance(state, dict):
                states.setdefault(event_id, state)
    return states


def _event(memory: StrataGate, event_id: str) -> Any:
    found = memory.get_events([event_id])
    return found[0] if found else None


def _weight(event: Any, turn: int) -> float | None:
    if event is None:
        return None
    weight: EventWeight = event.weight
    return weight_at(weight, event.status, turn)


def _rank(hits: list[str], event_id: str) -> int | None:
    return hits.index(event_id) + 1 if event_id in hits else None


def _epoch(value: Any) -> int | None:
    return parse_js_date(value) if isinstance(value, str) else None
