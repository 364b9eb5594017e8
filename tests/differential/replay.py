"""The writer side of the differential check: the engine plays the same scenario itself.

driver.mjs records the reference's answers after it wrote the scenario; here the engine writes the scenario
into its own (v7) file with the same callbacks, clock and ids, then answers the same calls. A difference is a
place where the engine stores something else than the reference would have.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import stratagate
from stratagate.errors import StrataGateError
from stratagate.timeutil import epoch_ms
from tests.differential.compare import Report, compare_namespace


def _mix(seed: int, text: str) -> int:
    """32-bit FNV-1a, as driver.mjs computes it."""
    value = (2166136261 ^ seed) & 0xFFFFFFFF
    for character in text:
        value = ((value ^ ord(character)) * 16777619) & 0xFFFFFFFF
    return value


def id_factory(style: str, seed: int) -> Callable[[str], str]:
    """The driver's id factory: counters, mixed case or UUID-shaped ids from (seed, prefix, count)."""
    counters: dict[str, int] = {}

    def new_id(prefix: str) -> str:
        count = counters[prefix] = counters.get(prefix, 0) + 1
        if style == "counter":
            return f"{prefix}_{count}"
        mixed = _mix(seed, f"{prefix}:{count}")
        if style == "mixed":
            return f"{prefix.upper() if mixed & 1 else prefix}_{'A' if mixed & 2 else 'b'}{count}"
        hexes = "".join(f"{_mix(seed + salt, f'{prefix}:{count}'):08x}" for salt in range(4))
        return f"{prefix}_{hexes[:8]}-{hexes[8:12]}-4{hexes[13:16]}-a{hexes[17:20]}-{hexes[20:]}"

    return new_id


def _callbacks(space: dict) -> dict[str, Any]:
    summaries = iter(space["summaries"])

    def summarizer(messages: list) -> dict:
        return next(summaries, {"l0Title": messages[0].content[:40] if messages else "block", "l0Tags": [],
                                "l1Summary": "", "l2Keypoints": [], "shouldExtract": False})

    def extractor(request: Any) -> dict:
        return space["extractions"].get(str(request.target.sequence),
                                        {"shouldExtract": False, "reason": "nothing planned", "events": []})

    def projector(request: Any) -> dict:
        return {"reason": "planned",
                "changes": [change for event in request.events for change in space["projections"].get(event.id, [])]}

    return {"summarizer": summarizer, "extractor": extractor, "projector": projector}


def _step(memory: Any, step: dict) -> None:
    if step["op"] == "turn":
        turn = step["turn"]
        memory.append_turn(turn["user"], turn["assistant"], created_at=turn.get("createdAt"),
                           thread_id=turn.get("threadId"), user_tool_calls=turn.get("userToolCalls"),
                           assistant_tool_calls=turn.get("assistantToolCalls"))
        return
    events = {event.id for event in memory.list_events()}
    if step["op"] == "use":
        elements = [element.id for element in memory.list_elements() if element.name in step["elementNames"]]
        memory.record_memory_use(event_ids=[item for item in step["eventIds"] if item in events],
                                 element_ids=elements, receipt_id=step["receiptId"])
    elif step["id"] in events:
        if step["op"] == "pin":
            memory.pin_event(step["id"], step["pinned"])
        elif step["op"] == "forget":
            memory.forget_event(step["id"])
        elif step["op"] == "restore":
            memory.restore_event(step["id"])


def replay(space: dict, database: Path) -> list[dict]:
    """Write one namespace of a scenario with the engine; the steps that raised."""
    clock = {"ms": epoch_ms(space["start"])}
    memory = stratagate.open(database, space["namespace"], block_turn_size=space["blockTurnSize"],
                             now=lambda: datetime.fromtimestamp(clock["ms"] / 1000, UTC),
                             id_factory=id_factory(space["idStyle"], space["idSeed"]),
                             element_id_factory=id_factory(space["idStyle"], space["idSeed"] + 7),
                             **_callbacks(space))
    errors = []
    try:
        for index, step in enumerate(space["steps"]):
            clock["ms"] += 60_000
            try:
                _step(memory, step)
            except StrataGateError as error:
                errors.append({"step": index, "op": step["op"], "message": str(error)})
    finally:
        memory.close()
    return errors


# docs/compatibility.md row 13: a supersession does not bring back an event a person forgot (the reference made
# it searchable again), and restoring a superseded event keeps it superseded (the reference made it active
# while keeping its cap): (the reference's status, the engine's status) for such an event.
_ROW_13 = {("superseded", "forgotten"), ("active", "superseded")}


def _row_13_events(reference_database: Path, database: Path, namespace: str) -> list[str]:
    statuses = []
    for path in (reference_database, database):
        memory = stratagate.open(path, namespace, read_only=True)
        try:
            statuses.append({event.id: event.status for event in memory.list_events()})
        finally:
            memory.close()
    theirs, ours = statuses
    return [event_id for event_id in theirs if (theirs[event_id], ours.get(event_id)) in _ROW_13]


def compare_replay(scenario: dict, answers: dict, reference_database: Path, database: Path) -> tuple[Report, list[dict]]:
    """The engine writes `scenario` into `database` and answers the reference's recorded calls; the report
    and the steps whose outcome (raised or not) differs from the reference's. A namespace where an event ends
    in another status by the documented deviation of row 13 is listed in `report.documented`, not compared."""
    report = Report()
    step_differences = []
    for space in scenario["namespaces"]:
        namespace = space["namespace"]
        errors = replay(space, database)
        recorded = answers["namespaces"][namespace]
        if [error["step"] for error in errors] != [error["step"] for error in recorded["stepErrors"]]:
            step_differences.append({"namespace": namespace, "ours": errors, "reference": recorded["stepErrors"]})
        if events := _row_13_events(reference_database, database, namespace):
            report.documented.append({"namespace": namespace, "row": 13, "events": events})
            continue
        report.add(compare_namespace(database, namespace, recorded))
    return report, step_differences
