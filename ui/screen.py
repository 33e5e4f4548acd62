"""What every screen of the window is: the window polls it, resizes it, closes it and forwards
its input to it. A screen defines ``update``, ``resize`` and ``close`` and overrides the input
handlers it needs; the others do nothing.

Nothing here imports pyglet.
"""

from __future__ import annotations

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
