"""`element_ids(where)` lists element ids through the backend and `get_elements(ids)` reads just those, as
`event_ids`/`get_events` do for events (real SQLite copy of the reference)."""

from __future__ import annotations

from pathlib import Path

from stratagate.memory import open as open_memory
from tests.conftest import REFERENCE_NAMESPACE


def test_ids_and_records_match_the_loaded_section(reference_db_copy: Path):
    fresh = open_memory(reference_db_copy, REFERENCE_NAMESPACE, read_only=True)
    ids = fresh.element_ids()
    picked = [ids[-1], ids[0], "elem_404"]
    fetched = fresh.get_elements(picked)  # read from the backend: the section is not loaded
    assert not fresh._state.is_loaded("elements")
    loaded = fresh.list_elements()
    assert ids == [element.id for element in loaded]
    assert [element.to_record() for element in fetched] == [e.to_record() for e in fresh.get_elements(picked)]
    assert [element.id for element in fetched] == [ids[-1], ids[0]]
    fresh.close()


def test_filters_run_in_the_backend(reference_db_copy: Path):
    memory = open_memory(reference_db_copy, REFERENCE_NAMESPACE, read_only=True)
    elements = memory.list_elements()
    kind = elements[0].type
    assert memory.element_ids({"type": kind}) == [element.id for element in elements if element.type == kind]
    name = elements[0].name
    assert elements[0].id in memory.element_ids({"text": name.upper()})
    assert memory.element_ids({"type": None}) == memory.element_ids()
    memory.close()
