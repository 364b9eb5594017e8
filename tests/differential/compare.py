"""Our engine's answers to the reference's recorded calls, compared: same ids, same order, scores within 1e-12.

An oracle is the reference's SQLite file (as it stood before the queries) and its answers JSON (driver.mjs, or
tests/fixtures/reference-v5-basic.json for the hand-made fixture). The engine opens the file read-only and
answers each call; `compare_oracle` returns how many calls were compared and every mismatch.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import stratagate
from stratagate.errors import StrataGateError

SCORE_TOLERANCE = 1e-12
OPTION_NAMES = {"temporalIntent": "temporal_intent", "eventType": "event_type", "happenedFrom": "happened_from",
                "happenedTo": "happened_to"}
# JSON has no NaN or infinities: oracles spell them as strings.
NUMBERS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def number(value: Any) -> Any:
    return NUMBERS.get(value, value) if isinstance(value, str) else value


def options(call: dict) -> dict:
    """A recorded call's options as keyword arguments of the engine's search."""
    return {OPTION_NAMES.get(name, name): number(value) if name == "limit" else value
            for name, value in (call.get("options") or {}).items()}


def event_rows(hits: Any) -> list[dict]:
    return [{"id": hit.event.id, "score": hit.score} for hit in hits]


def element_rows(hits: Any) -> list[dict]:
    return [{"factId": hit.fact.id, "elementId": hit.element.id, "score": hit.score, "status": hit.fact.status,
             "value": hit.fact.value} for hit in hits]


def raw_rows(hits: Any) -> list[dict]:
    return [{"blockId": hit.block_id, "turnRange": list(hit.turn_range), "messageId": hit.message.id,
             "nearby": [message.id for message in hit.nearby]} for hit in hits]


def element_view(element: Any) -> dict:
    return {"currentState": element.current_state,
            "facts": [{"id": fact.id, "status": fact.status, "validFrom": fact.valid_from, "validTo": fact.valid_to}
                      for fact in element.facts]}


def answer(memory: Any, call: dict) -> Any:
    """The engine's answer to one recorded call, shaped like the driver's; {"error": …} when it raises."""
    try:
        kind = call["kind"]
        if kind == "searchEvents":
            return event_rows(memory.search_events(call["query"], **options(call)))
        if kind == "searchElements":
            return element_rows(memory.search_elements(call["query"], **options(call)))
        if kind == "searchRawMemory":
            limit = number(call["limit"]) if "limit" in call else 6
            return raw_rows(memory.search_raw_memory(call["query"], limit))
        if kind == "expandElement":
            return element_view(memory.expand_element(call["id"], call.get("at")))
    except StrataGateError as error:
        return {"error": str(error)}
    raise ValueError(f"unknown call kind {call['kind']!r}")


def same(expected: Any, actual: Any) -> bool:
    """Equal, with scores (any float) within SCORE_TOLERANCE; an error matches any error."""
    if isinstance(expected, dict) and "error" in expected:
        return isinstance(actual, dict) and "error" in actual
    if isinstance(expected, float) or isinstance(actual, float):
        return (isinstance(expected, int | float) and isinstance(actual, int | float)
                and abs(expected - actual) <= SCORE_TOLERANCE)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same(expected[key], actual[key]) for key in expected)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual, strict=True))
    return expected == actual


@dataclass
class Report:
    by_kind: Counter[str] = field(default_factory=Counter)
    """Calls compared per kind (searchEvents, …, events weight)."""
    mismatches: list[dict] = field(default_factory=list)
    documented: list[dict] = field(default_factory=list)
    """Namespaces not compared because they take a documented deviation (docs/compatibility.md), and why."""

    @property
    def compared(self) -> int:
        return self.by_kind.total()

    @property
    def matched(self) -> int:
        return self.compared - len(self.mismatches)

    def add(self, other: Report) -> None:
        self.by_kind += other.by_kind
        self.mismatches += other.mismatches
        self.documented += other.documented


def compare_namespace(database: Path, namespace: str, recorded: dict) -> Report:
    """Every recorded call and weight of one namespace, answered by the engine from the oracle file."""
    report = Report()
    memory = stratagate.open(database, namespace, read_only=True)
    try:
        for call in recorded["results"]:
            actual = answer(memory, call)
            report.by_kind[call["kind"]] += 1
            if not same(call["result"], actual):
                report.mismatches.append({"namespace": namespace, "call": {k: v for k, v in call.items() if k != "result"},
                                          "expected": call["result"], "actual": actual})
        for kind, weight in (("events", memory.event_weight), ("elements", memory.element_weight)):
            for item_id, expected in recorded["weights"][kind].items():
                try:
                    actual: Any = weight(item_id)
                except StrataGateError as error:
                    actual = {"error": str(error)}
                report.by_kind[f"{kind} weight"] += 1
                if not same(expected, actual):
                    report.mismatches.append({"namespace": namespace, "call": {"kind": f"{kind} weight", "id": item_id},
                                              "expected": expected, "actual": actual})
        if "state" in recorded:
            _compare_state(memory, namespace, recorded["state"], report)
    finally:
        memory.close()
    return report


# Stored fields the reference does not have (v7) or that its searches rewrote after the state was written.
_ENGINE_ONLY = {"pointerCurrentLevel", "pointerAnchorLevel", "pointerAnchorBlockPosition", "lastLiftedAt",
                "lastLiftedBy", "lastRetrievedAt"}


def _record(item: Any) -> dict:
    record = item.to_record()
    if "weight" in record:
        record["weight"] = {key: value for key, value in record["weight"].items() if key not in _ENGINE_ONLY}
    return {key: value for key, value in record.items() if key not in _ENGINE_ONLY}


def _compare_state(memory: Any, namespace: str, state: dict, report: Report) -> None:
    """Every stored event, element and block, field by field, as the reference listed them."""
    for kind, items in (("events", memory.list_events()), ("elements", memory.list_elements()),
                        ("blocks", memory.list_blocks())):
        ours = {item.id: _record(item) for item in items}
        report.by_kind[f"{kind} stored"] += 1
        if set(ours) != {item["id"] for item in state[kind]}:
            report.mismatches.append({"namespace": namespace, "call": {"kind": f"{kind} stored"},
                                      "expected": sorted(item["id"] for item in state[kind]), "actual": sorted(ours)})
            continue
        for expected in state[kind]:
            report.by_kind[f"{kind} stored"] += 1
            if not same(expected, ours[expected["id"]]):
                report.mismatches.append({"namespace": namespace, "call": {"kind": f"{kind} stored", "id": expected["id"]},
                                          "expected": expected, "actual": ours[expected["id"]]})


def compare_oracle(database: Path, answers: dict) -> Report:
    """All namespaces of one oracle."""
    report = Report()
    for namespace, recorded in answers["namespaces"].items():
        report.add(compare_namespace(database, namespace, recorded))
    return report
