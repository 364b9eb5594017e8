"""The explicit upgrade to v7 (`stratagate migrate`): a complete backup first, one transaction, clear refusals,
and nothing half-done left by a run that was killed."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from stratagate.errors import StorageOpenError
from stratagate.snapshot import normalize_snapshot
from stratagate.storage.sql import open_backend
from stratagate.storage.upgrade import upgrade_file
from tests.storage.legacy_files import THREADED_V5_BLOCKS, build_legacy_file, dump

NOBODY = 65534


def _version(path: Path) -> int:
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as connection:
        return connection.execute("PRAGMA user_version").fetchone()[0]


def _migrate_command(path: Path) -> list[str]:
    return [sys.executable, "-m", "stratagate.cli.main", "migrate", str(path)]


@pytest.mark.parametrize("version", [1, 4, 5, 6])
def test_an_old_file_is_upgraded_after_a_complete_backup(tmp_path: Path, version: int) -> None:
    path = tmp_path / f"v{version}.sqlite"
    build_legacy_file(path, version, THREADED_V5_BLOCKS if version == 5 else None)
    original = dump(path)
    steps: list[str] = []
    result = upgrade_file(path, progress=steps.append)
    assert steps == ["backup", "upgrade"] and result.from_version == version
    assert result.backup == tmp_path / f"v{version}.sqlite.bak-v{version}" and dump(result.backup) == original
    assert sorted(p.name for p in tmp_path.iterdir() if "partial" in p.name) == []
    with open_backend(path) as backend:
        assert backend.schema_version == 7 and backend.notice is None
        exported = backend.export_namespace("legacy")
        with backend.engine.connect() as connection:
            block_columns = [row[1] for row in connection.exec_driver_sql("PRAGMA table_info(blocks)")]
    assert "last_lifted_by" in block_columns and "pointer_anchor_turn" not in block_columns
    snapshot = normalize_snapshot(exported["snapshot"])  # a valid v7 snapshot, references and all
    assert snapshot["schemaVersion"] == 7 and exported["revision"] == 4
    assert snapshot["blockDecayLambda"] == (0.25 if version == 6 else 0.3)
    assert all(block["lastLiftedBy"] is None for block in snapshot["blocks"])
    expected_positions = {1: [1], 4: [1], 5: [1, 1, 2], 6: [12]}[version]
    assert [block["pointerAnchorBlockPosition"] for block in snapshot["blocks"]] == expected_positions
    assert snapshot["events"][0]["sourceMessageIds"] == ["msg_1"]
    assert upgrade_file(path).backup is None  # already v7: nothing to do


def test_the_backup_holds_what_is_still_in_the_wal(tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    build_legacy_file(path, 5)
    writer = sqlite3.connect(path)  # an agent that committed a namespace, still open: its WAL not checkpointed
    try:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        with writer:
            writer.execute("INSERT INTO memory_spaces VALUES ('late', 5, 1, 0, 12, 'now', 'now')")
        result = upgrade_file(path)
    finally:
        writer.close()
    assert result.backup is not None and _version(result.backup) == 5
    with closing(sqlite3.connect(f"{result.backup.as_uri()}?mode=ro", uri=True)) as connection:
        assert connection.execute("SELECT namespace FROM memory_spaces ORDER BY 1").fetchall() == [("late",), ("legacy",)]


def test_a_file_another_process_is_writing_is_refused_as_locked(tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    build_legacy_file(path, 5)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA journal_mode = WAL")
        original = dump(path)
        connection.execute("BEGIN IMMEDIATE")  # an agent in the middle of a save
        with pytest.raises(StorageOpenError, match="cannot be migrated: it is locked by another process"):
            upgrade_file(path, timeout=0.2)
        connection.rollback()
    assert dump(path) == original and _version(path) == 5
    assert not any(".bak" in p.name for p in tmp_path.iterdir())


def test_a_failed_upgrade_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "broken.sqlite"
    build_legacy_file(path, 5)
    with closing(sqlite3.connect(path)) as connection, connection:  # blocks lack the anchor column
        connection.execute("ALTER TABLE blocks RENAME COLUMN pointer_anchor_turn TO anchor")
    original = dump(path)
    with pytest.raises(StorageOpenError, match="pointer_anchor_turn"):
        upgrade_file(path)
    assert dump(path) == original and not any(".bak" in p.name for p in tmp_path.iterdir())


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder outside pytest's private (0700) tree, so an unprivileged user can reach it."""
    directory = Path(tempfile.mkdtemp(prefix="stratagate-upgrade-"))
    directory.chmod(0o755)
    yield directory
    for path in directory.rglob("*"):
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(directory)


