"""`stratagate import locomo FILE --database DB`: a LoCoMo conversation file into StrataGate memory."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from stratagate.importers.locomo import import_conversation, read_locomo_file


@click.command("locomo")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--database", required=True, help="SQLite file (created if missing) or PostgreSQL URL.")
@click.option(
    "--namespace",
    help="Namespace to import into (default: locomo:<sample_id or file name>); only for a one-conversation file.",
)
def command(file: Path, database: str, namespace: str | None) -> None:
    """Import the LoCoMo conversation(s) in FILE: one namespace per conversation, one turn per dia_id,
    session date-times as the clock, image captions kept. Importing the same file again adds nothing."""
    conversations = read_locomo_file(file)
    if namespace is not None and len(conversations) > 1:
        raise click.BadParameter(
            f"{file} holds {len(conversations)} conversations; --namespace names only one", param_hint="--namespace"
        )
    for conversation in conversations:
        target = conversation.namespace if namespace is None else namespace
        with click.progressbar(
            length=len(conversation.turns), label=target, show_pos=True, file=sys.stderr
        ) as bar:
            summary = import_conversation(
                conversation, database, namespace=namespace, progress=lambda _turn: bar.update(1)
            )
        click.echo(
            f"{summary.namespace}: {summary.appended} of {summary.turns} turns imported "
            f"({summary.turns - summary.appended} already there); {summary.blocks} blocks, {summary.events} events"
        )
