"""Shared helpers for benchmarks: the machine's description and their tables in docs/performance.md.

Each benchmark owns one section of docs/performance.md, delimited by `<!-- bench:NAME -->` and
`<!-- /bench:NAME -->`; rerunning a benchmark replaces its section and leaves the others alone.
"""

from __future__ import annotations

import compileall
import os
import platform
import re
import sqlite3
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PERFORMANCE_DOC = ROOT / "docs" / "performance.md"
HEADER = "# Performance\n\nTables written by the benchmarks in `bench/` (run them all with `bench/run`).\n"


def compile_sources() -> None:
    """Write the project's bytecode once, so that no cold process measured compiles its sources.

    An installed copy (the wheel, the binary) carries its bytecode; a checkout run with
    PYTHONDONTWRITEBYTECODE set (some CI images, this project's machines) would otherwise compile every
    module it imports in every child process, and a lazily imported module inside the timed work."""
    for package in ("core", "gui"):
        compileall.compile_dir(ROOT / package, quiet=1)


compile_sources()


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        total_kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {total_kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return (
        f"{os.cpu_count()} × {cpu}{memory}; Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, {platform.system()} {platform.release()}"
    )


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def write_section(name: str, markdown: str) -> None:
    """Replace (or append) the section `name` of docs/performance.md with `markdown`."""
    text = PERFORMANCE_DOC.read_text() if PERFORMANCE_DOC.exists() else HEADER
    block = f"<!-- bench:{name} -->\n{markdown.strip()}\n\nMachine: {machine_description()}.\n<!-- /bench:{name} -->"
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S)
    text = pattern.sub(lambda _match: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"
    PERFORMANCE_DOC.write_text(text)


def median_ms(function: Callable[[], object], repeats: int) -> float:
    """Median wall time of `repeats` calls, in milliseconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)
