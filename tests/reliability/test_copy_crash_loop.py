"""`stratagate copy` killed with SIGKILL at points spread over its whole run, to SQLite and to PostgreSQL.

The source holds many namespaces (the reference memory under 40 names, one with a curation journal). An
unkilled copy is timed first, from the moment the copying process has both databases open (before that it is
only importing Python) to its exit; the kill points are then spread evenly over that span. After each kill
the target holds either none of the namespaces or all of them (a copy is one transaction), passes SQLite's
integrity check, and a rerun of the same command completes and equals the source, journal included.
`STRATAGATE_COPY_KILLS` sets the number of kills per target (default 5).
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from stratagate import journal
from stratagate.snapshot import normalize_snapshot
from stratagate.storage.sql import open_backend
from stratagate.storage.transfer import write_export
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_SNAPSHOT
from tests.postgres_server import fresh_database

NAMESPACES = 40
KILLS = int(os.environ.get("STRATAGATE_COPY_KILLS", "5"))


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, reference_v7_snapshot) -> Path:
    path = tmp_path_factory.mktemp("copy-crash") / "source.sqlite"
    with open_backend(path) as backend:
        for number in range(NAMESPACES):
            backend.import_namespace(f"ns-{number:03d}", reference_v7_snapshot["snapshot"], number + 1)
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as connection:
            entries = [journal.new_entry("reviewer", "pin", [f"evt_{n}"], {"p": 0}, {"p": 1}) for n in range(5)]
            journal.append_entries(connection, "ns-007", entries)
    finally:
        engine.dispose()
    return path


@pytest.fixture(scope="module")
def reference_v7_snapshot() -> dict:
    data = json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]
    return {"snapshot": normalize_snapshot(data["snapshot"]), "revision": data["revision"]}


def _export(database: str) -> str:
    stream = io.StringIO()
    with open_backend(database, read_only=True) as backend:
        write_export(backend, backend.list_namespaces(), stream)
    return stream.getvalue()


def _start(source: Path, target: str) -> tuple[subprocess.Popen, float]:
    """Start the copy; return it and the time it had the source database open (its work had started)."""
    process = subprocess.Popen([sys.executable, "-m", "stratagate.cli.main", "copy", str(source), target],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fds = Path(f"/proc/{process.pid}/fd")
    while process.poll() is None:
        try:
            if any(os.readlink(fd) == str(source) for fd in fds.iterdir()):
                return process, time.monotonic()
        except OSError:  # a descriptor closed while it was read
            pass
        time.sleep(0.002)
    raise AssertionError(f"copy ended before it opened {source}: {process.stderr.read().decode()}")


def _holds(target: str) -> list[str]:
    if "://" not in target:
        if not Path(target).exists():
            return []
        with closing(sqlite3.connect(target)) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    else:  # killed before its schema's transaction committed: the database is as empty as it was made
        engine = create_engine(target)
        try:
            if not inspect(engine).get_table_names():
                return []
        finally:
            engine.dispose()
    with open_backend(target, read_only=True) as backend:
        return backend.list_namespaces()


def _crash_loop(source: Path, new_target) -> dict[str, int]:
    expected = _export(str(source))
    process, started = _start(source, new_target())
    assert process.wait(timeout=600) == 0, process.stderr.read().decode()
    span = time.monotonic() - started
    outcome = {"kills": 0, "left nothing": 0, "left everything": 0}
    for index in range(KILLS):
        target = new_target()
        process, started = _start(source, target)
        time.sleep(max(0.0, started + span * (index + 0.5) / KILLS - time.monotonic()))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        outcome["kills"] += 1
        held = _holds(target)
        assert held in ([], [f"ns-{n:03d}" for n in range(NAMESPACES)]), f"half a copy: {len(held)} namespaces"
        outcome["left nothing" if not held else "left everything"] += 1
        if not held:  # the rerun a user would make
            rerun = subprocess.run([sys.executable, "-m", "stratagate.cli.main", "copy", str(source), target],
                                   capture_output=True, text=True, timeout=600)
            assert rerun.returncode == 0, rerun.stderr
        assert _export(target) == expected
        with open_backend(target, read_only=True) as backend:
            assert journal.verify(backend.engine).ok
    return outcome


@pytest.mark.slow
def test_a_killed_copy_to_sqlite_leaves_all_or_nothing_and_reruns(source: Path, tmp_path: Path) -> None:
    targets = iter(range(KILLS + 1))
    outcome = _crash_loop(source, lambda: str(tmp_path / f"target-{next(targets)}.sqlite"))
    print(f"copy to sqlite crash loop: {outcome}")


@pytest.mark.slow
@pytest.mark.postgres
def test_a_killed_copy_to_postgresql_leaves_all_or_nothing_and_reruns(source: Path, postgres_server) -> None:
    outcome = _crash_loop(source, lambda: fresh_database(postgres_server, "copykill"))
    print(f"copy to postgresql crash loop: {outcome}")
