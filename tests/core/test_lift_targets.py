"""A lift target means what the reference's normalizeBlockLevel makes of it (answers recorded from Node 22 with
the current level 2), except where the reference computed NaN and stored it as the block's level."""

from __future__ import annotations

import math

import pytest

from stratagate.blocks import normalize_block_level
from tests.core.helpers import reference_memory

RECORDED = [
    ("next", 3), ("+1", 3), (None, 3), ("raw", 5), ("RAW", 3), (" raw", 3), ("L5", 5), ("l5", 5), ("L3", 3),
    ("l0", 0), ("L3 ", 3), ("3", 3), (" 3", 3), ("3 ", 3), ("L6", 3), ("L 3", 3), ("L9", 3), ("", 3),
    ("banana", 3), (7, 5), (-1, 0), (2.5, 3), (1.5, 2), (3.49, 3), (math.nan, 3), (math.inf, 3), (True, 3),
    (False, 3), ([3], 3), ({}, 3), ("5", 5), (5, 5), ("\u00a03", 3), ("L2\u2028", 2), ("Ｌ3", 3), ("３", 3),
    ("03", 3), ("L03", 3), ("+2", 3), ("-1", 3),
]


@pytest.mark.parametrize(("target", "level"), RECORDED, ids=repr)
def test_lift_target_reads_as_the_reference(target, level):
    assert normalize_block_level(target, 2) == level


@pytest.mark.parametrize("target", [" L3", "\u3000L3"])
def test_a_space_before_the_level_is_that_level_not_nan(target):
    assert normalize_block_level(target, 2) == 3


def test_an_unknown_target_lifts_one_level_as_in_the_reference():
    memory = reference_memory()
    level = memory.get_block_context()[0].level
    assert memory.expand_block("blk_25", "L9", source="user").level == min(5, level + 1)
