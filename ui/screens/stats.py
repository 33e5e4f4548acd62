"""The Stats screen: the match history of this laptop, per player name and per opponent.

It records the logs that are new since the last time first (``history.record_new_logs``), then
shows one player's record (matches and rounds played and won, average score per round, Nerts
calls, fastest round won, races won and lost, cards a minute), how that player did against each
opponent, and a chart of the average score per round, match by match. A history that cannot be
read says so in one sentence; the rest of the window does not care.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from pyglet import shapes
from pyglet.graphics import Group
from pyglet.window import key as keys

from nerts_lan.folders import data_folder
from nerts_lan.history.stats import PlayerStats, Record, local_players, player_stats
from nerts_lan.history.store import HistoryUnavailable, open_history
from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, GOOD, TEXT_DIM, WARN
from ui.kit.widgets import FormScreen, Panel, fit
from ui.screen import Screen

__all__ = ["StatsScreen", "chart_points", "record_rows"]

MAX_OPPONENTS_SHOWN = 8
MAX_PLAYERS_SHOWN = 6


def record_rows(record: Record) -> list[tuple[str, str]]:
    """The record as (what, how much) rows, in the player's words."""
    rows = [
        ("Matches", _matches(record)),
        ("Rounds", f"{record.rounds} played, {record.rounds_won} won"),
        ("Average score", f"{record.average_score:.1f} a round"),
        ("Nerts calls", str(record.nerts_calls)),
        ("Fastest round won", _duration(record.fastest_round_ms)),
        ("Races", f"{record.races_won} won, {record.races_lost} lost"),
    ]
    per_minute = record.cards_per_minute
    rows.append(("Cards a minute", "—" if per_minute is None else f"{per_minute:.1f}"))
    return rows


def chart_points(values: Sequence[float], area: Rect) -> list[tuple[float, float]]:
    """Where each value goes in ``area``: evenly spaced left to right, lowest at the bottom (a
    flat line across the middle when all are equal)."""
    if not values:
        return []
    low, high = min(values), max(values)
    span = high - low
    step = area.w / (len(values) - 1) if len(values) > 1 else 0.0
    left = area.x if len(values) > 1 else area.x + area.w / 2
    return [
        (left + i * step, area.y + (area.h * (v - low) / span if span else area.h / 2))
        for i, v in enumerate(values)
    ]


