"""Snapshot files read as a stream (`snapshot_stream`): the same checks, errors and rows as the whole-file reader,
a file that changes between the two passes refused, and unusual layouts left to the whole-file reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stratagate.errors import SnapshotError
from stratagate.snapshot import normalize_snapshot
from stratagate.storage import snapshot_stream, transfer
from stratagate.storage.sql import open_backend
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_SNAPSHOT

NS = REFERENCE_NAMESPACE


def _reference() -> dict[str, Any]:
    return json.loads(REFERENCE_SNAPSHOT.read_text())


def _import(path: Path, target: Path, namespace: str | None = None) -> dict[str, Any]:
    entries = transfer.read_snapshot_file(path, namespace)
    with open_backend(target) as backend:
        transfer.import_snapshots(backend, entries)
        return {name: backend.export_namespace(name) for name in backend.list_namespaces()}


def _import_whole(path: Path, target: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    with monkeypatch.context() as patched:
        patched.setattr(snapshot_stream, "scan", lambda _path, _namespace: None)
        return _import(path, target)


def test_a_v5_reference_file_streams_to_the_same_memory_as_read_whole(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(transfer.read_snapshot_file(REFERENCE_SNAPSHOT), snapshot_stream.StreamedFile)
    streamed = _import(REFERENCE_SNAPSHOT, tmp_path / "streamed.sqlite")
    whole = _import_whole(REFERENCE_SNAPSHOT, tmp_path / "whole.sqlite", monkeypatch)
    assert streamed == whole
    assert streamed[NS]["snapshot"] == normalize_snapshot(_reference()[NS]["snapshot"])


def test_a_bare_snapshot_and_a_chosen_namespace_stream(tmp_path: Path) -> None:
    data = _reference()
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(data[NS]["snapshot"]))
    with pytest.raises(SnapshotError, match="holds a bare snapshot; name its namespace"):
        transfer.read_snapshot_file(bare)
    assert list(_import(bare, tmp_path / "bare.sqlite", "solo")) == ["solo"]
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"other": data[NS], NS: data[NS]}))
    assert list(_import(two, tmp_path / "two.sqlite", NS)) == [NS]
    with pytest.raises(SnapshotError, match=f"no namespace 'missing' \\(has: other, {NS}\\)"):
        transfer.read_snapshot_file(two, "missing")


@pytest.mark.parametrize(("change", "words"), [
    (lambda s: s["events"][1].update(sourceBlockId="blk_nowhere"), "sourceBlockId 'blk_nowhere' does not exist"),
    (lambda s: s["events"][2].update(confidence="high"), "confidence must be a finite number"),
    (lambda s: s["blocks"][0]["l5Raw"][0].update(content="a\x00b"), "blocks[0].l5Raw[0].content contains a NUL"),
    (lambda s: s["openTail"].append(dict(s["blocks"][0]["l5Raw"][0])), "duplicate message id"),
    (lambda s: s.pop("events"), "events must be an array"),
    (lambda s: s.update(blockTurnSize=0), "blockTurnSize must be an integer >= 1"),
])
def test_bad_records_are_refused_naming_the_file_namespace_and_record(tmp_path: Path, change, words: str) -> None:
    data = _reference()
    change(data[NS]["snapshot"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SnapshotError) as refused:
        transfer.read_snapshot_file(path)
    assert str(refused.value).startswith(f"{path}: namespace {NS!r}: ") and words in str(refused.value)


def test_a_file_changed_between_the_passes_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(_reference()))
    entries = transfer.read_snapshot_file(path)
    path.write_text(json.dumps(_reference()).replace("Atlas", "Atlaz"))
    target = tmp_path / "target.sqlite"
    with open_backend(target) as backend:
        with pytest.raises(SnapshotError, match="changed while it was being imported; nothing was written"):
            transfer.import_snapshots(backend, entries)
        assert backend.list_namespaces() == []


def _reordered(data: dict[str, Any], first: str) -> dict[str, Any]:
    snapshot = data[NS]["snapshot"]
    return {NS: {**data[NS], "snapshot": {first: snapshot[first], **snapshot}}}


@pytest.mark.parametrize("layout", ["events before blocks", "version after a section", "top-level array"])
def test_other_layouts_are_read_whole(tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _reference()
    value: Any = {
        "events before blocks": _reordered(data, "events"),
        "version after a section": _reordered(data, "openTail"),
        "top-level array": [data],
    }[layout]
    path = tmp_path / "file.json"
    path.write_text(json.dumps(value))
    assert snapshot_stream.scan(path, None) is None
    if layout != "top-level array":
        assert _import(path, tmp_path / "a.sqlite") == _import_whole(REFERENCE_SNAPSHOT, tmp_path / "b.sqlite",
                                                                     monkeypatch)


def test_records_longer_than_a_read_are_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_stream, "READ_BYTES", 7)
    data = _reference()
    data[NS]["snapshot"]["openTail"][0]["content"] = "long \\u00e9 text " * 100
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data, indent=1))
    assert _import(path, tmp_path / "long.sqlite")[NS]["snapshot"]["openTail"][0]["content"].startswith("long \\u00e9")
