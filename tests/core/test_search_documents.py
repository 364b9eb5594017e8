"""The weighted search fields of events and element facts (spec §6.4, §6.5)."""

from __future__ import annotations

from stratagate.search.documents import element_fact_search_fields, event_search_fields, field_tokens


def test_event_fields_follow_the_reference_order_and_weights() -> None:
    event = {
        "title": "Chose SQLite",
        "summary": "Atlas storage",
        "narrative": "Long story",
        "tags": ["db", "atlas"],
        "quotes": ["we chose it", "fine"],
        "temporal": {
            "participants": ["Alice", "Bob"],
            "eventType": "decision",
            "originalText": "yesterday",
            "happenedStart": "2026-03-03",
        },
    }
    assert event_search_fields(event) == [
        ("title", "Chose SQLite", 4),
        ("summary", "Atlas storage", 3),
        ("tags", "db atlas", 2),
        ("quotes", "we chose it fine", 2),
        ("narrative", "Long story", 1),
        ("participants", "Alice Bob", 5),
        ("eventType", "decision", 5),
        ("originalText", "yesterday", 4),
        ("happened", "2026-03-03 ", 4),
    ]
    tokens = field_tokens(event_search_fields(event))
    assert tokens.count("word:chose") == 4 + 2 and tokens.count("word:2026") == 4
    assert len(tokens) == 2 * 4 + 2 * 3 + 2 * 2 + 4 * 2 + 2 + 2 * 5 + 5 + 4 + 3 * 4


def test_missing_event_values_are_empty_text_not_placeholders() -> None:
    fields = event_search_fields({"title": "Only a title", "summary": "", "narrative": "", "tags": [], "quotes": [],
                                  "temporal": {"eventType": None}})
    assert fields[-1] == ("happened", " ", 4)
    assert field_tokens(fields) == ["word:only", "word:a", "word:title"] * 4


def test_fact_fields_join_set_values_and_weigh_name_highest() -> None:
    element = {"name": "Atlas", "aliases": ["Project Atlas"], "type": "project"}
    assert element_fact_search_fields(element, {"key": "members", "value": ["Alice", "Bob"]}) == [
        ("name", "Atlas", 5),
        ("aliases", "Project Atlas", 4),
        ("type", "project", 2),
        ("factKey", "members", 4),
        ("factValue", "Alice Bob", 5),
    ]
    assert element_fact_search_fields(element, {"key": "storage", "value": "SQLite"})[-1] == ("factValue", "SQLite", 5)
