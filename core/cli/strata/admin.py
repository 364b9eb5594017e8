"""Commands about the store itself: status, config, history, cost, repair-sidecar, rebuild-index."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

import click

from stratagate.cli.strata.common import EXIT_BAD_INPUT, emit, fail, not_available, store_for
from stratagate.strata import janitor
from stratagate.strata.config import apply_setting, save_config
from stratagate.strata.cost import cost_summary
from stratagate.strata.daemon import DaemonStatus, daemon_status
from stratagate.strata.errors import StrataConfigError
from stratagate.strata.repair import rebuild_shadow_index, repair_sidecar
from stratagate.strata.store import StrataStore


def daemon_state(daemon: DaemonStatus) -> str:
    if daemon.running:
        return f"RUNNING (pid={daemon.pid})" if daemon.pid is not None else "RUNNING (pid unknown)"
    if daemon.unverified_pid is not None:
        return f"STOPPED (strata.pid names pid {daemon.unverified_pid}, which is not this store's daemon)"
    return "STOPPED"


@click.command()
@click.pass_context
def status(context: click.Context) -> None:
    """Files per tier, pending migrations, daemon state."""
    store = store_for(context)
    counts = store.counts()
    pending = sum(result.status == "would_migrate" for result in janitor.plan_migrate(store))
    daemon = daemon_status(store, log_lines=5)
    data = {
        "base_dir": str(store.base_dir),
        "active_root": str(store.active_root),
        "stratum_1_stale": pending,
        "stratum_2_blocks": counts["cooled"],
        "stratum_3_shadows": counts["archived"],
        "daemon_running": daemon.running,
        "daemon_pid": daemon.pid,
        "daemon_cycles": daemon.cycle_count,
        "distill_llm_configured": False,
        "distill_available": False,
        "distill_enabled": False,
        "distill_pending": 0,
        "active_files": counts["active"],
    }

    def human() -> None:
        shadows = counts["archived"]
        click.echo("Strata Status")
        click.echo(f"  Base dir:    {store.base_dir}")
        click.echo(f"  Active root: {store.active_root}")
        click.echo(f"  1st Stratum (Active):  {pending} stale file(s) pending ({counts['active']} file(s))")
        click.echo(f"  2nd Stratum (Medium):  {counts['cooled']} memory block(s)")
        click.echo(f"  3rd Stratum (Archive): {shadows} shadow entr{'y' if shadows == 1 else 'ies'}")
        click.echo("  Distiller: not available in this build")
        click.echo(f"  Daemon: {daemon_state(daemon)}")
        if daemon.running:
            click.echo(f"  Cycles: {daemon.cycle_count}")
            for line in daemon.last_log_lines:
                click.echo(f"    {line}")

    emit(context, data, human)


def _settings(store: StrataStore) -> dict[str, Any]:
    return {"base_dir": str(store.base_dir), **asdict(store.config)}


def _parse_value(raw: str) -> object:
    """The reference's order: int, float, yes/no words, JSON, else the text itself."""
    for convert in (int, float):
        try:
            return convert(raw)
        except ValueError:
            pass
    words = {"true": True, "yes": True, "false": False, "no": False}
    if raw.lower() in words:
        return words[raw.lower()]
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _shown(value: object) -> str:
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


@click.group(invoke_without_command=True)
@click.pass_context
def config(context: click.Context) -> None:
    """Show the settings (`strata.json` merged onto the defaults); `config get KEY`, `config set KEY VALUE`."""
    if context.invoked_subcommand is not None:
        return
    store = store_for(context, must_exist=False)
    settings = store.config

    def human() -> None:
        click.echo("Strata configuration")
        click.echo(f"  base_dir:       {store.base_dir}")
        click.echo(f"  active:         {store.active_root}")
        click.echo(f"  cooled:         {store.cooled_root}")
        click.echo(f"  archive:        {store.archive_root}")
        click.echo(f"  shadow index:   {store.shadow_file}")
        click.echo(f"  search_backend: {settings.search_backend}")
        click.echo("Decay thresholds (days before an active file cools):")
        for prefix, days in settings.decay_thresholds.items():
            click.echo(f"  /{prefix}:  {days} days")
        click.echo(
            f"LRU eviction: idle days {json.dumps(settings.lru_decay_thresholds)} "
            f"and at most {settings.lru_min_access_count} access(es)"
        )
        click.echo(f"Promotion: at {settings.promotion_threshold} accesses")
        click.echo(f"Active file patterns: {', '.join(settings.active_file_patterns)}")

    emit(context, _settings(store), human)


@config.command("get")
@click.argument("key")
@click.pass_context
def config_get(context: click.Context, key: str) -> None:
    """Print one setting (dotted keys reach dict entries: decay_thresholds.projects)."""
    value: Any = _settings(store_for(context, must_exist=False))
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            fail(context, f"Unknown config key: {key}", code=EXIT_BAD_INPUT)
        value = value[part]
    emit(context, {"key": key, "value": value}, lambda: click.echo(_shown(value)))


