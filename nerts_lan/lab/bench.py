"""``nerts-lan bench``: figures measured on this machine, printed as JSON (never a timed test).

Groups: ``engine`` (issue 2) and, as they land, the bots' simulator and the network core. Each
figure names its unit; goals are in the issues and in docs/testing.md.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from nerts_lan.rules.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.engine import apply, deal_round, legal_actions, replay
from nerts_lan.rules.state import Options, Rejection, State, Table, state_digest

__all__ = ["realistic_log", "run_benchmarks"]


def run_benchmarks(quick: bool = False, only: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark groups (all, or those named in ``only``) and return their figures."""
    groups: dict[str, Callable[[bool], dict[str, Any]]] = {"engine": bench_engine}
    groups.update(_optional_groups())
    unknown = sorted(set(only or ()) - set(groups))
    if unknown:
        from nerts_lan.usage import UsageError

        raise UsageError(
            "bench", f"unknown group {unknown[0]!r} (choose from {', '.join(sorted(groups))})"
        )
    figures: dict[str, Any] = {}
    for name, bench in groups.items():
        if only is None or name in only:
            figures[name] = bench(quick)
    return figures


def bench_engine(quick: bool = False) -> dict[str, Any]:
    """Apply rate on a long 4-team log, legal-action rate, hash time, rollback time."""
    rounds = 3 if quick else 12
    logs = [realistic_log(f"bench-{i}", teams=4) for i in range(rounds)]
    total_actions = sum(len(actions) for _, actions in logs)
    rejected = 0
    for initial, actions in logs:
        rejected += sum(1 for r in replay(initial, actions)[1] if r is not None)

    def replay_all() -> None:
        for initial, actions in logs:
            replay(initial, actions)

    apply_seconds = _best_of(replay_all, 3 if quick else 5)

    sample = _states_along(logs)[: 500 if quick else 3000]

    def generate_all() -> None:
        for state, player in sample:
            legal_actions(state, player)

    legal_seconds = _best_of(generate_all, 3)

    def hash_all() -> None:
        for state, _ in sample:
            state_digest(state)

    hash_seconds = _best_of(hash_all, 3)

    # Rollback: rebuild the view from a stable snapshot plus 50 pending actions.
    windows = [_rollback_window(initial, actions) for initial, actions in logs]

    def rebuild_all() -> None:
        for snapshot, pending in windows:
            replay(snapshot, pending)

    rebuild_seconds = _best_of(rebuild_all, 20)
    return {
        "log_actions": total_actions,
        "log_rejected_share": round(rejected / total_actions, 3),
        "apply_actions_per_s": round(total_actions / apply_seconds),
        "legal_actions_per_s": round(len(sample) / legal_seconds),
        "state_hash_us": round(hash_seconds / len(sample) * 1e6, 2),
        "rebuild_snapshot_plus_50_ms": round(rebuild_seconds / len(windows) * 1e3, 4),
        "goals": {
            "apply_actions_per_s": ">= 100000",
            "legal_actions_per_s": ">= 20000",
            "state_hash_us": "<= 50",
            "rebuild_snapshot_plus_50_ms": "<= 1",
        },
    }


def realistic_log(seed: str, teams: int = 4, limit: int = 4000) -> tuple[State, list[Action]]:
    """A round's worth of play by simple seeded players, with the races a real table has.

    Each turn one player (at random) acts on a view of the table a few actions old, as a person
    reacting to what they saw a moment ago; some of those actions lose races and are rejected.
    Players prefer foundation plays, then nerts-pile plays, then other moves, then flipping, and
    declare stuck after a fruitless pass.
    """
    rng = random.Random(seed)
    names = tuple(f"team{i + 1}" for i in range(teams))
    table = Table(Options(), names, tuple((f"p{i + 1}",) for i in range(teams)))
    initial = deal_round(table, seed)
    state = initial
    history = [state]
    actions: list[Action] = []
    idle = dict.fromkeys(range(teams), 0)
    while state.outcome is None and len(actions) < limit:
        team = rng.randrange(teams)
        player = table.team_players[team][0]
        view = history[max(0, len(history) - 1 - rng.randrange(4))]
        action = _choose(view, player, rng, idle[team])
        after = apply(state, action)
        actions.append(action)
        if isinstance(after, Rejection):
            continue
        idle[team] = idle[team] + 1 if isinstance(action, Flip) else 0
        state = after
        history.append(state)
    return initial, actions


