"""One peer at a table, sans I/O: the ordering core's events and timers in, effects out.

``TablePeer`` is everything a peer does at a table between its ordering core and its front end:
it folds the core's events into the ``TableMachine``, carries out the duties the table announces
(commit to a nonce, reveal it), reports a state hash every few stable entries, provides and
installs snapshots, rejoins after an expulsion, does a headless peer's lobby duties (sit, choose a
team, claim a bot's seat mid-match, say it is ready, start the match as the host) and runs the
bots of the seats it plays on timers. It has no sockets, no asyncio, no clock and no randomness of
its own: the time comes with each call (``now``), nonces from the ``nonce`` callable it is given.

Two drivers run its effects: the LAN's ``TableAgent`` (asyncio, real sockets) and the simulator's
``GameApp`` (``nerts_lan.lab.simgame``), so the seeded simulated games test the code laptops run::

    core events --> TablePeer.on_core_events(events, ready) --> [Submit, ReportHash, Post, ...]
    a timer     --> TablePeer.on_timer(timer, now, ready)   --> [Submit, StartTimer, ...]
    Submit(command) run by the driver --> TablePeer.on_submitted(command, entry) --> [...]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from nerts_lan.bots.bot import Bot
from nerts_lan.rules.actions import Action, Flip, MalformedError
from nerts_lan.rules.engine import legal_actions
from nerts_lan.rules.state import State
from nerts_lan.table.commands import (
    Act,
    Create,
    Hello,
    Ready,
    ResumedMatch,
    Sit,
    Start,
    TableCommand,
    TableSettings,
)
from nerts_lan.table.drawing import SeedDrawing
from nerts_lan.table.effects import (
    ActTimer,
    Effect,
    Installed,
    MemberLogged,
    Post,
    ProvideSnapshot,
    Rejoin,
    ReportHash,
    Stabilized,
    StartTimer,
    Submit,
    ThinkTimer,
    Timer,
    Traced,
    Warned,
)
from nerts_lan.table.lobby_view import LobbyView, ViewChanged
from nerts_lan.table.machine import (
    CommitDue,
    LobbyChanged,
    RevealDue,
    TableMachine,
    TablePhase,
)
from nerts_lan.table.replica import ActionRejected, EntryKey, Ranking, RoundEnded
from nerts_lan.table.session import (
    LeftBehind,
    MatchEnded,
    PeerHeardAgain,
    PeerWentSilent,
    RoundStarted,
)
from net.events import (
    DivergenceDetected,
    EntriesRetracted,
    EntriesStabilized,
    EntryReceived,
    Event,
    Expelled,
    LogEntry,
    MemberExcluded,
    MemberJoined,
    MemberLeft,
    MemberRecovered,
    MemberReturned,
    MemberSuspected,
    SnapshotInstalled,
    SnapshotRequested,
)

__all__ = [
    "PeerOptions",
    "TablePeer",
]

HASH_INTERVAL: Final = 32
"""Stable entries between two state-hash exchanges."""

MIN_BOT_INTERVAL: Final = 0.002
"""Seconds between two actions of one bot, whatever its level."""

IDLE_BOT_RECHECK: Final = 0.05
"""Seconds before a bot with nothing to do (or a peer that cannot submit) looks again."""


@dataclass(frozen=True)
class PeerOptions:
    """How this peer takes part in the table (the table's side of ``LanOptions``)."""

    name: str
    team: int | None = None
    """The team a headless peer sits on (None: the first with room, partners filled in pairs)."""
    bot: str | None = None
    """Play the local seat with a bot of this level (headless peers)."""
    bot_delay: float = 1.0
    """Multiplies the bots' reaction delays (0: instant)."""
    players: int | None = None
    """As the host: start the match once this many members are seated and ready."""
    spectate: bool = False
    intermission: float = 0.0
    """Seconds between the end of a round and this peer's commit to the next deal."""
    pace: float = 0.0
    """When this peer has a seat: the longest, in seconds, its commit to the next deal waits
    for its player to say "next round" (``deal_on``) instead of the intermission; the deal
    waits for every member's commit, so it comes once every such player is ready, or the
    slowest one's time ran out (0: the intermission only, for headless and bot peers)."""
    hash_interval: int = HASH_INTERVAL
    bot_rounds: int | None = None
    """Bots play up to this round only (None: every round): a simulation then falls quiet."""
    rematches: int = 0
    """A headless peer's: ask for a rematch this many times, each time a match is over."""


class TablePeer:
    """One peer's table: the fold, its duties, the lobby automation and the bots (no I/O)."""

    def __init__(
        self, peer_id: str, options: PeerOptions, nonce: Callable[[], bytes], rank: Ranking
    ) -> None:
        """``rank``: the ordering core's (``OrderingCore.rank`` of whichever core runs now): the
        tentative entries are shown in its order, never in an order of the keys' own."""
        self.peer_id = peer_id
        self.options = options
        self._rank = rank
        self.machine = TableMachine(peer_id, rank)
        self._drawing = SeedDrawing(self._machine, nonce, self._submit, self._start_timer)
        self._bots: dict[str, Bot] = {}
        self._bot_timers: set[str] = set()
        self._hold_bots = 0.0
        self._in_flight: dict[type, EntryKey | None] = {}
        """Lobby duties submitted and not yet stable (None: not yet ordered)."""
        self._duty_settled = False
        """A duty's entry became stable (a refused sit is tried again)."""
        self._greeted = False
        self._ready = False
        self._posted_view: State | None = None
        self._effects: list[Effect] = []

    # --- inputs --------------------------------------------------------------------------------

    def start(
        self,
        founders: Sequence[str],
        create: TableSettings | None,
        ready: bool,
        resumed: ResumedMatch | None = None,
    ) -> list[Effect]:
        """The core started with ``founders`` as members (a joiner: none); ``create`` opens a new
        table with those settings (going on with the match ``resumed``, if given). A founder
        says hello at once, a joiner once it is in."""
        for founder in founders:
            self.machine.member_joined(founder)
        if create is not None:
            self._submit(Create(create, resumed))
        return self._finish(ready)

    def on_core_events(self, events: Sequence[Event], ready: bool) -> list[Effect]:
        """Fold what the core reported; ``ready`` says whether the core takes submissions now."""
        self._ready = ready
        for event in events:
            handler = _CORE_HANDLERS.get(type(event))
            if handler is not None:
                handler(self, event)
            self._pump()
        return self._finish(ready)

    def on_timer(self, timer: Timer, now: float, ready: bool) -> list[Effect]:
        """A timer this peer started is due."""
        self._ready = ready
        if isinstance(timer, ThinkTimer):
            self._think(timer.player, now)
        elif isinstance(timer, ActTimer):
            self._act(timer)
        else:
            self._drawing.on_timer(timer)
        return self._finish(ready)

    def deal_on(self) -> list[Effect]:
        """This peer's player is ready for the next deal (the scoreboard's "next round"):
        commit to it now rather than when the wait runs out; once the match is over, ask for a
        rematch (``SeedDrawing.deal_on``)."""
        self._drawing.deal_on()
        return self._finish(self._ready)

    def on_submitted(self, command: TableCommand, entry: LogEntry | None) -> list[Effect]:
        """What became of a ``Submit``: its log entry, or None when the core took nothing."""
        duty = type(command)
        if duty in self._in_flight:
            if entry is None:
                del self._in_flight[duty]
            else:
                self._in_flight[duty] = entry.key
        if entry is not None:
            if isinstance(command, Act):
                self._effects.append(Traced("submit", entry.key))
            self.machine.tentative_entry(entry.key, entry.payload)
            self._pump()
        return self._finish(self._ready)

    def submit(self, command: TableCommand) -> list[Effect]:
        """A command of this peer's user (a lobby button)."""
        self._submit(command)
        return self._finish(self._ready)

    def submit_action(self, action: Action) -> list[Effect]:
        """A local player's intent: ordered, and shown at once in the view."""
        machine = self.machine
        if machine.phase is not TablePhase.PLAYING:
            self._post(ActionRejected((0, ""), action, "no round is in play", True))
        else:
            self._submit(Act.of(machine.round_number, action))
        return self._finish(self._ready)

    def plays(self, peer: str, player: str) -> bool:
        """Whether ``peer``'s actions count for ``player`` now (a pointer is shown only then)."""
        seat = self.machine.seat_of(player)
        return seat is not None and seat.controller == peer

    def a_move(self) -> Action | None:
        """A legal move of this peer's first seat in the view now (a flip when it has one): a
        test's play at a chosen instant. None outside a round or without a seat."""
        machine = self.machine
        seats = machine.controlled_by(self.peer_id)
        if machine.view is None or not seats:
            return None
        moves = legal_actions(machine.view, seats[0].player)
        return next((move for move in moves if isinstance(move, Flip)), None) or next(
            iter(moves), None
        )

    # --- the core's events ---------------------------------------------------------------------

    def _on_received(self, event: EntryReceived) -> None:
        self.machine.tentative_entry(event.entry.key, event.entry.payload)
        if _is_act(event.entry.payload):
            self._effects.append(Traced("applied", event.entry.key))

    def _on_stabilized(self, event: EntriesStabilized) -> None:
        for offset, entry in enumerate(event.entries):
            index = event.first_index + offset
            accepted = self._fold_stable(entry)
            self._effects.append(Stabilized(index, entry, accepted))
            if _is_act(entry.payload):
                self._effects.append(Traced("stable", entry.key))
            for duty, key in list(self._in_flight.items()):
                if key == entry.key:
                    del self._in_flight[duty]
                    self._duty_settled = True
            if index % self.options.hash_interval == 0 and self._ready:
                self._effects.append(ReportHash(index, self.machine.digest()))

    def _fold_stable(self, entry: LogEntry) -> bool | None:
        machine = self.machine
        replica = machine.replica
        before = replica.stable if replica is not None else None
        machine.stable_entry(entry.key, entry.payload)
        if not _is_act(entry.payload) or replica is None or machine.replica is not replica:
            return None
        return replica.stable is not before

    def _on_retracted(self, event: EntriesRetracted) -> None:
        self.machine.retracted([entry.key for entry in event.entries])

    def _on_joined(self, event: MemberJoined | MemberReturned) -> None:
        owns_seat = self.machine.seating.owns_seat(event.peer)
        if owns_seat:
            self.machine.member_returned(event.peer)
        else:
            self.machine.member_joined(event.peer)
        self._effects.append(MemberLogged("returned" if owns_seat else "joined", event.peer))

    def _on_gone(self, event: MemberLeft | MemberExcluded) -> None:
        self.machine.member_gone(event.peer, left=isinstance(event, MemberLeft))
        self._effects.append(MemberLogged("gone", event.peer))

    def _on_suspected(self, event: MemberSuspected | MemberRecovered) -> None:
        name = self.machine.members.get(event.peer, event.peer)
        if isinstance(event, MemberSuspected):
            self._post(PeerWentSilent(event.peer, name))
        else:
            self._post(PeerHeardAgain(event.peer, name))

    def _on_snapshot_requested(self, event: SnapshotRequested) -> None:
        snapshot = self.machine.snapshot()
        self._effects.append(ProvideSnapshot(event.peer, event.stable_index, snapshot))

    def _on_snapshot_installed(self, event: SnapshotInstalled) -> None:
        try:
            machine = TableMachine.from_snapshot(self.peer_id, event.snapshot, self._rank)
        except MalformedError as error:
            self._effects.append(Warned(f"bad snapshot: {error}"))
            return
        self.machine = machine
        self._effects.append(Installed(event.stable_index, event.snapshot))
        for entry in event.tentative:
            machine.tentative_entry(entry.key, entry.payload)
        if machine.replica is not None:
            self._post(RoundStarted(machine.round_number, machine.replica.view))
        self._post(LobbyChanged())
        self._post(LobbyView.of(machine))

    def _on_diverged(self, event: DivergenceDetected) -> None:
        self._effects.append(Warned(f"state diverged from {event.peer} at {event.stable_index}"))

    def _on_expelled(self, event: Expelled) -> None:
        # The others went on without us (a long pause, a partition on our side): join again as
        # a new incarnation and catch up from their stable state; say hello again once in.
        self._post(LeftBehind())
        self._greeted = False
        self._in_flight.clear()
        self._effects.append(Rejoin())

    # --- the table's events and duties ---------------------------------------------------------

    def _pump(self) -> None:
        lobby_changed = False
        for event in self.machine.take_events():
            if isinstance(event, CommitDue):
                self._drawing.commit_due(event.round, self._wait_before_commit())
            elif isinstance(event, RevealDue):
                self._drawing.reveal_due(event.round)
            elif isinstance(event, LobbyChanged):
                lobby_changed = True
                self._post(event)
                self._post(LobbyView.of(self.machine))
            else:
                if isinstance(event, RoundStarted):
                    self._hold_bots = float(self.machine.settings.countdown)  # type: ignore[union-attr]
                    for bot in self._bots.values():
                        bot.reset()
                if isinstance(event, RoundEnded):
                    # The scoreboard reads the match as the last view brought it: that view
                    # must count this round before the round's end is told.
                    self._post_view(always=True)
                self._post(event)
                if isinstance(event, MatchEnded):
                    self._drawing.match_over(self.options.rematches)
        if lobby_changed or self._duty_settled:
            self._duty_settled = False
            self._lobby_duties()

    def _finish(self, ready: bool) -> list[Effect]:
        """After every input: a greeting once in, the view to show, the bots to wake."""
        if not self._greeted and ready:
            self._greeted = True
            self._submit(Hello(self.options.name))
        self._post_view()
        self._schedule_bots()
        effects, self._effects = self._effects, []
        return effects

    def _post_view(self, always: bool = False) -> None:
        """Tell the view to show, with the match and table it goes with: when it changed, or
        ``always`` (the match moved on under the same view)."""
        view = self.machine.view
        if view is not None and (always or view is not self._posted_view):
            self._posted_view = view
            self._post(ViewChanged(view, self.machine.match, self.machine.round_table))

    def _wait_before_commit(self) -> float:
        """Seconds this peer's commit to a next deal waits (see ``PeerOptions.pace``)."""
        options = self.options
        # A bot playing this peer's seat (a demonstration) has nobody to wait for.
        if (
            options.pace > 0
            and options.bot is None
            and self.machine.seating.owns_seat(self.peer_id)
        ):
            return options.pace
        return options.intermission

    def _lobby_duties(self) -> None:
        """What a headless or scripted peer does by itself in the lobby."""
        machine = self.machine
        me = self.peer_id
        if machine.settings is None or me not in machine.members or self.options.spectate:
            return
        if machine.phase in (TablePhase.SEEDING, TablePhase.REVEALING, TablePhase.PLAYING):
            self._claim_bot_seat()
            return
        if machine.phase is not TablePhase.LOBBY:
            return
        seated = machine.seating.owns_seat(me)
        if not seated and Sit not in self._in_flight:
            team = self._choose_team(machine.settings)
            if team is not None:
                self._duty(Sit(team))
        elif seated and self._readies() and me not in machine.ready:
            self._duty(Ready(True))
        if self._may_start():
            self._duty(Start())

    def _readies(self) -> bool:
        """A headless peer (a bot, or a host told how many to wait for) says it is ready."""
        wants = self.options.bot is not None or self.options.players is not None
        return wants and Ready not in self._in_flight

    def _may_start(self) -> bool:
        machine = self.machine
        players = self.options.players
        return (
            players is not None
            and machine.host == self.peer_id
            and Start not in self._in_flight
            and len(machine.members) >= players
            and machine.can_start() is None
            and all(machine.seating.owns_seat(p) for p in machine.members)
        )

    def _claim_bot_seat(self) -> None:
        """A headless bot peer that joined a running match takes a seat a bot plays (from the
        next round), if there is one."""
        machine = self.machine
        me = self.peer_id
        if not self.options.bot or Sit in self._in_flight or me in machine.claims:
            return
        if machine.seating.owns_seat(me):
            return
        seat = machine.seating.claimable_seat(None, machine.members)
        if seat is not None:
            self._duty(Sit(seat.team))

    def _choose_team(self, settings: TableSettings) -> int | None:
        counts = [self.machine.seating.team_count(t) for t in range(settings.teams)]
        wanted = self.options.team
        if wanted is not None and 0 <= wanted < settings.teams:
            return wanted if counts[wanted] < settings.per_team else None
        # Fill partnership teams in pairs, singles one per team.
        for team, count in enumerate(counts):
            if 0 < count < settings.per_team:
                return team
        for team, count in enumerate(counts):
            if count == 0:
                return team
        return None

    # --- bots ----------------------------------------------------------------------------------

    def _bots_play(self) -> bool:
        machine = self.machine
        last = self.options.bot_rounds
        return (
            machine.phase is TablePhase.PLAYING
            and machine.replica is not None
            and (last is None or machine.round_number <= last)
        )

    def _schedule_bots(self) -> None:
        if not self._bots_play():
            return
        for seat in self.machine.controlled_by(self.peer_id):
            level = seat.bot or (self.options.bot if seat.owner == self.peer_id else None)
            if level is None:
                continue
            bot = self._bots.get(seat.player)
            if bot is None or bot.level != level:
                bot = Bot(
                    seat.player,
                    level,
                    seed=f"{self.peer_id}/{seat.player}",
                    delay_scale=self.options.bot_delay,
                )
                self._bots[seat.player] = bot
            if seat.player not in self._bot_timers:  # after a deal, once the countdown is over
                self._start_timer(ThinkTimer(seat.player), self._hold_bots)
        self._hold_bots = 0.0

    def _think(self, player: str, now: float) -> None:
        self._bot_timers.discard(player)
        machine = self.machine
        bot, seat, replica = self._bots.get(player), machine.seat_of(player), machine.replica
        if bot is None or seat is None or replica is None or seat.controller != self.peer_id:
            return
        if not self._bots_play():
            return
        if not self._ready:
            self._start_timer(ThinkTimer(player), IDLE_BOT_RECHECK)
            return
        action = bot.decide(replica.view, now)
        delay = bot.reaction_delay(action)
        if action is None:
            self._start_timer(ThinkTimer(player), max(delay, IDLE_BOT_RECHECK))
            return
        # A person reacts to what they saw: the action leaves after the reaction delay.
        self._start_timer(ActTimer(player, action, machine.round_number), delay)

    def _act(self, timer: ActTimer) -> None:
        self._bot_timers.discard(timer.player)
        machine = self.machine
        # Even an instant bot leaves a breath between two of its actions.
        self._start_timer(ThinkTimer(timer.player), MIN_BOT_INTERVAL)
        if machine.phase is TablePhase.PLAYING and machine.round_number == timer.round:
            self._submit(Act.of(timer.round, timer.action))

    def _machine(self) -> TableMachine:
        return self.machine

    # --- helpers -------------------------------------------------------------------------------

    def _submit(self, command: TableCommand) -> None:
        self._effects.append(Submit(command))

    def _duty(self, command: Sit | Ready | Start) -> None:
        self._in_flight[type(command)] = None
        self._submit(command)

    def _post(self, event: Any) -> None:
        self._effects.append(Post(event))

    def _start_timer(self, timer: Timer, delay: float) -> None:
        if isinstance(timer, ThinkTimer | ActTimer):
            self._bot_timers.add(timer.player)
        self._effects.append(StartTimer(timer, delay))


def _is_act(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("k") == Act.KIND


_CORE_HANDLERS: Final[dict[type, Callable[[TablePeer, Any], None]]] = {
    EntryReceived: TablePeer._on_received,
    EntriesStabilized: TablePeer._on_stabilized,
    EntriesRetracted: TablePeer._on_retracted,
    MemberJoined: TablePeer._on_joined,
    MemberReturned: TablePeer._on_joined,
    MemberLeft: TablePeer._on_gone,
    MemberExcluded: TablePeer._on_gone,
    MemberSuspected: TablePeer._on_suspected,
    MemberRecovered: TablePeer._on_suspected,
    SnapshotRequested: TablePeer._on_snapshot_requested,
    SnapshotInstalled: TablePeer._on_snapshot_installed,
    DivergenceDetected: TablePeer._on_diverged,
    Expelled: TablePeer._on_expelled,
}
"""What the peer does with each of the core's events (the others only wake the duties)."""
