"""`StrataGate`: one namespace of agent memory (blocks, events, elements, jobs, receipts) over a storage backend.

Create one with `stratagate.open(database, namespace)` (SQLite file or SQLAlchemy URL), `stratagate.in_memory()`,
or `StrataGate.open_with_backend(backend, namespace)`. Every mutation is one backend commit with the revision
check; in-memory state changes only after that commit succeeded. Reads (listing, context, search without
`record=True`) never write.
"""

from __future__ import annotations

import copy
import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from stratagate import events as event_ops
from stratagate.assessment import RetrievalAssessment, normalize_retrieval_assessment
from stratagate.blocks import (
    BLOCK_DECAY_LAMBDA,
    BLOCK_MAX_LEVEL,
    DEFAULT_BLOCK_TURN_SIZE,
    BlockSpan,
    BlockSummary,
    block_level_label,
    decayed_block_level,
    default_summary,
    normalize_block_level,
    render_block,
    spans_now,
)
from stratagate.callbacks import (
    Extractor,
    Projector,
    Summarizer,
    call_model,
    coerce_summary,
)
from stratagate.condense import condense_transcript, format_readable_transcript
from stratagate.derivation import JOB_LEASE, Derivation, ProjectionClaim, WorkResult
from stratagate.elements import element_view_at
from stratagate.errors import (
    InvalidInputError,
    StorageConflictError,
    StrataGateError,
    UnknownIdError,
)
from stratagate.model import (
    Block,
    BlockContextEntry,
    Element,
    ElementProjectionJob,
    Event,
    ExtractionJob,
    IngestionReceipt,
    Message,
    ModelResponse,
    ToolTrace,
    UsageReceipt,
)
from stratagate.raw_search import MemoryTurnSearch, RankedRawHit
from stratagate.retrieval import ElementHit, EventHit, RawHit, Retrieval, SearchHits
from stratagate.snapshot import DEFAULT_BLOCK_DECAY_LAMBDA, MODEL_RESPONSE_HISTORY_LIMIT, SCHEMA_VERSION
from stratagate.state import MemoryState, Mutation
from stratagate.storage.backend import SECTION_KEYS, StorageBackend
from stratagate.storage.memory_backend import MemoryBackend
from stratagate.store import ModelHooks, NamespaceStore
from stratagate.timeutil import to_utc8_iso
from stratagate.validation import (
    MAX_MESSAGE_LENGTH,
    optional_id,
    require_bool,
    require_choice,
    require_id,
    require_number,
    require_str,
    unique_in_order,
)
from stratagate.weights import BASE_LAMBDA, weight_at

if TYPE_CHECKING:
    from stratagate.search.stored import StoredEventIndex
    from stratagate.search.stored_facts import StoredFactIndex

_CONSTRUCT = object()


@dataclass
class TurnResult:
    """What `append_turn` did. The turn is stored whenever a result is returned (unless `duplicate`)."""

    sealed_block: Block | None = None
    extracted_events: list[Event] = field(default_factory=list)
    projected_elements: list[Element] = field(default_factory=list)
    duplicate: bool = False
    """The receipt id was already stored: nothing was written."""
    deferred: bool = False
    """The turn is stored, but another writer committed before this call's seal, extraction or projection
    did: that work was left where the next `append_turn` or `resume_pending_work` finds it."""


@dataclass
class EventChange:
    """A curation change: the card before and after (what an undo needs)."""

    before: Event
    after: Event


CURATION_ACTIONS = ("pin", "unpin", "forget", "archive", "restore", "supersede", "unsupersede")


@dataclass(frozen=True)
class EventCuration:
    """One change of a batch (`StrataGate.curate_events`): `action` (one of `CURATION_ACTIONS`) on an event;
    `replacement_id` names the superseding event of a supersede."""

    action: str
    event_id: str
    replacement_id: str | None = None


@dataclass(frozen=True)
class BlockPointer:
    """A block's decay pointer: the fields a lift writes, and what undoing the lift puts back."""

    current_level: int
    anchor_level: int
    anchor_block_position: int
    last_lifted_at: str | None
    last_lifted_by: str | None

    @classmethod
    def of(cls, block: Block) -> BlockPointer:
        return cls(block.pointer_current_level, block.pointer_anchor_level, block.pointer_anchor_block_position,
                   block.last_lifted_at, block.last_lifted_by)

    def to_json(self) -> dict[str, Any]:
        return {"pointerCurrentLevel": self.current_level, "pointerAnchorLevel": self.anchor_level,
                "pointerAnchorBlockPosition": self.anchor_block_position, "lastLiftedAt": self.last_lifted_at,
                "lastLiftedBy": self.last_lifted_by}


@dataclass
class BlockLift:
    """A pointer change: the pointer before and after (what an undo needs) and the block as it shows now."""

    before: BlockPointer
    after: BlockPointer
    entry: BlockContextEntry


def _default_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4()}"


def _copied(messages: list[Message]) -> list[Message]:
    """Copies of messages for a block, as `copy.deepcopy` makes them: only tool calls are mutable, and copying
    the rest field by field (or with `dataclasses.replace`) cost a seal more than writing the block."""
    return [Message(message.id, message.role, message.content, message.created_at, message.thread_id,
                    None if message.tool_calls is None else copy.deepcopy(message.tool_calls))
            for message in messages]


def _tool_traces(value: Any, field_name: str) -> list[ToolTrace] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InvalidInputError(f"{field_name} must be a list of tool calls")
    traces = []
    for index, call in enumerate(value):
        if isinstance(call, ToolTrace):
            traces.append(ToolTrace(call.name, copy.deepcopy(call.arguments), copy.deepcopy(call.result),
                                    call.null_fields))
        elif isinstance(call, Mapping) and isinstance(call.get("name"), str):
            try:
                json.dumps([call.get("arguments"), call.get("result")])
            except (TypeError, ValueError) as error:
                raise InvalidInputError(f"{field_name}[{index}] must hold JSON values: {error}") from error
            traces.append(ToolTrace.from_record(call))
        else:
            raise InvalidInputError(f"{field_name}[{index}] must be a ToolTrace or a dict with a string name")
    return traces


