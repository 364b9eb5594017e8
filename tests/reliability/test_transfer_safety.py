"""`export`, `import` and `copy` against hostile paths and data: outputs that are inputs, non-regular files,
missing folders, killed exports, NUL text, and the curation journal carried along (issue 16: 3, 5, 7, 9, 13,
14). Commands that could hang run in a subprocess with a timeout."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

import stratagate
from stratagate.cli.main import cli
from stratagate.errors import InvalidInputError
from stratagate.journal import new_entry
from stratagate.storage.sql import open_backend
from stratagate.storage.transfer import partial_path
from tests.conftest import REFERENCE_NAMESPACE
from tests.postgres_server import fresh_database

NS = REFERENCE_NAMESPACE


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, (result.output, result.exception)
    assert "Traceback" not in result.output
    return result.output


def run_process(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The command in its own process, so a hang fails the test instead of freezing the suite."""
    return subprocess.run(
        [sys.executable, "-m", "stratagate.cli.main", *args], capture_output=True, text=True, timeout=timeout
    )


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def curated(tmp_path: Path) -> Path:
    """A v7 SQLite memory: two turns in two blocks, an event and a two-entry curation journal."""
    path = tmp_path / "curated.sqlite"
    memory = stratagate.open(str(path), namespace="atlas", block_turn_size=1)
    try:
        memory.append_turn("Dana leads project Atlas.", "Noted.")
        memory.append_turn("Bob moved to Lisbon.", "Noted.")
        event = memory.add_event("Bob moved", "to Lisbon", source_block_id=memory.list_blocks()[0].id)
        memory.pin_event(event.id, journal_entry=new_entry("reviewer", "pin", [event.id], {"p": 0}, {"p": 1}))
        memory.forget_event(event.id, journal_entry=new_entry("reviewer", "forget", [event.id], {}, {"s": "f"}))
    finally:
        memory.close()
    return path


# -- 3: an output that is an input ---------------------------------------------------------------------------


def test_export_refuses_to_overwrite_its_own_database_or_side_files(curated: Path, tmp_path: Path) -> None:
    before = sha(curated)
    link = tmp_path / "link.sqlite"
    link.symlink_to(curated)
    hard = tmp_path / "hard.json"
    os.link(curated, hard)
    for output in (curated, Path(f"{curated}-wal"), Path(f"{curated}-shm"), link, hard):
        error = run("export", str(curated), "-o", str(output), code=2)
        assert "is the input" in error and "choose another output path" in error, error
    assert sha(curated) == before
    run("export", str(curated), "-o", str(tmp_path / "fine.json"))


def test_copy_and_import_refuse_a_target_that_is_their_input(curated: Path, tmp_path: Path) -> None:
    before = sha(curated)
    assert "is the input database" in run("copy", str(curated), str(curated), code=2)
    assert "is the input database" in run("copy", str(curated), f"sqlite:///{curated}", code=2)
    snapshot = tmp_path / "out.json"
    run("export", str(curated), "-o", str(snapshot))
    assert "is the input database" in run("import", "snapshot", str(snapshot), "--database", str(snapshot), code=2)
    assert sha(curated) == before


def test_copy_refuses_the_same_postgresql_database(postgres_server) -> None:
    url = fresh_database(postgres_server)
    open_backend(url).close()
    assert "is the input database itself" in run("copy", url, url, "--replace", code=2)


# -- 5: non-regular files ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("arguments", [["open"], ["open", "--read-only"], ["export"]])
def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, arguments: list[str]) -> None:
    fifo = tmp_path / "memory.sqlite"
    os.mkfifo(fifo)
    result = run_process(arguments[0], str(fifo), *arguments[1:])
    assert result.returncode == 2, result.stderr
    assert f"{fifo}: is a named pipe (FIFO), not a database file" in result.stderr


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_link_to_a_device_is_named_a_device_not_an_empty_file(tmp_path: Path, device: str) -> None:
    link = tmp_path / "memory.sqlite"
    link.symlink_to(device)
    for arguments in (["open", str(link)], ["open", str(link), "--read-only"], ["export", str(link)]):
        result = run_process(*arguments)
        assert result.returncode == 2 and "is a character device, not a database file" in result.stderr, result
        assert "empty file" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.sqlite"]


