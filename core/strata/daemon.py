"""The Strata daemon: runs maintenance (promote → migrate → evict) every `interval` seconds.

Compatible with the reference's files: `strata.pid` holds the decimal pid, `strata.log` has its line format
and messages, `strata_cost.log` gets `CYCLE:n:migrated:evicted:time` per live cycle. Differences (B-13, B-14):

* the pid file is locked while the daemon runs (`daemon_lock`), so two daemons cannot both start, a stale
  file (crash, SIGKILL) is recognised, and `stop` signals only the process the kernel names as the lock's
  holder, never a pid read from the file (`-1`, `0` or a recycled pid in it signal nothing);
* SIGTERM / SIGINT stop after the current cycle and remove the pid file; SIGHUP reloads `strata.json`
  (the reference died on SIGHUP, which its systemd unit sends on reload);
* `stop_daemon` keeps the pid file when the daemon has not exited in time, instead of pretending;
* promotions are logged and dry-run evictions name their files.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from stratagate.storage.processes import process_exists
from stratagate.strata import daemon_lock
from stratagate.strata.errors import DaemonRunningError, StrataError
from stratagate.strata.janitor import FileResult, MaintenanceReport, run_maintenance
from stratagate.strata.store import StrataStore

DEFAULT_INTERVAL = 900
LOG_FORMAT = "%(asctime)s [%(levelname)s] %(message)s"
LOG_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


@dataclass(frozen=True)
class DaemonStatus:
    running: bool
    pid: int | None  # the lock holder's pid, never the pid file's text
    cycle_count: int
    last_log_lines: list[str]
    unverified_pid: int | None = None  # a live process the pid file names that holds no daemon lock


def _read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None



def daemon_status(store: StrataStore, log_lines: int = 20) -> DaemonStatus:
    """Whether a daemon holds the pid file's locks; a stale file naming no live process is removed."""
    running, pid, unverified = False, None, None
    if store.pid_file.exists():
        pid = daemon_lock.lock_holder(store.pid_file)
        running = pid is not None or daemon_lock.flock_held(store.pid_file)
        if not running:
            named = _read_pid(store.pid_file)
            if named is not None and named > 0 and process_exists(named):
                # The reference's daemon locks nothing, and pids are recycled: report it, never signal it.
                unverified = named
            else:
                store.pid_file.unlink(missing_ok=True)
    lines: list[str] = []
    if store.log_file.exists():
        lines = store.log_file.read_text(encoding="utf-8", errors="replace").splitlines()
    cycles = sum("Starting maintenance" in line for line in lines)
    return DaemonStatus(running, pid, cycles, lines[-log_lines:] if log_lines else [], unverified)


@dataclass(frozen=True)
class StopOutcome:
    stopped: bool
    still_running: bool
    message: str


def stop_daemon(store: StrataStore, timeout: float = 30.0) -> StopOutcome:
    """SIGTERM the process that holds this data directory's daemon lock, and wait for it to let go.

    Only that process is ever signalled (see `daemon_lock`); never claims success early.
    """
    status = daemon_status(store, log_lines=0)
    if not status.running:
        if status.unverified_pid is not None:
            return StopOutcome(
                False,
                False,
                f"{store.pid_file} names pid {status.unverified_pid}, which does not hold this data "
                "directory's daemon lock; not signalling it.",
            )
        return StopOutcome(False, False, "No daemon is running.")
    if status.pid is None:
        return StopOutcome(
            False,
            True,
            f"{store.pid_file} is locked by a daemon this command cannot identify (another pid namespace?); "
            "not signalling anything.",
        )
    signalled = daemon_lock.signal_holder(store.pid_file, signal.SIGTERM)
    if signalled is None:
        return StopOutcome(False, False, f"Daemon (pid={status.pid}) had already exited.")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not daemon_lock.flock_held(store.pid_file):
            return StopOutcome(True, False, f"Daemon (pid={signalled}) stopped.")
        time.sleep(0.1)
    return StopOutcome(
        False,
        True,
        f"Daemon (pid={signalled}) is still finishing its cycle after {timeout:g} s; pid file kept.",
    )


