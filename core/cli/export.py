"""`stratagate export DB [--namespace NS] [-o OUT.json]`: namespaces as snapshot JSON (v7, camelCase)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from stratagate.storage.sql import open_backend
from stratagate.storage.transfer import (
    STEPS_PER_NAMESPACE,
    export_snapshots,
    select_namespaces,
    write_json_atomically,
)


@click.command("export")
@click.argument("database")
@click.option("--namespace", help="Only this namespace (default: all).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here (default: stdout).")
def command(database: str, namespace: str | None, output: Path | None) -> None:
    """Write {"<ns>": {"snapshot": {...}, "revision": N}} for DATABASE, read through a read-only open (the
    database is not modified)."""
    with open_backend(database, read_only=True) as backend:
        namespaces = select_namespaces(backend, namespace)
        with click.progressbar(
            length=len(namespaces) * STEPS_PER_NAMESPACE, label="exporting", file=sys.stderr
        ) as bar:
            data = export_snapshots(backend, namespaces, progress=lambda _section: bar.update(1))
    if output is None:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        write_json_atomically(data, output)
        click.echo(f"{output}: {len(data)} namespace(s)", err=True)
