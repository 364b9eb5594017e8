"""The tokenizer against the reference's verified examples (spec §6.1) and the fixture's oracle samples."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.search.tokenize import (
    fuzzy_search_match,
    normalize_search_text,
    search_tokens,
    weighted_search_tokens,
)
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_ORACLE


def _oracle_samples() -> list[tuple[str, dict]]:
    oracle = json.loads(REFERENCE_ORACLE.read_text())
    return list(oracle["namespaces"][REFERENCE_NAMESPACE]["tokenization"].items())


def test_spec_mixed_example_gives_words_then_han_bigrams() -> None:
    assert search_tokens("Hello, World! 你好世界 PostgreSQL v2.0 don't ＡＢＣ") == [
        "word:hello", "word:world", "word:你好", "word:世界", "word:postgresql", "word:v2.0",
        "word:don't", "word:abc", "han2:你好", "han2:好世", "han2:世界",
    ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("foo-bar", ["foo", "bar"]),
        ("a_b", ["a_b"]),
        ("3.14", ["3.14"]),
        ("2026-01-01T08:00:00.000+08:00", ["2026", "01", "01t08", "00", "00.000", "08", "00"]),
    ],
)
def test_spec_verified_cases(text: str, words: list[str]) -> None:
    assert search_tokens(text) == [f"word:{word}" for word in words]


@pytest.mark.parametrize(("text", "expected"), _oracle_samples(), ids=[text for text, _ in _oracle_samples()])
def test_reference_oracle_samples(text: str, expected: dict) -> None:
    assert normalize_search_text(text) == expected["normalized"]
    assert search_tokens(text) == expected["tokens"]


def test_single_han_character_gives_han1_and_runs_count_code_points() -> None:
    assert search_tokens("中") == ["word:中", "han1:中"]
    # U+20000 and U+20001 are astral (two UTF-16 units each): bigrams pair code points, not units.
    assert search_tokens("𠀀𠀁 x")[-1] == "han2:𠀀𠀁"


def test_normalization_uses_javascript_whitespace_and_full_lowercase() -> None:
    assert normalize_search_text("\u3000 A\u00a0\u2003B\n\tC  ") == "a b c"
    # U+001C is whitespace for Python's str.split but not for JavaScript's \s.
    assert normalize_search_text("a\x1cb") == "a\x1cb"
    assert normalize_search_text("ΣΑΣ İ") == "σας i\u0307"
    assert search_tokens("   ") == []
    assert search_tokens("!!! ...") == []


def test_fuzzy_match_is_normalized_containment_either_way() -> None:
    assert fuzzy_search_match("Design Team", "design")
    assert fuzzy_search_match("bob", "  BOB  ")
    assert fuzzy_search_match("Al", "alice")
    assert not fuzzy_search_match("", "alice")
    assert not fuzzy_search_match("carol", "alice")


def test_weighted_tokens_repeat_each_field_floor_weight_times() -> None:
    assert weighted_search_tokens([("a b", 2.9), ("c", 0.5), ("", 4)]) == [
        "word:a", "word:b", "word:a", "word:b", "word:c",
    ]


@given(st.text(max_size=60))
def test_tokens_are_a_function_of_the_normalized_text(text: str) -> None:
    tokens = search_tokens(text)
    assert tokens == search_tokens(normalize_search_text(text))
    assert all(token.split(":", 1)[1] for token in tokens)
    assert all(token.startswith(("word:", "han1:", "han2:")) for token in tokens)


def test_cached_tokens_are_fresh_lists_for_each_caller() -> None:
    tokens = search_tokens("Alice")
    tokens.append("word:intruder")
    assert search_tokens("Alice") == ["word:alice"]
    long_text = "word " * 40
    assert search_tokens(long_text) == ["word:word"] * 40
