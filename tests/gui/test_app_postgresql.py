"""The app opens a memory kept in PostgreSQL by URL, as it opens a file."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

from stratagate.snapshot import normalize_snapshot
from stratagate.storage.sql import open_backend
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_SNAPSHOT
from tests.postgres_server import fresh_database


@pytest.mark.postgres
def test_open_postgresql_url(make_window, postgres_server):
    url = fresh_database(postgres_server, "gui")
    snapshot = normalize_snapshot(json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]["snapshot"])
    backend = open_backend(url)
    backend.import_namespace(REFERENCE_NAMESPACE, snapshot)
    backend.close()

    window = make_window()
    window.open_location(url)
    assert window.wait_idle()
    assert window.memory is not None and window.memory.namespace == REFERENCE_NAMESPACE
    assert window.badge.text() == "WRITABLE"  # no file, so no sha256
    assert window.events.model.total == 12
    assert [bar[0] for bar in window.timeline.plot.bars] == ["blk_25", "blk_50", "blk_82"]
    assert window._turn_label.text() == "turn 40"


PASSWORD = "s3cr@t/pw wörd"


@pytest.fixture
def password_url(postgres_server, monkeypatch, tmp_path):
    """A memory on the test server whose login needs a password: a role that pg_hba.conf asks a password of
    (the server trusts every other role), and no PGPASSWORD or ~/.pgpass of the user running the tests."""
    import psycopg

    from tests.postgres_server import SOCKET_PORT

    url = fresh_database(postgres_server, "gui_password")
    snapshot = normalize_snapshot(json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]["snapshot"])
    backend = open_backend(url)
    backend.import_namespace(REFERENCE_NAMESPACE, snapshot)
    backend.close()
    role = f"ada_{uuid.uuid4().hex[:8]}"
    hba = postgres_server.data / "pg_hba.conf"
    original_hba = hba.read_text()
    with psycopg.connect(host=str(postgres_server.directory), port=SOCKET_PORT, user="postgres", dbname="postgres",
                         autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
        hba.write_text(f"local all {role} scram-sha-256\n" + original_hba)
        connection.execute("SELECT pg_reload_conf()")
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no.pgpass"))
    yield url.replace("postgres@", f"{role}@", 1), role
    hba.write_text(original_hba)
    with psycopg.connect(host=str(postgres_server.directory), port=SOCKET_PORT, user="postgres", dbname="postgres",
                         autocommit=True) as connection:
        connection.execute("SELECT pg_reload_conf()")


def _settings_text(window) -> str:
    window.settings.sync()
    return Path(window.settings.fileName()).read_text(encoding="utf-8")


def _reopen_recent(window):
    window.close_memory()
    assert window.wait_idle()
    window.recent_menu.actions()[0].trigger()


@pytest.mark.postgres
def test_reopening_a_recent_password_url_asks_for_the_password_and_never_stores_it(
    make_window, password_url, monkeypatch, tmp_path
):
    from PySide6.QtWidgets import QLineEdit

    from stratagate_gui.opening import recent_entry, with_password

    bare_url, role = password_url
    entry = recent_entry(bare_url)  # the same URL, its socket path %-encoded
    window = make_window()
    errors: list[str] = []
    window.writes.show_error = lambda _title, text: errors.append(text)
    window.open_location(with_password(bare_url, PASSWORD))
    assert window.wait_idle() and window.memory is not None
    assert window.recent_locations() == [entry]
    assert window.recent_menu.actions()[0].text() == entry.replace("&", "&&")
    assert f"{role}@" in window.recent_menu.actions()[0].text()

    _reopen_recent(window)
    assert window.wait_idle()
    prompt = window.password_prompt
    assert prompt is not None and prompt.isVisible() and window.memory is None
    assert prompt.textEchoMode() == QLineEdit.EchoMode.Password
    assert f"{role}@" in prompt.labelText() and "refused" not in prompt.labelText()
    prompt.setTextValue("wrong")
    prompt.accept()
    assert window.wait_idle()
    retry = window.password_prompt
    assert retry is not prompt and retry.isVisible() and "refused the password" in retry.labelText()
    retry.setTextValue(PASSWORD)
    retry.accept()
    assert window.wait_idle()
    assert window.memory is not None and window.memory.namespace == REFERENCE_NAMESPACE
    assert window.events.model.total == 12 and errors == []
    assert PASSWORD not in window.windowTitle()

    window.reload()  # reload and namespace switches reuse the password of this session's open
    assert window.wait_idle() and window.memory is not None and errors == []

    # PGPASSWORD, or a ~/.pgpass line, gives the password: no prompt.
    for variable, value in (("PGPASSWORD", PASSWORD), ("PGPASSFILE", str(tmp_path / "pgpass"))):
        if variable == "PGPASSFILE":
            monkeypatch.delenv("PGPASSWORD")
            (tmp_path / "pgpass").write_text(f"*:*:*:{role}:{PASSWORD}\n")
            (tmp_path / "pgpass").chmod(0o600)
        monkeypatch.setenv(variable, value)
        shown_prompt = window.password_prompt
        _reopen_recent(window)
        assert window.wait_idle()
        assert window.memory is not None and window.password_prompt is shown_prompt, variable

    text = _settings_text(window)
    assert role in text
    for form in (PASSWORD, quote(PASSWORD), quote(PASSWORD, safe=""), "***", "%2A%2A%2A"):
        assert form not in text


@pytest.mark.postgres
def test_a_recent_url_on_a_server_that_needs_no_password_reopens_without_a_prompt(make_window, postgres_server):
    url = fresh_database(postgres_server, "gui_trust")
    snapshot = normalize_snapshot(json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]["snapshot"])
    backend = open_backend(url)
    backend.import_namespace(REFERENCE_NAMESPACE, snapshot)
    backend.close()
    window = make_window()
    window.open_location(url)
    assert window.wait_idle()
    _reopen_recent(window)
    assert window.wait_idle()
    assert window.memory is not None and window.password_prompt is None


def test_an_older_versions_masked_or_clear_password_entry_is_cleaned_from_the_settings(make_window, settings):
    settings.setValue("recentLocations", ["postgresql+psycopg://ada:***@db.example/memory",
                                          "postgresql+psycopg://ada:hunter2@db.example/memory", "/tmp/a.sqlite"])
    window = make_window()
    assert window.recent_locations() == ["postgresql+psycopg://ada@db.example/memory", "/tmp/a.sqlite"]
    text = _settings_text(window)
    assert "hunter2" not in text and "***" not in text
    assert [action.text() for action in window.recent_menu.actions()] == [
        "postgresql+psycopg://ada@db.example/memory", "/tmp/a.sqlite"]
