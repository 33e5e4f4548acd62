"""Table commands: what a peer orders in the table's log, as values with one wire form.

Each command is a frozen dataclass with its wire kind ``KIND`` and ``to_wire()``, the small dict
with a kind ``k`` that goes over the network and into saved match logs (that form is fixed:
``{"k": "sit", "team": 1}``). ``command_from_wire`` is the one parser: it checks hostile input and
raises ``MalformedError`` naming what is wrong. Whether a well-formed command is allowed at its
place in the log is the table's business (``nerts_lan.table.machine``), not this module's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, TypeAlias

from nerts_lan.rules.actions import MAX_NAME_LENGTH, Action, MalformedError
from nerts_lan.rules.state import BACK_COLOURS, Options

__all__ = [
    "BOT_LEVELS",
    "Act",
    "AddBot",
    "Commit",
    "Create",
    "Hello",
    "Ready",
    "Rematch",
    "RemoveBot",
    "ResumedMatch",
    "Reveal",
    "Sit",
    "Stand",
    "Start",
    "TableCommand",
    "TableSettings",
    "command_from_wire",
]

BOT_LEVELS: Final = ("easy", "medium", "hard")
MAX_TABLE_NAME: Final = 40
MAX_COUNTDOWN: Final = 10
"""The longest prep countdown after a deal, in seconds."""
MAX_RESUMED_SEATS: Final = 16
"""A table seats at most 8 teams of 2."""
MAX_OWNER_ID: Final = 128
"""A peer id is far shorter (a label and a key's digest)."""
MAX_RESUMED_ROUNDS: Final = 1000
MAX_ROUND_SCORE: Final = 10_000
"""Far beyond any round of Nerts (52 cards a player): a bigger number is a hostile log."""


@dataclass(frozen=True)
class TableSettings:
    """What the host chose: the table's name, the rules' options and how seats work."""

    name: str
    options: Options = field(default_factory=Options)
    teams: int = 4
    per_team: int = 1
    lost_seat: Literal["bot", "freeze"] = "bot"
    takeover_level: str = "medium"
    countdown: int = 0
    """Seconds every laptop holds its players and its bots still after each deal (0 to 10):
    the prep countdown ("3, 2, 1, go!"); on the wire only when set."""

    def __post_init__(self) -> None:
        if not self.name or len(self.name) > MAX_TABLE_NAME:
            raise ValueError("a table name must be 1 to 40 characters long")
        if type(self.teams) is not int or not 1 <= self.teams <= 8:
            raise ValueError("a table has 1 to 8 teams")
        if self.per_team not in (1, 2) or type(self.per_team) is not int:
            raise ValueError("a team has 1 player, or 2 in partnership mode")
        if self.lost_seat not in ("bot", "freeze"):
            raise ValueError("a lost seat is played by a bot or frozen")
        if self.takeover_level not in BOT_LEVELS:
            raise ValueError(f"bot level must be one of {', '.join(BOT_LEVELS)}")
        if type(self.countdown) is not int or not 0 <= self.countdown <= MAX_COUNTDOWN:
            raise ValueError(f"a countdown is a whole number of seconds, 0 to {MAX_COUNTDOWN}")
        names = self.team_names
        for team, _ in self.options.handicaps:
            if team not in names:
                raise ValueError(
                    f"option 'handicaps' names {team!r}, not one of this table's teams"
                )

    @property
    def team_names(self) -> tuple[str, ...]:
        """The names of the table's teams in order (a round plays those with someone seated)."""
        return tuple(colour.capitalize() for colour in BACK_COLOURS[: self.teams])

    @property
    def partnership(self) -> bool:
        return self.per_team == 2

    @property
    def seats(self) -> int:
        """How many players the table seats."""
        return self.teams * self.per_team

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "options": self.options.to_wire(),
            "teams": self.teams,
            "per_team": self.per_team,
            "lost_seat": self.lost_seat,
            "takeover_level": self.takeover_level,
            **({"countdown": self.countdown} if self.countdown else {}),
        }

    @classmethod
    def from_wire(cls, data: Any) -> TableSettings:
        """Settings from a wire dict; ``MalformedError`` names what is wrong."""
        if not isinstance(data, dict):
            raise MalformedError("table settings must be an object")
        options = data.get("options", {})
        if not isinstance(options, dict) or not all(
            (isinstance(v, (int, bool)) or k == "handicaps") and isinstance(k, str)
            for k, v in options.items()
        ):
            raise MalformedError("table options must map names to numbers or booleans")
        try:
            return cls(
                name=checked_text(data.get("name"), "name", MAX_TABLE_NAME),
                options=Options.from_wire(options),
                teams=data.get("teams", 4),
                per_team=data.get("per_team", 1),
                lost_seat=data.get("lost_seat", "bot"),
                takeover_level=data.get("takeover_level", "medium"),
                countdown=data.get("countdown", 0),
            )
        except (TypeError, ValueError) as error:
            raise MalformedError(f"bad table settings: {error}") from None