class StrataGate:
    """A memory namespace. Use `stratagate.open`, `stratagate.in_memory` or `StrataGate.open_with_backend`."""

    def __init__(self, token: object = None, **_: Any):
        if token is not _CONSTRUCT:
            raise TypeError("Use stratagate.open() for a database or stratagate.in_memory() for explicit ephemeral storage")

    # construction -------------------------------------------------------------------------------------------
    @classmethod
    def open_with_backend(
        cls,
        backend: StorageBackend,
        namespace: str,
        *,
        block_turn_size: int | None = None,
        block_decay_lambda: float | None = None,
        summarizer: Summarizer | None = None,
        extractor: Extractor | None = None,
        projector: Projector | None = None,
        now: Callable[[], Any] | None = None,
        id_factory: Callable[[str], str] | None = None,
        element_id_factory: Callable[[str], str] | None = None,
        ephemeral: bool = False,
    ) -> StrataGate:
        namespace = require_str(namespace, "namespace", max_length=512).strip()
        if not namespace:
            raise InvalidInputError("Storage namespace must not be empty")
        turn_size = None if block_turn_size is None else max(1, int(require_number(block_turn_size, "block_turn_size")))
        lam = None if block_decay_lambda is None else require_number(block_decay_lambda, "block_decay_lambda")
        if lam is not None and lam < 0:
            raise InvalidInputError("block_decay_lambda must be a non-negative finite number")
        for name, callback in (("summarizer", summarizer), ("extractor", extractor), ("projector", projector),
                               ("now", now), ("id_factory", id_factory), ("element_id_factory", element_id_factory)):
            if callback is not None and not callable(callback):
                raise InvalidInputError(f"{name} must be callable")

        self = cls(_CONSTRUCT)
        self._backend = backend
        self._ephemeral = ephemeral
        self._hooks = ModelHooks(summarizer, extractor, projector)
        clock = now or (lambda: datetime.now(UTC))
        self._retrieval: Retrieval | None = None
        self._turn_search = MemoryTurnSearch(self)

        space = backend.load_space(namespace)
        if space is None:
            if backend.read_only:
                raise StrataGateError(f"{backend.location}: namespace {namespace!r} does not exist")
            stamp = to_utc8_iso(clock())
            backend.create_space(namespace, {
                "schemaVersion": SCHEMA_VERSION, "currentTurn": 0,
                "blockTurnSize": turn_size or DEFAULT_BLOCK_TURN_SIZE,
                "blockDecayLambda": DEFAULT_BLOCK_DECAY_LAMBDA if lam is None else lam,
                "createdAt": stamp, "updatedAt": stamp,
            })
            space = backend.load_space(namespace)
            assert space is not None
        self._state = MemoryState(backend, namespace, space)
        self._store = NamespaceStore(backend, self._state, now=clock, new_id=id_factory or _default_id,
                                     new_element_id=element_id_factory or _default_id)
        self._derivation = Derivation(self._store, self._hooks)
        self._state.listeners.append(self._on_applied)
        reconfigure = {}
        if turn_size is not None and turn_size != self._state.block_turn_size:
            reconfigure["blockTurnSize"] = turn_size
        if lam is not None and lam != self._state.block_decay_lambda:
            reconfigure["blockDecayLambda"] = lam
        if reconfigure:
            self._require_writable()
            tx = self._store.mutation()
            for key, value in reconfigure.items():
                tx.set_space(key, value)
            self._commit(tx)
        return self

    # properties ---------------------------------------------------------------------------------------------
    @property
    def namespace(self) -> str:
        return self._state.namespace

    @property
    def backend(self) -> StorageBackend:
        return self._backend

    @property
    def current_turn(self) -> int:
        return self._state.current_turn

    turn = current_turn

    @property
    def revision(self) -> int:
        return self._state.revision

    storage_revision = revision

    @property
    def block_turn_size(self) -> int:
        return self._state.block_turn_size

    @property
    def block_decay_lambda(self) -> float:
        return self._state.block_decay_lambda

    @property
    def read_only(self) -> bool:
        return bool(self._backend.read_only)

    @property
    def retrieval(self) -> Retrieval:
        """The search orchestration (indexes built lazily on first search)."""
        if self._retrieval is None:
            self._retrieval = Retrieval(self)
        return self._retrieval

    def close(self) -> None:
        self._backend.close()

    def __enter__(self) -> StrataGate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(self) -> None:
        """Drop cached sections and re-read the space (to see another writer's commits)."""
        self._state.reload()

    # internals ----------------------------------------------------------------------------------------------
    def _stamp(self) -> str:
        return self._store.stamp()

    def _require_writable(self) -> None:
        self._store.require_writable()

    def _commit(self, tx: Mutation) -> None:
        self._store.commit(tx)

    def _on_applied(self, section: str, keys: list[str]) -> None:
        self._derivation.pending.on_applied(section, keys)
        if self._retrieval is not None:
            self._retrieval.on_applied(section, keys)
        self._turn_search.on_applied(section, keys)

    def _section(self, name: str) -> dict[str, Any]:
        return self._store.section(name)

    # reads --------------------------------------------------------------------------------------------------
    def list_blocks(self, thread_id: str | None = None) -> list[Block]:
        blocks = list(self._section("blocks").values())
        return blocks if thread_id is None else [block for block in blocks if block.thread_id == thread_id]

    def list_open_tail(self, thread_id: str | None = None) -> list[Message]:
        tail = list(self._section("openTail").values())
        return tail if thread_id is None else [message for message in tail if message.thread_id == thread_id]

    def list_events(self) -> list[Event]:
        return list(self._section("events").values())

    def list_elements(self) -> list[Element]:
        return list(self._section("elements").values())

    def list_extraction_jobs(self) -> list[ExtractionJob]:
        return list(self._section("extractionJobs").values())

    def list_element_projection_jobs(self) -> list[ElementProjectionJob]:
        return list(self._section("elementProjectionJobs").values())

    def list_usage_receipts(self) -> list[UsageReceipt]:
        return list(self._section("usageReceipts").values())

    def list_ingestion_receipts(self) -> list[IngestionReceipt]:
        return list(self._section("ingestionReceipts").values())

    def list_successful_model_responses(self) -> list[ModelResponse]:
        return list(self._section("successfulModelResponses").values())

    def thread_ids(self) -> list[str | None]:
        """Every thread with blocks or open-tail messages, in first-seen order (None = unthreaded), read by the
        backend without loading blocks or messages."""
        return self._backend.thread_ids(self.namespace)

    def block_spans(self, thread_id: str | None = None) -> list[BlockSpan]:
        """Every block's (or one thread's) place, current level and message count, in sequence order, read
        without any block's text: what a timeline is drawn from (`get_blocks` then loads the few shown)."""
        return spans_now(self._backend.block_spans(self.namespace, thread_id), self.block_decay_lambda)

    def block_ids(self, where: Mapping[str, Any] | None = None) -> list[str]:
        """Block ids in sequence order, filtered by the backend (threadId, messageId: the block holding that
        raw message, text) without loading the blocks."""
        return self._backend.query_keys(self.namespace, "blocks", dict(where) if where else None)

    def get_blocks(self, ids: Sequence[str]) -> list[Block]:
        """The blocks for these ids (from memory when loaded, else fetched), in the order asked."""
        if self._state.is_loaded("blocks"):
            blocks = self._section("blocks")
            return [blocks[block_id] for block_id in ids if block_id in blocks]
        return [Block.from_record(record) for record in self._backend.fetch(self.namespace, "blocks", list(ids))]

    def get_block(self, block_id: str) -> Block:
        block = self._section("blocks").get(block_id)
        if block is None:
            raise UnknownIdError(f"Unknown block: {block_id}")
        return block

    def get_event(self, event_id: str) -> Event:
        event = self._section("events").get(event_id)
        if event is None:
            raise UnknownIdError(f"Unknown event: {event_id}")
        return event

    def get_element(self, element_id: str) -> Element:
        element = self._section("elements").get(element_id)
        if element is None:
            raise UnknownIdError(f"Unknown element: {element_id}")
        return element

    def event_ids(self, where: Mapping[str, Any] | None = None) -> list[str]:
        """Event ids in section order, filtered by the backend (status, eventType, criticality, participant,
        threadId, text, idContains) without loading the events."""
        return self._backend.query_keys(self.namespace, "events", dict(where) if where else None)

    def event_filter_values(self, name: str) -> list[str]:
        """The distinct values of the `event_ids` filter `eventType` or `participant` in this namespace,
        sorted: the suggestions of a filter box."""
        return self._backend.filter_values(self.namespace, "events", name)

    def event_key_list(self, where: Mapping[str, Any] | None = None, order: str | None = None,
                       descending: bool = False, limit: int | None = None) -> Sequence[str]:
        """`event_ids` for lists of a million events: held compactly on SQL stores (`PackedKeys`), in an order
        by a shown value (`stratagate.storage.event_order.EVENT_ORDERS`; the weight at the current turn)
        sorted by the database, the first `limit` only if given (a list's first page). In-memory stores list
        the ids and cannot order them."""
        from stratagate.storage.event_order import EventOrder

        ordered = None if order is None else EventOrder(order, descending, self.current_turn, BASE_LAMBDA)
        return self._backend.packed_keys(self.namespace, "events", dict(where) if where else None, ordered, limit)

    def get_events(self, ids: Sequence[str]) -> list[Event]:
        """The events for these ids (from memory when loaded, else fetched), in the order asked."""
        if self._state.is_loaded("events"):
            events = self._section("events")
            return [events[event_id] for event_id in ids if event_id in events]
        return [Event.from_record(record) for record in self._backend.fetch(self.namespace, "events", list(ids))]

    def element_ids(self, where: Mapping[str, Any] | None = None) -> list[str]:
        """Element ids in section order, filtered by the backend (type, text) without loading the elements."""
        return self._backend.query_keys(self.namespace, "elements", dict(where) if where else None)

    def event_search_index(self, progress: Callable[[int, int], None] | None = None) -> StoredEventIndex | None:
        """The storage's persistent event search index (None for in-memory storage), built once if missing;
        `progress(done, total)` reports that build."""
        return self._backend.event_search_index(self.namespace, progress)

    def element_search_index(self, progress: Callable[[int, int], None] | None = None,
                             ) -> StoredFactIndex | None:
        """The storage's persistent element search index (None for in-memory storage), built once if missing;
        `progress(facts done, total)` reports that build."""
        return self._backend.element_search_index(self.namespace, progress)

    def get_elements(self, ids: Sequence[str]) -> list[Element]:
        """The elements for these ids (from memory when loaded, else fetched), in the order asked."""
        if self._state.is_loaded("elements"):
            elements = self._section("elements")
            return [elements[element_id] for element_id in ids if element_id in elements]
        return [Element.from_record(record) for record in self._backend.fetch(self.namespace, "elements", list(ids))]

    def event_weight(self, event_id: str, at_turn: int | None = None) -> float:
        event = self.get_event(event_id)
        return weight_at(event.weight, event.status, self.current_turn if at_turn is None else at_turn)

    def element_weight(self, element_id: str, at_turn: int | None = None) -> float:
        element = self.get_element(element_id)
        return weight_at(element.weight, "active", self.current_turn if at_turn is None else at_turn)

    def has_ingestion_receipt(self, receipt_id: str) -> bool:
        return isinstance(receipt_id, str) and receipt_id.strip() in self._section("ingestionReceipts")

    def export_snapshot(self) -> dict[str, Any]:
        """The whole namespace as a v7 snapshot dict (camelCase), independent of the engine's objects."""
        snapshot: dict[str, Any] = {
            "schemaVersion": SCHEMA_VERSION, "currentTurn": self.current_turn, "blockTurnSize": self.block_turn_size,
            "blockDecayLambda": self.block_decay_lambda,
        }
        for section in SECTION_KEYS:
            snapshot[section] = [item.to_record() for item in self._section(section).values()]
        return snapshot

    # blocks -------------------------------------------------------------------------------------------------
    def _block_position(self, block: Block) -> tuple[int, int]:
        """(position, latest position) of a block in its thread."""
        order = self._store.block_order()
        return order.index[block.id] + 1, len(order.threads[block.thread_id])

    def block_level(self, block: Block) -> int:
        """The level a block shows now (v7: decayed by blocks sealed in its thread since its anchor)."""
        _position, latest = self._block_position(block)
        return decayed_block_level(block.pointer_anchor_level, block.pointer_anchor_block_position, latest,
                                   self.block_decay_lambda)

    def _context_entry(self, block: Block, level: int) -> BlockContextEntry:
        position, latest = self._block_position(block)
        return BlockContextEntry(block.id, block.thread_id, block.turn_range, max(0, latest - position), level,
                                 block_level_label(level), render_block(block, level))

    def get_block_context(self, thread_id: str | None = None) -> list[BlockContextEntry]:
        """Every block (or one thread's) rendered at its current level. Pure: nothing is written."""
        return [self._context_entry(block, self.block_level(block)) for block in
                sorted(self.list_blocks(thread_id), key=lambda b: b.sequence)]

    def expand_block(self, block_id: str, target_level: object = "next", source: str = "agent", *,
                     journal_entry: Mapping[str, Any] | None = None) -> BlockContextEntry:
        """Lift (or lower) a block to a level; it then decays again from the thread's latest position."""
        return self.lift_block(block_id, target_level, source, journal_entry=journal_entry).entry

    def lift_block(self, block_id: str, target_level: object = "next", source: str = "agent", *,
                   journal_entry: Mapping[str, Any] | None = None) -> BlockLift:
        """`expand_block`, returning the pointer before and after as well (`set_block_pointer(before)` undoes it)."""
        self._require_writable()
        return self.set_block_pointer(block_id, self.lift_pointer(block_id, target_level, source),
                                      journal_entry=journal_entry)

    def lift_pointer(self, block_id: str, target_level: object = "next", source: str = "agent") -> BlockPointer:
        """The pointer a lift would write now (nothing is written): anchored at the level and at the thread's
        latest position, stamped now and by `source`."""
        require_choice(source, "source", ("user", "agent"))
        block = self.get_block(block_id)
        level = normalize_block_level(target_level, self.block_level(block))
        _position, latest = self._block_position(block)
        return BlockPointer(level, level, latest, self._stamp(), source)

    def set_block_pointer(self, block_id: str, pointer: BlockPointer, *,
                          journal_entry: Mapping[str, Any] | None = None) -> BlockLift:
        """Write a block's pointer exactly (a lift, or the undo or redo of one): one commit with the revision
        check, and the journal entry in the same transaction."""
        self._require_writable()
        block = self.get_block(block_id)
        if not isinstance(pointer, BlockPointer):
            raise InvalidInputError(f"pointer must be a BlockPointer, got {type(pointer).__name__}")
        for name in ("current_level", "anchor_level"):
            value = getattr(pointer, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= BLOCK_MAX_LEVEL:
                raise InvalidInputError(f"pointer.{name} must be a level 0-{BLOCK_MAX_LEVEL}, got {value!r}")
        position = pointer.anchor_block_position
        if isinstance(position, bool) or not isinstance(position, int) or position < 1:
            raise InvalidInputError(f"pointer.anchor_block_position must be a position from 1, got {position!r}")
        if pointer.last_lifted_at is not None:
            require_str(pointer.last_lifted_at, "pointer.last_lifted_at")
        if pointer.last_lifted_by is not None:
            require_choice(pointer.last_lifted_by, "pointer.last_lifted_by", ("user", "agent"))
        before = BlockPointer.of(block)
        tx = self._store.mutation()
        lifted = tx.edit("blocks", block_id)
        lifted.pointer_current_level, lifted.pointer_anchor_level = pointer.current_level, pointer.anchor_level
        lifted.pointer_anchor_block_position = position
        lifted.last_lifted_at, lifted.last_lifted_by = pointer.last_lifted_at, pointer.last_lifted_by
        self._journal(tx, journal_entry)
        self._commit(tx)
        stored = self.get_block(block_id)
        return BlockLift(before, BlockPointer.of(stored), self._context_entry(stored, self.block_level(stored)))

    def set_block_decay_lambda(self, value: float) -> None:
        lam = require_number(value, "block_decay_lambda")
        if lam < 0:
            raise InvalidInputError("block_decay_lambda must be a non-negative finite number")
        if lam == self.block_decay_lambda:
            return
        tx = self._store.mutation()
        tx.set_space("blockDecayLambda", lam)
        self._commit(tx)

    # turns and sealing ---------------------------------------------------------------------------------------
    def append_turn(
        self,
        user: str,
        assistant: str,
        *,
        created_at: Any = None,
        thread_id: str | None = None,
        user_tool_calls: Iterable[Any] | None = None,
        assistant_tool_calls: Iterable[Any] | None = None,
        receipt_id: str | None = None,
        defer_processing: bool = False,
    ) -> TurnResult:
        """Store one user+assistant turn; seal a block when the thread's tail reaches `block_turn_size` turns,
        then run one extraction and one projection step. A repeated `receipt_id` is ignored (nothing written).
        Without a summarizer the block is sealed in the turn's own commit (no model call to wait for).

        - `StorageConflictError` (or its `StorageBusyError`) means nothing was stored: retry the call.
        - A returned result means the turn is stored. When another writer committed in between, the derived
          work is not done and the result says `deferred`: do not retry, `resume_pending_work` (or the next
          `append_turn`) does it.
        - Any other error raised after the turn was stored (a model callback's) carries a note saying so.
        - A writer that lost a race runs its next append under the write lock, so it cannot starve.
        """
        self._require_writable()
        user = require_str(user, "user", max_length=MAX_MESSAGE_LENGTH)
        assistant = require_str(assistant, "assistant", max_length=MAX_MESSAGE_LENGTH)
        receipt_id = optional_id(receipt_id, "receipt_id")
        thread_id = optional_id(thread_id, "thread_id")
        user_calls = _tool_traces(user_tool_calls, "user_tool_calls")
        assistant_calls = _tool_traces(assistant_tool_calls, "assistant_tool_calls")
        stamp = to_utc8_iso(self._store.now() if created_at is None else created_at)
        with self._store.writing():
            if receipt_id is not None and self._has_receipt(receipt_id):
                return TurnResult(duplicate=True)
            tx = self._store.mutation()
            tx.current_turn = self._state.current_turn + 1
            tx.put("openTail", Message(self._store.new_id("msg"), "user", user, stamp, thread_id, user_calls))
            tx.put("openTail", Message(self._store.new_id("msg"), "assistant", assistant, stamp, thread_id,
                                       assistant_calls))
            if receipt_id is not None:
                tx.put("ingestionReceipts", IngestionReceipt(receipt_id, stamp))
            full = None if defer_processing or self._hooks.summarizer is not None else \
                self._pending_block_messages(thread_id, tx.values("openTail"))
            sealed = None if full is None else self._put_block(tx, thread_id, _copied(full),
                                                               default_summary(full))
            self._commit(tx)
        if defer_processing:
            return TurnResult()
        try:
            return self._process_turn(thread_id, self._stored_block(sealed))
        except Exception as error:
            error.add_note(f"The turn was stored ({self.namespace}, turn {tx.current_turn}); "
                           "resume_pending_work() does the derived work that failed.")
            raise

    def _has_receipt(self, receipt_id: str) -> bool:
        """Whether an ingestion receipt is stored, without loading every receipt. Called only by `append_turn`."""
        if self._state.is_loaded("ingestionReceipts"):
            return receipt_id in self._section("ingestionReceipts")
        return bool(self._backend.fetch(self.namespace, "ingestionReceipts", [receipt_id]))

    def _process_turn(self, thread_id: str | None, sealed: Block | None) -> TurnResult:
        """The derived work after a stored turn: seal the thread's full block (unless the turn's commit did:
        `sealed`), one extraction, one projection. Called only by `append_turn`."""
        result = TurnResult(sealed)
        try:
            if sealed is None and self._pending_block_messages(thread_id) is not None:
                result.sealed_block = self._seal(thread_id)
                if result.sealed_block is not None:
                    result.extracted_events = self._derivation.extract_step()
            result.projected_elements = self._derivation.project_step()
        except StorageConflictError:
            result.deferred = True
        return result

    def _pending_block_messages(self, thread_id: str | None,
                                tail: Iterable[Message] | None = None) -> list[Message] | None:
        """The messages of the thread's next block, or None while it has fewer than `block_turn_size` turns
        (in the stored open tail, or in `tail`: a mutation's view of it)."""
        size = self.block_turn_size
        users = 0
        pending: list[Message] = []
        for message in self._section("openTail").values() if tail is None else tail:
            if message.thread_id != thread_id:
                continue
            if message.role == "user":
                if users == size:
                    return pending
                users += 1
            pending.append(message)
        return pending if users == size else None

    def _seal(self, thread_id: str | None) -> Block | None:
        """Seal the thread's next full block: summarize it (the model call), then commit it, retrying once
        under the write lock if another writer committed meanwhile. None when another writer sealed these
        messages first."""
        raw = self._pending_block_messages(thread_id)
        if raw is None:
            raise StrataGateError("Open tail does not contain enough turns to seal a block")
        raw_ids = [message.id for message in raw]
        messages = _copied(raw)
        summary = default_summary(messages) if self._hooks.summarizer is None else coerce_summary(
            call_model(self._hooks.summarizer, copy.deepcopy(messages)))

        def commit() -> Block | None:
            current = self._pending_block_messages(thread_id)
            if current is None or [message.id for message in current] != raw_ids:
                if not set(raw_ids) & set(self._section("openTail")):
                    return None  # another writer sealed them meanwhile
                raise StrataGateError("Open tail changed while the block summary was being prepared")
            return self._commit_block(thread_id, messages, summary)

        return self._store.retrying(commit)

    def _commit_block(self, thread_id: str | None, messages: list[Message], summary: BlockSummary) -> Block:
        """Commit the block of these (pending) messages. Called only by `_seal`, on current state."""
        tx = self._store.mutation()
        block = self._put_block(tx, thread_id, messages, summary)
        self._commit(tx)
        return self._stored_block(block)

    def _put_block(self, tx: Mutation, thread_id: str | None, messages: list[Message],
                   summary: BlockSummary) -> Block:
        """Add the block of these pending messages to `tx` and take them out of the open tail.

        Where the block goes (its thread's count and last end turn, the highest sequence) is read from the
        backend's indexes: sealing does not load the namespace's blocks."""
        in_thread, last_end_turn, highest_sequence = self._backend.block_tally(self.namespace, thread_id)
        start = 1 if last_end_turn is None else last_end_turn + 1
        block = Block(
            id=self._store.new_id("blk"), thread_id=thread_id, sequence=highest_sequence + 1, start_turn=start,
            end_turn=start + self.block_turn_size - 1, created_at=messages[-1].created_at,
            should_extract=summary.should_extract, l0_title=summary.title, l0_tags=summary.tags,
            l1_summary=summary.summary, l2_keypoints=summary.keypoints,
            l3_condensed=condense_transcript(messages), l4_readable=format_readable_transcript(messages),
            l5_raw=messages, pointer_current_level=5, pointer_anchor_level=5,
            pointer_anchor_block_position=in_thread + 1,
        )
        tx.put("blocks", block)
        for message in messages:
            tx.delete("openTail", message.id)
        return block

    def _stored_block(self, block: Block | None) -> Block | None:
        """The committed block as the memory holds it (the block itself while blocks are not loaded)."""
        if block is None or not self._state.is_loaded("blocks"):
            return block
        return self._section("blocks")[block.id]

    def _seal_next(self) -> Block | None:
        """Seal the first thread whose open tail holds a full block (None when none does)."""
        while True:
            counts: dict[str | None, int] = {}
            for message in self._section("openTail").values():
                if message.role == "user":
                    counts[message.thread_id] = counts.get(message.thread_id, 0) + 1
                    if counts[message.thread_id] >= self.block_turn_size:
                        full = message.thread_id
                        break
            else:
                return None
            sealed = self._seal(full)
            if sealed is not None:
                return sealed

    # derived work (extraction and projection jobs) ---------------------------------------------------------
    def claim_next_element_projection(self) -> ProjectionClaim | None:
        """Claim the first pending or failed projection job (for a projector run outside the engine)."""
        return self._derivation.claim_next_element_projection()

    def complete_element_projection(self, job_id: str, result: Any) -> list[Element]:
        return self._derivation.complete_element_projection(job_id, result)

    def fail_element_projection(self, job_id: str, error: Any) -> None:
        self._derivation.fail_element_projection(job_id, error)

    def recover_interrupted_jobs(self, lease: timedelta = JOB_LEASE) -> int:
        return self._derivation.recover_interrupted_jobs(lease)

    def resume_pending_work(self, *, retry_skipped: bool = False, job_lease: timedelta = JOB_LEASE) -> WorkResult:
        """Seal every full tail, run every eligible extraction and projection (after recovering jobs whose
        lease expired). Errors abort the resume and propagate."""
        return self._derivation.resume_pending_work(self._seal_next, retry_skipped=retry_skipped, job_lease=job_lease)

    # events -------------------------------------------------------------------------------------------------
    def _journal(self, tx: Mutation, entry: Mapping[str, Any] | None) -> None:
        if entry is not None:
            if not isinstance(entry, Mapping):
                raise InvalidInputError("journal_entry must be a dict")
            tx.journal.append(dict(entry))

    def add_event(
        self,
        title: str,
        summary: str = "",
        *,
        source_block_id: str,
        narrative: str = "",
        tags: Sequence[str] = (),
        quotes: Sequence[str] = (),
        source_message_ids: Sequence[str] = (),
        temporal: Any = None,
        scope: str = "user",
        criticality: str = "routine",
        confidence: float | None = None,
        id: str | None = None,
        supersedes: Sequence[str] = (),
        journal_entry: Mapping[str, Any] | None = None,
    ) -> Event:
        """Add an event card against a sealed block; `supersedes` (or temporal.supersedesEventIds) replaces older
        events. Queues one projection job. Unknown ids in `supersedes` are an error."""
        self._require_writable()
        data = event_ops.event_input({
            "title": title, "summary": summary, "narrative": narrative, "tags": list(tags), "quotes": list(quotes),
            "source_message_ids": list(source_message_ids), "source_block_id": source_block_id, "temporal": temporal,
            "scope": scope, "criticality": criticality, "confidence": confidence, "id": id,
        })
        if isinstance(supersedes, str):
            raise InvalidInputError("supersedes must be a list of event ids")
        extra = [require_id(old, f"supersedes[{index}]") for index, old in enumerate(supersedes)]
        if extra:
            if data.temporal is None:
                data.temporal = event_ops.coerce_temporal({"mentionedAt": self._stamp()})
            data.temporal.supersedes_event_ids = unique_in_order([*(data.temporal.supersedes_event_ids or []), *extra])
        now = self._stamp()
        tx = self._store.mutation()
        event = event_ops.add_event(tx, data, event_id=data.id or self._store.new_id("evt"),
                                    source_block_id=data.source_block_id or "", now=now, strict_supersedes=bool(extra))
        self._derivation.queue_projection(tx, [event.id], now)
        self._journal(tx, journal_entry)
        self._commit(tx)
        return self.get_event(event.id)

    def curate_events(self, changes: Sequence[EventCuration], *,
                      journal_entries: Sequence[Mapping[str, Any]] = (),
                      restore_stamps_from: Iterable[Event] = ()) -> list[EventChange]:
        """Apply several curation changes in one commit: one revision, every journal entry in the same
        transaction. All or nothing: a bad change or a conflict with another writer writes none of them.
        Changes apply in order (an event may take several); returns one `EventChange` per event, first-seen order.

        An undo passes `restore_stamps_from`: the events as they were before the action it undoes (the
        `EventChange.before` records). A changed event that ends exactly as it was then gets that `updatedAt`
        back, so doing and undoing leaves its row byte-identical; an event that differs in anything else (a
        change by another writer, which the undo keeps) keeps the new stamp, because it did change."""
        self._require_writable()
        if isinstance(changes, EventCuration) or not isinstance(changes, Sequence):
            raise InvalidInputError("changes must be a list of EventCuration")
        if isinstance(journal_entries, Mapping) or not isinstance(journal_entries, Sequence):
            raise InvalidInputError("journal_entries must be a list of dicts")
        befores: dict[str, Event] = {}
        for index, change in enumerate(changes):
            if not isinstance(change, EventCuration):
                raise InvalidInputError(f"changes[{index}] must be an EventCuration, got {type(change).__name__}")
            require_choice(change.action, f"changes[{index}].action", CURATION_ACTIONS)
            if change.event_id not in befores:
                befores[change.event_id] = copy.deepcopy(self.get_event(change.event_id))
            if change.action == "supersede":
                self.get_event(require_id(change.replacement_id, f"changes[{index}].replacement_id"))
                if change.replacement_id == change.event_id:
                    raise InvalidInputError(f"An event cannot supersede itself: {change.event_id}")
        now = self._stamp()
        tx = self._store.mutation()
        for change in changes:
            _apply_curation(tx, change, now)
        for original in restore_stamps_from:
            _restore_stamp(tx, original, befores)
        for entry in journal_entries:
            self._journal(tx, entry)
        self._commit(tx)
        return [EventChange(before, self.get_event(event_id)) for event_id, before in befores.items()]

    def _curate(self, change: EventCuration, journal_entry: Mapping[str, Any] | None) -> EventChange:
        (result,) = self.curate_events([change], journal_entries=[] if journal_entry is None else [journal_entry])
        return result

    def pin_event(self, event_id: str, pinned: bool = True, *,
                  journal_entry: Mapping[str, Any] | None = None) -> EventChange:
        require_bool(pinned, "pinned")
        return self._curate(EventCuration("pin" if pinned else "unpin", event_id), journal_entry)

    def unpin_event(self, event_id: str, *, journal_entry: Mapping[str, Any] | None = None) -> EventChange:
        return self.pin_event(event_id, False, journal_entry=journal_entry)

    def forget_event(self, event_id: str, *, journal_entry: Mapping[str, Any] | None = None) -> EventChange:
        """Hide an event from search and give it weight 0; reversible with `restore_event`."""
        return self._curate(EventCuration("forget", event_id), journal_entry)

    def archive_event(self, event_id: str, *, journal_entry: Mapping[str, Any] | None = None) -> EventChange:
        return self._curate(EventCuration("archive", event_id), journal_entry)

    def restore_event(self, event_id: str, *, journal_entry: Mapping[str, Any] | None = None) -> EventChange:
        """Undo forget/archive (back to superseded when a newer event replaced it)."""
        return self._curate(EventCuration("restore", event_id), journal_entry)

    def supersede_event(self, old_id: str, new_id: str, *,
                        journal_entry: Mapping[str, Any] | None = None) -> EventChange:
        """Mark `old_id` as replaced by `new_id` (both must exist and differ)."""
        return self._curate(EventCuration("supersede", old_id, new_id), journal_entry)

    def unsupersede_event(self, event_id: str, *, journal_entry: Mapping[str, Any] | None = None) -> EventChange:
        """Undo a supersession: the event is active again and loses the 0.1 cap."""
        return self._curate(EventCuration("unsupersede", event_id), journal_entry)

    # usage --------------------------------------------------------------------------------------------------
    def record_memory_use(
        self,
        refs: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        *,
        event_ids: Sequence[str] = (),
        element_ids: Sequence[str] = (),
        receipt_id: str | None = None,
        audit: Mapping[str, Any] | None = None,
        journal_entry: Mapping[str, Any] | None = None,
    ) -> UsageReceipt | None:
        """Count an answer's use of memories (mention count +1, adopted now). Idempotent per `receipt_id`;
        a persistent memory requires one. Unknown ids are an error."""
        self._require_writable()
        events_in: list[Any] = list(event_ids)
        elements_in: list[Any] = list(element_ids)
        if isinstance(refs, Mapping):
            events_in += list(refs.get("eventIds", refs.get("event_ids", [])) or [])
            elements_in += list(refs.get("elementIds", refs.get("element_ids", [])) or [])
        elif refs is not None:
            if isinstance(refs, str):
                raise InvalidInputError("refs must be a list of event ids or a dict of eventIds/elementIds")
            events_in += list(refs)
        events = unique_in_order(require_id(value, "event_ids") for value in events_in)
        elements = unique_in_order(require_id(value, "element_ids") for value in elements_in)
        receipt = optional_id(receipt_id, "receipt_id")
        if receipt is None and not self._ephemeral:
            raise InvalidInputError("Persistent record_memory_use requires a non-empty receipt_id")
        if audit is not None:
            if not isinstance(audit, Mapping):
                raise InvalidInputError("audit must be a dict")
            try:
                audit = json.loads(json.dumps(audit, allow_nan=False))
            except (TypeError, ValueError) as error:
                raise InvalidInputError(f"audit must hold JSON values: {error}") from error
        if receipt is not None:
            existing = self._section("usageReceipts").get(receipt)
            if existing is not None:
                if existing.event_ids == events and existing.element_ids == elements and (existing.audit or None) == (audit or None):
                    return existing
                raise InvalidInputError(
                    f"Usage receipt {receipt} was already recorded with different memory IDs or audit metadata")
        for event_id in events:
            self.get_event(event_id)
        for element_id in elements:
            self.get_element(element_id)
        now = self._stamp()
        tx = self._store.mutation()
        turn = self.current_turn
        for event_id in events:
            if self._section("events")[event_id].status in ("forgotten", "archived"):
                continue
            event = tx.edit("events", event_id)
            event.weight.mention_count += 1
            event.weight.last_adopted_turn, event.updated_at = turn, now
        for element_id in elements:
            element = tx.edit("elements", element_id)
            element.weight.mention_count += 1
            element.weight.last_adopted_turn, element.updated_at = turn, now
        stored = None
        if receipt is not None:
            stored = UsageReceipt(receipt, events, elements, now, dict(audit) if audit else None)
            tx.put("usageReceipts", stored)
        self._journal(tx, journal_entry)
        self._commit(tx)
        return stored

    def record_successful_model_responses(self, responses: Iterable[Any]) -> None:
        self._require_writable()
        items = [response if isinstance(response, ModelResponse) else ModelResponse(
            require_id(response.get("id"), "response.id"), require_choice(response.get("kind"), "response.kind",
                                                                          ("summarizer", "extractor", "projector")),
            require_str(response.get("response"), "response.response"),
            to_utc8_iso(response.get("createdAt") or response.get("created_at") or self._store.now()))
            for response in responses]
        if not items:
            return
        known = self._section("successfulModelResponses")
        fresh = [item for item in items if item.id not in known]
        if not fresh:
            return
        tx = self._store.mutation()
        for item in fresh:
            tx.put("successfulModelResponses", item)
        kept = [*known, *(item.id for item in fresh)]
        for old in kept[:-MODEL_RESPONSE_HISTORY_LIMIT]:
            if old in known:
                tx.delete("successfulModelResponses", old)
        self._commit(tx)

    # retrieval ----------------------------------------------------------------------------------------------
    def search_events(self, query: str, *, record: bool = False, **options: Any) -> SearchHits[EventHit]:
        """Hybrid BM25 + structured + RRF search over active and superseded events (see `Retrieval`).
        `record=True` stamps the hits' `lastRetrievedAt` (one commit) and returns them as stored."""
        hits = self.retrieval.search_events(query, **options)
        if record and hits:
            self._record_retrieval("events", [hit.event.id for hit in hits])
            hits[:] = [EventHit(self.get_event(hit.event.id), hit.score, hit.explanation) for hit in hits]
        return hits

    def search_elements(self, query: str, *, record: bool = False, **options: Any) -> SearchHits[ElementHit]:
        """Search over element facts (see `Retrieval`); `record` as for `search_events`, per element."""
        hits = self.retrieval.search_elements(query, **options)
        if record and hits:
            self._record_retrieval("elements", list(dict.fromkeys(hit.element.id for hit in hits)))
            fresh = {hit.element.id: self.get_element(hit.element.id) for hit in hits}
            hits[:] = [ElementHit(fresh[hit.element.id], fresh[hit.element.id].fact(hit.fact.id) or hit.fact,
                                  hit.score, hit.explanation) for hit in hits]
        return hits

    def _record_retrieval(self, section: str, keys: list[str]) -> None:
        self._require_writable()
        tx = self._store.mutation()
        now = self._stamp()
        for key in keys:
            tx.edit(section, key).weight.last_retrieved_at = now
        self._commit(tx)

    def search_raw_memory(self, query: str, limit: float | None = 6) -> list[RawHit]:
        return self.retrieval.search_raw_memory(query, limit)

    def search_turns(self, query: str, limit: int = 10, explain: bool = False) -> list[RankedRawHit]:
        """Ranked raw memory (`stratagate.raw_search`): the best turns, sealed (`hit.turn.block_id`) or in the
        open tail (block id None), with their messages and BM25 score; `explain` splits each score by field."""
        return self._turn_search.search(query, limit, explain)

    def expand_element(self, element_id: str, at: str | None = None) -> Element:
        """The element as it stood at `at` (facts valid then, bounds inclusive), or as it is now."""
        if at is not None and not isinstance(at, str):
            raise InvalidInputError(f"at must be a date string, got {type(at).__name__}")
        return element_view_at(self.get_element(element_id), at)

    def expand_event(self, event_id: str) -> Event:
        return copy.deepcopy(self.get_event(event_id))

    def assess_retrieval(self, assessment: Mapping[str, Any], latest_refs: Iterable[str]) -> RetrievalAssessment:
        return normalize_retrieval_assessment(assessment, set(latest_refs))


def _apply_curation(tx: Mutation, change: EventCuration, now: str) -> None:
    event_id = change.event_id
    if change.action in ("pin", "unpin"):
        event = event_ops.edit_event(tx, event_id)
        event.weight.pinned, event.updated_at = change.action == "pin", now
    elif change.action in ("forget", "archive"):
        event_ops.set_status(tx, event_id, "forgotten" if change.action == "forget" else "archived", now)
    elif change.action == "restore":
        event_ops.restore(tx, event_id, now)
    elif change.action == "supersede":
        event_ops.supersede(tx, event_id, change.replacement_id or "", now)
    else:
        event_ops.unsupersede(tx, event_id, now)


def _restore_stamp(tx: Mutation, original: Event, changed: Mapping[str, Event]) -> None:
    """Give a changed event its earlier `updatedAt` when it now equals `original` in every other field."""
    if not isinstance(original, Event):
        raise InvalidInputError(f"restore_stamps_from must hold Event records, got {type(original).__name__}")
    if original.id not in changed:
        return
    event = tx.edit("events", original.id)
    if {**event.to_record(), "updatedAt": original.updated_at} == original.to_record():
        event.updated_at = original.updated_at


def in_memory(**options: Any) -> StrataGate:
    """An ephemeral memory (nothing written to disk). Options as for `open`, plus `namespace`."""
    namespace = options.pop("namespace", "memory")
    return StrataGate.open_with_backend(MemoryBackend(), namespace, ephemeral=True, **options)


def open(database: str | os.PathLike[str], namespace: str, *, read_only: bool = False,
         timeout: float = 5.0, **options: Any) -> StrataGate:
    """Open (creating if needed) a namespace in a SQLite file or SQLAlchemy URL. `read_only` opens for
    inspection: nothing is ever written and the file stays byte-identical."""
    if isinstance(database, str) and not database.strip():
        raise InvalidInputError("Database path must not be empty")
    from stratagate.storage.sql import open_backend

    backend = open_backend(database.strip() if isinstance(database, str) else database, read_only=read_only,
                           timeout=timeout)
    try:
        return StrataGate.open_with_backend(backend, namespace, **options)
    except BaseException:
        backend.close()
        raise


__all__ = ["BLOCK_DECAY_LAMBDA", "CURATION_ACTIONS", "BlockLift", "BlockPointer", "EventChange", "EventCuration",
           "ProjectionClaim", "StrataGate", "TurnResult", "WorkResult", "in_memory", "open"]
