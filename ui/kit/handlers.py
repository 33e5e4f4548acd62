"""Input on the window's handler stack (pyglet's ``push_handlers``): the top handler that takes
an event takes it from all below, and the window's own methods see only what nobody took.

pyglet hands the handlers the mouse in the window's pixels; these give their targets UI units,
as the screens and panels count everything (``unit`` pixels make one, read at each event).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["HandlerStack", "InputTarget", "ModalInput", "PanelInput", "ScreenInput"]

HANDLED = True
"""pyglet's ``EVENT_HANDLED``: the event goes no further down the stack."""


class HandlerStack(Protocol):
    """What the handlers need of the window: its scale, its size, and its handler stack."""

    unit: float

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...

    def push_handlers(self, *handlers: object) -> None: ...

    def remove_handlers(self, *handlers: object) -> None: ...


class InputTarget(Protocol):
    """A screen's input handlers, in UI units (``ui.screen.Screen`` has them all)."""

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> None: ...

    def on_mouse_release(self, x: float, y: float, button: int, modifiers: int) -> None: ...

    def on_mouse_drag(
        self, x: float, y: float, dx: float, dy: float, buttons: int, modifiers: int
    ) -> None: ...

    def on_mouse_motion(self, x: float, y: float, dx: float, dy: float) -> None: ...

    def on_key_press(self, symbol: int, modifiers: int) -> None: ...

    def on_text(self, text: str) -> None: ...


class ScreenInput:
    """All the input of the window's screen: nothing goes on to the window's own handlers (so
    Escape never closes the window from a screen: pyglet's default would)."""

    def __init__(self, window: HandlerStack, screen: InputTarget) -> None:
        self._window = window
        self._screen = screen

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> bool:
        u = self._window.unit
        self._screen.on_mouse_press(x / u, y / u, button, modifiers)
        return HANDLED

    def on_mouse_release(self, x: float, y: float, button: int, modifiers: int) -> bool:
        u = self._window.unit
        self._screen.on_mouse_release(x / u, y / u, button, modifiers)
        return HANDLED

    def on_mouse_drag(
        self, x: float, y: float, dx: float, dy: float, buttons: int, modifiers: int
    ) -> bool:
        u = self._window.unit
        self._screen.on_mouse_drag(x / u, y / u, dx / u, dy / u, buttons, modifiers)
        return HANDLED

    def on_mouse_motion(self, x: float, y: float, dx: float, dy: float) -> bool:
        u = self._window.unit
        self._screen.on_mouse_motion(x / u, y / u, dx / u, dy / u)
        return HANDLED

    def on_key_press(self, symbol: int, modifiers: int) -> bool:
        self._screen.on_key_press(symbol, modifiers)
        return HANDLED

    def on_text(self, text: str) -> bool:
        self._screen.on_text(text)
        return HANDLED


class PanelInput:
    """A panel over a screen: it takes the clicks, the keys and the typed text; the pointer's
    motion, drags and releases go on to the screen below (a card picked up before the panel
    opened can still be let go)."""

    def __init__(
        self,
        window: HandlerStack,
        on_click: Callable[[float, float], None],
        on_key: Callable[[int], None],
    ) -> None:
        self._window = window
        self._on_click = on_click
        self._on_key = on_key

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> bool:
        u = self._window.unit
        self._on_click(x / u, y / u)
        return HANDLED

    def on_key_press(self, symbol: int, modifiers: int) -> bool:
        self._on_key(symbol)
        return HANDLED

    def on_text(self, text: str) -> bool:
        return HANDLED


class ModalInput(PanelInput):
    """A panel that takes all the input while it is open: the screen below sees none."""

    def on_mouse_release(self, x: float, y: float, button: int, modifiers: int) -> bool:
        return HANDLED

    def on_mouse_drag(
        self, x: float, y: float, dx: float, dy: float, buttons: int, modifiers: int
    ) -> bool:
        return HANDLED

    def on_mouse_motion(self, x: float, y: float, dx: float, dy: float) -> bool:
        return HANDLED
