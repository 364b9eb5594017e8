"""Properties of the hand-built encoders and of path canonicalisation (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.strata.archive import Blob, RunBlobs, blob_bytes, infer_tags
from stratagate.strata.errors import UnsafePathError
from stratagate.strata.paths import canonical_relative_path, inside_tier
from stratagate.strata.repair import salvage_entries
from stratagate.strata.shadow import ShadowEntry, keywords_text
from stratagate.strata.sidecar import AccessRecord, encode_records, parse_sidecar
from tests.property_budget import examples

texts = st.text(st.characters(codec="utf-8"), max_size=60)
segments = st.sampled_from(["a", "b.md", ".", "..", "", "notes", ".hidden", "ü", "c d", "x\\y"])


@given(path=texts, content=texts, archived_at=texts, tags=st.lists(texts, max_size=3))
def test_blob_bytes_are_exactly_what_json_dumps_indent_2_writes(path, content, archived_at, tags):
    blob = Blob(path, content, archived_at, tags)
    expected = {"original_path": path, "content": content, "archived_at": archived_at, "tags": tags}
    assert blob_bytes(blob) == json.dumps(expected, indent=2).encode("utf-8")


@given(
    path=st.one_of(texts, st.lists(segments, min_size=1, max_size=3).map("/".join)),
    data=st.one_of(
        st.binary(max_size=60),
        st.text(st.characters(max_codepoint=127), max_size=60).map(str.encode),
        texts.map(str.encode),
    ),
)
@settings(max_examples=examples(200))
def test_an_eviction_runs_blobs_are_exactly_what_json_dumps_writes(path, data):
    """Eviction's blob bytes (escaped as bytes when the text is printable ASCII), keywords column and
    preview are what `json.dumps`, `keywords_text` and the reference's 200-character cut give."""
    archived_at = "2026-12-02T00:00:00+00:00"
    run = RunBlobs(archived_at)
    encoded = run.encode(path, data)
    if encoded is None:
        assert not _is_utf8(data)
        return
    content, tags = data.decode("utf-8"), infer_tags(path)
    expected = {"original_path": path, "content": content, "archived_at": archived_at, "tags": tags}
    assert encoded == (
        json.dumps(expected, indent=2).encode("utf-8"),
        keywords_text(tags),
        content[:200],
    )
    assert run.encode(path, data) == encoded  # a second file of the run: the cached first tag


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@given(
    records=st.dictionaries(
        texts,
        st.builds(AccessRecord, st.integers(0, 10**6), st.floats(0, 2e9, allow_nan=False)),
        max_size=5,
    )
)
def test_sidecar_encoding_is_exactly_json_dumps_indent_2(records):
    expected = {
        path: {"access_count": r.access_count, "last_accessed": r.last_accessed}
        for path, r in records.items()
    }
    assert encode_records(records) == json.dumps(expected, indent=2)


@given(keywords=st.lists(texts, max_size=4))
def test_shadow_keywords_column_is_json_dumps(keywords):
    entry = ShadowEntry("id", "p.md", keywords, "/a/id.json", "", "t")
    assert entry.row()[2] == json.dumps(keywords)


@given(parts=st.lists(segments, min_size=1, max_size=6), leading_slash=st.booleans())
def test_canonical_paths_never_leave_the_tier(tmp_path_factory, parts, leading_slash):
    raw = ("/" if leading_slash else "") + "/".join(parts)
    root = tmp_path_factory.getbasetemp() / "tier"
    try:
        canonical = canonical_relative_path(raw)
    except UnsafePathError:
        return
    assert ".." not in canonical.replace("\\", "/").split("/")
    assert canonical == canonical_relative_path(canonical)
    assert (root / canonical).resolve().is_relative_to(root.resolve())
    assert inside_tier(root, raw) == root / canonical


def test_parse_sidecar_merges_spellings_of_one_path():
    text = json.dumps(
        {
            "./p/a.md": {"access_count": 1, "last_accessed": 5.0},
            "p//a.md": {"access_count": 2, "last_accessed": 3},
        }
    )
    assert parse_sidecar(Path("s.json"), text) == {"p/a.md": AccessRecord(3, 5.0)}


@settings(max_examples=examples(100))
@given(
    records=st.dictionaries(
        texts,
        st.builds(AccessRecord, st.integers(0, 10**6), st.floats(0, 2e9, allow_nan=False)),
        max_size=5,
    ),
    cut=st.floats(0, 1),
)
def test_salvage_reads_back_every_entry_written_before_a_truncation(records, cut):
    text = encode_records(records)
    truncated = text[: int(len(text) * cut)]
    salvaged = salvage_entries(truncated)
    # Every entry salvaged is one that was written, with its exact values ...
    for key, value in salvaged.items():
        assert key in records
        assert value == {
            "access_count": records[key].access_count,
            "last_accessed": records[key].last_accessed,
        }
    # ... and every entry whose closing brace survived the cut is salvaged.
    for key, record in records.items():
        entry = json.dumps(
            {key: {"access_count": record.access_count, "last_accessed": record.last_accessed}}, indent=2
        )
        body = entry[2:-2]  # the entry's lines as encode_records writes them
        if text.find(body) + len(body) <= len(truncated) and text.find(body) >= 0:
            assert key in salvaged
