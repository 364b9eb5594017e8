"""Commands on files: init, add, read, list, list-stratum-2, index, search (query), forget."""

from __future__ import annotations

import os
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import click

from stratagate.cli.strata.common import StrataOptions, emit, fail, json_mode, store_for
from stratagate.strata import janitor
from stratagate.strata.cascade import read as read_through_tiers
from stratagate.strata.config import save_config
from stratagate.strata.errors import StrataFileNotFoundError
from stratagate.strata.search import as_reference_result
from stratagate.strata.search import search as search_tiers
from stratagate.strata.store import StrataStore, Tier

BACKEND_PROMPT = """\
Select search backend:
  1) QMD hybrid search (needs Node.js and npx)
  2) QMD with a reranker (needs Node.js and npx)
  3) SQLite FTS5 and file scan (built in)"""


def _init_base(context: click.Context, scope: str) -> tuple[Path, str]:
    """`--data-dir`, else `$STRATA_HOME`, else `~/.strata` for --global, else `./strata_data` (spec §1.1)."""
    chosen = context.find_object(StrataOptions).data_dir
    if chosen is not None:
        return chosen, "local"
    home = os.environ.get("STRATA_HOME")
    if home:
        return Path(home).expanduser().absolute(), "local"
    if scope == "global":
        return Path.home() / ".strata", "global"
    return Path("strata_data").absolute(), "local"


def _choose_backend(non_interactive: bool) -> tuple[str, str | None]:
    """The reference's onboarding: QMD is asked for only on a terminal; this build never installs it."""
    if non_interactive:
        return "qmd", None  # the reference's default, written as it writes it
    if not sys.stdin.isatty():
        return "fts5", None
    click.echo(BACKEND_PROMPT)
    choice = click.prompt("Choice", default="3", show_default=True).strip()
    if choice in ("1", "2"):
        if shutil.which("npx") is None:
            return "fts5", "npx not found: QMD needs Node.js. Using the built-in search (fts5)."
        return "fts5", "not available in this build: QMD search. Using the built-in search (fts5)."
    return "fts5", None


@click.command()
@click.option("--global", "-g", "scope", flag_value="global", help="Create ~/.strata.")
@click.option(
    "--local", "-l", "scope", flag_value="local", default=True, help="Create ./strata_data (default)."
)
@click.option("--non-interactive", is_flag=True, help="Ask nothing (search backend: the default).")
@click.pass_context
def init(context: click.Context, scope: str, non_interactive: bool) -> None:
    """Create a store: active/, cooled/, archive/, strata.json and active/index.md."""
    base, kind = _init_base(context, scope)
    store = StrataStore(base)
    backend, note = _choose_backend(non_interactive)
    store.init()
    store.config.search_backend = backend
    save_config(store.base_dir, store.config)
    if note:
        click.echo(note)
    click.echo(f"✓ Initialized {kind} Strata at {store.base_dir}")
    click.echo(
        "  Memory lives in three tiers: active/ (working files), cooled/ (idle ones), archive/ (searchable).\n"
        "Next steps:\n"
        '  strata add notes/hello.md "Hello"   write a first memory\n'
        "  strata status                       see the tiers\n"
        "  strata serve                        start the daemon (migrate and evict every 15 minutes)"
    )


def _quick_note_path() -> str:
    # Wall-clock nanoseconds: unique across boots (the reference's monotonic clock restarts, B-22).
    return f"quick-note-{time.time_ns()}.md"


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1)
@click.pass_context
def add(context: click.Context, words: tuple[str, ...]) -> None:
    """Write an active file: `add PATH CONTENT...`, `add PATH` (stdin), `add --text WORDS...` (a quick
    note), `--file SRC` for the content of a file."""
    arguments = list(words)
    source_file = None
    if "--file" in arguments:
        at = arguments.index("--file")
        if at + 1 >= len(arguments):
            fail(context, "add --file needs a file name", code=2, stream_err=True)
        source_file = arguments.pop(at + 1)
        arguments.pop(at)
    if "--text" in arguments:
        at = arguments.index("--text")
        path, content = _quick_note_path(), " ".join(arguments[:at] + arguments[at + 1 :])
    else:
        path = arguments[0] if arguments else _quick_note_path()
        content = " ".join(arguments[1:]) if len(arguments) > 1 else None
    if content is None and source_file is not None:
        content = Path(source_file).read_text(encoding="utf-8")
    if content is None:
        if sys.stdin.isatty():
            click.echo(
                'Usage: strata add PATH "content"   (or pipe the content: echo text | strata add PATH)'
            )
            return
        content = sys.stdin.read()
    store = store_for(context, must_exist=False)
    target = store.write(path, content)
    emit(context, {"path": str(target), "status": "written"}, lambda: click.echo(f"Written to: {target}"))


@click.command()
@click.argument("path")
@click.option("--no-track", is_flag=True, help="Do not count the access, promote or rehydrate.")
@click.pass_context
def read(context: click.Context, path: str, no_track: bool) -> None:
    """Read PATH from the first tier that has it (a cooled read counts; an archived one is restored)."""
    try:
        result = read_through_tiers(store_for(context), path, record_access=not no_track)
    except StrataFileNotFoundError:
        fail(context, f"File not found: {path}")

    def human() -> None:
        if result.promoted:
            click.echo(f"⬆ Promoted from cooled (accessed {result.access_count} times)\n")
        elif result.rehydrated:
            click.echo("⬆ Restored from archive to 1st Stratum (active)\n")
        elif result.source is Tier.COOLED and not no_track:
            threshold = store_for(context).config.promotion_threshold
            click.echo(f"→ Read from cooled (access {result.access_count}/{threshold})\n")
        click.echo(result.content)

    data = {
        "path": result.path,
        "content": result.content,
        "source": result.source.value,
        "access_count": result.access_count,
        "promoted": result.promoted,
        "rehydrated": result.rehydrated,
    }
    emit(context, data, human)


