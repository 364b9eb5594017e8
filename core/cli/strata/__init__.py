"""`stratagate strata ...`: the Strata three-tier markdown memory, a drop-in for the reference's `strata`.

A script, agent skill or cron job that ran `strata ARGS` runs `stratagate strata ARGS` (or a one-line shim):
same commands, flags, defaults, output streams and exit codes, except where a data-safety fix changes them
(listed in docs/strata.md). Extras: `--data-dir`, `rebuild-index`, `repair-sidecar`, `--dry-run` on
`rehydrate` and `serve`, `--no-track`, `--tier`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from stratagate.cli.strata import admin, daemon, files, lifecycle, unavailable
from stratagate.cli.strata.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    JSON_FLAGS,
    StrataOptions,
    command_name,
    emit,
    json_mode,
)
from stratagate.cli.strata.help_text import AGENT_HELP, BANNER
from stratagate.strata.errors import StrataError


class _StrataGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Like the reference: `--json`/`--agent` may stand anywhere; `--agent-help` is a command.
        ctx.meta["strata_json"] = any(arg in JSON_FLAGS for arg in args)
        ctx.meta["strata_started"] = time.perf_counter()
        args = ["agent-help" if arg == "--agent-help" else arg for arg in args if arg not in JSON_FLAGS]
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and self.get_command(ctx, args[0]) is None and not args[0].startswith("-"):
            click.echo(f"Unknown command: {args[0]}\n")
            click.echo(BANNER)
            ctx.exit(EXIT_FAILED)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except OSError as error:
            # An operating-system error (permissions, disk full) is reported like bad input, naming the file.
            where = error.filename or "Strata data directory"
            raised = StrataError(f"{where}: {error.strerror or error}")
            if json_mode(ctx):
                _json_error(ctx, raised)
            raise raised from error
        except StrataError as error:
            if json_mode(ctx):
                _json_error(ctx, error)
            raise


def _json_error(ctx: click.Context, error: StrataError) -> None:
    sub = ctx.invoked_subcommand or command_name(ctx)
    click.echo(json.dumps({"status": "error", "command": sub, "message": str(error), "duration_ms": 0.0}))
    sys.exit(EXIT_BAD_INPUT)


@click.group("strata", cls=_StrataGroup, invoke_without_command=True)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The Strata data directory (default: $STRATA_HOME, ./strata_data, ~/.strata).",
)
@click.pass_context
def command(context: click.Context, data_dir: Path | None) -> None:
    """Strata three-tier markdown memory: active → cooled → archive (a drop-in for `strata`)."""
    context.obj = StrataOptions(data_dir.absolute() if data_dir else None)
    if context.invoked_subcommand is None:
        click.echo(BANNER)


@command.command("help")
def help_command() -> None:
    """The grouped list of commands."""
    click.echo(BANNER)


@command.command("agent-help")
@click.pass_context
def agent_help(context: click.Context) -> None:
    """A markdown guide for agents using Strata (also `--agent-help`)."""
    emit(context, {"help": AGENT_HELP}, lambda: click.echo(AGENT_HELP))


for module in (files, lifecycle, admin, daemon, unavailable):
    for subcommand in module.COMMANDS:
        command.add_command(subcommand)
    for alias, subcommand in getattr(module, "ALIASES", {}).items():
        command.add_command(subcommand, alias)
