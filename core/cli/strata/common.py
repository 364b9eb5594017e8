"""What every `stratagate strata` command shares: finding the store, the reference's JSON envelope, exit codes.

`--json` (or `--agent`) anywhere on the line switches to the reference's envelope: one line
`{"status": "success", "command", "data", "duration_ms"}`, or `{"status": "error", "command", "message",
"duration_ms"}` on failure. Exit codes: 0 done; 1 something could not be done (a file that could not move,
a file not found, a feature not in this build); 2 bad input (a path leaving its tier, a damaged sidecar,
index or `strata.json`, no store) — nothing changed.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from stratagate.strata.config import detect_base_dir
from stratagate.strata.store import StrataStore

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
JSON_FLAGS = ("--json", "--agent")


def json_mode(context: click.Context) -> bool:
    return bool(context.find_root().meta.get("strata_json"))


def command_name(context: click.Context) -> str:
    return context.info_name or "strata"


def _duration_ms(context: click.Context) -> float:
    started = context.find_root().meta.get("strata_started", time.perf_counter())
    return round((time.perf_counter() - started) * 1000, 1)


def store_for(context: click.Context, must_exist: bool = True) -> StrataStore:
    """`--data-dir`, else the reference's rules: `$STRATA_HOME`, `./strata_data` (cwd only), `~/.strata`."""
    base = context.find_object(StrataOptions).data_dir or detect_base_dir()
    store = StrataStore(base)
    if must_exist:
        store.require_exists()
    return store


class StrataOptions:
    def __init__(self, data_dir: Path | None):
        self.data_dir = data_dir


def emit(context: click.Context, data: Any, human: Callable[[], None]) -> None:
    """Print `data` in the JSON envelope, or run `human` to print it for people."""
    if json_mode(context):
        envelope = {
            "status": "success",
            "command": command_name(context),
            "data": data,
            "duration_ms": _duration_ms(context),
        }
        click.echo(json.dumps(envelope, default=str, ensure_ascii=False))
    else:
        human()


def fail(context: click.Context, message: str, code: int = EXIT_FAILED, stream_err: bool = False) -> NoReturn:
    """End the command with `message` (the envelope's error in JSON mode) and `code`."""
    if json_mode(context):
        envelope = {
            "status": "error",
            "command": command_name(context),
            "message": message,
            "duration_ms": _duration_ms(context),
        }
        click.echo(json.dumps(envelope, ensure_ascii=False))
    else:
        click.echo(message, err=stream_err)
    sys.exit(code)


def not_available(context: click.Context, what: str) -> NoReturn:
    """Features that need outside services (QMD, an LLM, npx, pi, systemd) are not part of this build."""
    fail(context, f"not available in this build: {what}", EXIT_FAILED, stream_err=True)
