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


# Bytes `json.dumps` writes as they are (printable ASCII), plus the three `ascii_json_text` escapes.
_PLAIN_TEXT = bytes(range(0x20, 0x7F)) + b"\t\n\r"


def ascii_json_text(data: bytes) -> bytes | None:
    """What `json.dumps` writes between the quotes of a file's text, when its bytes are printable ASCII,
    tabs and line breaks (most markdown): escaped as bytes, skipping the decode, the escape of a str and
    the encode back (about 4 µs of a 1.5 KB file). None for any other file."""
    if data.translate(None, _PLAIN_TEXT):
        return None
    return (
        data.replace(b"\\", b"\\\\")
        .replace(b'"', b'\\"')
        .replace(b"\n", b"\\n")
        .replace(b"\r", b"\\r")
        .replace(b"\t", b"\\t")
    )


class RunBlobs:
    """Blob JSON, keywords column and preview of the files one eviction run archives, built straight from
    their parts (no `Blob` per file). The run's blobs share `archived_at`, so the frame after the content
    is encoded once per run, and a first tag once per first path segment."""

    def __init__(self, archived_at: str) -> None:
        self.archived_at = archived_at
        self._after_content = f'",\n  "archived_at": {quote(archived_at)},\n  "tags": [\n    '.encode()
        self._first_tags: dict[str, str] = {}  # first path segment → its tag, JSON-quoted

    def encode(self, relative_path: str, data: bytes) -> tuple[bytes, str, str] | None:
        """(blob bytes, keywords column, preview) of a file's bytes, exactly as `blob_json`,
        `shadow.keywords_text` and the first PREVIEW_CHARS characters give them; None if not UTF-8."""
        escaped = ascii_json_text(data)
        if escaped is None or "\\" in relative_path:  # not printable ASCII, or a name `infer_tags` re-splits
            try:
                content = data.decode("utf-8")
            except UnicodeDecodeError:
                return None
            tags = infer_tags(relative_path)
            keywords = "[" + ", ".join(map(quote, tags)) + "]"
            return (
                blob_json(relative_path, content, self.archived_at, tags),
                keywords,
                content[:PREVIEW_CHARS],
            )
        # `infer_tags` by hand: the first segment, the title-cased stem.
        first = relative_path.partition("/")[0]
        first_tag = self._first_tags.get(first)
        if first_tag is None:
            first_tag = self._first_tags[first] = quote(first)
        name = relative_path.rpartition("/")[2]
        if "." in name:
            tags = (first_tag, quote(name.rpartition(".")[0].replace("_", " ").replace("-", " ").title()))
        else:
            tags = (first_tag,)
        blob = b"".join(
            (
                b'{\n  "original_path": ',
                quote(relative_path).encode(),
                b',\n  "content": "',
                escaped,
                self._after_content,
                ",\n    ".join(tags).encode(),
                b"\n  ]\n}",
            )
        )
        return blob, "[" + ", ".join(tags) + "]", data[:PREVIEW_CHARS].decode("ascii")


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
