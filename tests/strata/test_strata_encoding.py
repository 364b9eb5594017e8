"""Properties of the hand-built encoders and of path canonicalisation (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from stratagate.strata.archive import Blob, blob_bytes
from stratagate.strata.errors import UnsafePathError
from stratagate.strata.paths import canonical_relative_path, inside_tier
from stratagate.strata.shadow import ShadowEntry
from stratagate.strata.sidecar import AccessRecord, encode_records, parse_sidecar

texts = st.text(st.characters(codec="utf-8"), max_size=60)
segments = st.sampled_from(["a", "b.md", ".", "..", "", "notes", ".hidden", "ü", "c d", "x\\y"])


@given(path=texts, content=texts, archived_at=texts, tags=st.lists(texts, max_size=3))
def test_blob_bytes_are_exactly_what_json_dumps_indent_2_writes(path, content, archived_at, tags):
    blob = Blob(path, content, archived_at, tags)
    expected = {"original_path": path, "content": content, "archived_at": archived_at, "tags": tags}
    assert blob_bytes(blob) == json.dumps(expected, indent=2).encode("utf-8")


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
