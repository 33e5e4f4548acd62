"""A few plain widgets drawn into the screen's batch: buttons, text fields, panels, labels."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable
from typing import Any

import pyglet
from pyglet import shapes, text
from pyglet.window import mouse

from ui.kit.font import FONT_FILES, characters_in
from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, FONT, PANEL, STAND_INS, TEXT, TEXT_DIM, WARN, lighter

__all__ = [
    "Button",
    "FormScreen",
    "Panel",
    "TextField",
    "drawable",
    "fit",
    "label",
    "use_shipped_font",
]


@functools.cache
def use_shipped_font() -> None:
    """Register the wheel's font files with pyglet (once, before any label asks for ``FONT``);
    a missing file is a broken install, said as such."""
    for path in FONT_FILES:
        if not path.is_file():
            raise FileNotFoundError(f"the game's font is missing from its install: {path}")
        pyglet.font.add_file(str(path))


def label(
    batch: Any,
    group: Any,
    value: str,
    x: float,
    y: float,
    size: float = 12,
    colour: tuple[int, int, int] = TEXT,
    anchor_x: Any = "left",
    anchor_y: Any = "center",
    bold: bool = False,
    alpha: int = 255,
    width: float | None = None,
) -> Any:
    """A label in ``batch``; ``size`` in pixels; ``value`` as ``drawable`` makes it."""
    kwargs: dict[str, Any] = {}
    if width is not None:
        kwargs.update(width=int(width), multiline=True)
    use_shipped_font()
    return text.Label(
        drawable(value),
        font_name=FONT,
        font_size=size * 0.75,
        weight="bold" if bold else "normal",
        x=x,
        y=y,
        anchor_x=anchor_x,
        anchor_y=anchor_y,
        color=(*colour, alpha),
        batch=batch,
        group=group,
        **kwargs,
    )


def drawable(value: str) -> str:
    """``value`` with each symbol the font lacks (an emoji in a name, say) replaced by a stand-in
    it has, or left out: drawn as it is, it would show as an empty box. Letters stay, a box being
    better than a name with letters missing."""
    if value.isascii():
        return value
    return "".join(_stand_in(character) for character in value)


def fit(item: Any, width: float) -> Any:
    """Shorten a label's text with an ellipsis until it is at most ``width`` pixels wide (a long
    table or player name must not run under the button beside it); returns the label."""
    full = item.text
    if item.content_width <= width:
        return item
    shortest, longest = 0, len(full) - 1
    while shortest < longest:  # the longest prefix that fits, ellipsis included
        middle = (shortest + longest + 1) // 2
        item.text = full[:middle].rstrip() + "…"
        if item.content_width <= width:
            shortest = middle
        else:
            longest = middle - 1
    item.text = full[:shortest].rstrip() + "…"
    return item


class Panel:
    """A rounded, slightly transparent panel."""

    def __init__(
        self,
        batch: Any,
        group: Any,
        rect: Rect,
        colour: tuple[int, int, int] = PANEL,
        alpha: int = 248,
    ) -> None:
        self.rect = rect
        self.shape = _rounded(
            rect.x,
            rect.y,
            rect.w,
            rect.h,
            min(12.0, rect.h / 4),
            color=(*colour, alpha),
            batch=batch,
            group=group,
        )

    def delete(self) -> None:
        self.shape.delete()


BACK_ZONE = 0.5
"""The left part of a cycling button that steps back, as a fraction of its width: the left half,
so a click on its ‹ steps back however short the value between the arrows (the caption is
centred: with a one-digit value the ‹ sits at about 40 % of the width)."""


class Button:
    """A clickable rectangle with a text; ``on_click`` runs on a click inside it.

    A cycling button (``on_back`` given) shows "‹ value ›": a click on its right part steps on,
    a click on its ‹ or a right click anywhere on it steps back.
    """

    def __init__(
        self,
        batch: Any,
        group: Any,
        text_group: Any,
        rect: Rect,
        caption: str,
        on_click: Callable[[], None],
        colour: tuple[int, int, int] = (52, 70, 84),
        size: float | None = None,
        enabled: bool = True,
        on_back: Callable[[], None] | None = None,
    ) -> None:
        self.rect = rect
        self.on_click = on_click
        self.on_back = on_back
        self.colour = colour
        self.enabled = enabled
        self.shape = _rounded(
            rect.x,
            rect.y,
            rect.w,
            rect.h,
            min(8.0, rect.h / 3),
            color=(*colour, 255),
            batch=batch,
            group=group,
        )
        self.text = label(
            batch,
            text_group,
            self._shown(caption),
            rect.x + rect.w / 2,
            rect.y + rect.h / 2,
            size=size or min(16.0, rect.h * 0.42),
            anchor_x="center",
            bold=True,
        )
        self.set_enabled(enabled)

    def set_caption(self, caption: str) -> None:
        shown = self._shown(caption)
        if self.text.text != shown:
            self.text.text = shown

    def press(self, x: float, y: float, mouse_button: int = mouse.LEFT) -> None:
        """Act on a click at (x, y), which ``hit`` accepted: on, or back on a cycling button."""
        back = mouse_button == mouse.RIGHT or x < self.rect.x + self.rect.w * BACK_ZONE
        if self.on_back is not None and back:
            self.on_back()
        else:
            self.on_click()

    def set_colour(self, colour: tuple[int, int, int]) -> None:
        self.colour = colour
        self.set_enabled(self.enabled)

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        self.shape.color = (*self.colour, 255 if enabled else 90)
        self.text.color = (*TEXT, 255 if enabled else 110)

    def set_highlight(self, on: bool) -> None:
        colour = lighter(self.colour, 0.2) if on else self.colour
        self.shape.color = (*colour, 255 if self.enabled else 90)

    def hit(self, x: float, y: float) -> bool:
        return self.enabled and self.rect.contains(x, y)

    def _shown(self, caption: str) -> str:
        return f"‹   {caption}   ›" if self.on_back is not None else caption

    def delete(self) -> None:
        self.shape.delete()
        self.text.delete()


class TextField:
    """A one-line text entry: focused by a click, edited with on_text / backspace. While it is
    focused, a count under it says how much room is left ("12/24", then "24 at most")."""

    def __init__(
        self, batch: Any, group: Any, text_group: Any, rect: Rect, value: str, max_length: int = 24
    ) -> None:
        self.rect = rect
        self.value = value
        self.max_length = max_length
        self.focused = False
        self.box = _rounded(
            rect.x,
            rect.y,
            rect.w,
            rect.h,
            6,
            color=(250, 250, 245, 255),
            batch=batch,
            group=group,
        )
        self.text = label(
            batch,
            text_group,
            value,
            rect.x + 10,
            rect.y + rect.h / 2,
            size=rect.h * 0.45,
            colour=(20, 24, 28),
        )
        self.count = label(
            batch,
            text_group,
            "",
            rect.right,
            rect.y - 2,
            size=11,
            colour=TEXT_DIM,
            anchor_x="right",
            anchor_y="top",
        )
        self._refresh()

    def hit(self, x: float, y: float) -> bool:
        return self.rect.contains(x, y)

    def focus(self, on: bool) -> None:
        self.focused = on
        self._refresh()

    def type_text(self, typed: str) -> None:
        cleaned = "".join(ch for ch in typed if ch.isprintable())
        self.value = (self.value + cleaned)[: self.max_length]
        self._refresh()

    def backspace(self) -> None:
        self.value = self.value[:-1]
        self._refresh()

    def _refresh(self) -> None:
        shown = drawable(self.value) + ("|" if self.focused else "")
        self.text.text = shown
        full = len(self.value) >= self.max_length
        if not self.focused:
            self.count.text = ""
        elif full:
            self.count.text = f"{self.max_length} characters at most"
        else:
            self.count.text = f"{len(self.value)}/{self.max_length}"
        self.count.color = (*(WARN if full else TEXT_DIM), 255)
        self.box.color = (255, 255, 250, 255) if self.focused else (226, 228, 222, 255)
        if self.focused:
            self.box.color = (*lighter(ACCENT, 0.75), 255)

    def delete(self) -> None:
        self.box.delete()
        self.text.delete()
        self.count.delete()


def _stand_in(character: str) -> str:
    if _font_draws(FONT, character):
        return character
    if character in STAND_INS:
        return STAND_INS[character]
    if unicodedata.category(character) in ("So", "Sk", "Cf", "Mn", "Co", "Cn"):
        return ""  # an emoji, its variation selector or joiner
    return character


@functools.cache
def _font_draws(font_name: str, character: str) -> bool:
    """Whether the font pyglet picks for ``font_name`` has a glyph for ``character``."""
    use_shipped_font()
    return _font_has(pyglet.font.load(font_name, 12), font_name, character)


def _font_has(font: Any, font_name: str, character: str) -> bool:
    """Whether ``font`` (what pyglet loaded for ``font_name``) draws ``character``."""
    lookup = getattr(getattr(font, "face", None), "get_character_index", None)
    if lookup is not None:  # FreeType: the face it found (ours, or fontconfig's), whatever its name
        fonts: list[Any] = [font, *font.fallbacks]
        return any(each.face.get_character_index(character) for each in fonts)
    # DirectWrite and Quartz answer no such question: our own font's file says what it draws.
    if font_name == FONT and pyglet.font.have_font(font_name):
        return ord(character) in characters_in(FONT_FILES[0])
    # Another font, installed: trust it; without it, a default font draws, and an emoji or a
    # rare symbol may not be in it.
    if pyglet.font.have_font(font_name):
        return True
    return character not in STAND_INS and unicodedata.category(character) != "So"


def _rounded(*args: Any, **kwargs: Any) -> Any:
    """A rounded rectangle with enough corner segments at any size (pyglet divides by them)."""
    kwargs.setdefault("segments", 6)
    return shapes.RoundedRectangle(*args, **kwargs)


class FormScreen:
    """What the screens made of labels, buttons and one text field share: making and clearing
    their widgets, and their input (a press focuses the field or clicks a button, motion
    highlights buttons, text goes to the field)."""

    batch: Any
    group: Any
    text_group: Any
    items: list[Any]
    name_field: TextField | None
    buttons: list[Button]
    dirty: bool

    def text(self, value: str, x: float, y: float, **style: Any) -> Any:
        item = label(self.batch, self.text_group, value, x, y, **style)
        self.items.append(item)
        return item

    def button(
        self,
        rect: Rect,
        caption: str,
        on_click: Callable[[], None],
        colour: tuple[int, int, int] = (52, 70, 84),
        on_back: Callable[[], None] | None = None,
    ) -> Button:
        """A button; with ``on_back``, one that cycles both ways (see ``Button``)."""
        item = Button(
            self.batch,
            self.group,
            self.text_group,
            rect,
            caption,
            on_click,
            colour,
            on_back=on_back,
        )
        self.buttons.append(item)
        return item

    def _clear_widgets(self) -> None:
        for item in self.items:
            item.delete()
        for item in self.buttons:
            item.delete()
        self.items, self.buttons = [], []

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> None:
        self.dirty = True
        if self.name_field is not None:
            self.name_field.focus(self.name_field.hit(x, y))
        for item in self.buttons:
            if item.hit(x, y):
                item.press(x, y, button)
                return

    def on_mouse_motion(self, x: float, y: float, dx: float, dy: float) -> None:
        for item in self.buttons:
            item.set_highlight(item.hit(x, y))
        self.dirty = True

    def on_text(self, text: str) -> None:
        if self.name_field is not None and self.name_field.focused and text not in "\r\n":
            self.name_field.type_text(text)
            self.dirty = True
