"""A snapshot JSON file read as a stream (`stratagate import snapshot`), so a large file is never held whole.

The file is read twice. `scan` checks every namespace as `normalize_snapshot` does (each record upgraded to v7
and shape-checked as it goes by, the cross-reference checks fed only ids and links), keeping no record;
`StreamedFile.replay`, run by the import inside its write transaction, reads the records again, upgraded, a
chunk at a time. Both passes hash the bytes they read: a file that changed in between is refused before the
transaction commits, so what is written is what was checked.

Streaming needs the layout `stratagate export` and the reference write: a top-level object of namespaces (or
a bare snapshot whose first key is `schemaVersion`), each snapshot's `schemaVersion` before its sections, no
repeated keys, blocks before events before elements and extraction jobs, and valid JSON. For anything else
`scan` returns None and the caller reads the file whole, which also gives malformed JSON its usual error.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from bisect import bisect_right
from collections import defaultdict, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stratagate.errors import SnapshotError
from stratagate.journal import JournalEntryError, JournalRecord, record_from_json
from stratagate.snapshot import (
    ARRAY_SECTIONS,
    DEFAULT_BLOCK_DECAY_LAMBDA,
    MODEL_RESPONSE_HISTORY_LIMIT,
    References,
    check_block_decay_lambda,
    check_counters,
    check_version,
    drop_empty_thread_ids,
    is_number,
    validate_section,
)
from stratagate.validation import NUL, find_nul

READ_BYTES = 1 << 20
CHUNK = 1000
"""Records per chunk written (and per shape check)."""
RESPONSES = "successfulModelResponses"
SECTIONS = (*ARRAY_SECTIONS, RESPONSES)
SECTION_DEPENDENCIES = {"events": ("blocks",), "elements": ("events",), "extractionJobs": ("blocks",)}
"""Sections whose rows reference another's: the file must hold those first to be written in one pass."""
OPTIONAL_SECTIONS = {1: ("elements", "elementProjectionJobs", "ingestionReceipts"), 2: ("ingestionReceipts",)}
"""Sections a v1 / v2 snapshot may lack (they start empty)."""
_NON_SPACE = re.compile(r"[^ \t\n\r]")
_DECODER = json.JSONDecoder()


class NotStreamable(Exception):
    """The file's layout (or malformed JSON) needs the whole-file reader."""


class _Reader:
    """Values of a JSON text read from a file a megabyte at a time: the structure is walked here, each value
    below it (a record, a scalar) is decoded whole by the json module."""

    def __init__(self, path: Path):
        self._file = path.open("rb")
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.sha256 = hashlib.sha256()
        self._text = ""
        self._at = 0
        self._ended = False

    def close(self) -> None:
        self._file.close()

    def _more(self) -> bool:
        if self._ended:
            return False
        data = self._file.read(READ_BYTES)
        self.sha256.update(data)
        self._ended = not data
        self._text = self._text[self._at :] + self._decoder.decode(data, final=self._ended)
        self._at = 0
        return True

    def drain(self) -> None:
        """Read (and hash) the rest of the file."""
        while self._more():
            self._text, self._at = "", 0

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end)."""
        while True:
            found = _NON_SPACE.search(self._text, self._at)
            if found:
                self._at = found.start()
                return self._text[self._at]
            self._at = len(self._text)
            if not self._more():
                return ""

    def take(self, char: str) -> bool:
        if self.peek() != char:
            return False
        self._at += 1
        return True

    def expect(self, char: str) -> None:
        if not self.take(char):
            raise NotStreamable

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self._text, self._at)
            except json.JSONDecodeError as error:
                # Only a value cut by the end of what was read so far can be helped by reading on.
                cut = error.pos >= len(self._text) - 10 or error.msg.startswith("Unterminated string")
                if cut and self._more():
                    continue
                raise NotStreamable from None
            except RecursionError:
                raise NotStreamable from None
            if end >= len(self._text) and self._more():  # a number may go on in the next chunk
                continue
            self._at = end
            return value

    def members(self) -> Iterator[str]:
        """The keys of the object that starts here; the caller reads or skips each key's value."""
        self.expect("{")
        if self.take("}"):
            return
        seen: set[str] = set()
        while True:
            if self.peek() != '"':
                raise NotStreamable
            key = self.value()
            if key in seen:  # json.loads keeps the last: the whole-file reader gives that meaning
                raise NotStreamable
            seen.add(key)
            self.expect(":")
            yield key
            if self.take("}"):
                return
            self.expect(",")

    def items(self) -> Iterator[Any]:
        """The values of the array that starts here, one at a time."""
        self.expect("[")
        if self.take("]"):
            return
        while True:
            yield self.value()
            if self.take("]"):
                return
            self.expect(",")

    def skip(self, depth: int = 3) -> None:
        """Pass over a value, walking the top of a large one instead of decoding it whole."""
        if depth and self.peek() == "{":
            for _key in self.members():
                self.skip(depth - 1)
        elif depth and self.peek() == "[":
            for _item in self.items():
                pass
        else:
            self.value()


