"""The window paints its thread list and timeline from block spans: no block's text is read before the first
paint except the few blocks the timeline renders around its selection."""

from __future__ import annotations

from pathlib import Path

import pytest

import stratagate
from stratagate.storage.sql import SqlBackend
from stratagate_gui.views.timeline import RENDERED_AROUND_SELECTION

THREADS = ("alpha", "beta", "gamma")
BLOCKS = 120


@pytest.fixture
def many_blocks(tmp_path: Path) -> Path:
    path = tmp_path / "blocks.sqlite"
    with stratagate.open(path, "chat", block_turn_size=1) as memory:
        for turn in range(BLOCKS):
            memory.append_turn(f"question {turn}", f"answer {turn}", thread_id=THREADS[turn % len(THREADS)])
    return path


@pytest.fixture
def block_reads(monkeypatch: pytest.MonkeyPatch) -> list[list[str] | None]:
    """Every read of block records by key (None: the whole section, which fails the read)."""
    reads: list[list[str] | None] = []
    load_section, fetch = SqlBackend.load_section, SqlBackend.fetch

    def whole_section(self, namespace, section):
        if section in ("blocks", "openTail"):
            reads.append(None)
            raise AssertionError(f"the app read every record of {section}")
        return load_section(self, namespace, section)

    def some(self, namespace, section, keys):
        if section == "blocks":
            reads.append(list(keys))
        return fetch(self, namespace, section, keys)

    monkeypatch.setattr(SqlBackend, "load_section", whole_section)
    monkeypatch.setattr(SqlBackend, "fetch", some)
    return reads


def test_first_paint_reads_spans_and_only_the_blocks_shown(make_window, many_blocks: Path, block_reads) -> None:
    window = make_window()
    window.open_location(str(many_blocks), read_only=True)
    assert window.wait_idle()
    picker = window.thread_picker
    assert [picker.itemText(i) for i in range(picker.count())] == ["All threads", *THREADS]
    timeline = window.timeline
    assert len(timeline.plot.bars) == BLOCKS and timeline.list_model.rowCount() == BLOCKS
    assert {lane for *_block, lane, _level in timeline.plot.bars} == {0, 1, 2}
    last = timeline.plot.bars[-1][0]
    assert timeline.selected_block == last
    assert None not in block_reads
    fetched = [block_id for read in block_reads for block_id in read]
    assert last in fetched and len(fetched) == RENDERED_AROUND_SELECTION + 1
    assert f"question {BLOCKS - 1}" in timeline.content.toPlainText()

    first, reads_before = timeline.plot.bars[0][0], len(block_reads)
    timeline.select_block(first)  # only its neighbours are fetched (and the one block the Decay view plots)
    assert window.wait_idle()
    assert "question 0" in timeline.content.toPlainText()
    assert None not in block_reads
    assert sorted(len(read) for read in block_reads[reads_before:]) == [1, RENDERED_AROUND_SELECTION + 1]
