"""The table's sounds, rendered from their recipes to 16-bit mono PCM (no sound files, no pyglet).

Sounds are layered so that the ear tells the game apart without looking: a flip is a quiet tick,
a card onto a work pile a louder slap, a card onto a foundation a bright chime (someone else's,
softer), a refusal a low buzz, a lost race two falling notes, the Nerts call the loudest of all.
With the suit callout on, a foundation play is followed by its suit's motif (hearts rise, spades
fall, diamonds ping, clubs tap). ``render`` is deterministic (the noise is the bank's own
generator), so the same recipe gives the same bytes on every laptop, and ``levels`` measures
what a player would hear: ``nerts-lan sounds --out DIR`` writes every sound as a WAV file and
prints its length and levels, which is how they are checked on a machine with no speaker.
"""

from __future__ import annotations

import io
import math
import sys
import wave
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

__all__ = [
    "RATE",
    "SOUND_NAMES",
    "SUIT_CALLOUTS",
    "Levels",
    "Tone",
    "levels",
    "render",
    "wav_bytes",
    "write_all",
]

RATE: Final = 22050
"""Samples per second: plenty for these short effects, and small."""

Shape = Literal["sine", "triangle", "square", "noise"]


@dataclass(frozen=True)
class Tone:
    """One layer of a sound: a waveform at ``frequency`` Hz starting ``start`` s in, lasting
    ``length`` s, peaking at ``level`` (of full scale), with a 3 ms attack and a decay whose
    time constant is ``decay`` of the length (small: a tap; large: a held note)."""

    shape: Shape
    frequency: float
    start: float
    length: float
    level: float
    decay: float = 0.35


def _chime(start: float, root: float, level: float, length: float) -> list[Tone]:
    """A bright bell: the root, its fifth and its octave, the upper ones quieter."""
    return [
        Tone("sine", root, start, length, level),
        Tone("sine", root * 1.5, start, length * 0.8, level * 0.45),
        Tone("sine", root * 2, start, length * 0.6, level * 0.25),
    ]


_RECIPES: Final[dict[str, list[Tone]]] = {
    # A card turned from the stock: the quietest sound of the table, heard many times a round.
    "flip": [
        Tone("noise", 0, 0, 0.03, 0.10, 0.15),
        Tone("triangle", 1200, 0, 0.025, 0.05, 0.2),
    ],
    # A card (or stack) onto a work pile: a slap, louder than a flip.
    "play": [
        Tone("noise", 0, 0, 0.04, 0.20, 0.2),
        Tone("triangle", 300, 0, 0.07, 0.24, 0.3),
    ],
    # A card onto a foundation: the sound that scores.
    "foundation": [Tone("noise", 0, 0, 0.02, 0.16, 0.2), *_chime(0.0, 880, 0.36, 0.18)],
    # Another player's foundation play: the same chime, far softer (you hear the table move).
    "foundation_other": _chime(0.0, 880, 0.08, 0.12),
    "refused": [
        Tone("square", 150, 0, 0.15, 0.10, 0.6),
        Tone("triangle", 180, 0, 0.15, 0.16, 0.6),
    ],
    # Your move lost a race: two falling notes.
    "race_lost": [
        Tone("triangle", 523, 0, 0.10, 0.26, 0.5),
        Tone("triangle", 392, 0.09, 0.16, 0.26, 0.5),
    ],
    # The Nerts call: a rising arpeggio into a held chord, the loudest sound of the game.
    "nerts": [
        *(Tone("triangle", f, i * 0.07, 0.12, 0.32, 0.6) for i, f in enumerate((523, 659, 784))),
        *_chime(0.21, 1047, 0.34, 0.45),
        Tone("sine", 523, 0.21, 0.45, 0.22, 0.8),
        Tone("sine", 659, 0.21, 0.45, 0.18, 0.8),
    ],
    # Suit callouts (an option): a short motif after a foundation play, by suit.
    "suit_hearts": [
        Tone("sine", 587, 0, 0.09, 0.2, 0.5),
        Tone("sine", 880, 0.08, 0.12, 0.2, 0.5),
    ],
    "suit_diamonds": [Tone("sine", 1319, 0, 0.14, 0.18, 0.4)],
    "suit_clubs": [Tone("triangle", 262, i * 0.06, 0.05, 0.22, 0.3) for i in range(3)],
    "suit_spades": [
        Tone("sine", 659, 0, 0.09, 0.2, 0.5),
        Tone("sine", 440, 0.08, 0.12, 0.2, 0.5),
    ],
}