@dataclass
class _Plan:
    """What the first pass learned of one namespace's snapshot, for the second."""

    version: int = 0
    header: dict[str, Any] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    responses: int = 0
    anchors: dict[str | None, list[float]] = field(default_factory=lambda: defaultdict(list))


def _entry(revision: int, journal: list[JournalRecord], plan: _Plan) -> dict[str, Any]:
    """A checked namespace: `revision` and `journal` as the whole-file reader gives them, and its `plan`."""
    return {"revision": revision, "journal": journal, "plan": plan}


class StreamedFile(Mapping[str, dict[str, Any]]):
    """The checked namespaces of a file (name → entry, in file order), read again by `replay`."""

    def __init__(self, path: Path, bare: bool, entries: dict[str, dict[str, Any]], sha256: str):
        self.path = path
        self.bare = bare
        self.entries = entries
        self.sha256 = sha256

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self.entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def replay(self) -> Iterator[tuple[str, dict[str, Any], Iterator[tuple[str, Iterator[list[dict[str, Any]]]]]]]:
        """(namespace, space header, its sections as (section, record chunks)) in file order; each must be
        consumed before the next is taken. Raises SnapshotError, before the caller commits, if the file
        changed since `scan`."""
        reader = _Reader(self.path)
        try:
            if self.bare:
                (name,) = self.entries
                plan = self.entries[name]["plan"]
                yield name, plan.header, self._sections(reader, plan)
            else:
                for name in reader.members():
                    if name not in self.entries:
                        reader.skip()
                        continue
                    plan = self.entries[name]["plan"]
                    for key in reader.members():
                        if key == "snapshot":
                            yield name, plan.header, self._sections(reader, plan)
                        else:
                            reader.skip()
            reader.drain()
        except NotStreamable:
            raise self._changed() from None
        finally:
            reader.close()
        if reader.sha256.hexdigest() != self.sha256:
            raise self._changed()

    def _changed(self) -> SnapshotError:
        return SnapshotError(f"{self.path}: changed while it was being imported; nothing was written")

    def _sections(self, reader: _Reader, plan: _Plan) -> Iterator[tuple[str, Iterator[list[dict[str, Any]]]]]:
        for key in reader.members():
            if key not in SECTIONS:
                reader.skip()
                continue
            yield key, self._chunks(reader, plan, key)
        for section in OPTIONAL_SECTIONS.get(plan.version, ()):
            if section not in plan.order:
                yield section, iter(())
        if RESPONSES not in plan.order:
            yield RESPONSES, iter(())

    @staticmethod
    def _chunks(reader: _Reader, plan: _Plan, section: str) -> Iterator[list[dict[str, Any]]]:
        skipped = plan.responses - MODEL_RESPONSE_HISTORY_LIMIT if section == RESPONSES else 0
        chunk: list[dict[str, Any]] = []
        for index, record in enumerate(reader.items()):
            if index < skipped:
                continue
            chunk.append(_upgraded(record, section, plan))
            if len(chunk) == CHUNK:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


def _upgraded(record: dict[str, Any], section: str, plan: _Plan) -> dict[str, Any]:
    """A record as `normalize_snapshot` upgrades it to v7."""
    if section in ("openTail", "blocks"):
        drop_empty_thread_ids(section, record)
    if section == "blocks" and plan.version < 6:
        _convert_anchor_turn(record, plan.anchors)
    if section == "blocks" and plan.version < 7:
        record["lastLiftedBy"] = None
    if section == "usageReceipts" and plan.version == 1:
        record.setdefault("elementIds", [])
    return record


