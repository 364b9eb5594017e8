"""The reference's six agent tools (`strata_read_active`, `strata_write_active`, `strata_list_active`,
`strata_query`, `strata_forget`, `strata_rehydrate`) with its names, arguments and result shapes.

Served over MCP by `mcp_server`. Differences on purpose: every path is checked (the reference's
`strata_forget ../outside.md` archived a file outside the store, B-9), forgetting drops the sidecar entry
(B-12), and nothing is overwritten (a rehydration onto an existing file is a conflict, B-8).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stratagate.strata import janitor
from stratagate.strata.errors import StrataError
from stratagate.strata.search import as_reference_result, search
from stratagate.strata.store import StrataStore, Tier


class ToolArgumentError(StrataError):
    """A tool call without a required argument, or with one of the wrong type."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    writes: bool


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


SPECS = [
    ToolSpec(
        "strata_read_active",
        "Read a markdown file from the active tier (1st stratum) by its path relative to active/.",
        {
            "type": "object",
            "properties": {"path": _string("Path relative to active/, e.g. projects/x.md")},
            "required": ["path"],
        },
        writes=False,
    ),
    ToolSpec(
        "strata_write_active",
        "Write (create or replace) a markdown file in the active tier; refreshes active/index.md.",
        {
            "type": "object",
            "properties": {
                "path": _string("Path relative to active/"),
                "content": _string("The file's text"),
            },
            "required": ["path", "content"],
        },
        writes=True,
    ),
    ToolSpec(
        "strata_list_active",
        "List the files and folders directly inside an active-tier folder (default: the root).",
        {"type": "object", "properties": {"path": {**_string("Folder relative to active/"), "default": ""}}},
        writes=False,
    ),
    ToolSpec(
        "strata_query",
        "Search every tier (active, cooled, archive) for the query's words; archived hits can be restored "
        "with strata_rehydrate.",
        {
            "type": "object",
            "properties": {
                "query": _string("Words to search for"),
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags that boost hits"},
                "top_k": {"type": "integer", "default": 5, "minimum": 1, "description": "Most results"},
            },
            "required": ["query"],
        },
        writes=True,  # a returned cooled file counts as an access, as in the reference
    ),
    ToolSpec(
        "strata_forget",
        "Archive a cooled-tier file now (3rd stratum); it stays searchable and can be rehydrated.",
        {"type": "object", "properties": {"path": _string("Path relative to cooled/")}, "required": ["path"]},
        writes=True,
    ),
    ToolSpec(
        "strata_rehydrate",
        "Restore an archived file by shadow id or original path into the active (default) or cooled tier.",
        {
            "type": "object",
            "properties": {
                "shadow_id": _string("Shadow id or original path of the archived file"),
                "target_tier": {"type": "string", "enum": ["active", "cooled"], "default": "active"},
            },
            "required": ["shadow_id"],
        },
        writes=True,
    ),
]


def _argument(arguments: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    value = arguments.get(name, default)
    if value is None:
        raise ToolArgumentError(f"missing required argument {name!r}")
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ToolArgumentError(f"argument {name!r} must be {kind.__name__}")
    return value


def _only(results: list[janitor.FileResult], done: str) -> janitor.FileResult:
    [result] = results
    if result.status != done:
        raise StrataError(result.detail or f"{result.path}: {result.status}")
    return result


class StrataTools:
    def __init__(self, store: StrataStore):
        self.store = store
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "strata_read_active": self._read_active,
            "strata_write_active": self._write_active,
            "strata_list_active": self._list_active,
            "strata_query": self._query,
            "strata_forget": self._forget,
            "strata_rehydrate": self._rehydrate,
        }

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool; a `StrataError` names what was wrong (an unknown tool included)."""
        handler = self._handlers.get(name)
        if handler is None:
            raise ToolArgumentError(f"Unknown tool: {name}")
        return handler(arguments)

    def _read_active(self, arguments: dict[str, Any]) -> dict[str, Any]:
        path = _argument(arguments, "path", str)
        return {"content": self.store.read_text(Tier.ACTIVE, path, self.store.config.max_archive_bytes)}

    def _write_active(self, arguments: dict[str, Any]) -> dict[str, Any]:
        target = self.store.write(_argument(arguments, "path", str), _argument(arguments, "content", str))
        return {"path": str(target), "status": "written"}

    def _list_active(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"entries": self.store.list_dir(_argument(arguments, "path", str, ""))}

    def _query(self, arguments: dict[str, Any]) -> dict[str, Any]:
        tags = _argument(arguments, "tags", list, [])
        hits = search(
            self.store,
            _argument(arguments, "query", str),
            top_k=_argument(arguments, "top_k", int, 5),
            tags=[str(tag) for tag in tags],
        )
        return {"results": [as_reference_result(hit) for hit in hits]}

    def _forget(self, arguments: dict[str, Any]) -> dict[str, Any]:
        plan = janitor.plan_evict(self.store, [_argument(arguments, "path", str)])
        result = _only(janitor.apply_evict(self.store, plan), "evicted")
        return {"path": result.path, "archive_path": result.archive_path, "status": "archived"}

    def _rehydrate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        key = _argument(arguments, "shadow_id", str)
        target_name = _argument(arguments, "target_tier", str, "active")
        if target_name not in (Tier.ACTIVE, Tier.COOLED):
            raise ToolArgumentError("target_tier must be 'active' or 'cooled'")
        target = Tier(target_name)
        result = _only(
            janitor.apply_rehydrate(self.store, janitor.plan_rehydrate(self.store, [key], target)),
            "rehydrated",
        )
        return {"original_path": result.path, "target_tier": target.value, "status": "rehydrated"}