SOUND_NAMES: Final = tuple(_RECIPES)
"""Every sound the table plays, by name."""

SUIT_CALLOUTS: Final = {
    "H": "suit_hearts",
    "D": "suit_diamonds",
    "C": "suit_clubs",
    "S": "suit_spades",
}
"""The callout that follows a foundation play of each suit (by its letter, ``Card.suit``)."""

_ATTACK: Final = 0.003
_CEILING: Final = 0.98
"""The mix never goes past this share of full scale: a sound clips nowhere."""


def render(name: str) -> array[int]:
    """The samples of sound ``name`` (16-bit, mono, ``RATE``); KeyError for an unknown name."""
    return _mix(_RECIPES[name])


def wav_bytes(samples: array[int]) -> bytes:
    """Samples as a WAV file's bytes (what pyglet's own decoder loads)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(_little_endian(samples))
    return buffer.getvalue()


def write_all(folder: Path) -> dict[str, Path]:
    """Write every sound as ``<name>.wav`` into ``folder`` (made if missing); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name in SOUND_NAMES:
        path = folder / f"{name}.wav"
        path.write_bytes(wav_bytes(render(name)))
        written[name] = path
    return written


@dataclass(frozen=True)
class Levels:
    """What a sound measures: its length, its peak and its loudness (RMS over the part above
    -40 dB of its peak, so a long quiet tail does not hide a loud hit), in dB of full scale."""

    length_ms: float
    peak_dbfs: float
    rms_dbfs: float


def levels(samples: Iterable[int]) -> Levels:
    """Measure ``samples`` (16-bit values) as ``Levels``."""
    values = [abs(s) / 32768 for s in samples]
    if not values:
        return Levels(0.0, -math.inf, -math.inf)
    peak = max(values)
    floor = peak * 0.01
    loud = [v for v in values if v >= floor] or values
    rms = math.sqrt(sum(v * v for v in loud) / len(loud))
    return Levels(1000 * len(values) / RATE, _db(peak), _db(rms))


# --- helpers ---------------------------------------------------------------------------------


def _mix(tones: list[Tone]) -> array[int]:
    end = max(t.start + t.length for t in tones)
    mixed = [0.0] * (int(end * RATE) + 1)
    for tone in tones:
        _add(mixed, tone)
    top = max((abs(v) for v in mixed), default=0.0)
    scale = _CEILING / top if top > _CEILING else 1.0
    return array("h", (round(v * scale * 32767) for v in mixed))


def _add(mixed: list[float], tone: Tone) -> None:
    first = int(tone.start * RATE)
    count = int(tone.length * RATE)
    attack = max(1, int(_ATTACK * RATE))
    decay = math.exp(-1.0 / max(1.0, tone.decay * count))  # the envelope's factor per sample
    wave = _samples(tone, count, first)
    gain = tone.level
    for i in range(count):
        rise = i / attack if i < attack else 1.0
        fade = (count - i) / attack if count - i < attack else 1.0  # no click at the end
        mixed[first + i] += gain * rise * fade * wave[i]
        gain *= decay


def _samples(tone: Tone, count: int, seed: int) -> list[float]:
    """``count`` samples of the tone's waveform at full scale."""
    if tone.shape == "noise":
        noise = _Noise(seed)
        return [noise.next() for _ in range(count)]
    step = tone.frequency / RATE
    phases = [(i * step) % 1.0 for i in range(count)]
    if tone.shape == "sine":
        sin, turn = math.sin, 2 * math.pi
        return [sin(turn * phase) for phase in phases]
    if tone.shape == "triangle":
        return [4 * abs(phase - 0.5) - 1 for phase in phases]
    return [1.0 if phase < 0.5 else -1.0 for phase in phases]


class _Noise:
    """White noise from a fixed linear congruential generator: the same on every laptop."""

    def __init__(self, seed: int) -> None:
        self._state = (seed * 2654435761 + 12345) & 0xFFFFFFFF

    def next(self) -> float:
        self._state = (self._state * 1664525 + 1013904223) & 0xFFFFFFFF
        return self._state / 0x7FFFFFFF - 1.0


def _little_endian(samples: array[int]) -> bytes:
    data = array("h", samples)
    if data.itemsize != 2:  # pragma: no cover - every platform we ship has a 2-byte short
        raise RuntimeError("16-bit samples need a 2-byte array type")
    if sys.byteorder == "big":  # pragma: no cover - WAV is little-endian
        data.byteswap()
    return data.tobytes()


def _db(value: float) -> float:
    return 20 * math.log10(value) if value > 0 else -math.inf