# -- 9: folders, permissions and locks --------------------------------------------------------------------------


def test_export_into_a_missing_folder_exits_2_naming_it(curated: Path, tmp_path: Path) -> None:
    out = tmp_path / "missing" / "out.json"
    assert f"its folder {out.parent} does not exist" in run("export", str(curated), "-o", str(out), code=2)


def test_export_to_a_device_is_refused_and_the_device_left_alone(curated: Path) -> None:
    assert "is not a regular file" in run("export", str(curated), "-o", "/dev/null", code=2)
    assert Path("/dev/null").is_char_device()


AS_NOBODY = """
import difflib, importlib, os, pkgutil, shlex, sys  # noqa: F401
import click._termui_impl, stratagate.search, stratagate.storage
# Import what `open` and `export` run while root can still read the interpreter's files (under /root).
for package in (stratagate.storage, stratagate.search):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(module.name)
from stratagate.cli.main import cli
os.setgroups([]); os.setgid(65534); os.setuid(65534)
cli(sys.argv[1:])
"""


def _as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
    """The command as user `nobody` (uid 65534) through os.setuid in a subprocess: the suite runs as root, for
    whom every file is writable, and the interpreter lives where `nobody` cannot read, so the command's modules
    are imported before the switch."""
    return subprocess.run(
        [sys.executable, "-c", AS_NOBODY, *args], capture_output=True, text=True, timeout=60, cwd="/"
    )


@pytest.fixture
def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder user `nobody` can reach (pytest's own temp root is private to root)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run a command as another user")
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"stratagate-perm-{os.getpid()}-{os.urandom(4).hex()}"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=True)


@pytest.mark.usefixtures("nobody_reads_the_project")
def test_a_writable_open_of_a_read_only_file_exits_2_and_creates_nothing(curated: Path, shared_folder: Path) -> None:
    """Permission checks are real: the command runs as `nobody` (see `_as_nobody`)."""
    path = shared_folder / "memory.sqlite"
    path.write_bytes(curated.read_bytes())
    path.chmod(0o444)
    result = _as_nobody("open", str(path))
    assert result.returncode == 2, result
    assert f"{path}: is a read-only file" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in shared_folder.iterdir()) == ["memory.sqlite"]
    assert _as_nobody("open", str(path), "--read-only").returncode == 0
    out = shared_folder / "sealed"
    out.mkdir(mode=0o555)
    result = _as_nobody("export", str(path), "-o", str(out / "out.json"))
    assert result.returncode == 2 and f"{out / 'out.json'}: cannot be written (Permission denied)" in result.stderr


def test_a_locked_database_is_named_locked(curated: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import sqlite3, sys\n"
            f"c = sqlite3.connect({str(curated)!r}, isolation_level=None)\n"
            "c.execute('PRAGMA locking_mode = EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE')\n"
            "c.execute('UPDATE memory_spaces SET updated_at = updated_at')\n"
            "print('locked', flush=True); sys.stdin.read()\n"
        )],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = run_process("open", str(curated))
        assert result.returncode == 2, result
        assert "is locked by another process" in result.stderr and "not a readable" not in result.stderr
    finally:
        holder.communicate("", timeout=30)


# -- 13: killed exports, file modes ----------------------------------------------------------------------------


