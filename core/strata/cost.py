"""`strata cost`: the reference's estimate of what the daemon saved, read from `strata.log`.

Same figures and wording as the reference (2,000 tokens per migrated file, 500 per evicted one, ±20 %),
with its counting bugs fixed (B-13): only LIVE cycles count (a dry run moves nothing), and every cycle
start counts, so a restarted daemon's cycle numbers do not hide earlier cycles.
"""

from __future__ import annotations

import re
from pathlib import Path

TOKENS_PER_MIGRATION = 2000
TOKENS_PER_EVICTION = 500
NO_ACTIVITY = "No daemon activity yet. Run 'strata serve' first."
DISCLAIMER = (
    "These are approximate estimates, not measurements: actual savings depend on file sizes, "
    "how often the agent would have read each file, and the model's tokenizer."
)
_START = re.compile(r"\[Cycle (\d+)\] Starting maintenance \((LIVE|DRY RUN)\)")
_COUNTS = re.compile(r"\[Cycle (\d+)\] Migrated:\s*(\d+), Evicted:\s*(\d+)")


def _metric(value: object, methodology: str) -> dict[str, object]:
    return {"value": value, "methodology": methodology, "disclaimer": DISCLAIMER}


def cost_summary(log_file: Path) -> dict[str, object]:
    """The reference's summary dict; with no log, its `error` message and zero values."""
    cycles = migrated = evicted = 0
    live = False
    exists = log_file.exists()
    if exists:
        for line in log_file.read_text(encoding="utf-8", errors="replace").splitlines():
            if start := _START.search(line):
                live = start.group(2) == "LIVE"
                cycles += live
            elif (counts := _COUNTS.search(line)) and live:
                migrated += int(counts.group(2))
                evicted += int(counts.group(3))
    tokens = TOKENS_PER_MIGRATION * migrated + TOKENS_PER_EVICTION * evicted
    summary: dict[str, object] = {
        "daemon_cycles": _metric(cycles, "LIVE maintenance cycles in strata.log"),
        "files_migrated": _metric(migrated, "sum of 'Migrated: N' in LIVE cycles"),
        "files_evicted": _metric(evicted, "sum of 'Evicted: N' in LIVE cycles"),
        "lru_decisions": _metric(evicted, "each eviction is one LRU decision"),
        "tokens_saved_estimate": _metric(
            tokens,
            f"{TOKENS_PER_MIGRATION} tokens per migrated file + {TOKENS_PER_EVICTION} per evicted file "
            "no longer loaded into the agent's context",
        ),
        "tokens_saved_range": _metric(f"{int(tokens * 0.8):,} - {int(tokens * 1.2):,}", "the estimate ±20 %"),
        "hook_calls": {
            "llm_calls_made": _metric(0, "the janitor makes no LLM calls"),
            "tokens_consumed_estimate": _metric(0, "the janitor makes no LLM calls"),
            "estimated_cost_usd": _metric("$0.00", "the janitor makes no LLM calls"),
        },
    }
    if not exists:
        summary["error"] = NO_ACTIVITY
    return summary
