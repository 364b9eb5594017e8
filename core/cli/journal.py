"""`stratagate journal`: check and export the curation journal of a memory database.

Both commands only read: the database is opened read-only (a forensic open: a private copy is read, the file
is never written and nothing is created beside it).
"""

from __future__ import annotations

from pathlib import Path

import click
from sqlalchemy.exc import DBAPIError

from stratagate import journal
from stratagate.errors import StorageOpenError, StrataGateError
from stratagate.storage.sql import open_backend


class JournalVerificationError(StrataGateError):
    """The journal's hash chain is broken: an entry was edited, deleted or moved."""


@click.group("journal")
def command() -> None:
    """Verify or export the append-only curation journal (pin, forget, supersede… and their undos)."""


@command.command("verify")
@click.argument("database")
@click.option("--namespace", "-n", help="Check only this namespace's chain.")
def verify_command(database: str, namespace: str | None) -> None:
    """Check that no journal entry of DATABASE (a file or a database URL) was edited or deleted.

    Exit 0 and print each chain's head hash when intact; exit 2 naming the first bad entry otherwise."""
    with open_backend(database, read_only=True) as backend:
        result = _guarded(database, lambda: journal.verify(backend.engine, namespace))
    if not result.ok:
        raise JournalVerificationError(f"{database}: {result.describe()}")
    click.echo(f"{database}: {result.describe()}")
    for name, head in sorted(result.heads.items()):
        click.echo(f"  {name}: head {head}")


@command.command("export")
@click.argument("database")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--namespace", "-n", help="Export only this namespace's entries.")
def export_command(database: str, output: Path, namespace: str | None) -> None:
    """Write the journal of DATABASE as JSON lines to OUTPUT, one entry per line in chain order."""
    with open_backend(database, read_only=True) as backend:
        total = _guarded(database, lambda: journal.count_entries(backend.engine))
        with click.progressbar(length=total, label="Exporting journal") as bar:

            def entries():
                for record in journal.iter_entries(backend.engine, namespace):
                    bar.update(1)
                    yield record

            written = _guarded(database, lambda: journal.export_jsonl(entries(), output))
    click.echo(f"{output}: {written} journal entries")


def _guarded(database: str, read):
    try:
        return read()
    except DBAPIError as error:
        raise StorageOpenError(database, f"cannot read the journal: {error.orig}") from None
