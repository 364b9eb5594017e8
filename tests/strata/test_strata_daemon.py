"""The daemon as a real process: pid file, cycles in the log, SIGHUP reloads, SIGTERM stops cleanly (B-13, B-14)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stratagate.strata import StrataStore
from stratagate.strata.daemon import StrataDaemon, daemon_status, stop_daemon


def wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def log_text(store: StrataStore) -> str:
    return store.log_file.read_text() if store.log_file.exists() else ""


@pytest.fixture
def daemon_process(store: StrataStore):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stratagate.cli.main",
            "strata",
            "--data-dir",
            str(store.base_dir),
            "serve",
            "--interval",
            "0.3",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for(lambda: "Starting maintenance" in log_text(store))
    yield process
    if process.poll() is None:
        process.kill()
        process.wait()


def test_b14_daemon_reloads_on_sighup_instead_of_dying_and_stops_gracefully_on_sigterm(
    store: StrataStore, daemon_process
):
    status = daemon_status(store)
    assert status.running and status.pid == daemon_process.pid
    assert store.pid_file.read_text() == str(daemon_process.pid)
    wait_for(lambda: "[Cycle 2] Starting maintenance (LIVE)" in log_text(store))
    assert "[Cycle 1] Starting maintenance (DRY RUN)" in log_text(store)

    (store.base_dir / "strata.json").write_text(json.dumps({"promotion_threshold": 7}))
    daemon_process.send_signal(signal.SIGHUP)
    wait_for(lambda: "Reloaded configuration" in log_text(store))
    assert daemon_process.poll() is None

    (store.base_dir / "strata.json").write_text("{broken")
    daemon_process.send_signal(signal.SIGHUP)
    wait_for(lambda: "Reload failed, keeping the previous configuration" in log_text(store))
    assert daemon_process.poll() is None

    outcome = stop_daemon(store, timeout=20)
    assert outcome.stopped and not outcome.still_running, outcome.message
    assert daemon_process.wait(timeout=20) == 0
    assert "Received SIGTERM, shutting down gracefully" in log_text(store)
    assert log_text(store).rstrip().endswith("Daemon stopped")
    assert not store.pid_file.exists()


def test_b13_dry_run_log_names_the_files_and_promotions_are_logged(store: StrataStore, write_file):
    write_file(store.active_root, "notes/a.md", "a")
    daemon = StrataDaemon(store, interval=3600)
    daemon.run_once(dry_run=True)
    assert "  would migrate: notes/a.md" in log_text(store)
    assert "  would evict:" not in log_text(store)
    daemon.run_once(dry_run=False)
    log = log_text(store)
    assert "[Cycle 2] Migrated: 1, Evicted: 1" in log
    assert "[Cycle 2] Promoted: 0" in log
    [line] = store.cost_log_file.read_text().splitlines()
    assert line.startswith("CYCLE:2:1:1:")


def test_b14_stale_pid_file_of_a_dead_process_is_not_running(store: StrataStore):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store.pid_file.write_text(str(dead.pid))
    assert daemon_status(store).running is False
    assert not store.pid_file.exists()
    store.pid_file.write_text("not-a-pid")
    assert daemon_status(store).running is False


def test_stop_without_daemon_says_so(store: StrataStore):
    outcome = stop_daemon(store)
    assert (outcome.stopped, outcome.still_running, outcome.message) == (
        False,
        False,
        "No daemon is running.",
    )


def test_b14_second_daemon_process_refuses_to_start(store: StrataStore, daemon_process):
    second = subprocess.run(
        [sys.executable, "-m", "stratagate.cli.main", "strata", "--data-dir", str(store.base_dir), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 0  # the reference's answer, so `strata serve` in a cron job stays quiet
    assert f"Daemon is already running (pid={daemon_process.pid})" in second.stdout
    assert store.pid_file.read_text() == str(daemon_process.pid)
    os.kill(daemon_process.pid, signal.SIGTERM)
    assert daemon_process.wait(timeout=20) == 0
    assert not Path(store.pid_file).exists()


def test_serve_dry_run_never_moves_a_file(store: StrataStore, write_file):
    write_file(store.active_root, "notes/a.md", "a")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stratagate.cli.main",
            "strata",
            "--data-dir",
            str(store.base_dir),
            "serve",
            "--dry-run",
            "--interval",
            "0.3",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: "[Cycle 3] Migrated: 1, Evicted: 0" in log_text(store))
        assert "(LIVE)" not in log_text(store)
        assert (store.active_root / "notes/a.md").exists()
    finally:
        assert stop_daemon(store, timeout=20).stopped
        process.wait(timeout=20)


def test_restart_stops_the_running_daemon_and_serves_again(store: StrataStore, daemon_process):
    restarted = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stratagate.cli.main",
            "strata",
            "--data-dir",
            str(store.base_dir),
            "restart",
            "--interval",
            "0.3",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert daemon_process.wait(timeout=30) == 0
        wait_for(lambda: daemon_status(store).pid == restarted.pid)
        # The new daemon holds the pid file a moment before it writes its banner.
        wait_for(lambda: log_text(store).count("Strata daemon started") == 2)
    finally:
        assert stop_daemon(store, timeout=20).stopped
        out, _err = restarted.communicate(timeout=20)
    assert f"Daemon (pid={daemon_process.pid}) stopped." in out.decode()
