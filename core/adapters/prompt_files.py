"""The adapters' system prompts: markdown files shipped in `stratagate/adapters/prompts/`, one per callback.

A user overrides one by putting a file of the same name (`summarizer.md`, `extractor.md`, `projector.md`) in a
directory passed as `prompt_dir` or named by STRATAGATE_PROMPT_DIR; the others stay the packaged ones.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from stratagate.errors import InvalidInputError

PROMPT_KINDS = ("summarizer", "extractor", "projector")


def packaged_prompt(kind: str) -> str:
    return (resources.files("stratagate.adapters") / "prompts" / f"{kind}.md").read_text(encoding="utf-8")


def load_prompt(kind: str, prompt_dir: str | os.PathLike[str] | None = None) -> str:
    """The prompt for `kind`: the override in `prompt_dir` (or STRATAGATE_PROMPT_DIR) if it has one."""
    if kind not in PROMPT_KINDS:
        raise InvalidInputError(f"prompt kind must be one of {', '.join(PROMPT_KINDS)}, got {kind!r}")
    directory = prompt_dir or os.environ.get("STRATAGATE_PROMPT_DIR")
    if directory:
        override = Path(directory) / f"{kind}.md"
        if override.is_file():
            text = override.read_text(encoding="utf-8").strip()
            if not text:
                raise InvalidInputError(f"{override}: the prompt file is empty")
            return text
    return packaged_prompt(kind).strip()
