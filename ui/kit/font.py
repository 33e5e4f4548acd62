"""The font the wheel ships (ui/kit/fonts/: "Nerts Sans", a subset of DejaVu Sans with the card
suits, see scripts/subset_font.py), and which characters it draws, read from its own file.

Nothing here imports pyglet: the window's ``ui.kit.widgets`` registers the files with pyglet.
"""

from __future__ import annotations

import functools
import struct
from pathlib import Path

__all__ = ["FONT_FILES", "FONT_FOLDER", "characters_in"]

FONT_FOLDER = Path(__file__).resolve().parent / "fonts"
FONT_FILES = (FONT_FOLDER / "NertsSans.ttf", FONT_FOLDER / "NertsSans-Bold.ttf")
"""The regular and the bold face: the labels use both."""


@functools.cache
def characters_in(path: Path) -> frozenset[int]:
    """The code points a TrueType font maps to a glyph (its Windows Unicode BMP 'cmap', format
    4): what the renderers of Windows and macOS, which pyglet asks no such question, draw from
    it. ``ValueError`` names what is wrong with a file that is not such a font."""
    data = path.read_bytes()
    try:
        return frozenset(_format_4_characters(data, _cmap_subtable(data)))
    except struct.error as error:
        raise ValueError(f"{path}: a truncated font file ({error})") from None


def _cmap_subtable(data: bytes) -> int:
    """Where the font's Unicode BMP character map (platform 3, encoding 1) starts."""
    (tables,) = struct.unpack_from(">H", data, 4)
    for index in range(tables):
        tag, _, offset, _ = struct.unpack_from(">4sIII", data, 12 + 16 * index)
        if tag == b"cmap":
            (count,) = struct.unpack_from(">H", data, offset + 2)
            for entry in range(count):
                platform, encoding, start = struct.unpack_from(">HHI", data, offset + 4 + 8 * entry)
                if (platform, encoding) == (3, 1):
                    return int(offset + start)
            raise ValueError("the font has no Unicode (3, 1) character map")
    raise ValueError("the file has no 'cmap' table: not a TrueType font")


def _format_4_characters(data: bytes, at: int) -> list[int]:
    form, _, _, doubled = struct.unpack_from(">HHHH", data, at)
    if form != 4:
        raise ValueError(f"the Unicode character map is format {form}, not 4")
    segments = doubled // 2
    ends = struct.unpack_from(f">{segments}H", data, at + 14)
    starts = struct.unpack_from(f">{segments}H", data, at + 16 + doubled)
    deltas = struct.unpack_from(f">{segments}h", data, at + 16 + 2 * doubled)
    range_at = at + 16 + 3 * doubled
    offsets = struct.unpack_from(f">{segments}H", data, range_at)
    found: list[int] = []
    for segment in range(segments):
        for code in range(starts[segment], ends[segment] + 1):
            if code == 0xFFFF:
                continue
            if offsets[segment] == 0:
                glyph = (code + deltas[segment]) & 0xFFFF
            else:
                where = range_at + 2 * segment + offsets[segment] + 2 * (code - starts[segment])
                (glyph,) = struct.unpack_from(">H", data, where)
                glyph = (glyph + deltas[segment]) & 0xFFFF if glyph else 0
            if glyph:
                found.append(code)
    return found
