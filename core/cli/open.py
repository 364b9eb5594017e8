"""`stratagate open DB [--read-only] [--namespace NS]`: look at a memory database and print what it holds."""

from __future__ import annotations

import click

from stratagate.storage.sql import open_backend
from stratagate.storage.transfer import select_namespaces, summarize

LABELS = {"blocks": "blocks", "events": "events", "elements": "elements", "openTail": "open-tail messages"}


@click.command("open")
@click.argument("database")
@click.option("--read-only", is_flag=True, help="Forensic open: the file stays byte-identical, nothing beside it.")
@click.option("--namespace", help="Only this namespace.")
def command(database: str, read_only: bool, namespace: str | None) -> None:
    """Open DATABASE (an SQLite file or a PostgreSQL URL) and print its location, schema version, sha256,
    any notice, and each namespace's revision, current turn and record counts. Opening never upgrades a
    file: schema 5/6 files stay in their schema (the reference still opens them), schema 1-4 files open
    read-only; `stratagate migrate FILE` upgrades to 7."""
    with open_backend(database, read_only=read_only, create=False) as backend:
        click.echo(f"location: {backend.location}")
        click.echo(f"backend:  {backend.dialect}{' (read-only)' if backend.read_only else ''}")
        click.echo(f"schema:   {backend.schema_version}")
        if backend.file_sha256:
            click.echo(f"sha256:   {backend.file_sha256}")
        if backend.notice:
            click.echo(f"notice:   {backend.notice}")
        namespaces = select_namespaces(backend, namespace)
        click.echo(f"namespaces: {len(namespaces)}")
        for name in namespaces:
            summary = summarize(backend, name)
            counts = ", ".join(f"{count} {LABELS[section]}" for section, count in summary.counts.items())
            click.echo(f"  {name}: revision {summary.revision}, turn {summary.current_turn}; {counts}")
