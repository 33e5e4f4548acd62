"""Standard streams that never die on a character the console or pipe cannot encode.

Windows Python writes a pipe or a file (``nerts-lan doctor | more``, ``> out.txt``) in the
locale's code page, cp1252 in most of Europe and the Americas, which has no arrows and no card
suits: an unencodable character raises ``UnicodeEncodeError`` and kills the command. A console
reached as ASCII (``PYTHONIOENCODING=ascii``, a C locale, an old terminal) is the same. Every
command goes through ``use_stand_ins`` at the CLI entry: what the stream's encoding cannot hold is
written as an ASCII stand-in ("->" for "→", "H" for "♥", "?" for what has none), and what it can
hold is written as is. Standard output also writes "\\n" as "\\n" on every OS (a Windows text
stream would write "\\r\\n"), so a headless JSON line is the same bytes everywhere.
"""

from __future__ import annotations

import codecs
import io
import unicodedata

__all__ = ["HANDLER", "STAND_INS", "stand_in", "use_stand_ins"]

HANDLER = "nerts-lan-stand-in"

# What the game prints beyond ASCII, written so that a reader still understands it.
STAND_INS = {
    "→": "->", "←": "<-", "↑": "^", "↓": "v",
    "♠": "S", "♥": "H", "♦": "D", "♣": "C",
    "×": "x", "·": ".", "…": "...", "—": "--", "–": "-", "•": "*",
    "‘": "'", "’": "'", "“": '"', "”": '"',
}  # fmt: skip


def stand_in(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler: ASCII stand-ins for the characters the encoding cannot hold."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "".join(_stand_in(char) for char in error.object[error.start : error.end]), error.end


def use_stand_ins(stdout: object, stderr: object) -> None:
    """Make `stdout` and `stderr` (text streams, or anything else, which is left alone) write
    stand-ins instead of failing, and `stdout` write "\\n" untranslated."""
    codecs.register_error(HANDLER, stand_in)
    for stream, newline in ((stdout, "\n"), (stderr, None)):
        if not isinstance(stream, io.TextIOWrapper):
            continue  # None under pythonw.exe, or a stream some caller put there
        try:
            if newline:
                stream.reconfigure(errors=HANDLER, newline=newline)
            else:
                stream.reconfigure(errors=HANDLER)
        except (ValueError, io.UnsupportedOperation):
            continue  # a closed or detached stream: nothing will be written to it


def _stand_in(char: str) -> str:
    if char in STAND_INS:
        return STAND_INS[char]
    # An accented letter keeps its letter ("é" is "e"), a superscript its digit.
    plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii")
    return plain or "?"
