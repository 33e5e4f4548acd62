"""Short synthesized sounds (no sound files), silent when muted or when there is no audio device."""

from __future__ import annotations

from typing import Any

__all__ = ["Sounds"]

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
