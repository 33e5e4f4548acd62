"""The window: one pyglet window, one batch, one screen at a time (the menu or a table).

It draws only when something changed: a clock tick polls the screen (the session, animations)
and redraws the window only when the screen says so, so an idle table costs almost no CPU.

The command line (``nerts_lan.cli``) checks its options into typed configs and opens the window
with ``open_window`` (the menu and lobby), ``open_practice`` (a practice game) or ``open_replay``
(a match log played back). Importing this module loads pyglet: only the window's commands do.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace

import pyglet
from pyglet import gl
from pyglet.math import Mat4
from pyglet.window import key

from nerts_lan.history.coach import Moment
from nerts_lan.history.store import record_new_logs, record_played_rounds
from nerts_lan.lan.networks import Network
from nerts_lan.lan.seat import wait_for_goodbyes
from nerts_lan.matchlog.rounds import LoggedRound
from nerts_lan.practice import PracticeConfig, PracticeSession
from nerts_lan.replay import ReplaySession
from nerts_lan.rules.state import State
from nerts_lan.table.session import Session
from ui.config import Settings, WindowConfig, load_settings, read_settings, save_settings
from ui.kit.handlers import ModalInput, ScreenInput
from ui.kit.network_picker import NetworkPicker
from ui.kit.speech import print_readout
from ui.kit.theme import BACKGROUND
from ui.kit.widgets import use_shipped_font
from ui.lobby.provider import ListedTable, LobbyProvider, NoNetwork
from ui.quitting import answer_macos_quit, quit_on_signals
from ui.screen import Screen
from ui.screens.lobby import LobbyScreen
from ui.screens.menu import MenuScreen
from ui.screens.replay import ReplayScreen
from ui.screens.stats import StatsScreen
from ui.screens.table import TableScreen
from ui.table.overlays import OptionsOverlay, Overlay

__all__ = [
    "TICK",
    "NertsWindow",
    "close_every_window",
    "display_scale",
    "make_lan_window",
    "make_window",
    "open_practice",
    "open_replay",
    "open_window",
]

TICK = 1 / 60
"""Seconds between two polls of the screen."""
GUIDED_SLOWDOWN = 2.0
"""How much slower the bots of a guided round react: time to read one explanation a move."""
MINIMUM_SIZE = (640, 420)
"""The smallest window, in the UI's units (see ``NertsWindow.unit``)."""
SCALING_PLATFORMS = ("darwin", "win32")
"""Where the window follows the display's scale: on a Retina Mac (2) and on Windows at 125–200 %.
pyglet's X11 window maps the mouse through ``window.height``, which is the UI's size here, not
the pixels: Linux keeps a scale of 1, as before."""
GOODBYE_WAIT = 3.0
"""Seconds the app waits, its windows closed, for its table to hear the goodbye (it goes out
from a helper thread, which an ending process would stop mid-way)."""


def open_window(config: WindowConfig) -> int:
    """Open the window on the menu (practice, and the LAN's lobby); the exit status."""
    window = make_lan_window(config)
    _use_readout(window, config)
    window.show_menu()
    unrecorded = record_new_logs()  # the match history: logs played since the last start
    if unrecorded is not None and window.current is not None:
        window.current.tell(unrecorded)
    return _loop(window)


def make_lan_window(
    config: WindowConfig, clock: Callable[[], float] = time.monotonic
) -> NertsWindow:
    """The window with the LAN's lobby, on the interface of the default route or the one the
    player picked (not Docker's or a VPN's), or on ``--interface``'s; on no screen yet."""
    from nerts_lan.lan.networks import playable_networks
    from ui.lobby.lan import LanLobby

    picker = NetworkPicker(playable_networks, load_settings().network, fixed=config.interface)
    lobby = LanLobby(picker.address)
    window = make_window(
        config.width, config.height, fullscreen=config.fullscreen, clock=clock, lobby=lobby
    )
    window.use_network(picker, lobby.use_interface)
    return window


def open_practice(config: WindowConfig, practice: PracticeConfig) -> int:
    """Open the window on a practice game; the exit status."""
    window = make_window(config.width, config.height, fullscreen=config.fullscreen)
    _use_readout(window, config)
    window.start_practice(practice)
    return _loop(window)


def open_replay(config: WindowConfig, session: ReplaySession) -> int:
    """Open the window on a match log's replay; leaving it closes the window."""
    window = make_window(config.width, config.height, fullscreen=config.fullscreen)
    _use_readout(window, config)
    window.start_replay(session)
    return _loop(window)


def _use_readout(window: NertsWindow, config: WindowConfig) -> None:
    """``--readout``: the moves read out go to standard output too (for a screen reader)."""
    if config.readout:
        window.readout_sink = print_readout


