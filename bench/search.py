#!/usr/bin/env python3
"""Event search cost at 1k/10k/100k events: the engine's BM25 index against SQLite FTS5 on the same texts.

Synthetic event cards like the reference benchmark's (docs/reference bench): seeded; English title (5 words),
summary (14), narrative (24), 3 tags, 1 quote, drawn from a Zipf-distributed vocabulary; 20 % of the cards
mix Han words into title/summary/narrative/tags; 1-3 participants from 30 names (10 Han); one of 12 event
types; `happenedStart` a random day in 2025-2026. 200 seeded text queries: 85 % one to three English words,
15 % one or two Han words. Every query is timed one by one; the table gives the median and p90.

Measured in one run, on the same cards and queries:
- index: `InvertedIndex.rank(query, limit=6)` over the nine weighted fields of `event_search_fields`;
- FTS5: an in-memory SQLite FTS5 table, one row per card with the nine fields as columns, queried with the
  query's words OR-ed together, `ORDER BY bm25(events, <the field weights>) LIMIT 6`;
- search_events: the engine facade's `search_events(query)` (default limit 6) on `stratagate.in_memory()`,
  when the facade exists.
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import sqlite3
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import markdown_table, write_section

from stratagate.search.documents import event_search_fields
from stratagate.search.index import InvertedIndex

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
QUERY_COUNT = 200
LIMIT = 6
SEED = 20260301

EVENT_TYPES = ["meeting", "decision", "demo", "release", "preference", "health", "travel", "relocation",
               "staffing", "incident", "purchase", "role"]
LATIN_NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
               "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Yolanda"]
HAN_NAMES = ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨磊", "赵敏", "黄强", "周杰", "吴婷"]
HAN_WORDS = ["数据库", "项目", "会议", "发布", "迁移", "存储", "设计", "测试", "部署", "客户", "预算", "计划",
             "团队", "北京", "上海", "系统", "性能", "安全", "文档", "需求"]
SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vel", "do", "pri", "na", "gor", "fi", "zen", "ba", "qu",
             "lis", "mor", "te", "an", "ix"]


def _vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))))
    return sorted(words)


class _Text:
    """Seeded words: a Zipf-distributed English-like vocabulary, with Han words mixed in on request."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.vocabulary = _vocabulary(rng)
        self.cumulative = []
        total = 0.0
        for rank in range(1, len(self.vocabulary) + 1):
            total += 1 / rank
            self.cumulative.append(total)

    def words(self, count: int, han: bool = False) -> str:
        picked = self.rng.choices(self.vocabulary, cum_weights=self.cumulative, k=count)
        if han:
            for _ in range(max(1, count // 5)):
                picked[self.rng.randrange(count)] = self.rng.choice(HAN_WORDS)
        return " ".join(picked)


def synthetic_events(count: int, seed: int = SEED) -> list[dict]:
    """Snapshot-shaped event cards (only the fields search reads, plus status and timestamps)."""
    return list(iter_synthetic_events(count, seed))


def iter_synthetic_events(count: int, seed: int = SEED) -> Iterator[dict]:
    """`synthetic_events` one card at a time (a million cards do not fit in memory as dicts)."""
    rng = random.Random(seed)
    text = _Text(rng)
    names = LATIN_NAMES + HAN_NAMES
    first_day = date(2025, 1, 1)
    for number in range(1, count + 1):
        han = rng.random() < 0.2
        happened = first_day + timedelta(days=rng.randrange(730))
        created = f"2026-03-01T{number % 24:02d}:00:00.000+08:00"
        yield {
            "id": f"evt_{number}",
            "title": text.words(5, han),
            "summary": text.words(14, han),
            "narrative": text.words(24, han),
            "tags": [text.words(1, han and rng.random() < 0.5) for _ in range(3)],
            "quotes": [text.words(8)],
            "temporal": {
                "mentionedAt": created,
                "happenedStart": happened.isoformat(),
                "participants": rng.sample(names, rng.randint(1, 3)),
                "eventType": rng.choice(EVENT_TYPES),
            },
            "status": "active",
            "createdAt": created,
            "updatedAt": created,
        }


def synthetic_queries(count: int = QUERY_COUNT, seed: int = SEED + 1) -> list[str]:
    """85 % one to three English words (as frequent as in the cards, from the 2,000 most frequent), 15 % Han words."""
    rng = random.Random(seed)
    text = _Text(random.Random(SEED))  # the cards' vocabulary and word frequencies
    frequent, cumulative = text.vocabulary[:2000], text.cumulative[:2000]
    queries = []
    for _ in range(count):
        if rng.random() < 0.85:
            queries.append(" ".join(rng.choices(frequent, cum_weights=cumulative, k=rng.randint(1, 3))))
        else:
            queries.append(" ".join(rng.choice(HAN_WORDS) for _ in range(rng.randint(1, 2))))
    return queries


def reference_mix_queries(count: int = QUERY_COUNT, seed: int = SEED + 2) -> list[tuple[str, dict]]:
    """The reference benchmark's mix, filters included: 50 % one to three English words, 15 % Han words,
    10 % a word + participants, 10 % empty query + eventType + temporalIntent latest, 10 % a word +
    happenedFrom/To, 5 % empty query."""
    rng = random.Random(seed)
    text = _Text(random.Random(SEED))
    frequent, cumulative = text.vocabulary[:2000], text.cumulative[:2000]

    def words(most: int) -> str:
        return " ".join(rng.choices(frequent, cum_weights=cumulative, k=rng.randint(1, most)))

    queries: list[tuple[str, dict]] = []
    for _ in range(count):
        draw = rng.random()
        if draw < 0.50:
            queries.append((words(3), {}))
        elif draw < 0.65:
            queries.append((" ".join(rng.choice(HAN_WORDS) for _ in range(rng.randint(1, 2))), {}))
        elif draw < 0.75:
            queries.append((words(1), {"participants": [rng.choice(LATIN_NAMES + HAN_NAMES)]}))
        elif draw < 0.85:
            queries.append(("", {"event_type": rng.choice(EVENT_TYPES), "temporal_intent": "latest"}))
        elif draw < 0.95:
            start = date(2025, 1, 1) + timedelta(days=rng.randrange(700))
            queries.append((words(1), {"happened_from": start.isoformat(),
                                       "happened_to": (start + timedelta(days=30)).isoformat()}))
        else:
            queries.append(("", {}))
    return queries


MIX_KINDS = ("words", "word + participants", "word + happened range", "empty + eventType + latest", "empty")


def _mix_kind(query: str, options: dict) -> str:
    """Which of the reference mix's query kinds a query is (English and Han words are both "words")."""
    if "participants" in options:
        return "word + participants"
    if "happened_from" in options:
        return "word + happened range"
    if "event_type" in options:
        return "empty + eventType + latest"
    return "words" if query else "empty"


class Fts5Events:
    """The peer: SQLite FTS5 (unicode61 tokenizer) with the nine search fields as weighted columns."""

    COLUMNS = ("title", "summary", "tags", "quotes", "narrative", "participants", "event_type",
               "original_text", "happened")

    def __init__(self, events: Sequence[dict]):
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE events USING fts5({', '.join(self.COLUMNS)})")
        weights = [weight for _name, _text, weight in event_search_fields(events[0])]
        self.sql = (
            f"SELECT rowid FROM events WHERE events MATCH ? ORDER BY bm25(events, {', '.join(map(str, weights))}) "
            f"LIMIT {LIMIT}"
        )
        with self.db:
            self.db.executemany(
                f"INSERT INTO events (rowid, {', '.join(self.COLUMNS)}) VALUES (?, {', '.join('?' * 9)})",
                (
                    (number, *(text for _name, text, _weight in event_search_fields(event)))
                    for number, event in enumerate(events, start=1)
                ),
            )

    def search(self, query: str) -> list[int]:
        words = re.findall(r"\w+", query)
        if not words:
            return []
        match = " OR ".join(f'"{word}"' for word in words)
        return [row[0] for row in self.db.execute(self.sql, (match,))]


def _timed(function: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float, float]:
    """Median, p90 and mean milliseconds per query."""
    samples = []
    for query in queries:
        start = time.perf_counter()
        function(query)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.9 * (len(samples) - 1))], statistics.fmean(samples)