@dataclass(frozen=True)
class ResumedMatch:
    """A match brought back from a match log after every laptop of its table stopped: the table
    it continues (``table_id``), its seats as they stood and the scores of its finished rounds.

    ``seats`` are ``(player, team, owner, bot)``: ``owner`` the peer of the person who sat there
    (None for a bot seat), ``bot`` the level of a bot seat. Whether it fits the table's settings
    is the table's to check (``nerts_lan.table.machine``); this is its form only."""

    table_id: str
    seats: tuple[tuple[str, int, str | None, str | None], ...]
    rounds: tuple[tuple[int, ...], ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "from": self.table_id,
            "seats": [list(seat) for seat in self.seats],
            "rounds": [list(row) for row in self.rounds],
        }

    @classmethod
    def from_wire(cls, data: Any) -> ResumedMatch:
        """The resumed match of a wire dict; ``MalformedError`` names what is wrong."""
        if not isinstance(data, dict):
            raise MalformedError("a resumed match must be an object")
        seats, rounds = data.get("seats"), data.get("rounds")
        if not isinstance(seats, list) or not 0 < len(seats) <= MAX_RESUMED_SEATS:
            raise MalformedError(f"a resumed match has 1 to {MAX_RESUMED_SEATS} seats")
        if not isinstance(rounds, list) or not 0 < len(rounds) <= MAX_RESUMED_ROUNDS:
            raise MalformedError(f"a resumed match has 1 to {MAX_RESUMED_ROUNDS} rounds")
        return cls(
            checked_text(data.get("from"), "from", MAX_TABLE_NAME),
            tuple(_resumed_seat(seat) for seat in seats),
            tuple(_score_row(row) for row in rounds),
        )


@dataclass(frozen=True, slots=True)
class Create:
    """Open the table with the host's settings (the first entry of a table's log); ``resumed``:
    the table goes on with that match instead of seating people in a lobby."""

    KIND: ClassVar[str] = "create"
    settings: TableSettings
    resumed: ResumedMatch | None = None

    def to_wire(self) -> dict[str, Any]:
        wire = {"k": self.KIND, "settings": self.settings.to_wire()}
        return wire if self.resumed is None else {**wire, "resumed": self.resumed.to_wire()}


@dataclass(frozen=True, slots=True)
class Hello:
    """A member's display name."""

    KIND: ClassVar[str] = "hello"
    name: str

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "name": self.name}


@dataclass(frozen=True, slots=True)
class Sit:
    """Sit on ``team`` (0-based) in the lobby, or claim a bot's seat of it during the match."""

    KIND: ClassVar[str] = "sit"
    team: int

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "team": self.team}


@dataclass(frozen=True, slots=True)
class Stand:
    """Leave one's seat in the lobby."""

    KIND: ClassVar[str] = "stand"

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND}


@dataclass(frozen=True, slots=True)
class Ready:
    """Say one is ready to start (or not any more)."""

    KIND: ClassVar[str] = "ready"
    on: bool

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "on": self.on}


@dataclass(frozen=True, slots=True)
class AddBot:
    """Host only: a bot of ``level`` on ``team``."""

    KIND: ClassVar[str] = "bot"
    team: int
    level: str

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "team": self.team, "level": self.level}


@dataclass(frozen=True, slots=True)
class RemoveBot:
    """Host only: take the bot ``player`` off the table."""

    KIND: ClassVar[str] = "unbot"
    player: str

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "player": self.player}


@dataclass(frozen=True, slots=True)
class Start:
    """Host only: start the match."""

    KIND: ClassVar[str] = "start"

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND}


@dataclass(frozen=True, slots=True)
class Rematch:
    """Anyone at the table, once its match is over: a new match with the same people, every
    seat moved on one team (``Seating.rotated``). ``after``: the round the match ended with, so
    that two players pressing Rematch at once start one new match, not two."""

    KIND: ClassVar[str] = "rematch"
    after: int

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "r": self.after}


@dataclass(frozen=True, slots=True)
class Commit:
    """Commit to a nonce for ``round``'s seed: ``digest`` is ``commit_digest(nonce)`` in hex."""

    KIND: ClassVar[str] = "commit"
    round: int
    digest: str

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "r": self.round, "d": self.digest}


@dataclass(frozen=True, slots=True)
class Reveal:
    """Reveal the nonce committed to for ``round`` (hex)."""

    KIND: ClassVar[str] = "reveal"
    round: int
    nonce: str

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "r": self.round, "n": self.nonce}


