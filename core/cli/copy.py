"""`stratagate copy SRC DST [--namespace NS]`: copy namespaces between databases, e.g. SQLite → PostgreSQL."""

from __future__ import annotations

import sys

import click

from stratagate.storage.sql import open_backend
from stratagate.storage.transfer import (
    STEPS_PER_NAMESPACE,
    copy_namespaces,
    refuse_overwriting_inputs,
    select_namespaces,
)


@click.command("copy")
@click.argument("source")
@click.argument("target")
@click.option("--namespace", help="Only this namespace (default: all).")
@click.option("--replace", is_flag=True, help="Overwrite namespaces that already exist in TARGET.")
def command(source: str, target: str, namespace: str | None, replace: bool) -> None:
    """Copy every record, the revision and the curation journal of SOURCE's namespaces into TARGET (created
    if missing), in one transaction: if anything fails, TARGET is left as it was. SOURCE is read through a
    read-only open and is not modified."""
    refuse_overwriting_inputs(target, [source])
    with open_backend(source, read_only=True) as origin, open_backend(target) as destination:
        namespaces = select_namespaces(origin, namespace)
        with click.progressbar(
            length=len(namespaces) * STEPS_PER_NAMESPACE, label="copying", file=sys.stderr
        ) as bar:
            copy_namespaces(origin, destination, namespaces, replace=replace, progress=lambda _s: bar.update(1))
        click.echo(f"copied {len(namespaces)} namespace(s) to {destination.location}")
