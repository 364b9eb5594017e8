"""A throwaway PostgreSQL server for the test session, listening only on a unix socket in a temp dir.

`postgres_url` (session scope) is the SQLAlchemy URL of an empty database on it; `fresh_database(url, name)`
makes another one. initdb refuses to run as root, so as root the server runs as the `postgres` system user
(`runuser`). When the server cannot start the tests fail under CI=true and are skipped elsewhere, with the
reason either way.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

SOCKET_PORT = 5432  # only names the socket file: the server listens on no TCP port


def _bin_dir() -> Path | None:
    candidates = [os.environ.get("STRATAGATE_PG_BIN", "")] + sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").is_file():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class PostgresServer:
    def __init__(self, bin_dir: Path):
        self.bin_dir = bin_dir
        self.directory = Path(tempfile.mkdtemp(prefix="stratagate-pg-"))
        self.data = self.directory / "data"
        self.log = self.directory / "server.log"
        self.as_root = os.geteuid() == 0

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        result = subprocess.run(prefix + list(command), capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()} {log[-2000:]}")

    def start(self) -> None:
        if self.as_root:
            shutil.chown(self.directory, "postgres", "postgres")
        self._run(str(self.bin_dir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "-E", "UTF8", "--locale=C", "--no-sync")
        options = f"-k {self.directory} -p {SOCKET_PORT} -c listen_addresses='' -c fsync=off"
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options,
                  "-w", "-t", "60", "start")

    def stop(self) -> None:
        try:
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.directory}&port={SOCKET_PORT}"

    def create_database(self, name: str) -> str:
        with psycopg.connect(host=str(self.directory), port=SOCKET_PORT, user="postgres", dbname="postgres",
                             autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _unavailable(reason: str) -> None:
    message = f"PostgreSQL test server unavailable: {reason}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    bin_dir = _bin_dir()
    if bin_dir is None:
        _unavailable("no initdb found (install the postgresql Debian package or set STRATAGATE_PG_BIN)")
    server = PostgresServer(bin_dir)
    try:
        server.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        shutil.rmtree(server.directory, ignore_errors=True)
        _unavailable(str(error))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """URL of an empty database on the session's server, shared by the whole session."""
    return postgres_server.create_database("stratagate_tests")


def fresh_database(server: PostgresServer, prefix: str = "test") -> str:
    """URL of a new, empty database on the server (one per test keeps tests independent)."""
    return server.create_database(f"{prefix}_{uuid.uuid4().hex[:12]}")
