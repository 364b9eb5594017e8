"""The storage commands: open, migrate, export, import snapshot, copy (SQLite and PostgreSQL)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from stratagate.cli.main import cli
from stratagate.storage.sql import open_backend
from tests.conftest import REFERENCE_DB, REFERENCE_NAMESPACE, REFERENCE_ORACLE, REFERENCE_SNAPSHOT
from tests.postgres_server import fresh_database
from tests.storage.legacy_files import build_legacy_file, make_newer

NS = REFERENCE_NAMESPACE


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def _files(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir()) if p.is_file()}


def test_open_read_only_prints_a_summary_and_writes_nothing(reference_db_copy: Path) -> None:
    before = _files(reference_db_copy.parent)
    output = run("open", str(reference_db_copy), "--read-only")
    sha = json.loads(REFERENCE_ORACLE.read_text())["file"]["sha256"]
    assert f"sha256:   {sha}" in output and "schema:   5" in output and "(read-only)" in output
    assert f"{NS}: revision 103, turn 40; 3 blocks, 12 events, 6 elements, 8 open-tail messages" in output
    assert _files(reference_db_copy.parent) == before


def test_open_of_a_bad_file_exits_2_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "notes.sqlite"
    bad.write_text("not a database at all, just some text that is long enough to look like a file")
    output = run("open", str(bad), "--read-only", code=2)
    assert f"{bad}: is not an SQLite database" in output
    assert run("open", str(tmp_path / "missing.sqlite"), code=2).count("no such file") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.sqlite"]


def test_migrate_backs_up_then_upgrades(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    build_legacy_file(path, 4)
    output = run("migrate", str(path))
    assert "upgraded from schema 4 to 7" in output and (tmp_path / "old.sqlite.bak-v4").exists()
    assert "already at schema 7" in run("migrate", str(path))
    assert "schema:   7" in run("open", str(path), "--read-only")


def test_export_import_and_copy_round_trip_losslessly(tmp_path: Path, reference_db_copy: Path, postgres_server) -> None:
    exported = tmp_path / "export.json"
    run("export", str(reference_db_copy), "--namespace", NS, "-o", str(exported))
    data = json.loads(exported.read_text())
    reference = json.loads(REFERENCE_SNAPSHOT.read_text())
    assert data[NS]["revision"] == reference[NS]["revision"] and data[NS]["snapshot"]["schemaVersion"] == 7

    imported = tmp_path / "imported.sqlite"
    run("import", "snapshot", str(exported), "--database", str(imported))
    assert "already exist" in run("import", "snapshot", str(exported), "--database", str(imported), code=2)
    run("import", "snapshot", str(exported), "--database", str(imported), "--replace")
    # The reference's own v5 snapshot file imports too (upgraded to v7 on the way).
    run("import", "snapshot", str(REFERENCE_SNAPSHOT), "--database", str(tmp_path / "from-v5.sqlite"))

    server_url = fresh_database(postgres_server)
    run("copy", str(imported), server_url, "--namespace", NS)
    copied = tmp_path / "copied.sqlite"
    run("copy", server_url, str(copied))
    for database in (imported, server_url, copied, tmp_path / "from-v5.sqlite"):
        again = tmp_path / "again.json"
        run("export", str(database), "-o", str(again))
        assert json.loads(again.read_text()) == data, database
    assert exported.read_text() == again.read_text()


def test_import_rejects_an_invalid_snapshot_and_creates_nothing(tmp_path: Path) -> None:
    data = json.loads(REFERENCE_SNAPSHOT.read_text())
    data[NS]["snapshot"]["events"][0]["sourceBlockId"] = "blk_missing"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    target = tmp_path / "target.sqlite"
    output = run("import", "snapshot", str(broken), "--database", str(target), code=2)
    assert str(broken) in output and "blk_missing" in output
    assert not target.exists()
    assert REFERENCE_DB.exists()


def test_migrate_refuses_a_newer_file_and_leaves_it_alone(tmp_path: Path, reference_v7) -> None:
    path = tmp_path / "v9.sqlite"
    with open_backend(path) as backend:
        backend.import_namespace(NS, reference_v7["snapshot"], reference_v7["revision"])
    make_newer(path, 9, NS)
    before = _files(tmp_path)
    output = run("migrate", str(path), code=2)
    assert f"{path}: cannot be migrated: schema 9 is newer than 7: opened read-only" in output
    assert _files(tmp_path) == before
