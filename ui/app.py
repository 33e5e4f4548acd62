"""The window: one pyglet window, one batch, one screen at a time (the menu or a table).

It draws only when something changed: a clock tick polls the screen (the session, animations)
and redraws the window only when the screen says so, so an idle table costs almost no CPU.

``add_arguments`` / ``run`` are the ``nerts-lan`` command's window entry points (no arguments:
the menu and lobby); ``add_practice_arguments`` / ``run_practice`` start a practice game directly;
``run_replay`` plays a match log back (``nerts-lan replay FILE``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "NertsWindow",
    "add_arguments",
    "add_practice_arguments",
    "make_window",
    "run",
    "run_practice",
    "run_replay",
]

TICK = 1 / 60


def add_arguments(parser: argparse.ArgumentParser, lan: bool = True) -> None:
    """Options of the window (``nerts-lan`` with no command, and ``nerts-lan practice`` without
    the LAN's)."""
    parser.add_argument("--width", type=int, default=1280, help="window width (1280)")
    parser.add_argument("--height", type=int, default=800, help="window height (800)")
    parser.add_argument("--fullscreen", action="store_true", help="open full screen")
    if not lan:
        return
    parser.add_argument(
        "--interface",
        default=None,
        metavar="ADDRESS",
        help="use only this IPv4 address for the LAN (mDNS and TCP)",
    )


def add_practice_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``nerts-lan practice``."""
    from nerts_lan.bots import LEVELS

    add_arguments(parser, lan=False)
    parser.add_argument("--name", default=None, help="your name (the remembered one)")
    parser.add_argument("--opponents", type=int, default=None, help="bot teams, 0 to 7 (3)")
    parser.add_argument("--level", default=None, choices=LEVELS, help="bot level (medium)")
    parser.add_argument("--partners", action="store_true", help="partnership: a bot partner")
    parser.add_argument("--flip", type=int, default=None, choices=(1, 3), help="flip 1 or 3 (3)")
    parser.add_argument("--target", type=int, default=100, help="match target (100)")
    parser.add_argument("--caller-bonus", type=int, default=0, help="the caller's bonus (0)")
    parser.add_argument("--kings", action="store_true", help="kings may start foundations")
    parser.add_argument("--pile", type=int, default=13, help="nerts pile size (13)")
    parser.add_argument("--work", type=int, default=4, help="work piles, 3 to 6 (4)")
    parser.add_argument("--seed", default=None, help="seed of the deals and bots (random)")


def run(args: argparse.Namespace) -> int:
    """Open the window on the menu (lobby and practice); the exit status."""
    import pyglet

    from .lan_lobby import LanLobby

    window = make_window(
        args.width,
        args.height,
        fullscreen=getattr(args, "fullscreen", False),
        lobby=LanLobby(getattr(args, "interface", None)),
    )
    window.show_menu()
    return _loop(window, pyglet)


def run_practice(args: argparse.Namespace) -> int:
    """Open the window on a practice game; the exit status (2 for bad options)."""
    from nerts_lan.engine import Options
    from nerts_lan.practice import PracticeConfig

    from .config import load_settings

    settings = load_settings()
    try:
        options = Options(
            flip=args.flip or settings.flip,
            caller_bonus=args.caller_bonus,
            target=args.target,
            kings=bool(args.kings),
            pile=args.pile,
            work=args.work,
        )
        config = PracticeConfig(
            player=args.name or settings.player_name or "You",
            opponents=settings.opponents if args.opponents is None else args.opponents,
            level=args.level or settings.level,
            partners=bool(args.partners),
            options=options,
            seed=args.seed,
        )
    except ValueError as error:
        sys.stderr.write(f"nerts-lan practice: error: {error}\n")
        return 2
    import pyglet

    window = make_window(args.width, args.height, fullscreen=getattr(args, "fullscreen", False))
    window.start_practice(config)
    return _loop(window, pyglet)


def run_replay(args: argparse.Namespace, session: Any) -> int:
    """Open the window on a match log's replay (a ``ReplaySession``); leaving closes it."""
    import pyglet

    window = make_window(
        getattr(args, "width", 1280),
        getattr(args, "height", 800),
        fullscreen=getattr(args, "fullscreen", False),
    )
    window.start_replay(session)
    return _loop(window, pyglet)


def make_window(
    width: int = 1280,
    height: int = 800,
    *,
    visible: bool = True,
    fullscreen: bool = False,
    clock: Callable[[], float] = time.monotonic,
    lobby: Any = None,
) -> NertsWindow:
    """The game window (pyglet is imported here, not when this module is)."""
    import pyglet

    pyglet.options["debug_gl"] = False
    window_class = _window_class()
    return window_class(width, height, visible, fullscreen, clock, lobby)


def _loop(window: Any, pyglet: Any) -> int:
    pyglet.clock.schedule_interval(window.tick, TICK)
    try:
        pyglet.app.run(None)
    finally:
        pyglet.clock.unschedule(window.tick)
    return 0


NertsWindow = Any
"""The window class is built on first use so that importing this module needs no display."""

_WINDOW_CLASS: Any = None


def _window_class() -> Any:
    global _WINDOW_CLASS
    if _WINDOW_CLASS is not None:
        return _WINDOW_CLASS
    import pyglet
    from pyglet import gl

    from nerts_lan.practice import PracticeConfig, PracticeSession

    from .config import load_settings, save_settings
    from .lobby import ListedTable, NoNetwork
    from .lobby_screen import LobbyScreen
    from .menu_screen import MenuScreen
    from .overlays import OptionsOverlay
    from .table_screen import TableScreen
    from .theme import BACKGROUND

    class _NertsWindow(pyglet.window.Window):  # type: ignore[misc]
        """The game window: forwards input to the current screen, draws only when needed."""

        def __init__(
            self,
            width: int,
            height: int,
            visible: bool,
            fullscreen: bool,
            clock: Callable[[], float],
            lobby: Any,
        ) -> None:
            super().__init__(
                width,
                height,
                caption="Nerts",
                resizable=True,
                visible=visible,
                fullscreen=fullscreen,
            )
            self.set_minimum_size(640, 420)
            self.clock = clock
            self.batch = pyglet.graphics.Batch()
            self.settings = load_settings()
            self.lobby = lobby if lobby is not None else NoNetwork()
            self.current: Any = None
            self.overlay: Any = None
            self.needs_draw = True
            self.frames = 0
            r, g, b = BACKGROUND
            gl.glClearColor(r / 255, g / 255, b / 255, 1.0)

        # --- screens ---

        def show_menu(self) -> None:
            networked = not isinstance(self.lobby, NoNetwork)
            self._replace(
                MenuScreen(
                    self,
                    self.batch,
                    self.settings,
                    self._save,
                    self.lobby,
                    self.start_practice,
                    self._menu_options,
                    on_host=self.show_host_form if networked else None,
                    on_join=self.join_table if networked else None,
                )
            )

        def _player_name(self) -> str:
            if isinstance(self.current, MenuScreen):
                return str(self.current.player())
            return str(self.settings.player_name or "You")

        def show_host_form(self) -> None:
            self._show_lobby(host_form=True)

        def join_table(self, table: ListedTable) -> None:
            if table.needs_code:
                self._show_lobby(host_form=False, code_table=table)  # asks for the code first
                return
            self.lobby.join(self._player_name(), table.table_id)
            self._show_lobby(host_form=False)

        def _show_lobby(self, host_form: bool, code_table: ListedTable | None = None) -> None:
            player = self._player_name()
            self._replace(
                LobbyScreen(
                    self,
                    self.batch,
                    self.settings,
                    self.lobby,
                    player,
                    self.start_session,
                    self.show_menu,
                    host_form=host_form,
                    code_table=code_table,
                )
            )

        def start_practice(self, config: PracticeConfig, **kwargs: Any) -> None:
            session = PracticeSession(config, **kwargs)
            self.start_session(session)

        def start_replay(self, session: Any, leave: Callable[[], None] | None = None) -> None:
            """Play a ``ReplaySession`` back; leaving it closes the window unless ``leave``."""
            from .replay_screen import ReplayScreen

            self._replace(
                ReplayScreen(
                    self,
                    self.batch,
                    session,
                    self.settings,
                    self._save,
                    leave or (lambda: self.dispatch_event("on_close")),
                )
            )
            self.tick(0.0)

        def start_session(self, session: Any) -> None:
            self._replace(
                TableScreen(self, self.batch, session, self.settings, self._save, self.show_menu)
            )
            self.tick(0.0)

        def _replace(self, screen: Any) -> None:
            if self.overlay is not None:
                self.overlay.delete()
                self.overlay = None
            if self.current is not None:
                self.current.close()
            self.current = screen
            self.needs_draw = True

        def _save(self, settings: Any) -> None:
            self.settings = settings
            save_settings(settings)

        def _menu_options(self) -> None:
            def changed(settings: Any) -> None:
                self._save(settings)
                if isinstance(self.current, MenuScreen):
                    self.current.settings = settings

            def close() -> None:
                if self.overlay is not None:
                    self.overlay.delete()
                    self.overlay = None
                self.needs_draw = True

            self.overlay = OptionsOverlay(
                self.batch, pyglet.graphics.Group(order=300), self.settings, changed, close
            )
            self.overlay.build(self.width, self.height)
            self.needs_draw = True

        # --- the frame ---

        def tick(self, dt: float = 0.0) -> bool:
            """Poll the screen; redraw only when something changed. True when it drew."""
            if self.has_exit or self.context is None:
                return False  # closed: no screen, and the GL context may be gone
            if self.current is not None and self.current.update(self.clock()):
                self.needs_draw = True
            if not self.needs_draw:
                return False
            self.draw_frame()
            return True

        def draw_frame(self) -> None:
            # Called directly: outside pyglet.app.run() dispatch_event only queues.
            self.switch_to()
            self.on_draw()
            self.flip()

        def on_draw(self) -> None:
            r, g, b = BACKGROUND
            gl.glClearColor(r / 255, g / 255, b / 255, 1.0)
            self.clear()
            self.batch.draw()
            self.needs_draw = False
            self.frames += 1

        def on_resize(self, width: int, height: int) -> None:
            super().on_resize(width, height)
            if self.current is not None:
                self.current.resize(width, height)
            if self.overlay is not None:
                self.overlay.build(width, height)
            self.needs_draw = True

        def on_expose(self) -> None:
            self.needs_draw = True

        # --- input goes to the overlay or the screen ---

        def on_mouse_press(self, x: int, y: int, button: int, modifiers: int) -> None:
            if self.overlay is not None:
                self.overlay.on_click(x, y)
                self.needs_draw = True
            elif self.current is not None:
                self.current.on_mouse_press(x, y, button, modifiers)

        def on_mouse_release(self, x: int, y: int, button: int, modifiers: int) -> None:
            handler = getattr(self.current, "on_mouse_release", None)
            if self.overlay is None and handler is not None:
                handler(x, y, button, modifiers)

        def on_mouse_drag(
            self, x: int, y: int, dx: int, dy: int, buttons: int, modifiers: int
        ) -> None:
            handler = getattr(self.current, "on_mouse_drag", None)
            if self.overlay is None and handler is not None:
                handler(x, y, dx, dy, buttons, modifiers)

        def on_mouse_motion(self, x: int, y: int, dx: int, dy: int) -> None:
            handler = getattr(self.current, "on_mouse_motion", None)
            if self.overlay is None and handler is not None:
                handler(x, y, dx, dy)

        def on_key_press(self, symbol: int, modifiers: int) -> Any:
            from pyglet.window import key

            if self.overlay is not None:
                if symbol == key.ESCAPE:
                    self.overlay.delete()
                    self.overlay = None
                    self.needs_draw = True
                return pyglet.event.EVENT_HANDLED
            if symbol == key.ESCAPE and isinstance(self.current, MenuScreen):
                field = self.current.name_field
                if field is None or not field.focused:
                    self.close()
                    return pyglet.event.EVENT_HANDLED
            if self.current is not None:
                self.current.on_key_press(symbol, modifiers)
            # Escape must not close the window from the table: it drops the pick there.
            return pyglet.event.EVENT_HANDLED

        def on_text(self, text: str) -> None:
            handler = getattr(self.current, "on_text", None)
            if self.overlay is None and handler is not None:
                handler(text)

        def on_close(self) -> None:
            if self.current is not None:
                self.current.close()
                self.current = None
            self.lobby.close()
            super().on_close()

    _WINDOW_CLASS = _NertsWindow
    return _WINDOW_CLASS
