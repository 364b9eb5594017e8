"""Exports from the app: a table as CSV or JSON, a card as Markdown, a computed result (a retrieval
explanation, a receipt replay) as JSON or Markdown; the journal is exported by `stratagate.journal`.

The writers here run on the database worker (the rows and cards are read there first); the views ask for a
file name, then hand the write to the worker with the write path's failure dialog on error.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

TABLE_FILTERS = "CSV (*.csv);;JSON (*.json)"


def write_table(path: Path, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> int:
    """A table to `path`: JSON (a list of objects keyed by column title) for *.json, CSV otherwise."""
    if path.suffix.lower() == ".json":
        records = [dict(zip(headers, row, strict=True)) for row in rows]
        path.write_text(json.dumps(records, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    else:
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(headers)
            writer.writerows(rows)
    return len(rows)


def write_markdown(path: Path, text: str) -> None:
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def with_result_suffix(path_text: str, chosen_filter: str) -> Path:
    path = Path(path_text)
    return path if path.suffix else path.with_suffix(".md" if "markdown" in chosen_filter.lower() else ".json")


def with_suffix_for(path_text: str, chosen_filter: str) -> Path:
    """The file the user picked, with the chosen filter's suffix when they typed none."""
    path = Path(path_text)
    if path.suffix:
        return path
    return path.with_suffix(".json" if "json" in chosen_filter.lower() else ".csv")


RESULT_FILTERS = "JSON (*.json);;Markdown (*.md)"


def write_result(path: Path, title: str, result: object, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A computed result (a retrieval explanation, a receipt replay): JSON holds every field of the result,
    Markdown the table the view shows under its title."""
    if path.suffix.lower() == ".json":
        data = dataclasses.asdict(result) if dataclasses.is_dataclass(result) and not isinstance(result, type) else result
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")
        return
    write_markdown(path, f"# {title}\n\n" + markdown_table(headers, rows))


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(value: object) -> str:
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")
