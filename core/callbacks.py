"""The model callbacks a memory can be given (summarizer, extractor, projector) and what they exchange.

Each callback may be a plain function or an `async` one. Results may be the dataclasses below or dicts with
the reference's camelCase keys (`l0Title`, `shouldExtract`, `events`, `changes`, …) or snake_case ones.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stratagate.blocks import BlockSummary
from stratagate.errors import InvalidInputError
from stratagate.model import Block, Element, Event, EventTemporal, Message
from stratagate.text import utf16_cut
from stratagate.validation import MAX_LIST_ITEMS

MAX_SUMMARY_TITLE = 500
MAX_SUMMARY_TEXT = 20_000
MAX_TAG = 200
MAX_KEYPOINT = 2_000


@dataclass(frozen=True)
class TimelineEntry:
    id: str
    title: str
    temporal: EventTemporal


@dataclass
class ExtractionRequest:
    """The block to extract events from, its neighbours in the same thread, and every known event."""

    previous: Block | None
    target: Block
    next: Block | None
    timeline_source: Callable[[], list[TimelineEntry]] = field(repr=False, default=list)
    _timeline: list[TimelineEntry] | None = field(default=None, init=False, repr=False)

    @property
    def timeline(self) -> list[TimelineEntry]:
        """Every event as (id, title, temporal), built on first use: most extractors never look at it, and it
        grows with the memory. Treat the entries as read-only."""
        if self._timeline is None:
            self._timeline = self.timeline_source()
        return self._timeline


@dataclass
class ExtractionResult:
    should_extract: bool
    events: list[Mapping[str, Any]]
    reason: str = ""


@dataclass
class ProjectionRequest:
    """A claimed projection job: its events, and (built on first use, since they grow with the memory) copies
    of every existing element or just their names and types."""

    job_id: str
    events: list[Event]
    elements_source: Callable[[], list[Element]] = field(repr=False, default=list)
    labels_source: Callable[[], list[tuple[str, str]]] | None = field(repr=False, default=None)
    _elements: list[Element] | None = field(default=None, init=False, repr=False)

    @property
    def existing_elements(self) -> list[Element]:
        if self._elements is None:
            self._elements = self.elements_source()
        return self._elements

    def element_labels(self) -> list[tuple[str, str]]:
        """(name, type) of every existing element."""
        if self.labels_source is not None:
            return self.labels_source()
        return [(element.name, element.type) for element in self.existing_elements]


@dataclass
class ProjectionResult:
    changes: list[Any]
    reason: str = ""


Summarizer = Callable[[list[Message]], Any]
Extractor = Callable[[ExtractionRequest], Any]
Projector = Callable[[ProjectionRequest], Any]


def call_model(callback: Callable[[Any], Any], argument: Any) -> Any:
    """Call a sync or async callback and return its result."""
    result = callback(argument)
    if inspect.isawaitable(result):
        async def wait() -> Any:
            return await result
        return asyncio.run(wait())
    return result


def _pick(data: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if name in data:
            return data[name]
    return default


def _text(value: Any, field_name: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"summarizer result {field_name} must be a string, got {type(value).__name__}")
    return utf16_cut(value, limit)


def _texts(value: Any, field_name: str, limit: int) -> list[str]:
    if not isinstance(value, list | tuple):
        raise InvalidInputError(f"summarizer result {field_name} must be a list of strings")
    return [_text(item, f"{field_name}[{index}]", limit) for index, item in enumerate(value[:MAX_LIST_ITEMS])]


def _fields_and_should_extract(result: Any, result_type: type, who: str) -> tuple[Mapping[str, Any], bool]:
    """A model callback's answer as a mapping (its dataclass or a dict), and its validated shouldExtract."""
    if isinstance(result, result_type):
        data: Mapping[str, Any] = result.__dict__
    elif isinstance(result, Mapping):
        data = result
    else:
        article = "an" if result_type.__name__[0] in "AEIOU" else "a"
        raise InvalidInputError(
            f"{who} must return {article} {result_type.__name__} or a dict, got {type(result).__name__}"
        )
    should_extract = _pick(data, "should_extract", "shouldExtract", default=False)
    if not isinstance(should_extract, bool):
        raise InvalidInputError(f"{who} result shouldExtract must be true or false, got {should_extract!r}")
    return data, should_extract


def coerce_summary(result: Any) -> BlockSummary:
    """Validate a summarizer's answer; over-long text is cut (a model should not block sealing forever)."""
    data, should_extract = _fields_and_should_extract(result, BlockSummary, "summarizer")
    return BlockSummary(
        title=_text(_pick(data, "title", "l0_title", "l0Title", default=""), "l0Title", MAX_SUMMARY_TITLE),
        tags=_texts(_pick(data, "tags", "l0_tags", "l0Tags", default=[]), "l0Tags", MAX_TAG),
        summary=_text(_pick(data, "summary", "l1_summary", "l1Summary", default=""), "l1Summary", MAX_SUMMARY_TEXT),
        keypoints=_texts(_pick(data, "keypoints", "l2_keypoints", "l2Keypoints", default=[]), "l2Keypoints", MAX_KEYPOINT),
        should_extract=should_extract,
    )


def coerce_extraction(result: Any) -> ExtractionResult:
    data, should_extract = _fields_and_should_extract(result, ExtractionResult, "extractor")
    events = _pick(data, "events", default=[]) or []
    if not isinstance(events, Sequence) or isinstance(events, str):
        raise InvalidInputError("extractor result events must be a list")
    reason = _pick(data, "reason", default="")
    return ExtractionResult(should_extract, list(events), reason if isinstance(reason, str) else "")


def coerce_projection(result: Any) -> ProjectionResult:
    if isinstance(result, ProjectionResult):
        return result
    if not isinstance(result, Mapping):
        raise InvalidInputError(f"projector must return a ProjectionResult or a dict, got {type(result).__name__}")
    changes = result.get("changes")
    reason = result.get("reason")
    return ProjectionResult(changes if isinstance(changes, list) else [], reason if isinstance(reason, str) else "")


def error_message(error: BaseException) -> str:
    """The reference's errorMessage: a string `full_message`, else the message, else the type."""
    full = getattr(error, "full_message", None)
    if isinstance(full, str):
        return full
    return str(error) or type(error).__name__
