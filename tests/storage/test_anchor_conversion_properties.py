"""Property: the one-pass anchor conversion (migration and v5 reads) equals the reference's correlated SQL."""

from __future__ import annotations

import sqlite3
from contextlib import closing

from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.storage.legacy import ThreadEnds
from stratagate.storage.migrations import convert_anchor_turns
from stratagate.storage.sql import immediate_transaction, sqlite_engine
from tests.property_budget import examples

REFERENCE_CONVERSION = """
UPDATE blocks AS b SET anchor = MAX(1, (
  SELECT COUNT(*) FROM blocks AS c
  WHERE c.namespace = b.namespace AND c.thread_id IS b.thread_id AND c.end_turn <= b.anchor
))
"""
blocks = st.lists(
    st.tuples(
        st.sampled_from(["ns-a", "ns-b"]),
        st.sampled_from([None, "", "thread-a", "thread-b"]),  # NULL and '' are different buckets in SQL
        st.integers(min_value=0, max_value=60),  # end turn
        st.integers(min_value=-2, max_value=70),  # anchor turn
    ),
    max_size=40,
)


@settings(max_examples=examples(60), deadline=None)
@given(blocks)
def test_the_one_pass_conversion_equals_the_reference_sql(tmp_path_factory, rows) -> None:
    path = tmp_path_factory.mktemp("anchors") / "blocks.sqlite"
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute(
            "CREATE TABLE blocks (namespace TEXT, thread_id TEXT, end_turn INTEGER, anchor INTEGER, "
            "pointer_anchor_block_position INTEGER)"
        )
        connection.executemany("INSERT INTO blocks VALUES (?, ?, ?, ?, ?)", [(*row, row[3]) for row in rows])
        connection.execute(REFERENCE_CONVERSION)
    engine = sqlite_engine(path, 5)
    try:
        with immediate_transaction(engine) as connection:
            convert_anchor_turns(connection)
    finally:
        engine.dispose()
    with closing(sqlite3.connect(path)) as connection:
        converted = connection.execute("SELECT anchor, pointer_anchor_block_position FROM blocks").fetchall()
    assert [ours for _reference, ours in converted] == [reference for reference, _ours in converted]
    ends = ThreadEnds(((namespace, thread), end) for namespace, thread, end, _anchor in rows)
    assert [ends.position((namespace, thread), anchor) for namespace, thread, _end, anchor in rows] == [
        reference for reference, _ours in converted
    ]
