"""Make the window's font (ui/kit/fonts/) from Debian's DejaVu Sans: a subset, renamed "Nerts Sans".

Neither Windows nor macOS ships DejaVu Sans, and their renderers (DirectWrite, Quartz) fell back
to a font without the card suits, so the wheel carries its own font. The whole of DejaVu Sans and
its Bold are 1.4 MB; the window draws Latin text, player names (which may be in any European
alphabet: Latin, Greek, Cyrillic) and a few symbols, so the subset keeps those. It is renamed so
that it never stands in for a full DejaVu Sans installed on the machine (the Bitstream Vera
licence asks only that modified fonts drop "Bitstream" and "Vera" from their names; DejaVu's
own changes are public domain).

    pip install fonttools   # a tool of the maintainers, not a dependency of the game
    python3 scripts/subset_font.py [--from /usr/share/fonts/truetype/dejavu]

Debian's fonts-dejavu-core provides the sources (its licence, copied to ui/kit/fonts/LICENSE-DejaVu
.txt, is /usr/share/doc/fonts-dejavu-core/copyright).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

FAMILY = "Nerts Sans"
SOURCES = {"DejaVuSans.ttf": "NertsSans.ttf", "DejaVuSans-Bold.ttf": "NertsSans-Bold.ttf"}
KEPT = [
    (0x0020, 0x007E),  # ASCII
    (0x00A0, 0x024F),  # Latin-1, Latin Extended-A and -B: names in European languages
    (0x0370, 0x03FF),  # Greek
    (0x0400, 0x04FF),  # Cyrillic
    (0x2000, 0x206F),  # punctuation: dashes, the ellipsis, ‹ ›, the bullet
    (0x2070, 0x209F),  # superscripts and subscripts (⁴)
    (0x20AC, 0x20AC),  # the euro sign
    (0x2190, 0x21FF),  # arrows (← ↑ → ↓ ↻)
    (0x2212, 0x2212),  # the minus sign
    (0x25AE, 0x25AE),  # ▮, the stand-in for a card's back
    (0x2605, 0x2605),  # ★, the stand-in for the joker and a trophy
    (0x2660, 0x2667),  # ♠ ♥ ♦ ♣ and their white forms
    (0x2713, 0x2714),  # ✓ ✔
]
"""The code point ranges kept (the window's own texts: grep ui/ and nerts_lan/ for non-ASCII)."""
OUT = Path(__file__).resolve().parent.parent / "ui" / "fonts"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", default="/usr/share/fonts/truetype/dejavu")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    for name, made in SOURCES.items():
        font = TTFont(Path(args.source) / name)
        options = subset.Options()
        options.name_IDs = ["*"]  # keep the copyright and licence records
        options.name_languages = ["*"]
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=[c for low, high in KEPT for c in range(low, high + 1)])
        subsetter.subset(font)
        _rename(font)
        font.save(OUT / made)
        print(f"{made}: {(OUT / made).stat().st_size} bytes")


def _rename(font: TTFont) -> None:
    """Family "Nerts Sans" in every name record that named DejaVu Sans."""
    style = "Bold" if font["OS/2"].usWeightClass >= 700 else "Book"
    for record in font["name"].names:
        text = record.toUnicode()
        if record.nameID in (1, 16):
            record.string = FAMILY
        elif record.nameID in (4,):
            record.string = FAMILY if style == "Book" else f"{FAMILY} {style}"
        elif record.nameID == 6:
            record.string = "NertsSans" if style == "Book" else f"NertsSans-{style}"
        elif record.nameID == 3:
            record.string = text.replace("DejaVu Sans", FAMILY).replace("DejaVuSans", "NertsSans")


if __name__ == "__main__":
    main()