def test_a_killed_exports_temp_file_is_removed_by_the_next_export(curated: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = partial_path(out, int(gone.stdout))
    stale.write_text('{"half": ')
    run("export", str(curated), "-o", str(out))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert json.loads(out.read_text())["atlas"]["revision"] > 1


def test_export_files_get_the_umask_mode(curated: Path, tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        run("export", str(curated), "-o", str(tmp_path / "out.json"))
    finally:
        os.umask(previous)
    assert (tmp_path / "out.json").stat().st_mode & 0o777 == 0o644


def test_streamed_export_is_laid_out_like_json_dump(curated: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    run("export", str(curated), "-o", str(out))
    data = json.loads(out.read_text())
    assert out.read_text() == json.dumps(data, ensure_ascii=False, indent=2) + "\n"


# -- 14: the curation journal travels ----------------------------------------------------------------------------


def test_export_import_and_copy_carry_the_journal(curated: Path, tmp_path: Path, postgres_server) -> None:
    exported = tmp_path / "out.json"
    run("export", str(curated), "-o", str(exported))
    journal = json.loads(exported.read_text())["atlas"]["journal"]
    assert [entry["action"] for entry in journal] == ["pin", "forget"]
    imported = tmp_path / "imported.sqlite"
    run("import", "snapshot", str(exported), "--database", str(imported))
    server = fresh_database(postgres_server)
    run("copy", str(curated), server)
    for database in (imported, server):
        assert "journal OK: 2 entries" in run("journal", "verify", str(database))
        again = tmp_path / "again.json"
        run("export", str(database), "-o", str(again))
        assert json.loads(again.read_text())["atlas"]["journal"] == journal


def test_an_import_with_a_broken_journal_is_refused_whole(curated: Path, tmp_path: Path) -> None:
    exported = tmp_path / "out.json"
    run("export", str(curated), "-o", str(exported))
    data = json.loads(exported.read_text())
    data["atlas"]["journal"][0]["actor"] = "someone else"
    exported.write_text(json.dumps(data))
    target = tmp_path / "target.sqlite"
    assert "journal of 'atlas': entry 1 was edited" in run(
        "import", "snapshot", str(exported), "--database", str(target), code=2
    )
    with open_backend(target) as backend:
        assert backend.list_namespaces() == []


# -- 7: NUL ------------------------------------------------------------------------------------------------------


def test_nul_is_refused_at_the_api_on_every_backend(tmp_path: Path, postgres_server) -> None:
    for database in (str(tmp_path / "nul.sqlite"), fresh_database(postgres_server)):
        memory = stratagate.open(database, namespace="atlas")
        try:
            with pytest.raises(InvalidInputError, match="user contains a NUL character"):
                memory.append_turn("before\x00after", "ok")
            memory.append_turn("fine", "ok")
        finally:
            memory.close()
        with pytest.raises(InvalidInputError, match="namespace contains a NUL character"):
            stratagate.open(database, namespace="at\x00las")


def test_a_legacy_nul_is_refused_by_copy_to_postgresql_naming_it_and_nothing_is_copied(
    curated: Path, tmp_path: Path, postgres_server
) -> None:
    """A file written before NUL was refused (or by another program) stays readable; a copy to PostgreSQL,
    which cannot store NUL, is refused whole, and a rerun after the file is fixed succeeds."""
    with closing(sqlite3.connect(curated)) as connection, connection:
        connection.execute("INSERT INTO memory_spaces SELECT 'aaa-first', schema_version, revision, current_turn, "
                           "block_turn_size, block_decay_lambda, created_at, updated_at FROM memory_spaces")
        connection.execute("UPDATE messages SET content = ? WHERE content LIKE 'Bob moved%'", ("Bob\x00moved",))
    server = fresh_database(postgres_server)
    error = run("copy", str(curated), server, code=2)
    assert "namespace 'atlas': blocks record" in error and "content contains a NUL character" in error
    with open_backend(server) as backend:
        assert backend.list_namespaces() == []  # 'aaa-first' was copied first, then rolled back
    with closing(sqlite3.connect(curated)) as connection, connection:
        connection.execute("UPDATE messages SET content = ? WHERE content LIKE 'Bob%'", ("Bob moved",))
    run("copy", str(curated), server)
    with open_backend(server) as backend:
        assert backend.list_namespaces() == ["aaa-first", "atlas"]
