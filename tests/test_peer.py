"""The table peer, sans I/O: core events and timers in, effects out; and the two drivers (the LAN
agent, the simulator) keep no table logic of their own."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.rules.actions import Flip
from nerts_lan.rules.state import Options
from nerts_lan.table.commands import (
    Act,
    Commit,
    Create,
    Hello,
    Ready,
    Reveal,
    Sit,
    Start,
    TableCommand,
    TableSettings,
)
from nerts_lan.table.effects import (
    ActTimer,
    CommitTimer,
    Effect,
    Installed,
    Post,
    ProvideSnapshot,
    Rejoin,
    ReportHash,
    Stabilized,
    StartTimer,
    Submit,
    ThinkTimer,
)
from nerts_lan.table.lobby_view import ViewChanged
from nerts_lan.table.machine import TablePhase, commit_digest
from nerts_lan.table.peer import MIN_BOT_INTERVAL, PeerOptions, TablePeer
from nerts_lan.table.replica import RoundEnded, by_key
from nerts_lan.table.session import EntryIgnored, LeftBehind, RoundStarted
from net.events import (
    EntriesStabilized,
    Expelled,
    LogEntry,
    MemberExcluded,
    MemberJoined,
    SnapshotInstalled,
    SnapshotRequested,
)

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = TableSettings("Den", Options(pile=5, target=1000), teams=2)
NONCE = bytes(range(32))


class Log:
    """A hand-made ordering core shared by a few peers: every submission is ordered at once and
    stabilised when the test says so, on every peer alike."""

    def __init__(self, *peers: TablePeer) -> None:
        self.peers = {peer.peer_id: peer for peer in peers}
        self.clock = 0
        self.index = 0
        self.pending: list[LogEntry] = []
        self.effects: dict[str, list[Effect]] = {peer: [] for peer in self.peers}
        self.ready = dict.fromkeys(self.peers, True)

    def run(self, peer: str, effects: list[Effect]) -> None:
        for effect in effects:
            self.effects[peer].append(effect)
            if isinstance(effect, Submit):
                entry = None
                if self.ready[peer]:
                    self.clock += 1
                    entry = LogEntry(self.clock, peer, effect.command.to_wire())
                    self.pending.append(entry)
                self.run(peer, self.peers[peer].on_submitted(effect.command, entry))

    def stabilize(self) -> None:
        """Everything submitted so far becomes stable, in order, on every peer (until quiet)."""
        while self.pending:
            entries, self.pending = tuple(self.pending), []
            event = EntriesStabilized(self.index + 1, entries)
            self.index += len(entries)
            for name, peer in self.peers.items():
                self.run(name, peer.on_core_events([event], self.ready[name]))

    def submitted(self, peer: str) -> list[TableCommand]:
        return [e.command for e in self.effects[peer] if isinstance(e, Submit)]

    def timers(self, peer: str) -> list[StartTimer]:
        return [e for e in self.effects[peer] if isinstance(e, StartTimer)]


def headless(peer: str, **options: Any) -> TablePeer:
    # The hand-made log stamps one counter: no two entries tie, so the keys are its order.
    return TablePeer(peer, PeerOptions(peer.upper(), **options), lambda: NONCE, by_key)


def hosted(players: int = 1, **options: Any) -> Log:
    """A table hosted by headless bot peer "a" (and "b" joining when ``players`` is 2)."""
    a = headless("a", bot="hard", players=players, **options)
    log = Log(a)
    log.run("a", a.start(["a"], SETTINGS, ready=True))
    return log


def test_a_founder_creates_the_table_and_greets_at_once() -> None:
    log = hosted()
    assert log.submitted("a") == [Create(SETTINGS), Hello("A")]


def test_a_headless_host_sits_readies_and_starts_then_commits_and_reveals() -> None:
    log = hosted()
    log.stabilize()
    assert log.submitted("a") == [
        Create(SETTINGS),
        Hello("A"),
        Sit(0),
        Ready(True),
        Start(),
        Commit(1, commit_digest(NONCE)),
        Reveal(1, NONCE.hex()),
    ]
    machine = log.peers["a"].machine
    assert machine.phase is TablePhase.PLAYING
    posted = [e.event for e in log.effects["a"] if isinstance(e, Post)]
    assert any(isinstance(event, RoundStarted) for event in posted)


def test_a_state_hash_is_reported_every_interval_when_the_core_is_ready() -> None:
    log = hosted(hash_interval=2)
    log.stabilize()
    reports = [e for e in log.effects["a"] if isinstance(e, ReportHash)]
    assert [r.index for r in reports] == [2, 4, 6]
    whole = hosted(hash_interval=7)
    whole.stabilize()
    reports = [e for e in whole.effects["a"] if isinstance(e, ReportHash)]
    assert [(r.index, r.digest) for r in reports] == [(7, whole.peers["a"].machine.digest())]
    assert [e.index for e in log.effects["a"] if isinstance(e, Stabilized)] == list(range(1, 8))

    quiet = hosted(hash_interval=2)
    quiet.ready["a"] = False
    quiet.pending = [LogEntry(1, "a", Create(SETTINGS).to_wire())]
    quiet.stabilize()
    assert not any(isinstance(e, ReportHash) for e in quiet.effects["a"])


def test_a_refused_sit_is_tried_again_on_a_team_with_room() -> None:
    a, b = headless("a", bot="hard", players=2), headless("b", bot="hard")
    log = Log(a, b)
    log.run("b", b.start(["a", "b"], None, ready=True))
    log.run("a", a.start(["a", "b"], SETTINGS, ready=True))
    log.stabilize()
    # Both chose team 0 at once; b's sit came second and was refused: it sat on team 1.
    assert log.submitted("b")[:3] == [Hello("B"), Sit(0), Sit(1)]
    assert any(isinstance(e, Post) and isinstance(e.event, EntryIgnored) for e in log.effects["b"])
    assert [(s.player, s.team) for s in a.machine.seats] == [("A", 0), ("B", 1)]
    assert a.machine.phase is TablePhase.PLAYING and a.machine.digest() == b.machine.digest()


def test_bots_think_on_timers_and_act_after_their_reaction_delay() -> None:
    log = hosted()
    log.stabilize()
    a = log.peers["a"]
    assert a.plays("a", "A") and not a.plays("b", "A")  # whose pointer may show for A
    assert log.timers("a")[-1] == StartTimer(ThinkTimer("A"), 0.0)
    log.run("a", a.on_timer(ThinkTimer("A"), 1.0, ready=True))
    act = log.timers("a")[-1]
    assert isinstance(act.timer, ActTimer) and act.timer.round == 1 and act.delay > 0
    log.run("a", a.on_timer(act.timer, 1.5, ready=True))
    assert log.timers("a")[-1] == StartTimer(ThinkTimer("A"), MIN_BOT_INTERVAL)
    assert log.submitted("a")[-1] == Act.of(1, act.timer.action)
    # An action decided in a round that is over never leaves.
    stale = ActTimer("A", Flip("A"), 7)
    before = len(log.submitted("a"))
    log.run("a", a.on_timer(stale, 2.0, ready=True))
    assert len(log.submitted("a")) == before


def test_a_peer_that_cannot_submit_looks_again_later() -> None:
    log = hosted()
    log.stabilize()
    a = log.peers["a"]
    log.run("a", a.on_timer(ThinkTimer("A"), 1.0, ready=False))
    timer = log.timers("a")[-1]
    assert timer.timer == ThinkTimer("A") and timer.delay > 0


def test_the_intermission_holds_the_next_commit_until_its_timer() -> None:
    log = hosted(intermission=3.0)
    log.stabilize()
    a = log.peers["a"]
    # Round 1 is committed at once; end it dead: every seat declares stuck.
    while a.machine.round_number == 1:
        log.run("a", a.submit(Act(1, {"by": "A", "do": "stuck"})))
        log.stabilize()
    assert a.machine.phase is TablePhase.SEEDING
    assert StartTimer(CommitTimer(2), 3.0) in log.effects["a"]
    assert Commit(2, commit_digest(NONCE)) not in log.submitted("a")
    log.run("a", a.on_timer(CommitTimer(2), 9.0, ready=True))
    assert log.submitted("a")[-1] == Commit(2, commit_digest(NONCE))


def test_a_snapshot_is_provided_and_installed() -> None:
    log = hosted()
    log.stabilize()
    a = log.peers["a"]
    effects = a.on_core_events([SnapshotRequested("c", 7)], ready=True)
    provided = next(e for e in effects if isinstance(e, ProvideSnapshot))
    assert provided.peer == "c" and provided.stable_index == 7
    c = headless("c", bot="hard")
    installed = c.on_core_events([SnapshotInstalled(7, 1, provided.snapshot, ())], ready=True)
    assert Installed(7, provided.snapshot) in installed
    assert c.machine.digest() == a.machine.digest()
    assert any(isinstance(e, Post) and isinstance(e.event, RoundStarted) for e in installed)
    assert Submit(Hello("C")) in installed  # in at last: it says hello


def test_an_expelled_peer_rejoins_and_says_hello_once_back() -> None:
    log = hosted()
    log.stabilize()
    a = log.peers["a"]
    effects = a.on_core_events([Expelled(3)], ready=False)
    assert Rejoin() in effects
    assert any(isinstance(e, Post) and isinstance(e.event, LeftBehind) for e in effects)
    assert Submit(Hello("A")) not in effects
    assert Submit(Hello("A")) in a.on_core_events([], ready=True)


def test_a_bot_peer_joining_mid_match_claims_a_lost_seat_played_by_a_bot() -> None:
    a, b = headless("a", bot="hard", players=2), headless("b", bot="hard")
    log = Log(a, b)
    log.run("b", b.start(["a", "b"], None, ready=True))
    log.run("a", a.start(["a", "b"], SETTINGS, ready=True))
    log.stabilize()
    gone = MemberExcluded("b", 0, 0, 1, log.index)
    log.run("a", a.on_core_events([gone], ready=True))
    assert a.machine.seat_of("B") is not None and a.machine.seat_of("B").bot == "medium"  # type: ignore[union-attr]
    d = headless("d", bot="hard")
    log.peers["d"], log.effects["d"], log.ready["d"] = d, [], True
    snapshot = a.machine.snapshot()
    log.run("d", d.on_core_events([SnapshotInstalled(log.index, 1, snapshot, ())], ready=True))
    joined = MemberJoined("d", 0, 1, log.index)
    log.run("a", a.on_core_events([joined], ready=True))
    log.run("d", d.on_core_events([joined], ready=True))
    log.stabilize()
    assert a.machine.claims == {"d": "B"}
    assert Sit(1) in log.submitted("d")


# --- the drivers keep no table logic -----------------------------------------------------------

DRIVERS = ["nerts_lan/lab/simgame.py", "nerts_lan/lan/agent.py"]
TABLE_LOGIC = {
    "TableMachine",
    "commit_digest",
    "HASH_INTERVAL",
    "Bot",
    "CommitDue",
    "RevealDue",
    "stable_entry",
    "tentative_entry",
    "take_events",
    "member_joined",
    "member_returned",
    "member_gone",
    "from_snapshot",
    "decide",
    "can_start",
    "controlled_by",
    "claims",
    "seat_of",
    "Seat",
}


@pytest.mark.parametrize("path", DRIVERS)
def test_each_driver_runs_the_table_peer_and_keeps_no_table_logic(path: str) -> None:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert "TablePeer" in imported, f"{path} does not drive TablePeer"
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found = (imported | names | attributes) & TABLE_LOGIC
    assert not found, f"{path} does table work itself: {sorted(found)}"
    digests = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "digest"
        and not isinstance(node.func.value, ast.Call)  # hashlib.sha256(...).digest() is not
    ]
    assert not digests, f"{path} hashes the table itself"


@pytest.mark.parametrize(
    "path", sorted(p.name for p in (ROOT / "nerts_lan" / "table").glob("*.py"))
)
def test_the_table_peer_has_no_clock_randomness_or_io_of_its_own(path: str) -> None:
    """Every module of the table folder: the same peer runs in simulated time and on laptops."""
    tree = ast.parse((ROOT / "nerts_lan" / "table" / path).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            imported.add((node.module or "").split(".")[0])
    assert not imported & {"time", "random", "secrets", "asyncio", "socket", "os", "threading"}


def test_the_end_of_a_round_comes_after_the_match_that_counts_it() -> None:
    # Issue 25: a LAN scoreboard said "Round 0 over" with the previous round's totals: the
    # round's end was posted, but the match went out only with a new view, and the last view
    # had gone out already.
    log = hosted()
    log.stabilize()
    a = log.peers["a"]
    while a.machine.round_number == 1:
        log.run("a", a.submit(Act(1, {"by": "A", "do": "stuck"})))
        log.stabilize()
    posted = [e.event for e in log.effects["a"] if isinstance(e, Post)]
    ended = next(i for i, event in enumerate(posted) if isinstance(event, RoundEnded))
    views = [event for event in posted[:ended] if isinstance(event, ViewChanged)]
    assert views and len(views[-1].match.rounds) == 1
    match = views[-1].match
    assert match.rounds[0] == tuple(posted[ended].scores[name] for name in match.team_names)
