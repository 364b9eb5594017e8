"""The query workbench's data: run a search with every filter, `explain=True` and no side effect, and turn the
engine's explanation into rows (rank per ranking, score, weight, matched filters, BM25 term contributions per
field, excluded candidates and why). Qt-free; runs on the database worker.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from stratagate.cancellation import cancellable, checkpoint
from stratagate.errors import InvalidInputError
from stratagate.search.tokenize import search_tokens

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

Kind = Literal["events", "elements", "raw"]
KINDS: tuple[Kind, ...] = ("events", "elements", "raw")
EVENT_OPTIONS = ("limit", "temporal_intent", "participants", "event_type", "happened_from", "happened_to")
ELEMENT_OPTIONS = ("limit", "name", "type")


@dataclass(frozen=True)
class QuerySpec:
    kind: Kind
    query: str
    options: dict[str, Any] = field(default_factory=dict)
    """Keyword options of the search (only those given: empty values are left out)."""

    def describe(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.options.items())
        return f"{self.kind}: {self.query!r}" + (f" ({shown})" if shown else "")


@dataclass(frozen=True)
class Contribution:
    term: str
    field: str
    frequency: int
    score: float


@dataclass
class HitRow:
    rank: int
    id: str
    label: str
    score: float | None
    weight: float | None
    ranks: dict[str, int | None]
    matched_filters: list[str]
    bm25_score: float | None = None
    term_idf: dict[str, float] = field(default_factory=dict)
    length: int | None = None
    average_length: float | None = None
    contributions: list[Contribution] = field(default_factory=list)
    detail: str = ""
    """Raw-memory hits: the message and its neighbours; other hits: the card's summary or the fact."""


@dataclass
class WorkbenchResult:
    spec: QuerySpec
    mode: str
    tokens: list[str]
    ranking_names: list[str]
    hits: list[HitRow]
    excluded: list[tuple[str, str]]
    """(candidate id, why it is not a hit)."""


def build_spec(kind: Kind, query: str, **options: Any) -> QuerySpec:
    """A spec with the empty options dropped (an empty filter field means "no filter")."""
    allowed = {"events": EVENT_OPTIONS, "elements": ELEMENT_OPTIONS, "raw": ("limit",)}[kind]
    kept = {}
    for key, value in options.items():
        if key not in allowed:
            raise InvalidInputError(f"{kind} search has no option {key!r}")
        if value in (None, "", [], ()):
            continue
        kept[key] = value
    return QuerySpec(kind, query, kept)


def run_query(memory: StrataGate, spec: QuerySpec, cancelled: threading.Event | None = None) -> WorkbenchResult:
    """Run the search read-only (`record=False`) with explanations. Never writes.

    Once `cancelled` is set, the search stops at the engine's next checkpoint (between ranking steps, every
    document of an index being built) with `OperationCancelled`, keeping nothing half-built."""
    with nullcontext() if cancelled is None else cancellable(cancelled):
        return _run_query(memory, spec)


def _run_query(memory: StrataGate, spec: QuerySpec) -> WorkbenchResult:
    if spec.kind == "raw":
        return _raw(memory, spec)
    search = memory.search_events if spec.kind == "events" else memory.search_elements
    hits = search(spec.query, **spec.options, record=False, explain=True)
    explanation = hits.explanation
    names = list(explanation.rankings)
    filter_names = _filter_names(spec)
    rows = []
    for rank, hit in enumerate(hits, start=1):
        checkpoint()
        ranks = dict(hit.explanation.ranks) if hit.explanation else {}
        row = HitRow(
            rank=rank,
            id=hit.id,
            label=_label(spec.kind, hit),
            score=hit.score,
            weight=memory.event_weight(hit.id) if spec.kind == "events" else None,
            ranks=ranks,
            matched_filters=_matched_filters(explanation.mode, filter_names, ranks),
            detail=_detail(spec.kind, hit),
        )
        bm25 = hit.explanation.bm25 if hit.explanation else None
        if bm25 is not None:
            row.bm25_score = bm25.score
            row.term_idf = dict(bm25.term_idf)
            row.length, row.average_length = bm25.length, bm25.average_length
            row.contributions = [
                Contribution(c.term, c.field, c.frequency, c.score) for c in bm25.contributions
            ]
        rows.append(row)
    excluded = [(item.id, item.reason) for item in explanation.excluded]
    return WorkbenchResult(spec, explanation.mode, list(explanation.tokens), names, rows, excluded)


def _raw(memory: StrataGate, spec: QuerySpec) -> WorkbenchResult:
    hits = memory.search_raw_memory(spec.query, spec.options.get("limit", 6))
    rows = []
    for rank, hit in enumerate(hits, start=1):
        nearby = "\n".join(f"{message.role}: {message.content}" for message in hit.nearby)
        rows.append(
            HitRow(
                rank=rank,
                id=hit.message.id,
                label=f"{hit.block_id} turns {hit.turn_range[0]}–{hit.turn_range[1]}: {hit.message.content[:80]}",
                score=None,
                weight=None,
                ranks={},
                matched_filters=[],
                detail=nearby,
            )
        )
    return WorkbenchResult(spec, "any shared token (unranked)", search_tokens(spec.query), [], rows, [])


def _filter_names(spec: QuerySpec) -> list[str]:
    if spec.kind == "events":
        names = []
        if spec.options.get("participants"):
            names.append("participants")
        if spec.options.get("event_type"):
            names.append("eventType")
        if spec.options.get("happened_from") or spec.options.get("happened_to"):
            names.append("happened")
        return names
    return [name for name in ("name", "type") if spec.options.get(name)]


def _matched_filters(mode: str, filter_names: list[str], ranks: dict[str, int | None]) -> list[str]:
    """Hard filters: a hit matched them all. Soft filters: those whose structured ranking holds the hit."""
    if mode == "hard filters":
        return list(filter_names)
    return [name for name in filter_names if ranks.get(f"structured:{name}") is not None]


def _label(kind: Kind, hit: Any) -> str:
    if kind == "events":
        return hit.event.title
    value = hit.fact.value
    shown = ", ".join(value) if isinstance(value, list) else value
    return f"{hit.name} · {hit.fact.key} = {shown}"


def _detail(kind: Kind, hit: Any) -> str:
    if kind == "events":
        event = hit.event
        return f"{event.summary}\n\nstatus {event.status}, criticality {event.criticality}"
    fact = hit.fact
    valid = f"valid {fact.valid_from or '…'} → {fact.valid_to or '…'}"
    return f"{hit.type} {hit.name} ({hit.element_id})\nfact {fact.id}: {fact.key} [{fact.status}], {valid}"
