"""Short synthesized sounds (no sound files), silent when muted or when there is no audio device."""

from __future__ import annotations

from typing import Any

from nerts_lan.rules.actions import Action, Flip, Play, SlideUnder

__all__ = ["Sounds", "sound_of"]

_TONES: dict[str, tuple[int, float]] = {
    "play": (660, 0.06),
    "foundation": (880, 0.08),
    "flip": (330, 0.04),
    "refused": (180, 0.14),
    "nerts": (990, 0.35),
}


class Sounds:
    """``play(name)`` for ``play``, ``foundation``, ``flip``, ``refused`` and ``nerts``."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._sources: dict[str, Any] | None = None

    def play(self, name: str) -> None:
        if not self.enabled:
            return
        sources = self._load()
        source = sources.get(name)
        if source is None:
            return
        try:
            source.play()
        except Exception:
            self._sources = {}

    def play_move(self, action: Action) -> None:
        """The sound of a move of this seat's that the table took, if it has one."""
        name = sound_of(action)
        if name is not None:
            self.play(name)

    def _load(self) -> dict[str, Any]:
        if self._sources is None:
            self._sources = {}
            try:
                from pyglet.media import StaticSource, synthesis

                for name, (frequency, duration) in _TONES.items():
                    envelope = synthesis.LinearDecayEnvelope(peak=0.35)  # type: ignore[no-untyped-call]
                    wave = synthesis.Triangle(duration, frequency=frequency, envelope=envelope)
                    self._sources[name] = StaticSource(wave)
            except Exception:
                self._sources = {}
        return self._sources


def sound_of(action: Action) -> str | None:
    """The sound a move makes: a flip, a card to a foundation, a card played anywhere else."""
    if isinstance(action, Flip):
        return "flip"
    if isinstance(action, Play) and action.target.kind == "foundation":
        return "foundation"
    if isinstance(action, (Play, SlideUnder)):
        return "play"
    return None
