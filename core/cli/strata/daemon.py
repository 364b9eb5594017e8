"""The daemon's commands (serve/daemon, stop, restart) and the MCP server (mcp)."""

from __future__ import annotations

import sys

import click

from stratagate.cli.strata.common import EXIT_FAILED, emit, store_for
from stratagate.strata.daemon import DEFAULT_INTERVAL, StrataDaemon, daemon_status, stop_daemon
from stratagate.strata.errors import DaemonRunningError
from stratagate.strata.store import StrataStore


def _already_running(pid: int | None) -> None:
    click.echo(f"Daemon is already running (pid={pid}). Use 'strata stop' first or 'strata restart'.")


def _serve(store: StrataStore, interval: float, live: bool, dry_run: bool) -> None:
    status = daemon_status(store, log_lines=0)
    if status.running:
        _already_running(status.pid)
        return
    mode = "every cycle a dry run" if dry_run else f"dry_run_first={not live}"
    click.echo(f"Starting Strata daemon (interval={interval:g}s, {mode})")
    click.echo(f"  Log:  {store.log_file}")
    click.echo(f"  PID:  {store.pid_file}")
    click.echo("Press Ctrl+C to stop.")
    try:
        StrataDaemon(store, interval=interval, live_first=live, dry_run_only=dry_run, echo=True).run()
    except DaemonRunningError as error:  # another one started between the check and our lock
        _already_running(error.pid)


_interval = click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_INTERVAL,
    show_default=True,
    help="Seconds between maintenance cycles.",
)
_live = click.option("--live", is_flag=True, help="Make the first cycle live too (default: a dry run).")
_dry_run = click.option("--dry-run", is_flag=True, help="Never move anything: every cycle is a dry run.")


@click.command()
@_interval
@_live
@_dry_run
@click.pass_context
def serve(context: click.Context, interval: float, live: bool, dry_run: bool) -> None:
    """Run the maintenance daemon in the foreground: the first cycle is a dry run (unless --live), the
    next ones move files. SIGTERM stops it after the cycle, SIGHUP reloads strata.json. Alias: daemon."""
    _serve(store_for(context), interval, live, dry_run)


@click.command()
@click.option(
    "--timeout", type=float, default=30.0, show_default=True, help="Seconds to wait for it to exit."
)
@click.pass_context
def stop(context: click.Context, timeout: float) -> None:
    """Stop this store's daemon (only the process holding its lock is ever signalled)."""
    outcome = stop_daemon(store_for(context), timeout)
    emit(
        context, {"stopped": outcome.stopped, "message": outcome.message}, lambda: click.echo(outcome.message)
    )
    if outcome.still_running:
        sys.exit(EXIT_FAILED)


@click.command()
@_interval
@_live
@_dry_run
@click.option(
    "--timeout", type=float, default=30.0, show_default=True, help="Seconds to wait for the old one."
)
@click.pass_context
def restart(context: click.Context, interval: float, live: bool, dry_run: bool, timeout: float) -> None:
    """Stop the daemon (if one runs), then serve again with these options."""
    store = store_for(context)
    outcome = stop_daemon(store, timeout)
    click.echo(outcome.message)
    if outcome.still_running:
        sys.exit(EXIT_FAILED)
    _serve(store, interval, live, dry_run)


@click.command()
@click.pass_context
def mcp(context: click.Context) -> None:
    """Serve the strata_* agent tools over MCP on stdio (server name strata-memory)."""
    from stratagate.strata.agent_tools import StrataTools
    from stratagate.strata.mcp_server import serve_stdio

    store = store_for(context, must_exist=False)
    if not store.exists():
        store.init()
    serve_stdio(StrataTools(store))


COMMANDS = [serve, stop, restart, mcp]
ALIASES = {"daemon": serve}
