"""Real windows for the UI tests: headless EGL (no X server), real dispatched events.

pyglet must be told to go headless before anything imports ``pyglet.window``, so this conftest
sets the option at import time. Settings go to a temporary folder, never the user's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.practice import PracticeConfig
from tests.kit import layout, team

pyglet = pytest.importorskip("pyglet")
pyglet.options["headless"] = True
pyglet.options["debug_gl"] = False
pyglet.options["audio"] = ("silent",)

_WITHOUT_GL = ("test_layout.py", "test_wording.py")
"""The modules here that import nothing of pyglet's OpenGL (pure geometry and words)."""


def _no_headless_gl() -> str | None:
    """Why pyglet's headless OpenGL cannot load here (None: it can). It needs EGL: Linux's
    Mesa has it; Windows and macOS do not, so there the window tests are skipped, saying so."""
    try:
        import pyglet.gl  # noqa: F401
    except ImportError as error:
        system = {"win32": "Windows", "darwin": "macOS"}.get(sys.platform, sys.platform)
        return f"{system}: the window tests draw through headless EGL, missing here ({error})"
    return None


_NO_HEADLESS_GL = _no_headless_gl()


class _SkippedModule(pytest.Module):
    """A test module that would fail to import without headless OpenGL: one skip, with why."""

    def collect(self) -> list[Any]:
        assert _NO_HEADLESS_GL is not None
        pytest.skip(_NO_HEADLESS_GL)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Any:
    if _NO_HEADLESS_GL is not None and module_path.name not in _WITHOUT_GL:
        return _SkippedModule.from_parent(parent, path=module_path)
    return None


class Harness:
    """A game window driven like a user would: mouse and keys as window events, a fake clock."""

    def __init__(self, window: Any, clock: list[float]) -> None:
        self.window = window
        self.clock = clock

    # --- time and frames ---

    def frame(self, seconds: float = 1 / 60) -> bool:
        self.clock[0] += seconds
        self.window.dispatch_events()
        return bool(self.window.tick())

    def settle(self, seconds: float = 1.0) -> None:
        """Let animations finish (bots stay frozen in these tests)."""
        for _ in range(int(seconds * 30)):
            self.frame(1 / 30)

    # --- input, through the window's event queue ---

    def send(self, *event: Any) -> None:
        self.window.dispatch_event(*event)
        self.window.dispatch_events()
        self.frame()

    def click(self, x: float, y: float) -> None:
        from pyglet.window import mouse

        self.send("on_mouse_press", int(x), int(y), mouse.LEFT, 0)
        self.send("on_mouse_release", int(x), int(y), mouse.LEFT, 0)

    def drag(self, start: tuple[float, float], end: tuple[float, float], steps: int = 8) -> None:
        from pyglet.window import mouse

        x0, y0 = int(start[0]), int(start[1])
        self.send("on_mouse_press", x0, y0, mouse.LEFT, 0)
        px, py = x0, y0
        for i in range(1, steps + 1):
            x = int(x0 + (end[0] - x0) * i / steps)
            y = int(y0 + (end[1] - y0) * i / steps)
            self.send("on_mouse_drag", x, y, x - px, y - py, mouse.LEFT, 0)
            px, py = x, y
        self.send("on_mouse_release", px, py, mouse.LEFT, 0)

    def key(self, symbol: int) -> None:
        self.send("on_key_press", symbol, 0)
        self.send("on_key_release", symbol, 0)

    # --- what is on the screen ---

    def pixels(self) -> tuple[bytes, int, int]:
        window = self.window
        window.switch_to()
        window.on_draw()
        buffer = pyglet.image.get_buffer_manager().get_color_buffer()
        image = buffer.get_image_data()
        # RGBA is the buffer's own format: asking pyglet for RGB converts each pixel through a
        # regular expression (15 s a 1920x1080 frame); dropping alpha by slices takes 10 ms.
        rgba = image.get_data("RGBA", image.width * 4)
        rgb = bytearray(len(rgba) // 4 * 3)
        for channel in range(3):
            rgb[channel::3] = rgba[channel::4]
        return bytes(rgb), image.width, image.height

    def pixel(self, x: float, y: float) -> tuple[int, int, int]:
        data, width, _ = self.pixels()
        offset = (int(y) * width + int(x)) * 3
        return data[offset], data[offset + 1], data[offset + 2]

    def save(self, path: Path) -> None:
        window = self.window
        window.switch_to()
        window.on_draw()
        pyglet.image.get_buffer_manager().get_color_buffer().save(str(path))


@pytest.fixture
def settings_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("NERTS_LAN_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def harness(settings_dir: Path) -> Iterator[Harness]:
    from ui.app import make_window

    clock = [100.0]
    window = make_window(1024, 720, clock=lambda: clock[0])
    try:
        yield Harness(window, clock)
    finally:
        window.close()
        os.environ.pop("NERTS_LAN_SKIP", None)


@pytest.fixture
def lan_harness(settings_dir: Path) -> Iterator[Harness]:
    """The window with a LAN lobby on 127.0.0.1, on a clock of its own."""
    from ui.app import make_window
    from ui.lobby.lan import LanLobby

    clock = [100.0]
    lobby = LanLobby("127.0.0.1", intermission=0.0)
    window = make_window(1024, 720, clock=lambda: clock[0], lobby=lobby)
    try:
        yield Harness(window, clock)
    finally:
        current = window.current
        if current is not None:
            current.close()  # a table screen leaves its table
            window.current = None
        lobby.close()
        window.close()


def frozen_practice(harness: Harness, **piles_of_you: Any) -> Any:
    """A practice table with a known deal; the bot never moves (its delays are enormous)."""
    state = layout(
        team("You", ("You",), **piles_of_you),
        team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D"),
    )
    config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=state)
    harness.settle(0.2)
    return harness.window.current


@pytest.fixture
def window_of(settings_dir: Path) -> Iterator[Callable[[int, int], Harness]]:
    """Real windows of a given size, each with its own fake clock."""
    from ui.app import make_window

    made: list[Any] = []

    def make(width: int, height: int) -> Harness:
        clock = [100.0]
        window = make_window(width, height, clock=lambda: clock[0])
        made.append(window)
        return Harness(window, clock)

    yield make
    for window in made:
        window.close()


def practice_with_a_lone_ace(harness: Harness) -> Any:
    """Practice against one frozen bot; the player's nerts pile is a lone A♥."""
    you = team("You", ("You",), nerts="AH", work=("9D", "6S", "", "2C"), stock="3S 4S 5S")
    ada = team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D")
    config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=layout(you, ada))
    harness.settle(0.2)
    return harness.window.current
