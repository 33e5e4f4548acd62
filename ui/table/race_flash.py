"""The race you lost, on the card: the card you grabbed flashes in the winner's seat colour.

When a move of yours loses a race (another player's move was ordered first), its card flies back
as every refused card does; meanwhile it is tinted with the colour of the winner's team (the
colour the table draws that seat with) and, once back in its place, gives a short shake. The
shake is the only motion here and hangs on one switch, ``RACE_SHAKE`` (reduced motion turns it
off; the tint stays).
"""

from __future__ import annotations

import math
from typing import Any, Final

from nerts_lan.rules.actions import Play, SlideUnder
from nerts_lan.rules.state import RejectionKind, Table
from nerts_lan.table.replica import ActionRejected
from ui.kit.geometry import Rect
from ui.kit.theme import Colour, team_rgb

__all__ = ["FLASH_SECONDS", "RACE_SHAKE", "RaceFlash", "lost_race_card", "race_tint"]

RACE_SHAKE: Final = True
"""Whether the card that lost a race shakes (the one switch for reduced motion)."""

FLASH_SECONDS: Final = 1.0
"""How long the card stays tinted: fully for the first half, then fading."""

_TINT_STRENGTH: Final = 0.7
"""How much of the winner's colour the card takes (1: all of it, the face would be unreadable)."""

_SHAKE_UNITS: Final = 5.0
"""The shake's reach, in layout units either side."""

_SHAKE_SWINGS: Final = 3.0

_WHITE: Final = (255, 255, 255)


def lost_race_card(
    table: Table, own_team: int, event: ActionRejected
) -> tuple[tuple[object, ...], Colour] | None:
    """The sprite key of the card a lost race took back and the winner's seat colour (None: not
    a lost race of a card, or a winner not at the table)."""
    action = event.action
    if event.kind is not RejectionKind.LOST_RACE or not isinstance(action, (Play, SlideUnder)):
        return None
    winner = table.team_of(event.lost_race_to or "")
    if winner is None:
        return None
    return (own_team, action.card), team_rgb(table.back_colours[winner])


def race_tint(colour: Colour, strength: float = 1.0) -> Colour:
    """The sprite colour of a card tinted ``strength`` (0..1) of the way to ``colour``."""
    amount = _TINT_STRENGTH * min(max(strength, 0.0), 1.0)
    return (
        round(255 + (colour[0] - 255) * amount),
        round(255 + (colour[1] - 255) * amount),
        round(255 + (colour[2] - 255) * amount),
    )


class RaceFlash:
    """Cards flashing for a lost race, by sprite key: tint and shake, advanced by ``apply``."""

    def __init__(self) -> None:
        self._cards: dict[tuple[object, ...], tuple[Colour, float]] = {}

    def start(self, key: tuple[object, ...], colour: Colour, now: float) -> None:
        """Flash the card of sprite ``key`` in ``colour`` from ``now``."""
        self._cards[key] = (colour, now)

    def colour_of(self, key: tuple[object, ...]) -> Colour | None:
        """The colour card ``key`` is flashing in, None when it is not."""
        flashing = self._cards.get(key)
        return None if flashing is None else flashing[0]

    def apply(
        self,
        sprites: dict[tuple[object, ...], Any],
        shown: dict[tuple[object, ...], Rect],
        moving: set[tuple[object, ...]],
        now: float,
        shake: bool = True,
    ) -> bool:
        """Tint (and shake, unless ``moving``: flying or dragged, or ``shake`` is off: reduced
        motion) every flashing card for ``now``; a flash that is over gives its card back its
        own look. True while any flash goes on."""
        for key, (colour, t0) in list(self._cards.items()):
            sprite = sprites.get(key)
            t = (now - t0) / FLASH_SECONDS
            if sprite is None or t >= 1.0:
                del self._cards[key]
                if sprite is not None:
                    sprite.color = _WHITE
                    self._place(sprite, shown.get(key), 0.0)
                continue
            sprite.color = race_tint(colour, 1.0 if t < 0.5 else (1.0 - t) * 2)
            if key not in moving:
                self._place(sprite, shown.get(key), _shake(t) if shake else 0.0)
        return bool(self._cards)

    def clear(self) -> None:
        self._cards.clear()

    @staticmethod
    def _place(sprite: Any, rect: Rect | None, offset: float) -> None:
        if rect is not None:
            sprite.x = round(rect.x + offset)


def _shake(t: float) -> float:
    """The card's offset at ``t`` (0..1) of the flash: a few swings that die away."""
    if not RACE_SHAKE:
        return 0.0
    return _SHAKE_UNITS * math.sin(t * _SHAKE_SWINGS * 2 * math.pi) * (1.0 - t)
