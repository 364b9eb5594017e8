"""`stratagate import ...`: bring memory from elsewhere into a database. `import snapshot` lives here; other
importers (e.g. `locomo`) add their subcommands to this group."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from stratagate.storage.sql import open_backend
from stratagate.storage.transfer import (
    STEPS_PER_NAMESPACE,
    import_snapshots,
    read_snapshot_file,
    refuse_overwriting_inputs,
)

command = click.Group("import", help="Import memory into a database (SQLite file or PostgreSQL URL).")


@command.command("snapshot")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--database", required=True, help="SQLite file (created if missing) or PostgreSQL URL.")
@click.option("--namespace", help="Only this namespace of FILE (required when FILE is a bare snapshot).")
@click.option("--replace", is_flag=True, help="Overwrite namespaces that already exist.")
def snapshot(file: Path, database: str, namespace: str | None, replace: bool) -> None:
    """Import a snapshot JSON file (as `stratagate export` writes it; v1-v7 snapshots are upgraded). Every
    namespace is validated first; existing ones are refused unless --replace. All are written in one
    transaction, with the curation journal the file carries."""
    refuse_overwriting_inputs(database, [file])
    entries = read_snapshot_file(file, namespace)
    with open_backend(database) as backend:
        with click.progressbar(
            length=len(entries) * STEPS_PER_NAMESPACE, label="importing", file=sys.stderr
        ) as bar:
            import_snapshots(backend, entries, replace=replace, progress=lambda _section: bar.update(1))
        location = backend.location
    for name, entry in entries.items():
        click.echo(f"{location}: {name} imported at revision {entry['revision']}")
