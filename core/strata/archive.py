"""Tier-3 archive blobs: one JSON file per archived markdown file, in the reference's format.

`{"original_path", "content", "archived_at", "tags"}` with 2-space indent, as the reference writes them.
The blob is named `<shadow id>.json` (the reference used the last 12 digits of Python's salted `hash()`,
different in every process and overwritten on collisions, B-3): a fresh uuid, so an archive write can never
replace another blob. How blobs reach the disk safely is `evict_journal`'s job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from json.encoder import encode_basestring_ascii
from pathlib import Path

from stratagate.strata.errors import CorruptBlobError

PREVIEW_CHARS = 200
# `json.dumps` of a str is exactly this function's result; calling it directly skips the per-call setup.
quote = encode_basestring_ascii


@dataclass(frozen=True)
class Blob:
    original_path: str
    content: str
    archived_at: str
    tags: list[str]


def utc_now_iso() -> str:
    return datetime.now(UTC).isoformat()


def infer_tags(relative_path: str) -> list[str]:
    """The reference's eviction tags: first path segment, plus the file stem title-cased
    (`projects/kynd-dashboard/requirements.md` → `["projects", "Requirements"]`)."""
    parts = relative_path.replace("\\", "/").split("/")
    tags = [parts[0]]
    if "." in parts[-1]:
        stem = parts[-1].rsplit(".", 1)[0]
        tags.append(stem.replace("_", " ").replace("-", " ").title())
    return tags


def blob_bytes(blob: Blob) -> bytes:
    return blob_json(blob.original_path, blob.content, blob.archived_at, blob.tags)


def _blob_frame(original_path: str, archived_at: str, tags: list[str]) -> tuple[str, str]:
    """A blob's JSON before and after the characters of its content (quotes excluded)."""
    listed = "[]" if not tags else "[\n    " + ",\n    ".join(map(quote, tags)) + "\n  ]"
    return (
        f'{{\n  "original_path": {quote(original_path)},\n  "content": "',
        f'",\n  "archived_at": {quote(archived_at)},\n  "tags": {listed}\n}}',
    )


def blob_json(original_path: str, content: str, archived_at: str, tags: list[str]) -> bytes:
    """Exactly `json.dumps(blob_dict, indent=2)`, built from C-encoded parts (indent=2 is the slow
    pure-Python encoder, and encoding was the largest cost of archiving). Eviction calls it per file
    without building a `Blob`."""
    head, tail = _blob_frame(original_path, archived_at, tags)
    return f"{head}{quote(content)[1:-1]}{tail}".encode()


# Bytes `json.dumps` writes as they are (printable ASCII), plus the three escaped by `ascii_blob_json`.
_PLAIN_TEXT = bytes(range(0x20, 0x7F)) + b"\t\n\r"


def ascii_blob_json(original_path: str, data: bytes, archived_at: str, tags: list[str]) -> bytes | None:
    """`blob_json` of a file's bytes when they are printable ASCII, tabs and line breaks (most markdown):
    escaped as bytes, skipping the decode, the escape of a str and the encode back (about 4 µs of a
    1.5 KB file). None for any other file."""
    if data.translate(None, _PLAIN_TEXT):
        return None
    escaped = (
        data.replace(b"\\", b"\\\\")
        .replace(b'"', b'\\"')
        .replace(b"\n", b"\\n")
        .replace(b"\r", b"\\r")
        .replace(b"\t", b"\\t")
    )
    head, tail = _blob_frame(original_path, archived_at, tags)
    return b"".join((head.encode(), escaped, tail.encode()))


def read_blob(file: Path) -> Blob:
    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise CorruptBlobError(file, "file is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptBlobError(file, str(error)) from error
    if not isinstance(data, dict) or not isinstance(data.get("content"), str):
        raise CorruptBlobError(file, "no 'content' string")
    original = data.get("original_path", "restored.md")
    tags = data.get("tags", [])
    if not isinstance(original, str) or not isinstance(tags, list):
        raise CorruptBlobError(file, "'original_path' must be a string and 'tags' a list")
    return Blob(original, data["content"], str(data.get("archived_at", "")), [str(tag) for tag in tags])
