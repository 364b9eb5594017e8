"""Reference commands that need outside services: accepted, answered "not available in this build", exit 1.

QMD search needs Node.js and `npx @tobilu/qmd`; the distiller needs an LLM provider and key; `skill` and
`pi-install` need npx and the pi agent; the service commands write a systemd user unit. None of them is
part of this build, and none of them is needed for the three tiers to work.
"""

from __future__ import annotations

import click

from stratagate.cli.strata.common import not_available

_OUTSIDE = {
    "qmd-setup": "QMD search (needs Node.js and npx @tobilu/qmd)",
    "qmd-embed": "QMD search (needs Node.js and npx @tobilu/qmd)",
    "qmd-status": "QMD search (needs Node.js and npx @tobilu/qmd)",
    "distiller": "the LLM distiller (needs an LLM provider and API key)",
    "skill": "agent skill installation (needs npx)",
    "pi-install": "the Pi agent extension (needs the pi agent)",
    "install-service": "the systemd user service",
    "uninstall-service": "the systemd user service",
}


def _unavailable_command(name: str, what: str) -> click.Command:
    @click.command(
        name, context_settings={"ignore_unknown_options": True}, help=f"Not in this build: {what}."
    )
    @click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def unavailable(context: click.Context, arguments: tuple[str, ...]) -> None:
        not_available(context, what)

    return unavailable


COMMANDS = [_unavailable_command(name, what) for name, what in _OUTSIDE.items()]
