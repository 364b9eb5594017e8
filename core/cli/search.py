"""`stratagate search DB QUERY --namespace NS`: run a retrieval read-only and explain every hit.

The database is always opened forensically (read-only, byte-identical), and searches run with
`record=False`, so asking "why did the agent recall that?" never changes what it remembers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

import stratagate
from stratagate.weights import weight_at

if TYPE_CHECKING:
    from stratagate.retrieval import SearchExplanation

KINDS = ("events", "elements", "raw")
EXCLUSIONS_SHOWN = 10
"""Excluded candidates `--explain` prints per kind of reason (`--json` lists all)."""


@click.command("search")
@click.argument("database")
@click.argument("query")
@click.option("--namespace", required=True, help="The namespace to search.")
@click.option("--kind", type=click.Choice(KINDS), default="events", show_default=True, help="What to search.")
@click.option("--limit", type=int, help="Hits to return (events: 1-20, default 6; elements: 1-12, default 8).")
@click.option("--participant", "participants", multiple=True, help="Events: a participant (repeatable).")
@click.option("--event-type", help="Events: the event type.")
@click.option("--happened-from", help="Events: happened on or after this date.")
@click.option("--happened-to", help="Events: happened on or before this date.")
@click.option("--temporal-intent", type=click.Choice(["first", "latest"]), help="Events: order by chronology.")
@click.option("--name", help="Elements: the element name or an alias.")
@click.option("--type", "element_type", help="Elements: the element type.")
@click.option("--explain", is_flag=True, help="Show ranks per ranking, BM25 term contributions and exclusions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def command(database: str, query: str, namespace: str, kind: str, limit: int | None, participants: tuple[str, ...],
            event_type: str | None, happened_from: str | None, happened_to: str | None,
            temporal_intent: str | None, name: str | None, element_type: str | None, explain: bool,
            as_json: bool) -> None:
    """Search QUERY in DATABASE (an SQLite file or a PostgreSQL URL) without writing anything."""
    memory = stratagate.open(database, namespace, read_only=True)
    try:
        if kind == "events":
            _prepare_index(memory.event_search_index, "Indexing events (once per file state)")
            hits = memory.search_events(
                query, limit=limit, participants=list(participants) or None, event_type=event_type,
                happened_from=happened_from, happened_to=happened_to, temporal_intent=temporal_intent,
                explain=explain,
            )
            rows = [_event_row(hit, memory) for hit in hits]
        elif kind == "elements":
            _prepare_index(memory.element_search_index, "Indexing element facts (once per file state)")
            hits = memory.search_elements(query, limit=limit, name=name, type=element_type, explain=explain)
            rows = [_element_row(hit) for hit in hits]
        else:
            hits = memory.search_raw_memory(query, 6 if limit is None else limit)
            rows = [_raw_row(hit) for hit in hits]
        report = {"query": query, "kind": kind, "hits": rows}
        explanation = getattr(hits, "explanation", None)  # raw hits are a plain list
        if explain and explanation:
            report["explanation"] = _explanation(explanation)
        if as_json:
            click.echo(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            _print_text(report)
    finally:
        memory.close()


def _prepare_index(find: Callable[[Callable[[int, int], None]], Any], label: str) -> None:
    """Find (or build once, with a progress bar on stderr) the index the search will read (`find(progress)`:
    the memory's event or element index): a file that does not hold one gets it in the outside cache on its
    first search, which takes a while on a big memory."""
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
        bar.update(done - bar.pos)

    find(progress)
    if bar is not None:
        bar.render_finish()


def _hit_explanation(hit: Any) -> dict[str, Any] | None:
    explanation = getattr(hit, "explanation", None)
    if explanation is None:
        return None
    bm25 = explanation.bm25
    return {
        "ranks": explanation.ranks,
        "bm25": None if bm25 is None else {
            "score": bm25.score,
            "contributions": [
                {"term": part.term, "field": part.field, "frequency": part.frequency, "score": part.score}
                for part in bm25.contributions
            ],
        },
    }


def _event_row(hit: Any, memory: stratagate.StrataGate) -> dict[str, Any]:
    return {
        "id": hit.event.id, "score": hit.score, "title": hit.event.title, "status": hit.event.status,
        # From the hit's own event: looking it up by id would load every event of the memory.
        "weight": weight_at(hit.event.weight, hit.event.status, memory.current_turn),
        "explain": _hit_explanation(hit),
    }


def _element_row(hit: Any) -> dict[str, Any]:
    return {
        "id": hit.fact.id, "score": hit.score, "element": hit.element.id, "name": hit.element.name,
        "key": hit.fact.key, "value": hit.fact.value, "status": hit.fact.status, "explain": _hit_explanation(hit),
    }


def _raw_row(hit: Any) -> dict[str, Any]:
    return {
        "block": hit.block_id, "turns": list(hit.turn_range), "message": hit.message.id,
        "role": hit.message.role, "content": hit.message.content,
    }


def _explanation(explanation: SearchExplanation) -> dict[str, Any]:
    return {
        "tokens": explanation.tokens,
        "mode": explanation.mode,
        "rankings": explanation.rankings,
        "excluded": [{"id": item.id, "reason": item.reason} for item in explanation.excluded],
    }


def _print_text(report: dict[str, Any]) -> None:
    hits = report["hits"]
    click.echo(f"{len(hits)} {report['kind']} hit(s) for {report['query']!r}")
    for number, row in enumerate(hits, 1):
        if report["kind"] == "events":
            click.echo(f"{number:>3}. {row['id']}  score {row['score']:.6f}  weight {row['weight']:.3f}  "
                       f"[{row['status']}] {row['title']}")
        elif report["kind"] == "elements":
            click.echo(f"{number:>3}. {row['id']}  score {row['score']:.6f}  {row['name']}.{row['key']} = "
                       f"{row['value']!r} [{row['status']}]")
        else:
            click.echo(f"{number:>3}. {row['block']} turns {row['turns'][0]}-{row['turns'][1]}  "
                       f"{row['role']}: {row['content'][:100]}")
        explain = row.get("explain")
        if explain:
            ranks = ", ".join(f"{ranking} #{rank + 1}" for ranking, rank in explain["ranks"].items() if rank is not None)
            click.echo(f"       ranks: {ranks or 'none'}")
            for part in (explain["bm25"] or {}).get("contributions", []):
                click.echo(f"       bm25 {part['term']} in {part['field']} (tf {part['frequency']}): {part['score']:.4f}")
    explanation = report.get("explanation")
    if explanation:
        click.echo(f"mode: {explanation['mode']}; tokens: {' '.join(explanation['tokens']) or '(none)'}")
        if explanation["excluded"]:
            click.echo("\n".join(_exclusion_lines(explanation["excluded"])))


def _exclusion_lines(excluded: list[dict[str, str]]) -> list[str]:
    """The first few exclusions of each kind of reason, then how many more: a filter can leave out every
    other candidate of a 100k-event memory, and `--json` lists every one."""
    by_kind: dict[str, list[dict[str, str]]] = {}
    for item in excluded:
        by_kind.setdefault(item["reason"].split(" (", 1)[0], []).append(item)
    lines = []
    for kind, items in by_kind.items():
        lines += [f"  excluded {item['id']}: {item['reason']}" for item in items[:EXCLUSIONS_SHOWN]]
        if len(items) > EXCLUSIONS_SHOWN:
            lines.append(f"  … and {len(items) - EXCLUSIONS_SHOWN:,} more excluded: {kind} (--json lists them all)")
    return lines
