"""``nerts-lan sim``: bot-only rounds and matches in one process, in simulated time.

Every bot acts at its reaction delays on a simulated clock: it decides on the state it sees, and
its action reaches the real engine that many simulated seconds later, when someone else may have
taken the spot (the engine rejects it, the bot decides again). Nothing sleeps, so a round of
minutes of play takes milliseconds. Round seeds and bot seeds derive from ``--seed``: the same
seed gives the same summary (all but the wall-clock speed).
"""

from __future__ import annotations

import heapq
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TextIO

from tqdm import tqdm

from nerts_lan.bots.bot import LEVELS, Bot
from nerts_lan.rules.actions import Action
from nerts_lan.rules.engine import apply, deal_round, round_scores
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import Options, Rejection, State, Table

__all__ = [
    "RoundResult",
    "SimConfig",
    "bench_bot_rounds",
    "format_summary",
    "play_round",
    "run",
    "simulate",
]

MAX_TEAMS: Final = 8
MAX_PLAYERS: Final = 4
MAX_ROUNDS: Final = 1_000_000
MAX_MATCH_ROUNDS: Final = 500
"""Rounds after which a match that still has no winner stops (reported as unfinished)."""
DEFAULT_MAX_ACTIONS: Final = 20_000
_MAX_DECISIONS_PER_ACTION: Final = 50


@dataclass(frozen=True)
class SimConfig:
    """What to simulate: the table, the bots, how many rounds or matches, the seed."""

    teams: int = 2
    players: int = 1
    levels: tuple[str, ...] = ("medium",)
    """One level per team (or one for every team)."""
    rounds: int = 20
    matches: int = 0
    """When above 0, play this many matches instead of ``rounds`` rounds."""
    seed: str = "nerts"
    options: Options = field(default_factory=Options)
    delay_scale: float = 1.0
    max_actions: int = DEFAULT_MAX_ACTIONS

    def __post_init__(self) -> None:
        problem = _config_problem(self)
        if problem:
            raise ValueError(problem)

    def team_levels(self) -> tuple[str, ...]:
        return self.levels * self.teams if len(self.levels) == 1 else self.levels

    def table(self) -> Table:
        names = tuple(f"team{i + 1}" for i in range(self.teams))
        players = tuple(
            tuple(f"t{i + 1}p{j + 1}" for j in range(self.players)) for i in range(self.teams)
        )
        return Table(self.options, names, players)


@dataclass(frozen=True)
class RoundResult:
    """How one simulated round went."""

    seed: str
    ending: str
    """``nerts`` (a call), ``dead`` (every team stuck too long), ``capped`` (hit the action cap) or
    ``stalled`` (no bot had anything to do: a bug)."""
    actions: int
    rejected: int
    seconds: float
    """Simulated time of the last action."""
    scores: tuple[int, ...]
    """Per team, in table order."""
    state: State


def play_round(
    table: Table,
    seed: str,
    levels: Sequence[str],
    *,
    delay_scale: float = 1.0,
    max_actions: int = DEFAULT_MAX_ACTIONS,
) -> RoundResult:
    """Deal a round from ``seed`` and let one bot per seat (at its team's level) play it out."""
    bots = [
        Bot(player, levels[team], f"{seed}/{player}", delay_scale=delay_scale)
        for team, players in enumerate(table.team_players)
        for player in players
    ]
    race = _Race(bots, deal_round(table, seed), max_actions * _MAX_DECISIONS_PER_ACTION)
    ending = race.run(max_actions)
    scores = round_scores(race.state)
    return RoundResult(
        seed,
        ending,
        race.actions,
        race.rejected,
        race.last,
        tuple(scores[name] for name in table.team_names),
        race.state,
    )


