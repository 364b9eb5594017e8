"""`stratagate migrate FILE`: upgrade a schema v1-v6 SQLite file to v7, after a backup copy FILE.bak-v<N>."""

from __future__ import annotations

import sys

import click

from stratagate.errors import StorageOpenError
from stratagate.storage.schema import SCHEMA_VERSION
from stratagate.storage.sql import open_backend


@click.command("migrate")
@click.argument("file")
def command(file: str) -> None:
    """Upgrade FILE to schema 7 in one transaction. The backup (made with SQLite's backup API, so content
    still in the WAL is included) is written first; a failed upgrade leaves FILE as it was."""
    stderr = sys.stderr
    with click.progressbar(length=1, label=f"migrating {file}", file=stderr) as bar, open_backend(
        file, create=False
    ) as backend:
        bar.update(1)
        if backend.read_only:
            raise StorageOpenError(backend.location, f"cannot be migrated: {backend.notice}")
        version, notice = backend.schema_version, backend.notice
    if version == SCHEMA_VERSION:
        click.echo(f"{file}: already at schema {SCHEMA_VERSION}, nothing to do")
    else:
        click.echo(f"{file}: {notice}")