@click.command("list")
@click.argument("path", default="")
@click.option(
    "--tier",
    type=click.Choice([tier.value for tier in Tier]),
    default=None,
    help="List every file of a tier (cooled: with access counts; archive: shadow rows).",
)
@click.pass_context
def list_files(context: click.Context, path: str, tier: str | None) -> None:
    """The entries of an active folder (PATH, default the root), or every file of one --tier."""
    store = store_for(context)
    if tier is None:
        entries = store.list_dir(path)

        def human() -> None:
            if not entries:
                click.echo(f"Empty or not found: {path or '/'}")
            for entry in entries:
                kind = "dir" if entry["type"] == "directory" else "file"
                click.echo(f"  [{kind}] {entry['path']} ({entry['size']}b)")

        emit(context, entries, human)
        return
    if tier == Tier.ARCHIVE:
        shadow = store.shadow(create=False)
        try:
            rows = shadow.all()
        finally:
            shadow.close()
        emit(
            context,
            [
                {"id": row.id, "original_path": row.original_path, "evicted_at": row.evicted_at}
                for row in rows
            ],
            lambda: [
                click.echo(f"  {row.original_path}  (id {row.id}, archived {row.evicted_at[:10]})")
                for row in rows
            ],
        )
        return
    found = store.list_files(Tier(tier))

    def human_files() -> None:
        for file in found:
            accesses = "" if file.access_count is None else f", {file.access_count} accesses"
            click.echo(f"  {file.path} ({file.size}b{accesses})")

    emit(
        context,
        [{"path": file.path, "size": file.size, "access_count": file.access_count} for file in found],
        human_files,
    )


def _modified(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()


@click.command("list-stratum-2")
@click.pass_context
def list_stratum_2(context: click.Context) -> None:
    """The cooled (2nd stratum) files with size and modification date."""
    found = store_for(context).list_files(Tier.COOLED)

    def human() -> None:
        if not found:
            click.echo("No 2nd Stratum files.")
        for file in found:
            click.echo(f"  {file.path} ({file.size}b, modified {_modified(file.modified)[:10]})")

    emit(
        context,
        [{"path": file.path, "size": file.size, "modified": _modified(file.modified)} for file in found],
        human,
    )


@click.command()
@click.pass_context
def index(context: click.Context) -> None:
    """Regenerate active/index.md."""
    written = store_for(context).regenerate_index()

    def human() -> None:
        click.echo(f"Index regenerated: {written}")
        click.echo(written.read_text(encoding="utf-8")[:300])

    emit(context, {"path": str(written)}, human)


LABELS = {Tier.ACTIVE: "ACTIVE", Tier.COOLED: "MEDIUM", Tier.ARCHIVE: "ARCHIVE"}


@click.command()
@click.argument("words", nargs=-1)
@click.option("--top-k", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--tag", "tags", multiple=True, help="Boost hits with this tag (repeatable).")
@click.option("--no-track", is_flag=True, help="Do not count cooled hits as accesses.")
@click.pass_context
def search(context: click.Context, words: tuple[str, ...], top_k: int, tags: tuple[str, ...], no_track: bool):
    """Search all tiers (cooled hits count as accesses unless --no-track). Alias: query."""
    if not words:
        if json_mode(context):
            fail(context, "search needs words: strata search WORDS...")
        click.echo("Usage: strata search WORDS...   (e.g. strata search stripe payments)")
        return
    hits = search_tiers(
        store_for(context), " ".join(words), top_k=top_k, tags=list(tags), record_access=not no_track
    )

    def human() -> None:
        if not hits:
            click.echo("No results found.")
        for number, hit in enumerate(hits, 1):
            click.echo(f"\n  [{number}] [{LABELS[hit.tier]}] · score={hit.score:.2f} · {hit.path}")
            click.echo(f"       {hit.content[:120].replace(chr(10), ' ')}...")
            if hit.shadow_id:
                click.echo(f"       [in archive — use strata rehydrate {hit.shadow_id} to restore]")

    emit(context, [as_reference_result(hit) for hit in hits], human)


@click.command()
@click.argument("path")
@click.pass_context
def forget(context: click.Context, path: str) -> None:
    """Archive the cooled file PATH now (it stays searchable and can be rehydrated)."""
    store = store_for(context)
    [planned] = janitor.plan_evict(store, [path])
    if planned.status == "error" and "not found" in planned.detail:
        fail(context, f"File not found in 2nd Stratum: {path}")
    [result] = janitor.apply_evict(store, [planned])
    if result.status != "evicted":
        fail(context, f"{result.status}: {result.path} — {result.detail}")
    emit(
        context,
        {"path": result.path, "archive_path": result.archive_path, "status": "archived"},
        lambda: click.echo(f"Archived to: {result.archive_path}"),
    )


COMMANDS = [init, add, read, list_files, list_stratum_2, index, search, forget]
ALIASES = {"query": search}
