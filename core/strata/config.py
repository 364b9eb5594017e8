"""Strata settings, the `strata.json` file, and where the data directory is.

Compatible with the reference: same keys, same defaults, same base-dir rules. Differences on purpose:
values are validated (a bad value is an error naming the file and key, B-20), dict settings are merged
onto the defaults instead of replacing them (a partial `decay_thresholds` keeps `"*"`), every setting is
persisted by `save` (B-5), and a relative `STRATA_HOME` is made absolute (B-21).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from stratagate.strata.errors import StrataConfigError
from stratagate.strata.fsutil import atomic_write_text

CONFIG_FILE = "strata.json"
DEFAULT_DECAY_THRESHOLDS = {
    "projects": 14,
    "entities": 60,
    "gtd": 7,
    "pi/conversations": 7,
    "pi": 30,
    "*": 30,
}
DEFAULT_PATTERNS = ["*.md", "*.txt", "*.json", "*.yaml", "*.yml"]


def detect_base_dir(cwd: Path | None = None) -> Path:
    """`$STRATA_HOME`, else `./strata_data` if it exists (cwd only), else `~/.strata` — always absolute."""
    home = os.environ.get("STRATA_HOME")
    if home:
        return Path(home).expanduser().absolute()
    local = (cwd or Path.cwd()) / "strata_data"
    if local.exists():
        return local.absolute()
    return Path.home() / ".strata"


@dataclass
class StrataConfig:
    active_dir: str = "active"
    cooled_dir: str = "cooled"
    stratum_3_archive: str = "archive"
    stratum_3_shadow_db: str = "stratum_3_shadow.db"
    decay_thresholds: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_DECAY_THRESHOLDS))
    lru_days: int = 90
    lru_min_access_count: int = 1
    lru_decay_thresholds: dict[str, int] = field(default_factory=lambda: {"*": 90})
    promotion_threshold: int = 3
    active_file_patterns: list[str] = field(default_factory=lambda: list(DEFAULT_PATTERNS))
    search_backend: str = "qmd"
    # Not in the reference: eviction refuses files above this size instead of building a huge JSON blob.
    max_archive_bytes: int = 16 * 1024 * 1024

    def decay_days(self, relative_path: str) -> int:
        """Migration age for a path: longest matching prefix (the full path first), then `*`, then 30."""
        path = relative_path.strip("/")
        days = self.decay_thresholds.get(path)
        return days if days is not None else self.decay_days_of_folder(path.rpartition("/")[0])

    def decay_days_of_folder(self, folder: str) -> int:
        """`decay_days` of a file in `folder` ("" for the tier root) whose own path has no threshold."""
        parts = folder.split("/") if folder else []
        for length in range(len(parts), 0, -1):
            days = self.decay_thresholds.get("/".join(parts[:length]))
            if days is not None:
                return days
        return self.decay_thresholds.get("*", 30)

    def lru_days_for(self, relative_path: str) -> int:
        """Eviction idle days: first path segment, then `*`, then `lru_days` (the reference's rule)."""
        first = relative_path.strip("/").split("/")[0]
        if first in self.lru_decay_thresholds:
            return self.lru_decay_thresholds[first]
        return self.lru_decay_thresholds.get("*", self.lru_days)


_DIR_NAME_FIELDS = ("active_dir", "cooled_dir", "stratum_3_archive", "stratum_3_shadow_db")


def _validate(file: Path, key: str, value: object) -> object:
    default = getattr(StrataConfig(), key)
    if key in _DIR_NAME_FIELDS:
        if not isinstance(value, str) or not value or "/" in value or value in (".", ".."):
            raise StrataConfigError(file, key, "must be a plain folder or file name")
        return value
    if isinstance(default, str):
        if not isinstance(value, str):
            raise StrataConfigError(file, key, "must be a string")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise StrataConfigError(file, key, "must be a non-negative integer")
        return value
    if isinstance(default, dict):
        if not isinstance(value, dict) or not all(
            isinstance(days, int) and not isinstance(days, bool) and days >= 0 for days in value.values()
        ):
            raise StrataConfigError(file, key, "must map path prefixes to non-negative day counts")
        return {**default, **value}
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise StrataConfigError(file, key, "must be a list of glob patterns")
    return list(value)


# Files Strata keeps directly in the base dir: no tier may be named like one of them.
RESERVED_NAMES = (
    CONFIG_FILE,
    "stratum_2_access.json",
    "strata.lock",
    "strata.log",
    "strata.pid",
    "strata_cost.log",
    "strata_evict.journal",
    "strata_rehydrate.journal",
    "pi-config.json",
    "quarantine",
)


def check_tiers_apart(file: Path, config: StrataConfig) -> None:
    """Each tier (and the shadow database) needs its own name: two tiers in one folder would move files
    onto themselves and evict the archive into itself. Compared case-insensitively (macOS, Windows)."""
    reserved = "a file Strata keeps in the data directory"
    seen: dict[str, str] = {name.casefold(): reserved for name in RESERVED_NAMES}
    defaults = StrataConfig()
    for key in _DIR_NAME_FIELDS:
        name = getattr(config, key)
        other = seen.get(name.casefold())
        if other is not None:
            # Blame the setting the user changed, not the default it collides with.
            blamed, by = (
                (other, key) if other != reserved and name == getattr(defaults, key) else (key, other)
            )
            raise StrataConfigError(file, blamed, f"{name!r} is already used by {by}; tiers must not overlap")
        seen[name.casefold()] = key


def apply_setting(config: StrataConfig, file: Path, dotted_key: str, value: object) -> StrataConfig:
    """`config` with one setting changed (`decay_thresholds.projects` sets one entry), validated as if
    it had been read from `file`; the caller saves it."""
    top, _, entry = dotted_key.partition(".")
    if top not in {f.name for f in fields(StrataConfig)}:
        raise StrataConfigError(file, dotted_key, "no such setting")
    if entry:
        current = getattr(config, top)
        if not isinstance(current, dict):
            raise StrataConfigError(file, dotted_key, f"{top} has no entries to set")
        value = {**current, entry: value}
    updated = replace(config, **{top: _validate(file, top, value)})
    check_tiers_apart(file, updated)
    return updated


def load_config(base_dir: Path) -> StrataConfig:
    """Defaults overlaid with `<base>/strata.json` (missing file → defaults; unknown keys are kept on save)."""
    file = base_dir / CONFIG_FILE
    config = StrataConfig()
    if not file.exists():
        return config
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise StrataConfigError(file, "(file)", f"not readable JSON: {error}") from error
    if not isinstance(data, dict):
        raise StrataConfigError(file, "(file)", "must hold a JSON object")
    known = {f.name for f in fields(StrataConfig)}
    for key, value in data.items():
        if key in known:
            setattr(config, key, _validate(file, key, value))
    check_tiers_apart(file, config)
    return config


def save_config(base_dir: Path, config: StrataConfig) -> None:
    """Write every setting to `strata.json`, keeping keys this version does not know (e.g. `qmd_reranker`)."""
    file = base_dir / CONFIG_FILE
    existing: dict[str, object] = {}
    if file.exists():
        try:
            loaded = json.loads(file.read_text(encoding="utf-8"))
            existing = loaded if isinstance(loaded, dict) else {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            existing = {}
    atomic_write_text(file, json.dumps({**existing, **asdict(config)}, indent=2))
