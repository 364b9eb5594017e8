"""Search across the tiers, with the reference's scores and ordering.

Active and cooled files are scanned (the reference's filesystem fallback: +1.0 per query word found in the
path, +0.5 per word found in the text, +0.3 per tag, +0.1 to every hit; top_k per tier); the archive is
searched in the shadow FTS index with positional scores 0.5/(i+1). All hits are sorted by score (stable:
active, cooled, archive). Returning a cooled file counts as an access (search-as-access) when
`record_access` is true — the agent's path; the app searches with it off. Differences: `active/index.md`
is not a hit (it repeats every path, B-7); FTS operators in the query are plain words (B-17); the access
sidecar is written once per search, not once per hit.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from stratagate.strata.store import StrataStore, Tier, walk_files

CONTENT_CHARS = 500


@dataclass(frozen=True)
class SearchHit:
    tier: Tier
    path: str
    score: float
    content: str
    shadow_id: str | None = None
    metadata: dict[str, object] = field(default_factory=dict)


def _scan_tier(
    store: StrataStore, tier: Tier, words: list[str], tags: list[str], top_k: int
) -> list[SearchHit]:
    hits = []
    limit = store.config.max_archive_bytes
    for relative, entry in walk_files(store.tier_root(tier)):
        if entry.is_symlink() or store.is_generated(tier, relative):
            continue
        with open(entry.path, "rb") as handle:
            text = handle.read(limit).decode("utf-8", errors="ignore")
        path_lower, text_lower = relative.lower(), text.lower()
        score = sum((word in path_lower) * 1.0 + (word in text_lower) * 0.5 for word in words)
        score += sum(0.3 for tag in tags if tag.lower() in path_lower or tag.lower() in text_lower)
        if score > 0:
            hits.append(
                SearchHit(tier, relative, score + 0.1, text[:CONTENT_CHARS], metadata={"size": len(text)})
            )
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits[:top_k]


def search(
    store: StrataStore, query: str, top_k: int = 10, tags: list[str] | None = None, record_access: bool = True
) -> list[SearchHit]:
    words = query.lower().split()
    if not words:
        return []
    tags = tags or []
    hits = _scan_tier(store, Tier.ACTIVE, words, tags, top_k) + _scan_tier(
        store, Tier.COOLED, words, tags, top_k
    )
    shadow = store.shadow(create=False)
    try:
        archived = shadow.search(query, top_k)
    finally:
        shadow.close()
    hits += [
        SearchHit(
            Tier.ARCHIVE,
            entry.original_path,
            0.5 / (position + 1),
            entry.summary_preview,
            entry.id,
            {"archive_path": entry.archive_path, "keywords": entry.keywords, "needs_rehydration": True},
        )
        for position, entry in enumerate(archived)
    ]
    hits.sort(key=lambda hit: hit.score, reverse=True)
    hits = hits[:top_k]
    cooled = [hit.path for hit in hits if hit.tier is Tier.COOLED]
    if record_access and cooled:
        with store.lock():
            sidecar = store.sidecar()
            now = time.time()
            for path in cooled:
                sidecar.record_access(path, now)
            sidecar.save()
    return hits


_REFERENCE_TIERS = {Tier.ACTIVE: "stratum_1", Tier.COOLED: "stratum_2", Tier.ARCHIVE: "stratum_3"}


def as_reference_result(hit: SearchHit) -> dict[str, object]:
    """A hit in the reference's result shape (`{content, tier: stratum_N, source, score, metadata}`),
    plus `path` and `shadow_id` so a caller never has to parse `source`."""
    if hit.tier is Tier.ARCHIVE:
        archive_path = str(hit.metadata.get("archive_path", ""))
        metadata = {
            "id": hit.shadow_id,
            "shadow_id": hit.shadow_id,
            "memory_id": hit.path,
            "archive_path": archive_path,
            "keywords": json.dumps(hit.metadata.get("keywords") or []),
            "_needs_rehydration": True,
        }
        source = f"archive:{archive_path}"
    else:
        metadata, source = {"path": hit.path, "size": hit.metadata.get("size", 0)}, hit.path
    return {
        "content": hit.content,
        "tier": _REFERENCE_TIERS[hit.tier],
        "source": source,
        "score": hit.score,
        "metadata": metadata,
        "path": hit.path,
        "shadow_id": hit.shadow_id,
    }
