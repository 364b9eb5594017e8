"""Shared test set-up. Qt must see QT_QPA_PLATFORM before any Qt import, so it is set here first."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.postgres_server import postgres_server, postgres_url  # noqa: F401  (session fixtures for every suite)

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

FIXTURES = Path(__file__).parent / "fixtures"
REFERENCE_DB = FIXTURES / "reference-v5-basic.sqlite"
REFERENCE_SNAPSHOT = FIXTURES / "reference-v5-basic.snapshot.json"
REFERENCE_ORACLE = FIXTURES / "reference-v5-basic.json"
REFERENCE_NAMESPACE = "project:atlas"


@pytest.fixture(autouse=True, scope="session")
def _search_cache_directory(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Search indexes built outside read-only files go to a directory of the test session, not the user's."""
    os.environ["STRATAGATE_CACHE_DIR"] = str(tmp_path_factory.mktemp("stratagate-cache"))


@pytest.fixture
def reference_db_copy(tmp_path: Path) -> Path:
    """A private, writable copy of the reference database (the original is never opened for writing)."""
    copy = tmp_path / REFERENCE_DB.name
    shutil.copyfile(REFERENCE_DB, copy)
    return copy


@pytest.fixture(scope="session")
def nobody_reads_the_project() -> None:
    """Permission tests run a command as `nobody` (the suite runs as root, which ignores file modes). That
    needs the project's source to be readable by other users; a clone inside a private folder (mktemp -d is
    0700) is not, and then those tests are skipped, saying so, rather than failing for an unrelated reason."""
    import stratagate

    source = Path(stratagate.__file__)
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "test", "-r", str(source)],
                           check=False)
    if probe.returncode != 0:
        pytest.skip(f"user nobody cannot read {source} (a parent folder is private), so permission tests cannot run")
