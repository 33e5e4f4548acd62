"""The prep countdown after a deal at a LAN table: "3", "2", "1" in large type over the middle
of the table, then "Go!"; until then the player's moves wait (every laptop holds its players
and bots for the table's ``countdown``, so the round starts for everyone at once)."""

from __future__ import annotations

import math
from typing import Any, Final

from pyglet.graphics import Group

from ui.kit.theme import ACCENT, GOOD
from ui.kit.widgets import label

__all__ = ["GO_SECONDS", "Countdown"]

GO_SECONDS: Final = 0.6
"""How long "Go!" stays once the countdown is over."""


class Countdown:
    """``start`` it at a deal; ``tick`` each frame (True when what it shows changed);
    ``holding`` while the player's moves must wait."""

    def __init__(self, batch: Any, group: Group) -> None:
        self.batch = batch
        self.group = group
        self.ends = -math.inf
        self._label: Any = None
        self._place = (0.0, 0.0)

    def start(self, now: float, seconds: float, place: tuple[float, float]) -> None:
        """A deal at ``now``: count ``seconds`` down (nothing for 0) centred on ``place``."""
        self.ends = now + seconds if seconds > 0 else -math.inf
        self._place = place
        self.tick(now)

    def holding(self, now: float) -> bool:
        return now < self.ends

    def tick(self, now: float) -> bool:
        wanted = self._text(now)
        shown = self._label.text if self._label is not None else None
        if wanted == shown:
            return False
        if self._label is not None:
            self._label.delete()
            self._label = None
        if wanted is not None:
            colour = ACCENT if wanted != "Go!" else GOOD
            x, y = self._place
            self._label = label(
                self.batch, self.group, wanted, x, y, 72, colour=colour, anchor_x="center",
                bold=True,
            )  # fmt: skip
        return True

    @property
    def shown(self) -> str | None:
        """What it shows now ("3", ..., "Go!"), None when nothing."""
        return None if self._label is None else str(self._label.text)

    def _text(self, now: float) -> str | None:
        if now < self.ends:
            return str(math.ceil(self.ends - now))
        if now < self.ends + GO_SECONDS:
            return "Go!"
        return None
