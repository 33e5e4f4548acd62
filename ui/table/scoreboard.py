"""The end of a round on the table: "NERTS!" (or "Round over") across it for a moment, then
the scores panel, with the coach's moments of the round for this seat when the session can
tell its round (``logged_round``) and the window can show a moment (``open_moment``).
"""

from __future__ import annotations

import functools
import gc
import string
from collections.abc import Callable
from typing import Any

import pyglet
from pyglet.graphics import Group

from nerts_lan.history.coach import coach_round
from nerts_lan.table.replica import RoundEnded
from nerts_lan.table.session import DealOnSession, PacedSession, Session
from ui.kit.geometry import Rect
from ui.kit.sounds import Sounds
from ui.kit.theme import ACCENT, FONT, TEXT
from ui.kit.widgets import Panel, label, use_shipped_font
from ui.table.overlays import Overlay, ScoreOverlay

__all__ = ["BANNER_SECONDS", "Scoreboard", "coach_lines"]

BANNER_SECONDS = 1.8
"""How long the banner stays before the scores come up."""


class Scoreboard:
    """The banner of the round just over, and that round's scores waiting for it to go."""

    def __init__(
        self,
        batch: Any,
        group: Group,
        sounds: Sounds,
        session: Session,
        clock: Callable[[], float],
        coach: Callable[[], list[tuple[str, Callable[[], None]]]],
    ) -> None:
        """``clock``: the screen's time (the panel's quiet moment counts in it); ``coach``: the
        coach's lines of the round just over (see ``coach_lines``)."""
        self.batch = batch
        self.group = group
        self.sounds = sounds
        self.session = session
        self.clock = clock
        self.coach = coach
        self.banner: list[Any] = []
        self.banner_until = 0.0
        self.pending: RoundEnded | None = None
        """The round whose scores come up once the banner goes."""
        self._glyphs_due: list[tuple[float, bool, str]] = []
        self._fonts: dict[tuple[float, bool], Any] = {}
        """The banner's fonts, their glyphs drawn ahead (held: pyglet keeps fonts weakly)."""

    def new_round(self, width: int, height: int) -> None:
        """A new deal: no scores are due, and what the deal made is set aside from the
        collector's scans (see ``_collect_between_rounds``); the banner's glyphs for a window
        of this size are drawn ahead, one a frame (the first banner took 25 ms to draw them,
        in the very frame the round ended)."""
        self.pending = None
        gc.freeze()
        self._glyphs_due = [
            (size, bold, char)
            for size, bold, chars in _banner_fonts(height)
            for char in chars
            if (size, bold) not in self._fonts or char not in self._fonts[(size, bold)].glyphs
        ]

    def round_ended(self, event: RoundEnded, width: int, height: int, now: float) -> None:
        """Say how the round ended across the table, for ``BANNER_SECONDS``, with a sound."""
        self.pending = event
        if event.outcome.ending == "nerts" and event.outcome.caller:
            title = "NERTS!"
            sub = f"{event.outcome.caller} called it"
        else:
            title = "Round over"
            sub = "everyone was stuck"
        panel_w, panel_h = min(width * 0.6, 560), _banner_height(height)
        (title_size, _, _), (sub_size, _, _) = _banner_fonts(height)
        panel = Panel(
            self.batch,
            self.group,
            Rect((width - panel_w) / 2, (height - panel_h) / 2, panel_w, panel_h),
            colour=(120, 20, 24),
            alpha=235,
        )
        text_group = Group(order=1, parent=self.group)
        self.banner = [
            panel,
            label(
                self.batch,
                text_group,
                title,
                width / 2,
                height / 2 + panel_h * 0.12,
                size=title_size,
                colour=ACCENT,
                anchor_x="center",
                bold=True,
            ),
            label(
                self.batch,
                text_group,
                sub,
                width / 2,
                height / 2 - panel_h * 0.26,
                size=sub_size,
                colour=TEXT,
                anchor_x="center",
            ),
        ]
        self.banner_until = now + BANNER_SECONDS
        self.sounds.play("nerts")

    def banner_over(self, now: float) -> bool:
        """Take the banner away once its moment is over; True when it just went (the scores
        are due then)."""
        if not self.banner or now < self.banner_until:
            return False
        self.delete()
        return True

    def draw_ahead(self) -> None:
        """Between banners, draw one more of the next banner's glyphs (see ``new_round``)."""
        if self.banner or not self._glyphs_due:
            return
        size, bold, char = self._glyphs_due.pop()
        font = self._fonts.get((size, bold))
        if font is None:
            use_shipped_font()
            weight = "bold" if bold else "normal"
            font = self._fonts[(size, bold)] = pyglet.font.load(FONT, size * 0.75, weight, dpi=96)
        font.get_glyphs(char)

    def panel(
        self,
        match_over: bool,
        on_next: Callable[[], None],
        on_menu: Callable[[], None],
        keep_clear: Callable[[], list[Rect]],
        quiet: float,
        count_up: bool = True,
    ) -> ScoreOverlay | None:
        """The scores panel of the round whose scores are due, once (None: none are); its
        buttons keep clear of ``keep_clear()``; ``count_up``: its scores count up (no
        reduced motion)."""
        event, self.pending = self.pending, None
        if event is None:
            return None
        _collect_between_rounds()
        session = self.session
        return ScoreOverlay(
            self.batch,
            self.group,
            session.table,
            session.view,
            session.match,
            event,
            match_over,
            on_next,
            on_menu,
            keep_clear=keep_clear(),
            clock=self.clock,
            quiet=quiet,
            rematch=isinstance(session, DealOnSession),
            count_up=count_up,
            coach=self.coach(),
        )

    def next_round(self, overlay: Overlay | None, read_only: bool) -> None:
        """The scores panel's Next round: deal on (practice, a replay) or, at a LAN table, say
        this player is ready (the deal comes once every player is) and whom it waits for."""
        session = self.session
        if isinstance(session, PacedSession):
            session.next_round()
        elif isinstance(session, DealOnSession) and not read_only:
            session.deal_on()
            if isinstance(overlay, ScoreOverlay):
                overlay.wait_for_the_others(session.deal_waits_for)

    def follow_the_wait(self, overlay: Overlay | None) -> bool:
        """Once Next round was pressed at a LAN table, the panel keeps naming whom the deal
        waits for; True when what it says changed."""
        session = self.session
        return (
            isinstance(overlay, ScoreOverlay)
            and overlay.waiting_for_others
            and isinstance(session, DealOnSession)
            and overlay.wait_for_the_others(session.deal_waits_for)
        )

    def delete(self) -> None:
        for item in self.banner:
            item.delete()
        self.banner = []