@dataclass(frozen=True, slots=True)
class Act:
    """A player's action in ``round``. ``action`` is the action's wire form as it came: the
    replica checks it, and one that is malformed stays in the log as a rejected entry."""

    KIND: ClassVar[str] = "act"
    round: int
    action: Any

    @classmethod
    def of(cls, round_number: int, action: Action) -> Act:
        return cls(round_number, action.to_wire())

    def to_wire(self) -> dict[str, Any]:
        return {"k": self.KIND, "r": self.round, "a": self.action}


TableCommand: TypeAlias = (
    Create
    | Hello
    | Sit
    | Stand
    | Ready
    | AddBot
    | RemoveBot
    | Start
    | Rematch
    | Commit
    | Reveal
    | Act
)


def command_from_wire(payload: Any) -> TableCommand:
    """The command a log entry's payload holds; ``MalformedError`` names what is wrong."""
    kind = payload.get("k") if isinstance(payload, dict) else None
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        raise MalformedError(f"unknown entry kind {str(kind)[:20]!r}")
    return parse(payload)


def checked_text(value: Any, field: str, limit: int) -> str:
    """``value`` if it is printable text of 1 to ``limit`` characters, else ``MalformedError``."""
    if not isinstance(value, str) or not 0 < len(value) <= limit or not value.isprintable():
        raise MalformedError(f"{field!r} must be printable text of 1 to {limit} characters")
    return value


def _number(value: Any, what: str) -> int:
    if type(value) is not int:
        raise MalformedError(f"{what} must be a number")
    return value


def _hex64(value: Any, what: str) -> str:
    if not (isinstance(value, str) and len(value) == 64 and _is_hex(value)):
        raise MalformedError(f"{what} must be 64 hex digits")
    return value


def _is_hex(text: str) -> bool:
    return _LOWER_HEX.fullmatch(text) is not None


def _create(payload: dict[str, Any]) -> Create:
    resumed = payload.get("resumed")
    return Create(
        TableSettings.from_wire(payload.get("settings")),
        None if resumed is None else ResumedMatch.from_wire(resumed),
    )


def _resumed_seat(seat: Any) -> tuple[str, int, str | None, str | None]:
    if not isinstance(seat, list) or len(seat) != 4:
        raise MalformedError("a resumed seat is [player, team, owner, bot]")
    player, team, owner, bot = seat
    if owner is not None:
        owner = checked_text(owner, "owner", MAX_OWNER_ID)
    if bot is not None and bot not in BOT_LEVELS:
        raise MalformedError(f"bot level must be one of {', '.join(BOT_LEVELS)}")
    if (owner is None) == (bot is None):
        raise MalformedError("a resumed seat is a person's (an owner) or a bot's (a level)")
    return checked_text(player, "player", MAX_NAME_LENGTH), _number(team, "team"), owner, bot


def _score_row(row: Any) -> tuple[int, ...]:
    if not isinstance(row, list) or not 0 < len(row) <= MAX_RESUMED_SEATS:
        raise MalformedError("a round's scores are a list of numbers, one per team")
    scores = tuple(_number(score, "a score") for score in row)
    if any(abs(score) > MAX_ROUND_SCORE for score in scores):
        raise MalformedError("a round's score is out of range")
    return scores


def _ready(payload: dict[str, Any]) -> Ready:
    on = payload.get("on")
    if type(on) is not bool:
        raise MalformedError("'on' must be true or false")
    return Ready(on)


def _add_bot(payload: dict[str, Any]) -> AddBot:
    level = payload.get("level")
    if level not in BOT_LEVELS:
        raise MalformedError(f"bot level must be one of {', '.join(BOT_LEVELS)}")
    return AddBot(_number(payload.get("team"), "team"), level)


def _remove_bot(payload: dict[str, Any]) -> RemoveBot:
    player = payload.get("player")
    if not isinstance(player, str):
        raise MalformedError("no such bot")
    return RemoveBot(player)


_LOWER_HEX: Final = re.compile("[0-9a-f]*")

_PARSERS: Final[dict[str, Callable[[dict[str, Any]], TableCommand]]] = {
    "create": _create,
    "hello": lambda p: Hello(checked_text(p.get("name"), "name", MAX_NAME_LENGTH)),
    "sit": lambda p: Sit(_number(p.get("team"), "team")),
    "stand": lambda p: Stand(),
    "ready": _ready,
    "bot": _add_bot,
    "unbot": _remove_bot,
    "start": lambda p: Start(),
    "rematch": lambda p: Rematch(_number(p.get("r"), "round")),
    "commit": lambda p: Commit(_number(p.get("r"), "round"), _hex64(p.get("d"), "a commit")),
    "reveal": lambda p: Reveal(_number(p.get("r"), "round"), _hex64(p.get("n"), "a reveal")),
    "act": lambda p: Act(_number(p.get("r"), "round"), p.get("a")),
}