@pytest.mark.usefixtures("nobody_reads_the_project")
@pytest.mark.parametrize("read_only", ["folder", "file"])
def test_migrate_of_a_read_only_folder_or_file_exits_2_and_leaves_no_backup(shared_dir: Path, read_only: str) -> None:
    folder = shared_dir / "memory"
    folder.mkdir()
    path = folder / "agent.sqlite"
    build_legacy_file(path, 5)
    prefix: list[str] = []
    if os.geteuid() == 0:  # root writes anywhere: run the command as an unprivileged user who owns both
        os.chown(path, NOBODY, NOBODY)
        os.chown(folder, NOBODY, NOBODY)
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    (folder if read_only == "folder" else path).chmod(0o555 if read_only == "folder" else 0o444)
    original = dump(path)
    result = subprocess.run(prefix + _migrate_command(path), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    expected = f"its folder {folder} is read-only" if read_only == "folder" else "it is a read-only file"
    assert f"{path}: cannot be migrated: {expected}" in result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["agent.sqlite"] and dump(path) == original


def _big_v5_file(path: Path) -> None:
    """A v5 file large enough (about 40 MB) that its backup takes a moment to write."""
    build_legacy_file(path, 5)
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.executemany(
            "INSERT INTO messages (namespace, id, block_id, thread_id, position, role, content, created_at) "
            "VALUES ('legacy', ?, NULL, NULL, ?, 'user', ?, '2026-01-01T09:00:00.000+08:00')",
            [(f"bulk_{n}", n, f"{n:08d}" * 1250) for n in range(4000)],
        )


def _kill_when(path: Path, reached) -> bool:
    """Start `migrate`, SIGKILL it as soon as `reached()` holds; False if it finished first."""
    process = subprocess.Popen(_migrate_command(path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while process.poll() is None:
            if reached():
                process.send_signal(signal.SIGKILL)
                process.wait()
                return True
            time.sleep(0.0005)
        return False
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("point", ["backup", "upgrade"])
def test_a_killed_migrate_leaves_the_file_whole_and_the_next_run_finishes(tmp_path: Path, point: str) -> None:
    template = tmp_path / "template.sqlite"
    _big_v5_file(template)
    original = dump(template)
    path = tmp_path / "agent.sqlite"
    partial = tmp_path / "agent.sqlite.bak-v5.partial"
    backup = tmp_path / "agent.sqlite.bak-v5"
    reached = {"backup": partial.exists, "upgrade": backup.exists}[point]
    for _attempt in range(20):  # the kill must land while that step runs; a run that finished first is retried
        for leftover in tmp_path.glob("agent.sqlite*"):
            leftover.unlink()
        shutil.copyfile(template, path)
        if _kill_when(path, reached):
            break
    else:
        pytest.skip(f"migrate finished 20 times before its {point} step could be interrupted")
    assert _version(path) in (5, 7)
    if _version(path) == 5:
        assert dump(path) == original
    result = subprocess.run(_migrate_command(path), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert _version(path) == 7 and not partial.exists()
    if "already at schema 7" not in result.stdout:
        assert dump(backup) == original
