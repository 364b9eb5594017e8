"""normalize_snapshot: upgrades v1–v7 snapshots to v7 and rejects malformed ones naming the field."""

from __future__ import annotations

import copy
import json
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.errors import SnapshotError
from stratagate.snapshot import _event_well_formed, empty_snapshot, normalize_snapshot, validate_section
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_SNAPSHOT
from tests.property_budget import examples


@pytest.fixture
def v5_snapshot() -> dict:
    return json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]["snapshot"]


def test_v5_fixture_upgrades_to_v7_with_block_positions(v5_snapshot):
    original = copy.deepcopy(v5_snapshot)
    snapshot = normalize_snapshot(v5_snapshot)
    assert v5_snapshot == original
    assert snapshot["schemaVersion"] == 7
    assert snapshot["blockDecayLambda"] == 0.3
    # blk_25 was lifted at turn 40 (3 blocks end by then); the others are anchored at their own end turn.
    assert [(b["id"], b["pointerAnchorBlockPosition"]) for b in snapshot["blocks"]] == [
        ("blk_25", 3), ("blk_50", 2), ("blk_82", 3)]
    assert all(b["lastLiftedBy"] is None and "pointerAnchorTurn" not in b for b in snapshot["blocks"])


def test_threads_are_separate_buckets_and_position_is_at_least_one():
    snapshot = empty_snapshot()
    snapshot["schemaVersion"] = 5
    block = {"sequence": 1, "startTurn": 1, "shouldExtract": False, "l0Title": "", "l0Tags": [], "l1Summary": "",
             "l2Keypoints": [], "l3Condensed": "", "l4Readable": "", "l5Raw": [], "createdAt": "",
             "pointerCurrentLevel": 5, "pointerAnchorLevel": 5, "lastLiftedAt": None}
    rows = [("a1", "thread-a", 6, 7), ("b1", "thread-b", 6, 6), ("a2", "thread-a", 12, 12), ("u1", None, 6, 3)]
    for index, (block_id, thread, end, anchor) in enumerate(rows):
        record = dict(block, id=block_id, sequence=index + 1, endTurn=end, pointerAnchorTurn=anchor)
        if thread:
            record["threadId"] = thread
        snapshot["blocks"].append(record)
    upgraded = normalize_snapshot(snapshot)
    assert [b["pointerAnchorBlockPosition"] for b in upgraded["blocks"]] == [1, 1, 2, 1]


def test_v1_snapshot_gains_element_sections():
    snapshot = empty_snapshot()
    snapshot["schemaVersion"] = 1
    for section in ("elements", "elementProjectionJobs", "ingestionReceipts", "blockDecayLambda"):
        del snapshot[section]
    snapshot["usageReceipts"] = [{"id": "r1", "eventIds": [], "createdAt": "x"}]
    upgraded = normalize_snapshot(snapshot)
    assert upgraded["elements"] == [] and upgraded["ingestionReceipts"] == []
    assert upgraded["usageReceipts"][0]["elementIds"] == []


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s.update(schemaVersion=8), "Unsupported StrataGate snapshot schema: 8"),
        (lambda s: s.update(currentTurn=-1), "currentTurn"),
        (lambda s: s.update(events="x"), "events must be an array"),
        (lambda s: s["events"][0].update(confidence=float("nan")), "'evt_51' confidence"),
        (lambda s: s["events"][0].update(sourceBlockId="blk_missing"), "blk_missing"),
        (lambda s: s["events"].append(copy.deepcopy(s["events"][0])), "duplicate event id 'evt_51'"),
        (lambda s: s["elements"][0]["facts"][0].update(sourceEventIds=["evt_404"]), "evt_404"),
    ],
)
def test_malformed_snapshots_name_the_field(v5_snapshot, mutate, message):
    mutate(v5_snapshot)
    with pytest.raises(SnapshotError, match=message.replace("(", r"\(")):
        normalize_snapshot(v5_snapshot)


def test_v7_rejects_bad_lift_source_and_lambda(v5_snapshot):
    snapshot = normalize_snapshot(v5_snapshot)
    bad = copy.deepcopy(snapshot)
    bad["blocks"][0]["lastLiftedBy"] = "bot"
    with pytest.raises(SnapshotError, match="lastLiftedBy must be user, agent, or null"):
        normalize_snapshot(bad)
    bad = copy.deepcopy(snapshot)
    bad["blockDecayLambda"] = -1
    with pytest.raises(SnapshotError, match="blockDecayLambda"):
        normalize_snapshot(bad)
    assert normalize_snapshot(snapshot) == snapshot


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True) | st.text(max_size=4),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:2]):
            yield from _paths(item, (*prefix, index))


FIXTURE = json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]["snapshot"]
FIXTURE_PATHS = [path for path in _paths(FIXTURE) if path]


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(FIXTURE_PATHS), JSON_VALUES)
def test_any_corrupted_field_gives_snapshot_error_or_a_valid_snapshot(path, value):
    snapshot = copy.deepcopy(FIXTURE)
    target = snapshot
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    try:
        upgraded = normalize_snapshot(snapshot)
    except SnapshotError:
        return
    assert normalize_snapshot(upgraded) == upgraded


EVENT = normalize_snapshot(FIXTURE)["events"][0]
TEMPORAL_KEYS = ("mentionedAt", "happenedStart", "happenedEnd", "eventType", "originalText", "threadId",
                 "participants", "supersedesEventIds")
EVENT_PATHS = sorted({path for path in _paths(EVENT) if path} | {("temporal", key) for key in TEMPORAL_KEYS},
                     key=repr)
DELETED = object()


def _checked_field_by_field(event) -> bool:
    """Whether `validate_section` accepts the event with its quick check of well-formed events turned off."""
    with mock.patch("stratagate.snapshot._event_well_formed", return_value=False):
        try:
            validate_section("events", [event])
        except SnapshotError:
            return False
    return True


def test_a_stored_event_takes_the_quick_check():
    assert _event_well_formed(EVENT) and _checked_field_by_field(EVENT)


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(EVENT_PATHS), JSON_VALUES | st.integers() | st.just(DELETED))
def test_the_quick_check_passes_only_events_the_full_checks_pass(path, value):
    event = copy.deepcopy(EVENT)
    target = event
    for key in path[:-1]:
        target = target[key]
    if value is DELETED:
        target.pop(path[-1]) if isinstance(target, list) else target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    if _event_well_formed(event):
        assert _checked_field_by_field(event)
