"""Where the local reference build and Node 22 are, and how to ask them.

STRATAGATE_REFERENCE: the TypeScript StrataGate checkout (commit 3862391) with `dist/` built
(default /work/ref/stratagate). STRATAGATE_NODE: a Node >= 22.5 binary, for `node:sqlite`
(default /work/ref/node22/node_modules/node/bin/node). Node always runs with TZ=UTC: the engine reads
offset-less date-times as UTC, which is what V8 does on a UTC machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
DEFAULT_REFERENCE = Path("/work/ref/stratagate")
DEFAULT_NODE = Path("/work/ref/node22/node_modules/node/bin/node")


def node_binary() -> Path | None:
    """The Node 22 binary, or None when it is not there."""
    path = Path(os.environ.get("STRATAGATE_NODE", DEFAULT_NODE))
    return path if path.is_file() and os.access(path, os.X_OK) else None


def reference_build() -> Path | None:
    """The reference checkout with its built `dist/index.js`, or None."""
    path = Path(os.environ.get("STRATAGATE_REFERENCE", DEFAULT_REFERENCE))
    return path if (path / "dist" / "index.js").is_file() else None


def missing_reason() -> str | None:
    """Why a live check against the reference cannot run here, or None when it can."""
    if node_binary() is None:
        return ("Node >= 22.5 not found (set STRATAGATE_NODE; default "
                f"{DEFAULT_NODE}, from the npm registry's node@22 package)")
    if reference_build() is None:
        return ("reference build not found (set STRATAGATE_REFERENCE to a TypeScript StrataGate checkout at "
                f"3862391 with `npm run build` done; default {DEFAULT_REFERENCE})")
    return None


def run_node(script: Path, *arguments: str, timeout: float = 600) -> str:
    """stdout of `node script arguments` with TZ=UTC; raises with node's stderr on failure."""
    node = node_binary()
    if node is None:
        raise RuntimeError(missing_reason())
    environment = {**os.environ, "TZ": "UTC"}
    completed = subprocess.run([str(node), "--no-warnings", str(script), *arguments], capture_output=True,
                               text=True, env=environment, timeout=timeout, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{script.name} failed ({completed.returncode}): {completed.stderr[-4000:]}")
    return completed.stdout


def v8_date_parse(strings: list[str]) -> dict:
    """`Date.parse` of every string in Node with TZ=UTC: {"node": version, "tz": "UTC", "answers": [ms|None]}."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as handle:
        json.dump(strings, handle, ensure_ascii=True)
        handle.flush()
        return json.loads(run_node(HERE / "parse_dates.mjs", handle.name))


def record_date_fixture(path: Path, seed: int, size: int) -> None:
    """Write `size` corpus strings with Node's `Date.parse` answers to `path` (tests/fixtures/v8-date-parse.json)."""
    from tests.differential.date_corpus import corpus

    strings = corpus(seed, size)
    recorded = v8_date_parse(strings)
    header = {"about": "Date.parse answers recorded from Node with TZ=UTC (tests/differential/reference.py)",
              "node": recorded["node"], "tz": recorded["tz"], "seed": seed}
    cases = ",\n".join(json.dumps([text, answer], ensure_ascii=False)
                       for text, answer in zip(strings, recorded["answers"], strict=True))
    path.write_text(json.dumps(header)[:-1] + ', "cases": [\n' + cases + "\n]}\n", encoding="utf-8")