def make_window(
    width: int = 1280,
    height: int = 800,
    *,
    visible: bool = True,
    fullscreen: bool = False,
    clock: Callable[[], float] = time.monotonic,
    lobby: LobbyProvider | None = None,
) -> NertsWindow:
    """The game window, on no screen yet (``clock`` is the time the screens see); ``width`` and
    ``height`` in the UI's units (the display's scale makes them more pixels)."""
    pyglet.options["debug_gl"] = False
    if sys.platform in SCALING_PLATFORMS:
        # pyglet's "scaled": the window opens at the asked size times the display's scale (on
        # Windows; macOS counts a window's size in points anyway), and its size, its framebuffer
        # and the mouse all come in the same pixels, so one unit converts all three.
        pyglet.options["dpi_scaling"] = "scaled"
    return NertsWindow(width, height, visible, fullscreen, clock, lobby)


def display_scale(window: pyglet.window.Window) -> float:
    """Framebuffer pixels per unit of the UI: the display's scale (``window.scale``: 2 on a
    Retina Mac, 1.25–2 on Windows set to 125–200 %), or 1 outside ``SCALING_PLATFORMS``."""
    if sys.platform not in SCALING_PLATFORMS:
        return 1.0
    scale = float(window.scale)
    return scale if scale > 0 else 1.0