@config.command("set")
@click.argument("key")
@click.argument("value", nargs=-1, required=True)
@click.pass_context
def config_set(context: click.Context, key: str, value: tuple[str, ...]) -> None:
    """Change one setting in strata.json (checked before it is written)."""
    if key == "llm" or key.startswith("llm."):
        not_available(context, "the LLM distiller (llm.* settings)")
    if key == "base_dir":
        fail(context, "base_dir is where the store is: set STRATA_HOME or use --data-dir", EXIT_BAD_INPUT)
    store = store_for(context, must_exist=False)
    parsed = _parse_value(" ".join(value))
    try:
        store.config = apply_setting(store.config, store.config_file, key, parsed)
    except StrataConfigError as error:
        fail(context, str(error), EXIT_BAD_INPUT, stream_err=True)
    store.base_dir.mkdir(parents=True, exist_ok=True)
    save_config(store.base_dir, store.config)
    emit(context, {"key": key, "value": parsed}, lambda: click.echo(f"Set {key} = {_shown(parsed)}"))


@click.command()
@click.option("--lines", type=click.IntRange(min=1), default=20, show_default=True)
@click.pass_context
def history(context: click.Context, lines: int) -> None:
    """The last lines of the daemon log."""
    # Like the reference: without a store there is no log yet, which is a hint, not an error.
    store = store_for(context, must_exist=False)
    if not store.log_file.exists():
        click.echo("No daemon log yet. Start the daemon with: strata serve")
        return
    every = store.log_file.read_text(encoding="utf-8", errors="replace").splitlines()
    shown = every[-lines:]

    def human() -> None:
        click.echo(f"Janitor Log ({len(shown)} of {len(every)} lines):")
        click.echo("=" * 60)
        for line in shown:
            click.echo(f"  {line}")

    emit(context, {"lines": shown, "total": len(every)}, human)


@click.command()
@click.pass_context
def cost(context: click.Context) -> None:
    """An estimate of the tokens the daemon's moves saved (from strata.log)."""
    summary = cost_summary(store_for(context, must_exist=False).log_file)

    def human() -> None:
        if "error" in summary:
            click.echo(summary["error"])
            return
        value = {key: metric["value"] for key, metric in summary.items() if key != "hook_calls"}
        click.echo("Strata Cost Savings (Estimated)")
        click.echo("=" * 40)
        click.echo(f"Daemon cycles:     {value['daemon_cycles']}")
        click.echo(f"Files migrated:    {value['files_migrated']}")
        click.echo(f"Files evicted:     {value['files_evicted']}")
        click.echo(f"LRU decisions:     {value['lru_decisions']}")
        click.echo(f"Tokens saved:      {value['tokens_saved_estimate']:,} tokens")
        click.echo(f"Savings range:     {value['tokens_saved_range']} tokens")
        click.echo("")
        click.echo(f"Methodology: {summary['tokens_saved_estimate']['methodology']}")
        click.echo(f"Disclaimer: {summary['tokens_saved_estimate']['disclaimer']}")

    emit(context, summary, human)


@click.command("repair-sidecar")
@click.pass_context
def repair_sidecar_command(context: click.Context) -> None:
    """Rebuild stratum_2_access.json from what can still be read (a backup of the old file is kept)."""
    report = repair_sidecar(store_for(context))

    def human() -> None:
        if report.backup is None:
            click.echo("No access sidecar to repair.")
            return
        click.echo(f"Backup: {report.backup}")
        click.echo(
            f"Kept {report.kept} entr{'y' if report.kept == 1 else 'ies'}; dropped {len(report.dropped)}."
        )
        for key in report.dropped:
            click.echo(f"  dropped {key!r}")

    emit(
        context,
        {
            "backup": str(report.backup) if report.backup else None,
            "kept": report.kept,
            "dropped": report.dropped,
        },
        human,
    )


@click.command("rebuild-index")
@click.pass_context
def rebuild_index_command(context: click.Context) -> None:
    """Rebuild the shadow index from the archive blobs (the old database is kept as a backup)."""
    store = store_for(context)
    blobs = len(list(store.archive_root.glob("*.json"))) if store.archive_root.is_dir() else 0
    with click.progressbar(length=blobs, label="Indexing", file=sys.stderr) as bar:
        report = rebuild_shadow_index(store, bar.update)

    def human() -> None:
        if report.backup:
            click.echo(f"Backup: {report.backup}")
        click.echo(f"Indexed {report.indexed} archived file(s).")
        for problem in report.unreadable:
            click.echo(f"  skipped {problem}")

    emit(
        context,
        {
            "backup": str(report.backup) if report.backup else None,
            "indexed": report.indexed,
            "unreadable": [str(problem) for problem in report.unreadable],
        },
        human,
    )


COMMANDS = [status, config, history, cost, repair_sidecar_command, rebuild_index_command]