def _keeps_anchor(block: dict[str, Any]) -> bool:
    return "pointerAnchorBlockPosition" in block and "pointerAnchorTurn" not in block


def _convert_anchor_turn(block: dict[str, Any], anchors: dict[str | None, list[float]]) -> None:
    """v5 → v6 (`snapshot._convert_anchor_turns`): a turn anchor becomes the count of same-thread blocks ending
    at or before it (at least 1); `anchors` holds each thread's sorted end turns (the first pass checked the
    anchor is a number)."""
    if not _keeps_anchor(block):
        anchor_turn = block.pop("pointerAnchorTurn", None)
        block["pointerAnchorBlockPosition"] = max(1, bisect_right(anchors.get(block.get("threadId"), []), anchor_turn))


# -- the first pass --------------------------------------------------------------------------------------------


def scan(path: Path, namespace: str | None) -> StreamedFile | None:
    """Check the file's namespaces as `read_snapshot_file` checks them (raising the same SnapshotErrors), or
    None when the file needs the whole-file reader (see the module docstring)."""
    try:
        reader = _Reader(path)
    except OSError as error:
        raise SnapshotError(f"{path}: cannot be read ({error.strerror or error})") from error
    try:
        return _scan(reader, path, namespace)
    except NotStreamable:
        return None
    except UnicodeDecodeError as error:
        raise SnapshotError(f"{path}: not a JSON snapshot file ({error})") from error
    finally:
        reader.close()


def _scan(reader: _Reader, path: Path, namespace: str | None) -> StreamedFile | None:
    if reader.peek() != "{":
        raise NotStreamable
    keys = reader.members()
    first = next(keys, None)
    if first is None:
        raise NotStreamable
    if first == "schemaVersion":
        if namespace is None:
            raise SnapshotError(f"{path}: holds a bare snapshot; name its namespace")
        plan = _scan_snapshot(reader, path, namespace, keys, first)
        reader.drain()
        return StreamedFile(path, True, {namespace: _entry(1, [], plan)}, reader.sha256.hexdigest())
    entries: dict[str, dict[str, Any]] = {}
    names = []
    for name in _chain_first(first, keys):
        if name == "schemaVersion":
            raise NotStreamable  # a bare snapshot whose version is not its first key
        names.append(name)
        if namespace is not None and name != namespace:
            reader.skip()
            continue
        entries[name] = _scan_entry(reader, path, name)
    reader.drain()
    if namespace is not None and namespace not in entries:
        raise SnapshotError(f"{path}: no namespace {namespace!r} (has: {', '.join(names)})")
    return StreamedFile(path, False, entries, reader.sha256.hexdigest())


