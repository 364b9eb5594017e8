"""The janitor's moves: migrate, evict, promote, rehydrate, maintenance.

Each prints one line per file and the reference's summary line (`Migrated: N files`, ...). A file that
could not move (conflict, error) makes the command exit 1 after the others moved — the reference exited 0
and printed the error inside its JSON, which a script could not notice (a documented difference).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from stratagate.cli.strata.common import EXIT_FAILED, emit, json_mode, store_for
from stratagate.strata import janitor
from stratagate.strata.janitor import FileResult
from stratagate.strata.store import StrataStore, Tier

FAILED = ("conflict", "error")


def _counted(results: list[FileResult], done: str) -> int:
    return sum(result.status == done or result.status.startswith("would_") for result in results)


def _print_results(results: list[FileResult]) -> None:
    for result in results:
        detail = f" — {result.detail}" if result.detail else ""
        click.echo(f"  {result.status:<16} {result.path}{detail}")
    _print_counts(results)


def _run(
    context: click.Context,
    store: StrataStore,
    plan: Callable[[], list[FileResult]],
    apply: Callable[..., list[FileResult]],
    dry_run: bool,
    label: str,
    summary: tuple[str, str, str],
) -> None:
    """Plan, then (unless a dry run) apply with a progress bar on stderr; print; exit 1 on any failure."""
    done, key, noun = summary
    with store.lock():
        results = plan()
        pending = sum(result.status.startswith("would_") for result in results)
        if not dry_run and pending:
            if json_mode(context) or not sys.stderr.isatty():
                results = apply(store, results)
            else:
                with click.progressbar(length=pending, label=label, file=sys.stderr) as bar:
                    results = apply(store, results, bar.update)
    count = _counted(results, done)

    def human_summary() -> None:
        _print_results(results)
        click.echo(f"{done.capitalize()}: {count} {noun}")

    emit(
        context,
        {key: [result.as_dict() for result in results], "count": count, "dry_run": dry_run},
        human_summary,
    )
    if any(result.status in FAILED for result in results):
        sys.exit(EXIT_FAILED)


_dry_run = click.option("--dry-run", "-n", is_flag=True, help="Only show what would happen.")


@click.command()
@_dry_run
@click.pass_context
def migrate(context: click.Context, dry_run: bool) -> None:
    """Move stale active files to the cooled tier."""
    store = store_for(context)
    _run(
        context,
        store,
        lambda: janitor.plan_migrate(store),
        janitor.apply_migrate,
        dry_run,
        "Migrating",
        ("migrated", "files", "files"),
    )


@click.command()
@click.argument("paths", nargs=-1)
@_dry_run
@click.pass_context
def evict(context: click.Context, paths: tuple[str, ...], dry_run: bool) -> None:
    """Archive idle cooled files (or exactly PATHS, whatever their age)."""
    store = store_for(context)
    chosen = list(paths) if paths else None
    _run(
        context,
        store,
        lambda: janitor.plan_evict(store, chosen, check_sizes=dry_run),
        janitor.apply_evict,
        dry_run,
        "Evicting",
        ("evicted", "memories", "memories"),
    )


@click.command()
@click.argument("paths", nargs=-1)
@_dry_run
@click.pass_context
def promote(context: click.Context, paths: tuple[str, ...], dry_run: bool) -> None:
    """Move often-read cooled files (or exactly PATHS) back to the active tier."""
    store = store_for(context)
    chosen = list(paths) if paths else None
    _run(
        context,
        store,
        lambda: janitor.plan_promote(store, chosen),
        janitor.apply_promote,
        dry_run,
        "Promoting",
        ("promoted", "files", "files"),
    )


@click.command()
@click.argument("keys", nargs=-1, required=True)
@click.option(
    "--target", type=click.Choice([Tier.ACTIVE.value, Tier.COOLED.value]), default=Tier.ACTIVE.value
)
@_dry_run
@click.pass_context
def rehydrate(context: click.Context, keys: tuple[str, ...], target: str, dry_run: bool) -> None:
    """Restore archived files by shadow id or original path."""
    store = store_for(context)
    with store.lock():
        results = janitor.plan_rehydrate(store, keys, Tier(target))
        if not dry_run:
            results = janitor.apply_rehydrate(store, results)
    tier_name = "1st Stratum (active)" if target == Tier.ACTIVE else "2nd Stratum (cooled)"

    def human() -> None:
        for result in results:
            if result.status == "rehydrated":
                click.echo(f"Restored to {tier_name}: {result.path}")
            else:
                detail = f" — {result.detail}" if result.detail else ""
                click.echo(f"  {result.status:<16} {result.path}{detail}", err=result.status in FAILED)
        _print_counts(results)

    emit(context, {"files": [result.as_dict() for result in results], "dry_run": dry_run}, human)
    if any(result.status in FAILED for result in results):
        sys.exit(EXIT_FAILED)


def _print_counts(results: list[FileResult]) -> None:
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    click.echo(
        ", ".join(f"{status}: {count}" for status, count in sorted(counts.items())) or "Nothing to do."
    )


@click.command()
@_dry_run
@click.pass_context
def maintenance(context: click.Context, dry_run: bool) -> None:
    """Promote, migrate, evict — one daemon cycle."""
    report = janitor.run_maintenance(store_for(context), dry_run)
    results = report.promoted + report.migrated + report.evicted
    totals = report.totals()

    def human() -> None:
        for result in results:
            detail = f" — {result.detail}" if result.detail else ""
            click.echo(f"  {result.status:<16} {result.path}{detail}")
        click.echo(f"Promoted: {totals['total_promoted']} files")
        click.echo(f"Migrated: {totals['total_migrated']} files")
        click.echo(f"Evicted: {totals['total_evicted']} memories")

    data = {
        "promoted": [result.as_dict() for result in report.promoted],
        "migrated": [result.as_dict() for result in report.migrated],
        "evicted": [result.as_dict() for result in report.evicted],
        **totals,
        "distilled": {"status": "skipped", "reason": "not available in this build"},
    }
    emit(context, data, human)
    if any(result.status in FAILED for result in results):
        sys.exit(EXIT_FAILED)


COMMANDS = [migrate, evict, promote, rehydrate, maintenance]