def _seconds(function: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def _facade() -> Callable[..., object] | None:
    """The engine facade's in-memory constructor, if the facade exists yet."""
    import stratagate

    return getattr(stratagate, "in_memory", None)


def _facade_memory(in_memory: Callable[..., object], events: Sequence[dict]) -> object:
    """An in-memory StrataGate holding `events`, added one by one against 20 sealed source blocks."""
    memory = in_memory(block_turn_size=1)
    for turn in range(20):
        memory.append_turn(f"user turn {turn}", f"assistant turn {turn}")
    blocks = [block.id for block in memory.list_blocks()]
    for number, event in enumerate(events):
        memory.add_event(event["title"], event["summary"], source_block_id=blocks[number % len(blocks)],
                         narrative=event["narrative"], tags=event["tags"], quotes=event["quotes"],
                         temporal=event["temporal"], id=event["id"])
    return memory


def _index_memory_mib(events: Sequence[dict]) -> float:
    """What a built index holds, in MiB: the allocations still live after building one (numpy reports its
    arrays to tracemalloc too). Measured on a second build, as tracing slows building down."""
    gc.collect()
    tracemalloc.start()
    index = InvertedIndex()
    index.add_many((event["id"], event_search_fields(event)) for event in events)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del index
    return held / 2**20


def _measure_index_and_fts5(events: Sequence[dict], queries: Sequence[str], row: dict) -> None:
    index = InvertedIndex()
    row["index_build"], _ = _seconds(lambda: index.add_many((e["id"], event_search_fields(e)) for e in events))
    row["fts_build"], fts = _seconds(lambda: Fts5Events(events))
    # The first pass pays for building each term's postings arrays on first use; the second is warm.
    row["index_cold_median"], _, _ = _timed(lambda query: index.rank(query, limit=LIMIT), queries)
    row["index_median"], row["index_p90"], _ = _timed(lambda query: index.rank(query, limit=LIMIT), queries)
    _timed(fts.search, queries)
    row["fts_median"], row["fts_p90"], _ = _timed(fts.search, queries)


def _measure(size: int, queries: Sequence[str], in_memory: Callable[..., object] | None) -> dict:
    events = synthetic_events(size)
    print(f"search bench: {size:,} events", file=sys.stderr, flush=True)
    row: dict = {"size": size}
    _measure_index_and_fts5(events, queries, row)
    row["index_memory"] = _index_memory_mib(events)
    if in_memory is not None:
        print(f"search bench: {size:,} events through the facade", file=sys.stderr, flush=True)
        row["facade_build"], memory = _seconds(lambda: _facade_memory(in_memory, events))
        row["facade_first"], _ = _seconds(lambda: memory.search_events(queries[0]))
        _timed(memory.search_events, queries)
        row["facade_median"], row["facade_p90"], _ = _timed(memory.search_events, queries)
        mixed = reference_mix_queries()
        row["mix_median"], row["mix_p90"], _ = _timed(lambda pair: memory.search_events(pair[0], **pair[1]), mixed)
        for kind in MIX_KINDS:
            of_kind = [pair for pair in mixed if _mix_kind(*pair) == kind]
            row[f"mix {kind}"], _, _ = _timed(lambda pair: memory.search_events(pair[0], **pair[1]), of_kind)
    return row


def run(sizes: Sequence[int]) -> str:
    queries = synthetic_queries()
    in_memory = _facade()
    # Load ICU's data and numpy's code paths once, so the first size's figures do not carry them.
    warm = InvertedIndex()
    warm.add_many((event["id"], event_search_fields(event)) for event in synthetic_events(100))
    for query in queries:
        warm.rank(query, limit=LIMIT)
    return _table([_measure(size, queries, in_memory) for size in sizes], sizes)


def _table(rows: list[dict], sizes: Sequence[int]) -> str:
    has_facade = all("facade_median" in row for row in rows)
    query_headers = ["events", "index median", "index p90", "index cold median", "FTS5 median", "FTS5 p90",
                     "index / FTS5"]
    build_headers = ["events", "index build s", "index memory MiB", "FTS5 build s"]
    if has_facade:
        query_headers += ["search_events median", "search_events p90", "search_events / FTS5",
                          "search_events, reference mix: median", "reference mix p90"]
        build_headers += ["facade add_event ×N s", "facade first search (builds its index) s"]
    query_rows, build_rows, kind_rows = [], [], []
    for row in rows:
        cells = [f"{row['size']:,}", f"{row['index_median']:.2f}", f"{row['index_p90']:.2f}",
                 f"{row['index_cold_median']:.2f}", f"{row['fts_median']:.2f}", f"{row['fts_p90']:.2f}",
                 f"{row['index_median'] / row['fts_median']:.2f}×"]
        builds = [f"{row['size']:,}", f"{row['index_build']:.1f}", f"{row['index_memory']:.0f}", f"{row['fts_build']:.1f}"]
        if has_facade:
            cells += [f"{row['facade_median']:.2f}", f"{row['facade_p90']:.2f}",
                      f"{row['facade_median'] / row['fts_median']:.2f}×", f"{row['mix_median']:.2f}",
                      f"{row['mix_p90']:.2f}"]
            builds += [f"{row['facade_build']:.1f}", f"{row['facade_first']:.1f}"]
        query_rows.append(cells)
        build_rows.append(builds)
        if has_facade:
            kind_rows.append([f"{row['size']:,}", *(f"{row[f'mix {kind}']:.2f}" for kind in MIX_KINDS)])
    by_size = {row["size"]: row for row in rows}
    scaling = []
    if 10_000 in by_size and 100_000 in by_size:
        small, large = by_size[10_000], by_size[100_000]
        scaling.append(f"index median 100k / 10k: {large['index_median'] / small['index_median']:.2f}× "
                       f"(FTS5: {large['fts_median'] / small['fts_median']:.2f}×)")
        if has_facade:
            scaling.append(f"search_events median 100k / 10k: "
                           f"{large['facade_median'] / small['facade_median']:.2f}×")
    return "\n".join([
        f"## Event search: BM25 index vs SQLite FTS5 ({', '.join(f'{size:,}' for size in sizes)} events)",
        "",
        f"`bench/search.py`: {QUERY_COUNT} seeded text queries (85 % one to three English words, as frequent as "
        "in the cards, 15 % one or two Han words) on seeded synthetic event cards shaped like the reference "
        f"benchmark's, each query timed alone, limit {LIMIT}. *index* is `InvertedIndex.rank(query, limit=6)` "
        "(the engine's BM25, scores identical to the reference's), timed on a second pass over the queries; "
        "*index cold* is the first pass, which also builds each term's postings arrays on first use. *FTS5* is "
        "an in-memory SQLite FTS5 table with the same nine fields as columns and the same weights in `bm25()`, "
        "the query's words OR-ed, `ORDER BY bm25(...) LIMIT 6`."
        + (" *search_events* is the engine facade (`stratagate.in_memory()`, events added one by one with "
           "`add_event`), timed on a second pass like the index, after a first search that builds its index. "
           "*reference mix* times `search_events` on the reference benchmark's query mix, filters included "
           "(50 % English words, 15 % Han, 10 % word + participants, 10 % empty + eventType + latest, 10 % "
           "word + happened range, 5 % empty). Filters are matched against inputs each event's write derived "
           "(normalized participants, type text, parsed happened dates), and without explain only the top "
           "hits of the structured order and of the fusion are computed." if has_facade else ""),
        "",
        "Milliseconds per query:",
        "",
        markdown_table(query_headers, query_rows),
        "",
        *(["search_events on the reference mix, median milliseconds per query kind:", "",
           markdown_table(["events", *MIX_KINDS], kind_rows), ""] if has_facade else []),
        "Building:",
        "",
        markdown_table(build_headers, build_rows),
        "",
        *(f"- {line}" for line in scaling),
        "",
        "FTS5 is a cost baseline, not a ranking baseline: its unicode61 tokenizer does not split Han runs "
        "into words and bigrams, and its bm25() scores columns separately, so its hits differ from the "
        "reference's. The index reproduces the reference's tokens and scores exactly.",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k events only")
    parser.add_argument("--sizes", type=int, nargs="+", help="event counts to measure")
    arguments = parser.parse_args()
    sizes = arguments.sizes or (QUICK_SIZES if arguments.quick else SIZES)
    markdown = run(sizes)
    print(markdown)
    write_section("search", markdown)


if __name__ == "__main__":
    main()