def _chain_first(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def _scan_entry(reader: _Reader, path: Path, name: str) -> dict[str, Any]:
    if reader.peek() != "{":
        raise NotStreamable  # the whole-file reader names what is wrong with it
    if NUL in name:
        raise SnapshotError(f"{path}: namespace {name!r} contains a NUL character (U+0000), which StrataGate does not store")
    plan = None
    values: dict[str, Any] = {}
    for key in reader.members():
        if key == "snapshot":
            if reader.peek() != "{":
                raise NotStreamable
            plan = _scan_snapshot(reader, path, name, reader.members(), None)
        elif key in ("revision", "journal"):
            values[key] = reader.value()
        else:
            reader.skip()
    if plan is None:
        raise SnapshotError(f"{path}: namespace {name!r} must be an object with a 'snapshot'")
    return _entry(entry_revision(path, name, values), entry_journal(path, name, values), plan)


def entry_revision(path: Path, name: str, entry: Mapping[str, Any]) -> int:
    """A namespace entry's `revision` (1 when absent), checked."""
    revision = entry.get("revision", 1)
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        raise SnapshotError(f"{path}: namespace {name!r}: revision must be a positive integer, got {revision!r}")
    return revision


def entry_journal(path: Path, name: str, entry: Mapping[str, Any]) -> list[JournalRecord]:
    """A namespace entry's `journal` (empty when absent), read into records."""
    journal = entry.get("journal", [])
    if not isinstance(journal, list):
        raise SnapshotError(f"{path}: namespace {name!r}: journal must be an array of entries")
    try:
        return [record_from_json(item) for item in journal]
    except JournalEntryError as error:
        raise SnapshotError(f"{path}: namespace {name!r}: {error}") from error


def _scan_snapshot(reader: _Reader, path: Path, name: str, keys: Iterator[str], first: str | None) -> _Plan:
    try:
        return _check_snapshot(reader, keys if first is None else _chain_first(first, keys))
    except SnapshotError as error:
        raise SnapshotError(f"{path}: namespace {name!r}: {error}") from error


def _check_snapshot(reader: _Reader, keys: Iterator[str]) -> _Plan:
    plan = _Plan()
    header: dict[str, Any] = {}
    references = References()
    responses: deque[Any] = deque(maxlen=MODEL_RESPONSE_HISTORY_LIMIT)
    for key in keys:
        if key in ("schemaVersion", "currentTurn", "blockTurnSize", "blockDecayLambda"):
            header[key] = reader.value()
            if key == "schemaVersion":
                plan.version = check_version(header[key])
            continue
        if key not in SECTIONS:
            reader.skip()
            continue
        if not plan.version or any(need not in plan.order for need in SECTION_DEPENDENCIES.get(key, ())):
            raise NotStreamable
        plan.order.append(key)
        if reader.peek() != "[":
            reader.skip()
            raise SnapshotError(f"Invalid StrataGate snapshot: {key} must be an array")
        if key == RESPONSES:
            for record in reader.items():
                plan.responses += 1
                responses.append(record)
            continue
        _check_section(reader, key, plan, references)
    check_counters(header)
    for section in ARRAY_SECTIONS:
        if section not in plan.order and section not in OPTIONAL_SECTIONS.get(plan.version, ()):
            raise SnapshotError(f"Invalid StrataGate snapshot: {section} must be an array")
    kept = list(responses)
    for index, record in enumerate(kept):
        where = find_nul(record, f"{RESPONSES}[{index}]")
        if where is not None:
            raise SnapshotError(f"{where} contains a NUL character (U+0000), which StrataGate does not store")
    _check_records(RESPONSES, kept, references)
    lam = DEFAULT_BLOCK_DECAY_LAMBDA if plan.version < 6 else header.get("blockDecayLambda")
    check_block_decay_lambda(lam)
    plan.header = {"currentTurn": header["currentTurn"], "blockTurnSize": header["blockTurnSize"],
                   "blockDecayLambda": lam}
    references.check()
    return plan


def _check_section(reader: _Reader, section: str, plan: _Plan, references: References) -> None:
    chunk: list[dict[str, Any]] = []
    for index, record in enumerate(reader.items()):
        if not isinstance(record, dict):
            raise SnapshotError(f"Invalid StrataGate snapshot: {section}[{index}] must be an object")
        if section == "blocks" and plan.version < 6:
            _remember_end_turn(record, index, plan.anchors)
            record = {**record, "pointerAnchorBlockPosition": 1}  # shape-checked now, computed when written
            record.pop("pointerAnchorTurn", None)
        where = find_nul(record, f"{section}[{index}]")
        if where is not None:
            raise SnapshotError(f"{where} contains a NUL character (U+0000), which StrataGate does not store")
        chunk.append(_upgraded(record, section, plan))
        if len(chunk) == CHUNK:
            _check_records(section, chunk, references)
            chunk = []
    _check_records(section, chunk, references)
    for turns in plan.anchors.values():
        turns.sort()


def _remember_end_turn(block: dict[str, Any], index: int, anchors: dict[str | None, list[float]]) -> None:
    if not _keeps_anchor(block) and not is_number(block.get("pointerAnchorTurn")):
        raise SnapshotError(
            f"Invalid StrataGate snapshot: blocks[{index}] ({block.get('id')!r}) pointerAnchorTurn must be a number"
        )
    if is_number(block.get("endTurn")):
        thread = block.get("threadId")
        anchors[None if thread in ("", None) else thread].append(block["endTurn"])


def _check_records(section: str, records: list[dict[str, Any]], references: References) -> None:
    validate_section(section, records)
    for record in records:
        references.add(section, record)

