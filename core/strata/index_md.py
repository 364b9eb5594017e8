"""`active/index.md`: the map of the active tier the agent reads first, in the reference's format."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from stratagate.strata.fsutil import atomic_write_text

INDEX_NAME = "index.md"
SUMMARY_CHARS = 80
_PREAMBLE = (
    "This file is regenerated automatically. Read it first to see what is in active memory.",
    "Navigate by path: every bullet below is a file relative to the active folder.",
    "Organise folders however you like; there are no predetermined folders.",
    "Older files move to the cooled tier and then to the archive on their own;",
    "reading a cooled or archived path brings it back here.",
)


def _title_and_summary(file: Path) -> tuple[str | None, str | None]:
    try:
        with open(file, encoding="utf-8", errors="ignore") as handle:
            lines = [handle.readline() for _ in range(64)]
    except OSError:
        return None, None
    lines = [line.strip() for line in lines]
    for number, line in enumerate(lines):
        if line.startswith("# ") and not line.startswith("# Strata"):
            following = [text for text in lines[number + 1 : number + 3] if text and not text.startswith("#")]
            summary = following[0][:SUMMARY_CHARS].rstrip(".") if following else None
            return line.lstrip("# "), summary
    first = next((text for text in lines if text), None)
    return None, first[:SUMMARY_CHARS].rstrip(".") if first else None


def render_index(active_root: Path) -> str:
    """Sections per top-level folder (files below it, sorted); root-level files are not listed, as in the reference."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# Strata — Active Memory Index", "", f"_Last updated: {now}_", "", *_PREAMBLE, "", "---", ""]
    folders = sorted(entry for entry in active_root.iterdir() if entry.is_dir() and not entry.is_symlink())
    for folder in folders:
        files = sorted(path for path in folder.rglob("*") if path.is_file() and not path.is_symlink())
        if not files:
            continue
        lines += [f"## {folder.name.capitalize()}", ""]
        for file in files:
            # A file name that is not UTF-8 is shown with U+FFFD rather than making the index unwritable.
            relative = (
                file.relative_to(active_root)
                .as_posix()
                .encode("utf-8", "surrogateescape")
                .decode("utf-8", "replace")
            )
            title, summary = _title_and_summary(file)
            lines.append(f"- `{relative}`" + (f" — {title}" if title else ""))
            if summary:
                lines.append(f"  {summary}")
        lines.append("")
    return "\n".join(lines)


def regenerate_index(active_root: Path) -> Path:
    target = active_root / INDEX_NAME
    atomic_write_text(target, render_index(active_root))
    return target
