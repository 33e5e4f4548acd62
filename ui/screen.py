"""What every screen of the window is: the window polls it, resizes it, closes it and hands it
its input (``ui.kit.handlers.ScreenInput`` on the window's handler stack, in UI units). A screen
defines ``update``, ``resize`` and ``close`` and overrides the input handlers it needs, and
the window's questions it answers otherwise than by default (``tell``, ``confirm_close``,
``typed_name``, ``use_settings``); the others do nothing.

Nothing here imports pyglet.
"""

from __future__ import annotations

from collections.abc import Callable

from ui.config import Settings

__all__ = ["Screen"]


class Screen:
    """One screen of the window at a time (the menu, the lobby, a table, a replay)."""

    def update(self, now: float) -> bool:
        """Advance to time ``now`` (seconds, the window's clock); True when it must be redrawn."""
        raise NotImplementedError

    def resize(self, width: int, height: int) -> None:
        """Lay the screen out again for a window of this size."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of what the screen holds (its sprites, its session)."""
        raise NotImplementedError

    def tell(self, text: str) -> None:
        """Something the window learnt that the player should know (by default: not said)."""

    def confirm_close(self, close: Callable[[], None]) -> bool:
        """Whether closing the window must wait for the player's answer (which runs ``close``
        to close it); by default it closes at once."""
        return False

    def typed_name(self) -> str | None:
        """The player's name as typed on this screen (None: it has no name field)."""
        return None

    def use_settings(self, settings: Settings) -> None:
        """The settings changed elsewhere (the network picked, the options over the screen)."""

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> None:
        """A mouse button went down."""

    def on_mouse_release(self, x: float, y: float, button: int, modifiers: int) -> None:
        """A mouse button went up."""

    def on_mouse_drag(
        self, x: float, y: float, dx: float, dy: float, buttons: int, modifiers: int
    ) -> None:
        """The mouse moved with a button held."""

    def on_mouse_motion(self, x: float, y: float, dx: float, dy: float) -> None:
        """The mouse moved."""

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        """A key went down (Escape included: the window does not close from a screen)."""

    def on_text(self, text: str) -> None:
        """Text was typed."""
