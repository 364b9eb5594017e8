"""The retrieval assessment gate: 'sufficient' only with fresh evidence and the 'answer' strategy (spec §7)."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from stratagate.text import compact

RETRIEVAL_CONTRACT_VERSION = 5
RETRIEVAL_STRATEGIES = ("answer", "search_events", "expand_event", "search_elements", "expand_element",
                        "search_raw_memory", "expand_block")
MAX_EVIDENCE_REFS = 8
DEFAULT_MISSING = "Direct evidence required to answer the question is still missing."

RETRIEVAL_ASSESSMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["verdict", "evidence_refs", "fit", "missing", "next_strategy"],
    "properties": {
        "verdict": {"type": "string", "enum": ["sufficient", "partial", "wrong"]},
        "evidence_refs": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_EVIDENCE_REFS},
        "fit": {"type": "string", "maxLength": 160},
        "missing": {"type": "string", "maxLength": 160},
        "next_strategy": {"type": "string", "enum": list(RETRIEVAL_STRATEGIES)},
    },
}


@dataclass(frozen=True)
class RetrievalAssessment:
    verdict: str
    evidence_refs: list[str]
    fit: str
    missing: str
    next_strategy: str

    def to_record(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "evidenceRefs": list(self.evidence_refs), "fit": self.fit,
                "missing": self.missing, "nextStrategy": self.next_strategy}


def normalize_retrieval_assessment(assessment: Mapping[str, Any], latest_refs: Set[str]) -> RetrievalAssessment:
    """Accept a model's assessment (snake_case keys) against the refs of the latest retrieval batch."""
    data = assessment if isinstance(assessment, Mapping) else {}
    requested = data.get("verdict")
    requested = requested if requested in ("sufficient", "wrong") else "partial"
    raw_refs = data.get("evidence_refs")
    refs: list[str] = []
    if isinstance(raw_refs, list):
        for ref in raw_refs:
            if isinstance(ref, str) and ref in latest_refs and ref not in refs:
                refs.append(ref)
        refs = refs[:MAX_EVIDENCE_REFS]
    strategy = data.get("next_strategy")
    strategy = strategy if strategy in RETRIEVAL_STRATEGIES else "search_events"
    sufficient = requested == "sufficient" and bool(refs) and strategy == "answer"
    verdict = "sufficient" if sufficient else ("wrong" if requested == "wrong" else "partial")
    return RetrievalAssessment(
        verdict=verdict,
        evidence_refs=refs,
        fit=compact(data.get("fit"), 160),
        missing="" if sufficient else (compact(data.get("missing"), 160) or DEFAULT_MISSING),
        next_strategy="answer" if sufficient else ("search_events" if strategy == "answer" else strategy),
    )
