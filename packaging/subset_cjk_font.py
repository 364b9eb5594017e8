"""Cut Noto Sans CJK JP down to the commonly used CJK characters for resources/fonts.

The full collection is tens of MB; the app needs legible Han, Kana and Hangul, not every rare ideograph. Kept:
kana, the 2,350 Hangul syllables of KS X 1001, the Han characters of GB2312 level 1 (3,755) and JIS X 0208
level 1 (2,965), CJK punctuation and full-width forms: 3.2 MB. Characters outside the subset still
fall back to whatever the system has.

Run after `apt-get download fonts-noto-cjk && dpkg-deb -x fonts-noto-cjk_*.deb x` and `pip install fonttools`:
`.venv/bin/python packaging/subset_cjk_font.py x/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection

OUTPUT = Path(__file__).resolve().parents[1] / "resources" / "fonts" / "NotoSansCJKjp-Regular-Subset.otf"
FAMILY = "Noto Sans CJK JP"


def double_byte_characters(codec: str, rows: range, cells: range) -> set[str]:
    """The characters a legacy double-byte codec maps at rows × cells (its lead and trail bytes)."""
    characters = set()
    for lead in rows:
        for trail in cells:
            try:
                characters.add(bytes((lead, trail)).decode(codec))
            except UnicodeDecodeError:
                continue  # an unassigned cell
    return characters


def jis_level_1() -> set[str]:
    """JIS X 0208 rows 16-47 (level 1 kanji), through the EUC-JP encoding of those rows."""
    return double_byte_characters("euc_jp", range(0xB0, 0xD0), range(0xA1, 0xFF))


def wanted_characters() -> set[str]:
    characters = {chr(code) for code in range(0x20, 0x7F)}
    characters |= {chr(code) for code in range(0x3000, 0x3100)}  # CJK punctuation, hiragana, katakana
    characters |= {chr(code) for code in range(0x3130, 0x3190)}  # Hangul compatibility jamo
    characters |= {chr(code) for code in range(0xFF00, 0xFFF0)}  # full-width and half-width forms
    characters |= double_byte_characters("euc_kr", range(0xB0, 0xC9), range(0xA1, 0xFF))  # Hangul syllables
    characters |= double_byte_characters("gb2312", range(0xB0, 0xD8), range(0xA1, 0xFF))  # GB2312 level 1
    characters |= jis_level_1()
    return characters


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    collection = TTCollection(sys.argv[1])
    font = next(face for face in collection.fonts if face["name"].getDebugName(1) == FAMILY)
    options = subset.Options()
    options.layout_features = ["*"]  # vertical forms and locale variants stay usable
    options.name_IDs = ["*"]  # keeps the copyright and licence entries
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(character) for character in wanted_characters()))
    subsetter.subset(font)
    font.save(OUTPUT)
    print(f"{OUTPUT}: {OUTPUT.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
