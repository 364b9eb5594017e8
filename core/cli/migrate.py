"""`stratagate migrate FILE`: upgrade a schema v1-v6 SQLite file to v7, after a backup copy FILE.bak-v<N>."""

from __future__ import annotations

import sys

import click

from stratagate.storage.schema import SCHEMA_VERSION
from stratagate.storage.upgrade import STEPS, upgrade_file


@click.command("migrate")
@click.argument("file")
def command(file: str) -> None:
    """Upgrade FILE to schema 7 in one transaction, after a complete backup FILE.bak-v<N> (made with SQLite's
    backup API, so content still in the WAL is included). A failed upgrade leaves FILE as it was.

    Opening a file never upgrades it: schema 5 and 6 files are curated in their own schema so the reference
    StrataGate keeps opening them. After this upgrade the reference no longer opens FILE."""
    with click.progressbar(length=len(STEPS), label=f"migrating {file}", file=sys.stderr) as bar:
        result = upgrade_file(file, progress=lambda _step: bar.update(1))
    if result.backup is None:
        click.echo(f"{file}: already at schema {SCHEMA_VERSION}, nothing to do")
    else:
        click.echo(
            f"{file}: upgraded from schema {result.from_version} to {SCHEMA_VERSION} (backup: {result.backup}); "
            f"the reference StrataGate (schema {result.from_version}) no longer opens it"
        )
