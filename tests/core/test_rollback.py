"""Whatever fails (storage, model, input), the engine's in-memory state always equals what storage holds."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate import rules
from stratagate.errors import StrataGateError
from stratagate.memory import StrataGate
from stratagate.storage.backend import SECTION_KEYS
from stratagate.storage.memory_backend import MemoryBackend
from tests.property_budget import examples


class FlakyBackend(MemoryBackend):
    """Fails the commits whose number is in `failing` (as a lost connection would)."""

    def __init__(self, failing: set[int]):
        super().__init__()
        self.failing = failing
        self.commits = 0

    def commit(self, namespace, changes, expected_revision):
        self.commits += 1
        if self.commits in self.failing:
            raise StrataGateError(f"commit {self.commits} failed")
        return super().commit(namespace, changes, expected_revision)


def stored(backend: MemoryBackend, namespace: str) -> dict:
    space = backend.load_space(namespace)
    snapshot = {key: space[key] for key in ("currentTurn", "blockTurnSize", "blockDecayLambda")}
    for section in SECTION_KEYS:
        snapshot[section] = backend.load_section(namespace, section)
    return snapshot


def engine_view(memory: StrataGate) -> dict:
    snapshot = memory.export_snapshot()
    del snapshot["schemaVersion"]
    return snapshot


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.sampled_from(["We decided to use SQLite for storage.", "Bob joined project Atlas.",
                                                    "I prefer short answers.", "ok", "Demo on March 20."])),
        st.tuples(st.just("pin"), st.integers(0, 5)),
        st.tuples(st.just("forget"), st.integers(0, 5)),
        st.tuples(st.just("lift"), st.integers(0, 3)),
        st.tuples(st.just("use"), st.integers(0, 5)),
        st.tuples(st.just("search"), st.sampled_from(["storage", "Bob", ""])),
    ),
    max_size=30,
)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS, st.sets(st.integers(2, 60), max_size=12))
def test_state_always_matches_storage(operations, failing):
    backend = FlakyBackend(set())
    memory = StrataGate.open_with_backend(backend, "ns", block_turn_size=2, **rules.engine_options())
    backend.failing = {number + backend.commits for number in failing}
    for number, (kind, argument) in enumerate(operations):
        events = memory.list_events()
        blocks = memory.list_blocks()
        try:
            if kind == "turn":
                memory.append_turn(argument, "Noted.", created_at="2026-03-02T09:00:00Z")
            elif kind == "pin" and events:
                memory.pin_event(events[argument % len(events)].id)
            elif kind == "forget" and events:
                memory.forget_event(events[argument % len(events)].id)
            elif kind == "lift" and blocks:
                memory.expand_block(blocks[argument % len(blocks)].id, argument, source="user")
            elif kind == "use" and events:
                memory.record_memory_use([events[argument % len(events)].id], receipt_id=f"r{number}")
            elif kind == "search":
                memory.search_events(argument, record=True)
        except StrataGateError:
            pass
        assert engine_view(memory) == stored(backend, "ns")