class StrataDaemon:
    def __init__(
        self,
        store: StrataStore,
        interval: float = DEFAULT_INTERVAL,
        live_first: bool = False,
        echo: bool = False,
        dry_run_only: bool = False,
    ):
        self.store = store
        self.interval = interval
        self.live_first = live_first
        self.dry_run_only = dry_run_only
        self.cycle = 0
        self._wake = threading.Event()
        self._stopping = False
        self._reload_requested = False
        self._holds_pid_file = False
        self.log = logging.getLogger(f"stratagate.strata.daemon.{id(self)}")
        self.log.setLevel(logging.DEBUG)
        self.log.propagate = False
        self._handlers: list[logging.Handler] = []
        self._echo = echo

    # Control --------------------------------------------------------------------------------------
    def stop(self) -> None:
        self._stopping = True
        self._wake.set()

    def request_reload(self) -> None:
        self._reload_requested = True
        self._wake.set()

    def run(self) -> None:
        """Run in the foreground until `stop()` or SIGTERM/SIGINT."""
        self.store.require_exists()
        self._acquire_pid_file()
        try:
            self._open_log()
            self._install_signal_handlers()
            with self.store.lock():
                self.store.regenerate_index()
            self._log_banner()
            next_cycle = time.monotonic()
            while not self._stopping:
                if self._reload_requested:
                    self._reload()
                if time.monotonic() >= next_cycle:
                    first = self.cycle == 0
                    self.run_once(dry_run=self.dry_run_only or (first and not self.live_first))
                    next_cycle = time.monotonic() + self.interval
                    self.log.debug(f"Sleeping {self.interval:g}s until next cycle...")
                self._wake.wait(max(0.0, next_cycle - time.monotonic()))
                self._wake.clear()
            self.log.info("Daemon stopped")
        finally:
            self._close_log()
            self._release_pid_file()

    def run_once(self, dry_run: bool) -> MaintenanceReport | None:
        """One maintenance cycle, logged; a failure is logged and the daemon carries on."""
        opened_here = not self._handlers
        if opened_here:
            self._open_log()
        self.cycle += 1
        label = f"[Cycle {self.cycle}]"
        try:
            self.log.info(f"{label} Starting maintenance ({'DRY RUN' if dry_run else 'LIVE'})")
            report = run_maintenance(self.store, dry_run=dry_run)
            self._log_report(label, report, dry_run)
            if not dry_run:
                self._append_cost_line(report)
            return report
        except (StrataError, OSError) as error:
            self.log.error(f"{label} Failed: {error}")
            return None
        finally:
            if opened_here:
                self._close_log()

    # Internals ------------------------------------------------------------------------------------
    def _acquire_pid_file(self) -> None:
        try:
            daemon_lock.acquire(self.store.pid_file)
        except daemon_lock.PidFileBusyError:
            holder = daemon_lock.lock_holder(self.store.pid_file)
            raise DaemonRunningError(self.store.pid_file, holder) from None
        self._holds_pid_file = True

    def _release_pid_file(self) -> None:
        if self._holds_pid_file:
            daemon_lock.release(self.store.pid_file)
            self._holds_pid_file = False

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        signal.signal(signal.SIGTERM, self._on_stop_signal)
        signal.signal(signal.SIGINT, self._on_stop_signal)
        signal.signal(signal.SIGHUP, lambda _signum, _frame: self.request_reload())

    def _on_stop_signal(self, signum: int, _frame) -> None:
        self.log.info(f"Received {signal.Signals(signum).name}, shutting down gracefully...")
        self.stop()

    def _reload(self) -> None:
        self._reload_requested = False
        try:
            self.store.reload_config()
        except StrataError as error:
            self.log.error(f"Reload failed, keeping the previous configuration: {error}")
            return
        self.log.info(f"Reloaded configuration from {self.store.config_file}")

    def _open_log(self) -> None:
        file_handler = logging.FileHandler(self.store.log_file, encoding="utf-8")
        file_handler.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATE_FORMAT))
        self._handlers = [file_handler]
        if self._echo:
            console = logging.StreamHandler(sys.stderr)
            console.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
            self._handlers.append(console)
        for handler in self._handlers:
            self.log.addHandler(handler)

    def _close_log(self) -> None:
        for handler in self._handlers:
            self.log.removeHandler(handler)
            handler.close()
        self._handlers = []

    def _log_banner(self) -> None:
        config = self.store.config
        self.log.info(f"Strata daemon started (interval={self.interval:g}s, pid={os.getpid()})")
        self.log.info(f"  Base dir:   {self.store.base_dir}")
        self.log.info(f"  Active:     {self.store.active_root}")
        self.log.info(f"  Cooled:     {self.store.cooled_root}")
        self.log.info(f"  Decay:      {config.decay_thresholds}")
        self.log.info(f"  LRU:        {config.lru_decay_thresholds} / {config.lru_min_access_count} accesses")

    def _log_report(self, label: str, report: MaintenanceReport, dry_run: bool) -> None:
        totals = report.totals()
        self.log.info(f"{label} Migrated: {totals['total_migrated']}, Evicted: {totals['total_evicted']}")
        self.log.info(f"{label} Promoted: {totals['total_promoted']}")
        if dry_run and any(totals.values()):
            details = ["Dry-run details:"]
            for verb, results in (
                ("promote", report.promoted),
                ("migrate", report.migrated),
                ("evict", report.evicted),
            ):
                details += [
                    f"  would {verb}: {result.path}"
                    for result in results
                    if result.status.startswith("would_")
                ]
            self.log.info("\n".join(details))
        problems: list[FileResult] = [
            result
            for result in report.promoted + report.migrated + report.evicted
            if result.status in ("conflict", "error", "quarantined")
        ]
        for result in problems:
            self.log.warning(f"{label} {result.status}: {result.path}: {result.detail}")

    def _append_cost_line(self, report: MaintenanceReport) -> None:
        totals = report.totals()
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        line = f"CYCLE:{self.cycle}:{totals['total_migrated']}:{totals['total_evicted']}:{stamp}\n"
        try:
            with open(self.store.cost_log_file, "a", encoding="utf-8") as handle:
                handle.write(line)
        except OSError as error:
            self.log.warning(f"Could not write cost data to {self.store.cost_log_file}: {error}")