def _banner_height(height: int) -> float:
    return min(height * 0.3, 200)


def _banner_fonts(height: int) -> list[tuple[float, bool, str]]:
    """The banner's two sizes of type in a window ``height`` high (in ``label``'s pixels),
    whether bold, and the characters it may show in each."""
    panel_h = _banner_height(height)
    return [
        (panel_h * 0.32, True, "NERTS!Roundov "),
        (panel_h * 0.1, False, string.ascii_letters + string.digits + " '-."),
    ]


def coach_lines(
    session: Session, window: object, player: str, read_only: bool
) -> list[tuple[str, Callable[[], None]]]:
    """The coach's moments of the round just over, for ``player``'s seat: a sentence each, and
    the replay window at that moment (for a session that can tell its round: ``logged_round``;
    none for a spectator)."""
    logged = getattr(session, "logged_round", None)
    opener = getattr(window, "open_moment", None)
    played = logged() if logged is not None and not read_only else None
    if played is None or opener is None:
        return []
    moments = coach_round(played, player)
    return [(moment.text, functools.partial(opener, played, moment)) for moment in moments]


def _collect_between_rounds() -> None:
    """A full garbage collection now, while the scores are read and nothing moves, then what
    survives is set aside (``gc.freeze``, again at each deal): a round's play then never pays
    for a collection of the oldest objects mid-frame (one took 50 ms), only of the young. Unfrozen
    first, so nothing set aside earlier (garbage of the last round included) is kept for good."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
