"""`stratagate export DB [--namespace NS] [-o OUT.json]`: namespaces as snapshot JSON (v7, camelCase)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from stratagate.storage.sql import open_backend
from stratagate.storage.transfer import (
    STEPS_PER_NAMESPACE,
    export_to_file,
    refuse_overwriting_inputs,
    select_namespaces,
    write_export,
)


@click.command("export")
@click.argument("database")
@click.option("--namespace", help="Only this namespace (default: all).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here (default: stdout).")
def command(database: str, namespace: str | None, output: Path | None) -> None:
    """Write {"<ns>": {"snapshot": {...}, "revision": N, "journal": [...]}} for DATABASE, read through a
    read-only open (the database is not modified). The curation journal is included when there is one."""
    if output is not None:
        refuse_overwriting_inputs(output, [database])
    with open_backend(database, read_only=True) as backend:
        namespaces = select_namespaces(backend, namespace)
        with click.progressbar(
            length=len(namespaces) * STEPS_PER_NAMESPACE, label="exporting", file=sys.stderr
        ) as bar:
            if output is None:
                write_export(backend, namespaces, click.get_text_stream("stdout"), lambda _s: bar.update(1))
            else:
                export_to_file(backend, namespaces, output, lambda _s: bar.update(1))
    if output is not None:
        click.echo(f"{output}: {len(namespaces)} namespace(s)", err=True)