class NertsWindow(pyglet.window.Window):  # type: ignore[misc]
    """The game window: one screen at a time, on its handler stack (the screen's ``ScreenInput``,
    and over it the panel open, which takes the input first), drawn only when needed.

    Everything the screens see is in the UI's units: ``width`` and ``height``, the mouse, the
    layout, the font sizes. ``unit`` framebuffer pixels make one (the display's scale): the
    projection draws units onto pixels, and the mouse's pixels are divided by it, here only.
    """

    unit: float = 1.0
    """Framebuffer pixels per UI unit, read from the display at each resize."""

    def __init__(
        self,
        width: int,
        height: int,
        visible: bool,
        fullscreen: bool,
        clock: Callable[[], float],
        lobby: LobbyProvider | None,
    ) -> None:
        # Every field a handler reads comes first: pyglet's X11 window sends on_resize from its
        # constructor when the event loop is already running (the coach's replay window).
        self.clock = clock
        self.settings, self.settings_problem = read_settings()
        """``settings_problem``: what was wrong with the settings file, told once (or None)."""
        self.readout_sink: Callable[[str], None] | None = None
        """Where the move readout's sentences go besides the message strip (``--readout``)."""
        self.lobby: LobbyProvider = lobby if lobby is not None else NoNetwork()
        self.current: Screen | None = None
        self._screen_input: ScreenInput | None = None
        """The current screen's input on the handler stack (pyglet holds handlers weakly)."""
        self.overlay: Overlay | None = None
        """The options over the menu: it takes the input while it is open."""
        self.coach_window: NertsWindow | None = None
        """The replay window the scoreboard's coach opened (None: none open)."""
        self.history_problem: str | None = None
        """What was last said about the match history (said once, not at every round)."""
        self.on_closed: Callable[[], None] | None = None
        """Told when this window closes (the window that opened it, for a coach window)."""
        self.network: NetworkPicker | None = None
        """The network the lobby is on, and switching it (None: the window has no LAN)."""
        self.needs_draw = True
        self.frames = 0
        self.closed = False
        """``close_now`` ran: the screen and the LAN are let go, once."""
        super().__init__(
            width,
            height,
            caption="Nerts",
            resizable=True,
            visible=visible,
            fullscreen=fullscreen,
        )
        self._use_scale()
        use_shipped_font()  # before any label: the card suits on every system
        self.batch = pyglet.graphics.Batch()
        self._overlay_input = ModalInput(self, self._overlay_click, self._overlay_key)
        self._clear_colour()

    def use_network(self, picker: NetworkPicker, switch: Callable[[str | None], None]) -> None:
        """Show ``picker``'s network in the lobby; the player's pick goes to ``switch(address)``
        and is remembered."""

        def switched(chosen: Network) -> None:
            switch(chosen.address)
            self._settings_changed(self.settings.with_(network=chosen.name))

        picker.on_switch = switched
        self.network = picker

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
                self._practice_from_menu,
                self._menu_options,
                on_host=self.show_host_form if networked else None,
                on_join=self.join_table if networked else None,
                on_stats=self.show_stats,
                on_join_address=self.show_address_form if networked else None,
                on_quit=self.close_now,
            )
        )

    def show_stats(self) -> None:
        """The Stats screen (the match history), back to the menu when left."""
        self._replace(StatsScreen(self, self.batch, self._player_name(), self.show_menu))

    def show_host_form(self) -> None:
        self._show_lobby(host_form=True)

    def show_address_form(self) -> None:
        """The lobby's form to join a table by its address (when the list does not show it)."""
        self._show_lobby(host_form=False, address_form=True)

    def join_table(self, table: ListedTable) -> None:
        if table.needs_code:
            self._show_lobby(host_form=False, code_table=table)  # asks for the code first
            return
        self.lobby.join(self._player_name(), table.table_id)
        self._show_lobby(host_form=False)

    def start_practice(
        self, config: PracticeConfig, first_deal: State | None = None, *, guided: bool = False
    ) -> None:
        """Play a practice game (its first round from ``first_deal`` when given; ``guided``:
        its first round is the guided one, with bots ``GUIDED_SLOWDOWN`` times slower)."""
        if guided:
            config = replace(config, delay_scale=config.delay_scale * GUIDED_SLOWDOWN)
        key = f"practice-{time.time_ns()}"
        session = PracticeSession(
            config, first_deal=first_deal, record=lambda rounds, now: self._record(key, rounds, now)
        )
        self.start_session(session, guided=guided)

    def _record(self, key: str, rounds: list[LoggedRound], now: float) -> None:
        """A practice round is over: into the match history (its game clock made wall time);
        a history that cannot be written is said once, and the game goes on."""
        offset = time.time_ns() // 1_000_000 - round(now * 1000)
        problem = record_played_rounds(key, rounds, offset)
        if problem is not None and problem != self.history_problem:
            self.history_problem = problem
            if self.current is not None:
                self.current.tell(problem)

    def _practice_from_menu(self, config: PracticeConfig) -> None:
        """The menu's Practice: the first one ever is a guided round (offered once; it has a
        Skip button)."""
        guided = not self.settings.guide_offered
        if guided:
            self._save(self.settings.with_(guide_offered=True))
        self.start_practice(config, guided=guided)

    def start_replay(
        self,
        session: ReplaySession,
        leave: Callable[[], None] | None = None,
        note: str | None = None,
    ) -> None:
        """Play a ``ReplaySession`` back; leaving it closes the window unless ``leave``;
        ``note``: what the coach says about the moment it opens at."""
        self._replace(
            ReplayScreen(
                self,
                self.batch,
                session,
                self.settings,
                self._save,
                leave or (lambda: self.dispatch_event("on_close")),
                note=note,
            )
        )
        self.tick(0.0)

    def open_moment(self, played: LoggedRound, moment: Moment) -> None:
        """The replay window at a moment the coach found, its missed move outlined: a second
        window, so the game in this one goes on; showing another moment replaces it."""
        team = played.table.team_of(moment.player)
        session = ReplaySession.at_moment(played, moment.step, moment.missed, team)
        session.notice = None
        self._close_coach_window()
        window = make_window(self.width, self.height, clock=self.clock)
        self.coach_window = window
        window.on_closed = self._close_coach_window
        window.start_replay(session, leave=self._close_coach_window, note=moment.text)
        pyglet.clock.schedule_interval(window.tick, TICK)

    def _close_coach_window(self) -> None:
        window, self.coach_window = self.coach_window, None
        if window is not None:
            pyglet.clock.unschedule(window.tick)
            window.on_closed = None
            window.close_now()

    def start_session(self, session: Session, *, guided: bool = False) -> None:
        self._replace(
            TableScreen(
                self, self.batch, session, self.settings, self._save, self.show_menu, guided=guided
            )
        )
        self.tick(0.0)

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
        self._clear_colour()
        gl.glClear(gl.GL_COLOR_BUFFER_BIT)  # no depth buffer to clear: half the cost (0.4 ms)
        self.batch.draw()
        self.needs_draw = False
        self.frames += 1

    @property
    def width(self) -> int:
        """The window's width in UI units (``get_size()`` stays pyglet's pixels)."""
        return round(float(self.get_size()[0]) / self.unit)

    @property
    def height(self) -> int:
        """The window's height in UI units."""
        return round(float(self.get_size()[1]) / self.unit)

    def on_resize(self, width: int, height: int) -> None:
        """pyglet's size is in pixels: the screens get it in UI units."""
        self._use_scale()
        width, height = self.width, self.height
        if self.current is not None:
            self.current.resize(width, height)
        if self.overlay is not None:
            self.overlay.build(width, height)
        self.needs_draw = True

    def on_scale(self, scale: float, dpi: int) -> None:
        """Moved to a display of another scale: lay everything out again for it."""
        self.on_resize(*self.get_size())

    def on_expose(self) -> None:
        self.needs_draw = True

    def on_close(self) -> None:
        """The window's close button: during a LAN match the table asks first (not calling
        pyglet's default refuses the close; the question's Leave closes for real)."""
        if self.current is not None and self.current.confirm_close(self.close_now):
            self.needs_draw = True
            return
        self.close_now()

    def close_now(self) -> None:
        """Leave the screen and the LAN (a goodbye to the table), and close the window, without
        asking; once, whichever way out called it."""
        if self.closed:
            return
        self.closed = True
        self._close_coach_window()
        if self.on_closed is not None:
            self.on_closed()
        if self.current is not None:
            self.remove_handlers(self._screen_input)
            self.current.close()
            self.current = None
        self.lobby.close()
        super().on_close()

    # --- input: the screen's and the overlay's handlers take it (see ``_replace``) ---

    def on_key_press(self, symbol: int, modifiers: int) -> bool:
        """A key no screen took (none is open): Escape must not close the window here."""
        return bool(pyglet.event.EVENT_HANDLED)

    # --- private helpers ---

    def _player_name(self) -> str:
        typed = self.current.typed_name() if self.current is not None else None
        if typed is not None:
            return typed
        return str(self.settings.player_name or "You")

    def _show_lobby(
        self, host_form: bool, code_table: ListedTable | None = None, address_form: bool = False
    ) -> None:
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
                address_form=address_form,
                save_settings=self._save,
            )
        )

    def _replace(self, screen: Screen) -> None:
        if self.overlay is not None:
            self.overlay.delete()
            self.overlay = None
            self.remove_handlers(self._overlay_input)
        if self.current is not None:
            self.remove_handlers(self._screen_input)
            self.current.close()
        self.current = screen
        self._screen_input = ScreenInput(self, screen)
        self.push_handlers(self._screen_input)
        self.needs_draw = True
        if self.settings_problem is not None:  # a damaged settings file: said on the first screen
            screen.tell(self.settings_problem)
            self.settings_problem = None

    def _save(self, settings: Settings) -> None:
        self.settings = settings
        save_settings(settings)

    def _menu_options(self) -> None:
        if self.overlay is None:
            self.push_handlers(self._overlay_input)
        self.overlay = OptionsOverlay(
            self.batch,
            pyglet.graphics.Group(order=300),
            self.settings,
            self._settings_changed,
            self._close_overlay,
        )
        self.overlay.build(self.width, self.height)
        self.needs_draw = True

    def _settings_changed(self, settings: Settings) -> None:
        """Save settings changed outside the menu, and give the screen (the menu saves its own
        copy) the new ones."""
        self._save(settings)
        if self.current is not None:
            self.current.use_settings(settings)

    def _close_overlay(self) -> None:
        if self.overlay is not None:
            self.overlay.delete()
            self.overlay = None
            self.remove_handlers(self._overlay_input)
        self.needs_draw = True

    def _overlay_click(self, x: float, y: float) -> None:
        if self.overlay is not None:
            self.overlay.on_click(x, y)
        self.needs_draw = True

    def _overlay_key(self, symbol: int) -> None:
        if symbol == key.ESCAPE:
            self._close_overlay()

    def _use_scale(self) -> None:
        """Read the display's scale; draw UI units onto the framebuffer's pixels with it."""
        self.unit = display_scale(self)
        pixels_w, pixels_h = self.get_size()
        self.projection = Mat4.orthogonal_projection(
            0, max(pixels_w / self.unit, 1), 0, max(pixels_h / self.unit, 1), -8192, 8192
        )
        minimum_w, minimum_h = MINIMUM_SIZE
        # Windows counts the minimum in pixels; macOS in points, which are UI units already.
        factor = self.unit if sys.platform == "win32" else 1.0
        self.set_minimum_size(round(minimum_w * factor), round(minimum_h * factor))

    def _clear_colour(self) -> None:
        r, g, b = BACKGROUND
        gl.glClearColor(r / 255, g / 255, b / 255, 1.0)


def close_every_window(goodbye_wait: float = GOODBYE_WAIT) -> None:
    """The app ends: close each game window still open as ``close_now`` does (a LAN table hears
    a goodbye, not a silence), and wait up to ``goodbye_wait`` seconds for the goodbyes."""
    for each in list(pyglet.app.windows):
        if isinstance(each, NertsWindow):
            each.close_now()
    wait_for_goodbyes(goodbye_wait)


def _loop(window: NertsWindow) -> int:
    """Run the window until the app quits, by whatever way (see ``ui.quitting``)."""
    pyglet.clock.schedule_interval(window.tick, TICK)
    restore_signals = quit_on_signals()
    answer_macos_quit()
    try:
        pyglet.app.run(None)
    finally:
        pyglet.clock.unschedule(window.tick)
        restore_signals()
        close_every_window()
    return 0
