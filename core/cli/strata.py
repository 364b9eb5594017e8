"""`stratagate strata ...`: the Strata three-tier markdown memory from the command line.

The data directory is `--data-dir`, else `$STRATA_HOME`, else `./strata_data` if it exists, else
`~/.strata` (the reference's rules). Lifecycle commands print what they did per file; a file that could not
move (conflict, error) makes the command exit 1 after the others moved. Bad input exits 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import click

from stratagate.strata import janitor
from stratagate.strata.cascade import read as read_through_tiers
from stratagate.strata.config import detect_base_dir
from stratagate.strata.daemon import (
    DEFAULT_INTERVAL,
    DaemonStatus,
    StrataDaemon,
    daemon_status,
    stop_daemon,
)
from stratagate.strata.errors import StrataError
from stratagate.strata.janitor import FileResult
from stratagate.strata.repair import rebuild_shadow_index, repair_sidecar
from stratagate.strata.search import search as search_tiers
from stratagate.strata.store import StrataStore, Tier

EXIT_PARTIAL = 1


def _store(context: click.Context, must_exist: bool = True) -> StrataStore:
    base = context.obj or detect_base_dir()
    store = StrataStore(base)
    if must_exist:
        store.require_exists()
    return store


class _StrataGroup(click.Group):
    def invoke(self, ctx: click.Context):
        # An operating-system error (permissions, disk full) is reported like bad input, naming the file.
        try:
            return super().invoke(ctx)
        except OSError as error:
            where = error.filename or "Strata data directory"
            raise StrataError(f"{where}: {error.strerror or error}") from error


@click.group("strata", cls=_StrataGroup)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The Strata data directory (default: $STRATA_HOME, ./strata_data, ~/.strata).",
)
@click.pass_context
def command(context: click.Context, data_dir: Path | None) -> None:
    """Strata three-tier markdown memory: active → cooled → archive."""
    context.obj = data_dir.absolute() if data_dir else None


@command.command()
@click.pass_context
def init(context: click.Context) -> None:
    """Create active/, cooled/, archive/, strata.json and active/index.md."""
    store = _store(context, must_exist=False)
    store.init()
    click.echo(f"Initialized Strata at {store.base_dir}")


@command.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status(context: click.Context, as_json: bool) -> None:
    """Files per tier, pending migrations, daemon state."""
    store = _store(context)
    counts = store.counts()
    pending = sum(result.status == "would_migrate" for result in janitor.plan_migrate(store))
    daemon = daemon_status(store, log_lines=5)
    data = {
        "base_dir": str(store.base_dir),
        "active_files": counts["active"],
        "stratum_1_stale": pending,
        "stratum_2_blocks": counts["cooled"],
        "stratum_3_shadows": counts["archived"],
        "daemon_running": daemon.running,
        "daemon_pid": daemon.pid,
        "daemon_cycles": daemon.cycle_count,
    }
    if as_json:
        click.echo(json.dumps(data))
        return
    click.echo(f"Base dir: {store.base_dir}")
    click.echo(f"1st Stratum (Active):  {counts['active']} file(s), {pending} stale file(s) pending")
    click.echo(f"2nd Stratum (Medium):  {counts['cooled']} memory block(s)")
    click.echo(
        f"3rd Stratum (Archive): {counts['archived']} shadow entr{'y' if counts['archived'] == 1 else 'ies'}"
    )
    click.echo(f"Daemon: {_daemon_state(daemon)}")


def _daemon_state(daemon: DaemonStatus) -> str:
    if daemon.running:
        return f"RUNNING (pid={daemon.pid})" if daemon.pid is not None else "RUNNING (pid unknown)"
    if daemon.unverified_pid is not None:
        return f"STOPPED (strata.pid names pid {daemon.unverified_pid}, which is not this store's daemon)"
    return "STOPPED"


@command.command()
@click.argument("path")
@click.argument("content", nargs=-1)
@click.pass_context
def add(context: click.Context, path: str, content: tuple[str, ...]) -> None:
    """Write PATH in the active tier (CONTENT words, else standard input)."""
    store = _store(context, must_exist=False)
    text = " ".join(content) if content else sys.stdin.read()
    click.echo(f"Written to: {store.write(path, text)}")


@command.command()
@click.argument("path")
@click.option("--no-track", is_flag=True, help="Do not count the access, promote or rehydrate.")
@click.pass_context
def read(context: click.Context, path: str, no_track: bool) -> None:
    """Print PATH from the first tier that has it (a cooled read counts; an archived one is restored)."""
    result = read_through_tiers(_store(context), path, record_access=not no_track)
    if result.promoted:
        click.echo(f"⬆ Promoted from cooled (accessed {result.access_count} times)\n", err=True)
    elif result.rehydrated:
        click.echo("⬆ Restored from archive to 1st Stratum (active)\n", err=True)
    elif result.source is Tier.COOLED:
        click.echo(f"→ Read from cooled (access {result.access_count})\n", err=True)
    click.echo(result.content)


@command.command("list")
@click.option("--tier", type=click.Choice([tier.value for tier in Tier]), default=Tier.ACTIVE.value)
@click.pass_context
def list_files(context: click.Context, tier: str) -> None:
    """Files of one tier, with size and (cooled) access count."""
    store = _store(context)
    if tier == Tier.ARCHIVE:
        shadow = store.shadow(create=False)
        try:
            for entry in shadow.all():
                click.echo(f"  {entry.original_path}  (id {entry.id}, archived {entry.evicted_at[:10]})")
        finally:
            shadow.close()
        return
    for file in store.list_files(Tier(tier)):
        accesses = "" if file.access_count is None else f", {file.access_count} accesses"
        click.echo(f"  {file.path} ({file.size}b{accesses})")


@command.command()
@click.argument("words", nargs=-1, required=True)
@click.option("--top-k", default=10, show_default=True)
@click.option("--no-track", is_flag=True, help="Do not count cooled hits as accesses.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def search(context: click.Context, words: tuple[str, ...], top_k: int, no_track: bool, as_json: bool) -> None:
    """Search all tiers (cooled hits count as accesses unless --no-track)."""
    hits = search_tiers(_store(context), " ".join(words), top_k=top_k, record_access=not no_track)
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "tier": hit.tier.value,
                        "path": hit.path,
                        "score": hit.score,
                        "shadow_id": hit.shadow_id,
                        "content": hit.content,
                    }
                    for hit in hits
                ]
            )
        )
        return
    if not hits:
        click.echo("No results found.")
    labels = {Tier.ACTIVE: "ACTIVE", Tier.COOLED: "MEDIUM", Tier.ARCHIVE: "ARCHIVE"}
    for number, hit in enumerate(hits, 1):
        click.echo(f"\n  [{number}] [{labels[hit.tier]}] · score={hit.score:.2f} · {hit.path}")
        click.echo(f"       {hit.content[:120].replace(chr(10), ' ')}...")
        if hit.shadow_id:
            click.echo(f"       [in archive — restore with: stratagate strata rehydrate {hit.shadow_id}]")


def _run(
    store: StrataStore,
    plan: Callable[[], list[FileResult]],
    apply: Callable[..., list[FileResult]],
    dry_run: bool,
    as_json: bool,
    label: str,
) -> None:
    """Plan, then (unless a dry run) apply with a progress bar; print per-file results; exit 1 on any failure."""
    with store.lock():
        results = plan()
        pending = sum(result.status.startswith("would_") for result in results)
        if not dry_run and pending:
            with click.progressbar(length=pending, label=label, file=sys.stderr) as bar:
                results = apply(store, results, bar.update)
    if as_json:
        click.echo(
            json.dumps({"files": [result.as_dict() for result in results], "dry_run": dry_run}, default=str)
        )
    else:
        for result in results:
            detail = f" — {result.detail}" if result.detail else ""
            click.echo(f"  {result.status:<16} {result.path}{detail}")
        counts: dict[str, int] = {}
        for result in results:
            counts[result.status] = counts.get(result.status, 0) + 1
        click.echo(
            ", ".join(f"{status}: {count}" for status, count in sorted(counts.items())) or "Nothing to do."
        )
    if any(result.status in ("conflict", "error") for result in results):
        sys.exit(EXIT_PARTIAL)


_dry_run = click.option("--dry-run", is_flag=True, help="Only show what would happen.")
_as_json = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


@command.command()
@_dry_run
@_as_json
@click.pass_context
def migrate(context: click.Context, dry_run: bool, as_json: bool) -> None:
    """Move stale active files to the cooled tier."""
    store = _store(context)
    _run(store, lambda: janitor.plan_migrate(store), janitor.apply_migrate, dry_run, as_json, "Migrating")


@command.command()
@click.argument("paths", nargs=-1)
@_dry_run
@_as_json
@click.pass_context
def evict(context: click.Context, paths: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
    """Archive idle cooled files (or exactly PATHS, whatever their age)."""
    store = _store(context)
    chosen = list(paths) if paths else None
    _run(store, lambda: janitor.plan_evict(store, chosen), janitor.apply_evict, dry_run, as_json, "Evicting")


@command.command()
@click.argument("paths", nargs=-1)
@_dry_run
@_as_json
@click.pass_context
def promote(context: click.Context, paths: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
    """Move often-read cooled files (or exactly PATHS) back to the active tier."""
    store = _store(context)
    chosen = list(paths) if paths else None
    _run(
        store,
        lambda: janitor.plan_promote(store, chosen),
        janitor.apply_promote,
        dry_run,
        as_json,
        "Promoting",
    )


@command.command()
@click.argument("keys", nargs=-1, required=True)
@click.option(
    "--target", type=click.Choice([Tier.ACTIVE.value, Tier.COOLED.value]), default=Tier.ACTIVE.value
)
@_dry_run
@_as_json
@click.pass_context
def rehydrate(
    context: click.Context, keys: tuple[str, ...], target: str, dry_run: bool, as_json: bool
) -> None:
    """Restore archived files by shadow id or original path."""
    store = _store(context)
    _run(
        store,
        lambda: janitor.plan_rehydrate(store, keys, Tier(target)),
        janitor.apply_rehydrate,
        dry_run,
        as_json,
        "Restoring",
    )


@command.command()
@_dry_run
@_as_json
@click.pass_context
def maintenance(context: click.Context, dry_run: bool, as_json: bool) -> None:
    """Promote, migrate, evict — one daemon cycle."""
    report = janitor.run_maintenance(_store(context), dry_run)
    results = report.promoted + report.migrated + report.evicted
    if as_json:
        click.echo(
            json.dumps({"files": [result.as_dict() for result in results], **report.totals()}, default=str)
        )
    else:
        for result in results:
            click.echo(
                f"  {result.status:<16} {result.path}" + (f" — {result.detail}" if result.detail else "")
            )
        totals = report.totals()
        click.echo(
            f"Promoted: {totals['total_promoted']}, Migrated: {totals['total_migrated']}, Evicted: {totals['total_evicted']}"
        )
    if any(result.status in ("conflict", "error") for result in results):
        sys.exit(EXIT_PARTIAL)


@command.command()
@click.pass_context
def config(context: click.Context) -> None:
    """Print the effective settings (strata.json merged onto the defaults) as JSON."""
    store = _store(context, must_exist=False)
    click.echo(json.dumps({"base_dir": str(store.base_dir), **asdict(store.config)}, indent=2))


@command.command()
@click.pass_context
def index(context: click.Context) -> None:
    """Regenerate active/index.md."""
    click.echo(f"Index regenerated: {_store(context).regenerate_index()}")


@command.command()
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_INTERVAL,
    show_default=True,
    help="Seconds between cycles.",
)
@click.option("--live", is_flag=True, help="Make the first cycle live too (default: a dry run).")
@click.pass_context
def serve(context: click.Context, interval: float, live: bool) -> None:
    """Run the maintenance daemon in the foreground (SIGTERM stops, SIGHUP reloads strata.json)."""
    store = _store(context)
    click.echo(
        f"Strata daemon: interval {interval:g}s, log {store.log_file}, pid file {store.pid_file}. Ctrl+C stops."
    )
    StrataDaemon(store, interval=interval, live_first=live, echo=True).run()


@command.command()
@click.option("--timeout", type=float, default=30.0, show_default=True)
@click.pass_context
def stop(context: click.Context, timeout: float) -> None:
    """Stop the running daemon (waits for its current cycle)."""
    outcome = stop_daemon(_store(context), timeout)
    click.echo(outcome.message)
    if outcome.still_running:
        sys.exit(EXIT_PARTIAL)


@command.command()
@click.option("--lines", type=click.IntRange(min=1), default=20, show_default=True)
@click.pass_context
def history(context: click.Context, lines: int) -> None:
    """The last lines of the daemon log."""
    status_ = daemon_status(_store(context), log_lines=lines)
    if not status_.last_log_lines:
        click.echo("No daemon log yet.")
    for line in status_.last_log_lines:
        click.echo(f"  {line}")


@command.command("repair-sidecar")
@click.pass_context
def repair_sidecar_command(context: click.Context) -> None:
    """Rebuild stratum_2_access.json from its valid entries (a backup of the old file is kept)."""
    report = repair_sidecar(_store(context))
    if report.backup is None:
        click.echo("No access sidecar to repair.")
        return
    click.echo(f"Backup: {report.backup}")
    click.echo(f"Kept {report.kept} entr{'y' if report.kept == 1 else 'ies'}; dropped {len(report.dropped)}.")
    for key in report.dropped:
        click.echo(f"  dropped {key!r}")


@command.command("rebuild-index")
@click.pass_context
def rebuild_index_command(context: click.Context) -> None:
    """Rebuild the shadow index from the archive blobs (the old database is kept as a backup)."""
    store = _store(context)
    blobs = len(list(store.archive_root.glob("*.json"))) if store.archive_root.is_dir() else 0
    with click.progressbar(length=blobs, label="Indexing", file=sys.stderr) as bar:
        report = rebuild_shadow_index(store, bar.update)
    if report.backup:
        click.echo(f"Backup: {report.backup}")
    click.echo(f"Indexed {report.indexed} archived file(s).")
    for problem in report.unreadable:
        click.echo(f"  skipped {problem}")