def _choose(view: State, player: str, rng: random.Random, idle: int) -> Action:
    options = legal_actions(view, player)
    by_kind: dict[str, list[Action]] = {"found": [], "nerts": [], "move": [], "other": []}
    for action in options:
        if isinstance(action, CallNerts):
            return action
        if isinstance(action, Play) and action.target.kind == "foundation":
            by_kind["found"].append(action)
        elif isinstance(action, (Play, SlideUnder)) and action.source.kind == "nerts":
            by_kind["nerts"].append(action)
        elif isinstance(action, (Play, SlideUnder)) and action.source.kind == "waste":
            by_kind["move"].append(action)
        else:
            by_kind["other"].append(action)
    for kind in ("found", "nerts", "move"):
        if by_kind[kind] and rng.random() < 0.9:
            return rng.choice(by_kind[kind])
    flips = [a for a in by_kind["other"] if isinstance(a, Flip)]
    if flips and idle < 30:
        return flips[0]
    return next(a for a in by_kind["other"] if isinstance(a, DeclareStuck))


def _states_along(logs: list[tuple[State, list[Action]]]) -> list[tuple[State, str]]:
    """Every 7th state seen along the logs, with the player who acted on it."""
    sample = []
    for initial, actions in logs:
        state = initial
        for index, action in enumerate(actions):
            if index % 7 == 0:
                sample.append((state, action.by))
            after = apply(state, action)
            if not isinstance(after, Rejection):
                state = after
    return sample


def _rollback_window(initial: State, actions: list[Action]) -> tuple[State, list[Action]]:
    """The state halfway through a log and the 50 actions after it."""
    half = len(actions) // 2
    snapshot, _ = replay(initial, actions[:half])
    return snapshot, actions[half : half + 50]


def _best_of(work: Callable[[], None], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def _optional_groups() -> dict[str, Callable[[bool], dict[str, Any]]]:
    """Benchmark groups of the parts that exist in this build."""
    groups: dict[str, Callable[[bool], dict[str, Any]]] = {}
    from nerts_lan.lab import sim

    groups["bots"] = sim.bench_bot_rounds
    groups["net"] = _bench_net
    groups["lan"] = _bench_lan
    groups["ui"] = _bench_ui
    groups["keys"] = _bench_keys
    groups["faults"] = _bench_faults
    return groups


def _bench_faults(quick: bool) -> dict[str, Any]:
    """What a seed of the fault sweep costs (issue 24: the median fast seed), from source and
    on the mypyc build that ``nerts-lan faults --compiled`` runs."""
    from nerts_lan.folders import data_folder
    from nerts_lan.lab.faults.cost import bench_faults, bench_faults_compiled

    figures = bench_faults(quick)
    figures["compiled"] = bench_faults_compiled(data_folder() / "compiled", quick)
    return figures


def _bench_keys(quick: bool) -> dict[str, Any]:
    """What peer keys cost: signing and checking each action, and its frame's growth."""
    from nerts_lan.lab.keybench import bench_keys

    return bench_keys(quick)


def _bench_net(quick: bool) -> dict[str, Any]:
    """The ordering core: codec and ordering rates, and stable latency in the simulator."""
    from nerts_lan.lab.simgame import bench_simgame
    from net.testing import run_benchmarks as run_net_benchmarks

    figures = run_net_benchmarks(quick=quick)
    figures["game_on_the_simulator"] = bench_simgame(quick)
    return figures


def _bench_lan(quick: bool) -> dict[str, Any]:
    from nerts_lan.lab.lanbench import bench_lan

    return bench_lan(quick)


def _bench_ui(quick: bool) -> dict[str, Any]:
    """Frame times of the window, measured in a process of its own (pyglet's headless mode must
    be chosen before any window exists)."""
    import json
    import subprocess
    import sys

    code = f"import json; from ui.bench import bench_ui; print(json.dumps(bench_ui({quick})))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures
