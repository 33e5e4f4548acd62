"""The table's sounds, played through pyglet (rendered by ``ui.kit.soundbank``, no sound files):
silent when muted or when there is no audio device."""

from __future__ import annotations

import io
import threading
from collections.abc import Hashable
from typing import Any

from nerts_lan.rules.actions import Action, Flip, Play, SlideUnder
from nerts_lan.rules.state import RejectionKind
from ui.kit.soundbank import SOUND_NAMES, SUIT_CALLOUTS, render, wav_bytes

__all__ = ["Sounds", "refusal_sound", "sound_of", "sounds_of", "warm_up"]

_RENDERED: dict[str, bytes] = {}
"""Each sound's WAV bytes, once rendered (the same for every table of the process)."""

_warming: list[threading.Thread] = []


class Sounds:
    """``play(name)`` for any of ``soundbank.SOUND_NAMES``; ``play_move`` for a move the table
    took (yours, or with ``own=False`` someone else's, which only a foundation play makes heard);
    ``callouts``: a foundation play is followed by its suit's motif."""

    def __init__(self, enabled: bool, callouts: bool = False) -> None:
        self.enabled = enabled
        self.callouts = callouts
        self.played: list[str] = []
        """What was asked to play, newest last (a few dozen kept: what a test listens to)."""
        self._sources: dict[str, Any] | None = None
        self._media: Any = None
        self._heard: set[Hashable] = set()
        """The moves of this round already heard (a reorder applies a move again)."""
        if enabled:
            warm_up()

    def play(self, name: str) -> None:
        if not self.enabled:
            return
        self.played = [*self.played[-31:], name]
        source = self._source(name)
        if source is None:
            return
        try:
            source.play()
        except Exception:
            self._sources, self._media = {}, None  # no audio device after all: stay silent

    def play_move(self, action: Action, own: bool = True, key: Hashable = None) -> None:
        """The sounds of a move that the table took, if it makes any; a move with a ``key``
        (its entry's) heard already this round is not heard again."""
        if key is not None:
            if key in self._heard:
                return
            self._heard.add(key)
        for name in sounds_of(action, own, self.callouts):
            self.play(name)

    def new_round(self) -> None:
        """A new deal: its moves are new."""
        self._heard.clear()

    def play_refusal(self, kind: RejectionKind | None) -> None:
        """A move of yours the table refused (``refusal_sound``)."""
        self.play(refusal_sound(kind))

    def _source(self, name: str) -> Any:
        """Sound ``name`` ready to play (loaded the first time it is asked for, from what
        ``warm_up`` rendered); None without an audio device."""
        if self._sources is None:
            self._sources = {}
            try:
                from pyglet import media

                self._media = media
            except Exception:
                return None
        if name not in self._sources and self._media is not None:
            try:
                data = io.BytesIO(_wav(name))
                self._sources[name] = self._media.load(f"{name}.wav", file=data, streaming=False)
            except Exception:
                self._sources[name] = None
        return self._sources.get(name)


def sound_of(action: Action) -> str | None:
    """The sound a move of yours makes: a flip, a card to a foundation, a card played anywhere
    else."""
    if isinstance(action, Flip):
        return "flip"
    if isinstance(action, Play) and action.target.kind == "foundation":
        return "foundation"
    if isinstance(action, (Play, SlideUnder)):
        return "play"
    return None


def sounds_of(action: Action, own: bool, callouts: bool) -> list[str]:
    """The sounds a move makes, in order: yours as ``sound_of`` says, then the suit's callout
    after a foundation play when ``callouts``; someone else's only when it reaches a foundation
    (softly: you hear the table, not every flip of it)."""
    name = sound_of(action)
    if name != "foundation" and not own:
        return []
    if name is None:
        return []
    sounds = [name if own else "foundation_other"]
    if own and name == "foundation" and callouts and isinstance(action, Play):
        sounds.append(SUIT_CALLOUTS[action.card.suit])
    return sounds


def refusal_sound(kind: RejectionKind | None) -> str:
    """The sound of a move of yours that the table refused: two falling notes when it lost a
    race, else the refusal's buzz."""
    return "race_lost" if kind is RejectionKind.LOST_RACE else "refused"


def warm_up() -> None:
    """Render every sound in a helper thread, once a process (35 ms of CPU in all), so that no
    sound costs a frame the first time it plays: the Nerts call alone took 16 ms, in the very
    frame the round ended. A sound asked for before its turn is rendered on the spot."""
    if _warming:
        return
    thread = threading.Thread(target=_render_all, name="nerts-sounds", daemon=True)
    _warming.append(thread)
    thread.start()


def _render_all() -> None:
    for name in SOUND_NAMES:
        _wav(name)


def _wav(name: str) -> bytes:
    """Sound ``name`` as WAV bytes (rendered deterministically: two threads rendering one
    sound at once both store the same bytes)."""
    data = _RENDERED.get(name)
    if data is None:
        data = _RENDERED[name] = wav_bytes(render(name))
    return data