def simulate(
    config: SimConfig, progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    """Play what ``config`` asks and return the summary (see ``format_summary``).

    ``progress(done, total)`` is called after each round (total is the number of rounds, or of
    matches in match mode, counted then by matches).
    """
    table = config.table()
    levels = config.team_levels()
    results: list[RoundResult] = []
    match_winners: list[str | None] = []
    started = time.perf_counter()
    if config.matches:
        for number in range(config.matches):
            match = Match(table.team_names, config.options.target)
            while not match.over and len(match.rounds) < MAX_MATCH_ROUNDS:
                seed = f"{config.seed}/m{number + 1}/r{len(match.rounds) + 1}"
                result = play_round(
                    table,
                    seed,
                    levels,
                    delay_scale=config.delay_scale,
                    max_actions=config.max_actions,
                )
                results.append(result)
                match = match.with_round(dict(zip(table.team_names, result.scores)))
            match_winners.append(match.winner)
            if progress is not None:
                progress(number + 1, config.matches)
    else:
        for number in range(config.rounds):
            seed = f"{config.seed}/r{number + 1}"
            results.append(
                play_round(
                    table,
                    seed,
                    levels,
                    delay_scale=config.delay_scale,
                    max_actions=config.max_actions,
                )
            )
            if progress is not None:
                progress(number + 1, config.rounds)
    elapsed = time.perf_counter() - started
    return _summary(config, results, match_winners, elapsed)


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a readable table."""
    setup = summary["setup"]
    rounds = summary["rounds"]
    speed = summary["speed"]
    options = setup["options"]
    lines = [
        f"nerts-lan sim: {setup['teams']} team(s) of {setup['players']} player(s), levels "
        f"{','.join(setup['levels'])}, seed {setup['seed']!r}, bot delay x{setup['bot_delay']:g}",
        "  options: " + ", ".join(f"{key} {value}" for key, value in options.items()),
        "",
    ]
    rows: list[tuple[str, str]] = []
    if setup["matches"]:
        rows.append(
            (
                "matches",
                f"{setup['matches']}"
                + (
                    f" ({summary['matches']['unfinished']} unfinished)"
                    if summary["matches"]["unfinished"]
                    else ""
                ),
            )
        )
    rows += [
        ("rounds", f"{rounds['count']}"),
        ("rounds per second", f"{speed['rounds_per_s']:.1f}"),
        ("actions per round", f"{rounds['actions_mean']:.1f} mean, {rounds['actions_max']} max"),
        ("races lost per round", f"{rounds['rejected_mean']:.1f} mean"),
        ("simulated minutes", f"{rounds['sim_minutes_mean']:.2f} per round (mean)"),
        ("ended by a Nerts call", f"{100 * rounds['nerts_share']:.1f} %"),
        ("ended by a dead stock", f"{100 * rounds['dead_share']:.1f} %"),
        ("hit the action cap", f"{rounds['capped']}"),
    ]
    if rounds["stalled"]:
        rows.append(("stalled (a bug)", f"{rounds['stalled']}"))
    width = max(len(label) for label, _ in rows)
    lines += [f"{label:<{width}}  {value}" for label, value in rows]
    lines.append("")
    header = ["level", "teams", "mean score", "round wins"]
    if setup["matches"]:
        header.append("match wins")
    table = [header]
    for level, figures in summary["levels"].items():
        row = [
            level,
            str(figures["teams"]),
            f"{figures['score_mean']:.1f}",
            f"{100 * figures['round_win_rate']:.1f} %",
        ]
        if setup["matches"]:
            row.append(f"{100 * figures['match_win_rate']:.1f} %")
        table.append(row)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells))
    return "\n".join(lines) + "\n"


def run(config: SimConfig, *, as_json: bool = False, progress: bool | None = None) -> int:
    """Play what ``config`` asks and print the summary (``as_json``: as JSON), with a progress bar
    on standard error when ``progress`` (None: when it is a terminal); the exit status."""
    show = sys.stderr.isatty() if progress is None else progress
    bar = _ProgressBar(sys.stderr, " match" if config.matches else " round") if show else None
    summary = simulate(config, bar)
    if bar is not None:
        bar.close()
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        sys.stdout.write(format_summary(summary))
    return 0


def bench_bot_rounds(quick: bool = False) -> dict[str, float]:
    """Figures for ``nerts-lan bench``: full 4-team ``instant`` rounds per second and their size."""
    rounds = 4 if quick else 30
    table = SimConfig(teams=4).table()
    levels = ("instant",) * 4
    actions = 0
    rejected = 0
    minutes = 0.0
    started = time.perf_counter()
    for number in range(rounds):
        result = play_round(table, f"bench/{number}", levels)
        actions += result.actions
        rejected += result.rejected
    elapsed = time.perf_counter() - started
    # The same deals with hard bots at their real delays: how long such a round takes to play.
    for number in range(min(rounds, 4)):
        minutes += play_round(table, f"bench/{number}", ("hard",) * 4).seconds / 60
    return {
        "bot_rounds_per_s_4team_instant": round(rounds / elapsed, 2),
        "bot_actions_per_s_4team_instant": round(actions / elapsed, 1),
        "actions_per_round_mean": round(actions / rounds, 1),
        "races_lost_per_round_mean": round(rejected / rounds, 2),
        "sim_minutes_per_round_4team_hard": round(minutes / min(rounds, 4), 2),
    }


# --- private helpers ------------------------------------------------------------------------


def _config_problem(config: SimConfig) -> str | None:
    if not 1 <= config.teams <= MAX_TEAMS:
        return f"--teams must be from 1 to {MAX_TEAMS}"
    if not 1 <= config.players <= MAX_PLAYERS:
        return f"--players must be from 1 to {MAX_PLAYERS}"
    for level in config.levels:
        if level not in LEVELS:
            return f"unknown level {level!r} in --levels (expected {', '.join(LEVELS)})"
    if len(config.levels) not in (1, config.teams):
        return (
            f"--levels names {len(config.levels)} levels for {config.teams} teams "
            "(give one, or one per team)"
        )
    if not 1 <= config.rounds <= MAX_ROUNDS:
        return f"--rounds must be from 1 to {MAX_ROUNDS}"
    if not 0 <= config.matches <= MAX_ROUNDS:
        return f"--matches must be from 1 to {MAX_ROUNDS}"
    if not (math.isfinite(config.delay_scale) and 0 <= config.delay_scale <= 100):
        return "--bot-delay must be from 0 to 100"
    if not 100 <= config.max_actions <= 10_000_000:
        return "--max-actions must be from 100 to 10000000"
    return None


class _Race:
    """One round's bots on the simulated clock: each decides on the state it sees, and its action
    reaches the engine its reaction delay later."""

    def __init__(self, bots: list[Bot], state: State, decisions: int) -> None:
        self.bots = bots
        self.state = state
        # (time, sequence, seat, action); an action of None is a bot looking again after it had
        # nothing to do. Instant bots look again at every change instead (their time is 0).
        self.pending: list[tuple[float, int, int, Action | None]] = []
        self.waiting: list[int] = []
        self.sequence = 0
        self.decisions_left = decisions
        self.actions = 0
        self.rejected = 0
        self.last = 0.0
        """Simulated time of the last action."""

    def run(self, max_actions: int) -> str:
        """Play until the round ends; how it ended (see ``RoundResult.ending``)."""
        for index in range(len(self.bots)):
            self._schedule(index, 0.0)
        while self.pending and self.decisions_left > 0:
            now, _, index, action = heapq.heappop(self.pending)
            if action is None:
                self._schedule(index, now)
                continue
            after = apply(self.state, action)
            self.actions += 1
            self.last = now
            if type(after) is Rejection:
                self.rejected += 1
            else:
                self.state = after  # type: ignore[assignment]
                if self.state.outcome is not None:
                    return self.state.outcome.ending
            if self.actions >= max_actions:
                return "capped"
            self._schedule(index, now)
            if self.waiting and type(after) is not Rejection:
                woken = sorted(self.waiting)
                self.waiting.clear()
                for other in woken:
                    self._schedule(other, now)
        return "stalled"

    def _schedule(self, index: int, now: float) -> None:
        self.decisions_left -= 1
        bot = self.bots[index]
        action = bot.decide(self.state, now)
        delay = bot.reaction_delay(action)
        if action is None and delay <= 0:
            self.waiting.append(index)
            return
        heapq.heappush(self.pending, (now + delay, self.sequence, index, action))
        self.sequence += 1


def _summary(
    config: SimConfig, results: list[RoundResult], match_winners: list[str | None], elapsed: float
) -> dict[str, Any]:
    count = len(results)
    summary: dict[str, Any] = {
        "setup": {
            "teams": config.teams,
            "players": config.players,
            "levels": list(config.team_levels()),
            "rounds": config.rounds if not config.matches else None,
            "matches": config.matches or None,
            "seed": config.seed,
            "bot_delay": config.delay_scale,
            "max_actions": config.max_actions,
            "options": config.options.to_wire(),
        },
        "rounds": _rounds_summary(results),
        "levels": _levels_summary(config, results, match_winners),
        "speed": {
            "seconds": round(elapsed, 3),
            "rounds_per_s": round(count / elapsed, 2) if elapsed > 0 else 0.0,
        },
    }
    if config.matches:
        summary["matches"] = {
            "count": config.matches,
            "unfinished": sum(1 for winner in match_winners if winner is None),
            "rounds_mean": round(count / config.matches, 2),
        }
    return summary


def _rounds_summary(results: list[RoundResult]) -> dict[str, Any]:
    count = max(len(results), 1)
    endings = [result.ending for result in results]
    return {
        "count": len(results),
        "actions_mean": round(sum(r.actions for r in results) / count, 2),
        "actions_max": max((r.actions for r in results), default=0),
        "rejected_mean": round(sum(r.rejected for r in results) / count, 3),
        "sim_minutes_mean": round(sum(r.seconds for r in results) / 60 / count, 4),
        "nerts_share": round(endings.count("nerts") / count, 4),
        "dead_share": round(endings.count("dead") / count, 4),
        "capped": endings.count("capped"),
        "stalled": endings.count("stalled"),
    }


def _levels_summary(
    config: SimConfig, results: list[RoundResult], match_winners: list[str | None]
) -> dict[str, dict[str, float]]:
    """Per bot level: its teams, mean score, share of round wins (ties share) and match wins."""
    table = config.table()
    levels = config.team_levels()
    per_level: dict[str, dict[str, float]] = {}
    for level in dict.fromkeys(levels):
        per_level[level] = {"teams": 0, "score_sum": 0.0, "round_wins": 0.0, "match_wins": 0.0}
    for level in levels:
        per_level[level]["teams"] += 1
    for result in results:
        best = max(result.scores)
        leaders = [i for i, score in enumerate(result.scores) if score == best]
        for team, score in enumerate(result.scores):
            figures = per_level[levels[team]]
            figures["score_sum"] += score
            if team in leaders:
                figures["round_wins"] += 1 / len(leaders)
    for winner in match_winners:
        if winner is not None:
            per_level[levels[table.team_names.index(winner)]]["match_wins"] += 1
    level_summary: dict[str, dict[str, float]] = {}
    for level, figures in per_level.items():
        seats = figures["teams"] * max(len(results), 1)
        level_summary[level] = {
            "teams": int(figures["teams"]),
            "score_mean": round(figures["score_sum"] / seats, 3),
            "round_win_rate": round(figures["round_wins"] / seats, 4),
        }
        if config.matches:
            level_summary[level]["match_win_rate"] = round(
                figures["match_wins"] / (figures["teams"] * config.matches), 4
            )
    return level_summary


class _ProgressBar:
    """The rounds (or matches) done, as a ``tqdm`` bar on a stream: rate and time left included,
    redrawn at most ten times a second. tqdm's monitor thread is off (nothing outlives a run)."""

    def __init__(self, stream: TextIO, unit: str) -> None:
        self._stream, self._unit = stream, unit
        self._bar: _Bar | None = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = _Bar(
                total=total, file=self._stream, unit=self._unit, mininterval=0.1, dynamic_ncols=True
            )
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class _Bar(tqdm):  # type: ignore[misc]
    monitor_interval = 0