class StatsScreen(FormScreen, Screen):
    """One player's statistics; ``on_back()`` goes back to the menu (Back, or Escape)."""

    def __init__(
        self,
        window: Any,
        batch: Any,
        preferred: str,
        on_back: Callable[[], None],
        folder: Path | None = None,
    ) -> None:
        self.window = window
        self.batch = batch
        self.on_back = on_back
        self.group = Group(order=0)
        self.text_group = Group(order=1)
        self.chart_group = Group(order=2)
        self.items: list[Any] = []
        self.buttons = []
        self.name_field = None
        self.dirty = True
        self.problem: str | None = None
        """The one sentence shown when the history cannot be read (None: it was read)."""
        self.players: list[str] = []
        self.stats: PlayerStats | None = None
        self.chart_points: list[tuple[float, float]] = []
        """Where the chart's points are drawn, in window pixels (oldest match first)."""
        self._stats: dict[str, PlayerStats] = {}
        self._load(data_folder() if folder is None else folder)
        self.player = preferred if preferred in self._stats else next(iter(self.players), "")
        self.stats = self._stats.get(self.player)
        self.resize(window.width, window.height)

    def update(self, now: float) -> bool:
        dirty, self.dirty = self.dirty, False
        return dirty

    def resize(self, width: int, height: int) -> None:
        self._clear_widgets()
        margin = 24.0
        self.text(
            "Stats", width / 2, height - 50, size=34, bold=True, colour=ACCENT, anchor_x="center"
        )
        self.button(Rect(margin, height - 66, 100, 34), "Back", self.on_back)
        body = Rect(margin, margin, width - 2 * margin, height - 100 - margin)
        if self.stats is None:
            self._empty(body)
        else:
            self._build(body, self.stats)
        self.dirty = True

    def close(self) -> None:
        self._clear_widgets()

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        if symbol in (keys.ESCAPE, keys.BACKSPACE):
            self.on_back()

    def show_player(self, name: str) -> None:
        """Show ``name``'s statistics (one of ``players``)."""
        self.player, self.stats = name, self._stats.get(name)
        self.resize(self.window.width, self.window.height)

    # --- private --------------------------------------------------------------------------------

    def _load(self, folder: Path) -> None:
        try:
            with open_history(folder) as history:
                history.update(folder / "logs")
                self.problem = history.notice
                self.players = local_players(history)
                self._stats = {name: player_stats(history, name) for name in self.players}
        except HistoryUnavailable as error:
            self.problem = str(error)
        except OSError as error:
            self.problem = f"the match history cannot be kept in {folder}: {error}"

    def _empty(self, body: Rect) -> None:
        self.items.append(Panel(self.batch, self.group, body, alpha=200))
        if self.problem is not None:
            self.text(
                self.problem, body.x + 24, body.top - 40, size=14, colour=WARN, width=body.w - 48
            )
            return
        lines = (
            "No match recorded yet.",
            "Every match played on this laptop, practice included, is kept here:",
            "rounds won, points, Nerts calls, races, cards a minute — per opponent too.",
        )
        for index, line in enumerate(lines):
            self.text(line, body.x + 24, body.top - 40 - 28 * index, size=15, colour=TEXT_DIM)

    def _build(self, body: Rect, stats: PlayerStats) -> None:
        top = body.top
        if self.problem is not None:
            self.text(self.problem, body.x, top - 8, size=12, colour=WARN)
        self._player_buttons(body.x + 110, self.window.height - 66)
        half = (body.w - 24) / 2
        upper = body.h * 0.58
        left = Rect(body.x, top - upper, half, upper - 20)
        right = Rect(body.x + half + 24, top - upper, half, upper - 20)
        chart = Rect(body.x, body.y, body.w, body.h - upper - 12)
        for rect in (left, right, chart):
            self.items.append(Panel(self.batch, self.group, rect, alpha=200))
        self._record(left, stats)
        self._opponents(right, stats)
        self._chart(chart, stats)

    def _player_buttons(self, x: float, y: float) -> None:
        for name in self.players[:MAX_PLAYERS_SHOWN]:
            chosen = name == self.player
            colour = (40, 120, 72) if chosen else (52, 70, 84)
            self.button(Rect(x, y, 120, 34), name, self._chooser(name), colour)
            x += 128

    def _chooser(self, name: str) -> Callable[[], None]:
        return lambda: self.show_player(name)

    def _record(self, area: Rect, stats: PlayerStats) -> None:
        x, y = area.x + 20, area.top - 30
        self.text(stats.name, x, y, size=18, bold=True, colour=ACCENT)
        rows = record_rows(stats.record)
        step = min(30.0, (area.h - 60) / len(rows))
        for what, value in rows:
            y -= step
            self.text(what, x, y, size=14, colour=TEXT_DIM)
            fit(self.text(value, area.x + area.w * 0.5, y, size=14, bold=True), area.w * 0.48)

    def _opponents(self, area: Rect, stats: PlayerStats) -> None:
        x, y = area.x + 20, area.top - 30
        self.text("Against", x, y, size=18, bold=True, colour=ACCENT)
        if not stats.opponents:
            self.text("nobody yet", x, y - 32, size=14, colour=TEXT_DIM)
            return
        columns = (0.0, 0.36, 0.58, 0.80)
        y -= 30
        for column, heading in zip(
            columns, ("name", "rounds won", "matches won", "points: you, them")
        ):
            self.text(heading, x + (area.w - 40) * column, y, size=12, colour=TEXT_DIM)
        step = min(26.0, (area.h - 80) / MAX_OPPONENTS_SHOWN)
        for opponent in stats.opponents[:MAX_OPPONENTS_SHOWN]:
            y -= step
            record = opponent.record
            cells = (
                opponent.name,
                f"{record.rounds_won}/{record.rounds}",
                f"{record.matches_won}/{record.matches}",
                f"{record.average_score:.1f}, {opponent.opponent_average:.1f}",
            )
            for column, cell in zip(columns, cells):
                fit(self.text(cell, x + (area.w - 40) * column, y, size=13), (area.w - 40) * 0.22)

    def _chart(self, area: Rect, stats: PlayerStats) -> None:
        x, y = area.x + 20, area.top - 24
        self.text("Average score per round, match by match", x, y, size=14, bold=True)
        values = [point.average_score for point in stats.chart]
        inner = Rect(area.x + 60, area.y + 30, area.w - 100, area.h - 80)
        points = chart_points(values, inner)
        self.chart_points = points
        if values:
            self._chart_labels(area, inner, stats)
        for (x0, y0), (x1, y1) in pairwise(points):
            self.items.append(
                shapes.Line(
                    x0,
                    y0,
                    x1,
                    y1,
                    thickness=3,
                    color=GOOD,
                    batch=self.batch,
                    group=self.chart_group,
                )
            )
        for px, py in points:
            self.items.append(
                shapes.Circle(px, py, 5, color=ACCENT, batch=self.batch, group=self.chart_group)
            )

    def _chart_labels(self, area: Rect, inner: Rect, stats: PlayerStats) -> None:
        """The chart's highest and lowest values at the left, its first and last dates below."""
        values = [point.average_score for point in stats.chart]
        dim: dict[str, Any] = {"size": 11, "colour": TEXT_DIM}
        ends = [(max(values), inner.top), (min(values), inner.y)]
        if max(values) == min(values):
            ends = [(values[0], inner.y + inner.h / 2)]
        for value, y in ends:
            self.text(f"{value:.1f}", inner.x - 10, y, anchor_x="right", **dim)
        first, last = _date(stats.chart[0].started_at), _date(stats.chart[-1].started_at)
        if first == last:
            self.text(first, inner.x + inner.w / 2, area.y + 14, anchor_x="center", **dim)
        else:
            self.text(first, inner.x, area.y + 14, **dim)
            self.text(last, inner.right, area.y + 14, anchor_x="right", **dim)


def _duration(milliseconds: int | None) -> str:
    if milliseconds is None:
        return "—"
    seconds = round(milliseconds / 1000)
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def _date(at: int | None) -> str:
    if at is None:
        return ""
    return time.strftime("%d %b %Y", time.localtime(at / 1000))


def _matches(record: Record) -> str:
    """Matches played to their end and won; the ones left before their end apart."""
    words = f"{record.matches} played, {record.matches_won} won"
    if record.matches_unfinished:
        words += f", {record.matches_unfinished} unfinished"
    return words
