"""Canonical tier-relative paths and the checks that keep every file operation inside its tier.

The reference tested `str(resolved).startswith(str(root))`, so `../active_evil/x` passed, and several
operations did no check at all (B-9); keys were not normalised, so `./p/a.md` and `p/a.md` were two
sidecar entries (B-11). Here every path goes through `canonical_relative_path` and every file operation
through `inside_tier`.
"""

from __future__ import annotations

from pathlib import Path

from stratagate.strata.errors import UnsafePathError


def canonical_relative_path(raw: str) -> str:
    """`./p//a.md`, `p\\a.md` → `p/a.md`; absolute paths and `..` segments are refused."""
    if not raw or "\x00" in raw:
        raise UnsafePathError(repr(raw), "empty path or NUL character")
    segments = raw.split("/")
    if (
        "\\" not in raw
        and ":" not in raw[1:2]
        and all(segment not in ("", ".", "..") for segment in segments)
    ):
        return raw  # already canonical (the common case: sidecar keys, walked paths)
    text = raw.replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise UnsafePathError(raw, "absolute paths are not allowed; give a path relative to the tier")
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UnsafePathError(raw, "'..' would leave the tier")
    if not parts:
        raise UnsafePathError(raw, "names no file")
    return "/".join(parts)


def inside_tier(root: Path, relative_path: str) -> Path:
    """The file for `relative_path` under `root`, refusing symlinks (file or parent) that lead out of it."""
    canonical = canonical_relative_path(relative_path)
    candidate = root / canonical
    real_root = root.resolve()
    if not candidate.resolve().is_relative_to(real_root):
        raise UnsafePathError(relative_path, f"resolves outside {root} (symlink out of the tree)")
    return candidate
