"""``nerts-lan faults --budget 60m``: every generator in turn (round-robin, one seed each) for a
time budget, in parallel processes, resuming where the last run stopped.

Progress lives in a JSON state file (`SweepState`): per generator and kind of timers (a *lane*,
``"partial/fast"``), the next seed to run and cumulative counts (seeds, seeds with forks, with
divergences, without final agreement, honest members excluded, the failing seeds). The file is
read as hostile input: anything but the shape `SweepState.to_json` writes is a `StateError`.
It is written after each completed seed (at most once a second) and at the end, through a
temporary file, so an interrupted sweep resumes at the first seed it did not finish.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from nerts_lan.lab.faults.generators import GENERATORS, run_generator

__all__ = ["Lane", "StateError", "SweepState", "run_record", "sweep"]

STATE_VERSION: Final = 1
MAX_STATE_BYTES: Final = 16 * 1024 * 1024
"""A state file larger than this is not one this program wrote."""
MAX_SEED: Final = 10**12
SAVE_EVERY: Final = 1.0
"""Seconds between two writes of the state file while the sweep runs."""
TIMERS: Final = ("fast", "real")
COUNTS: Final = (
    "seeds",
    "forks",
    "divergences",
    "disagreements",
    "honest_excluded",
    "honest_flagged",
    "honest_accused",
)


class StateError(Exception):
    """The state file is not a sweep state (the message says why, in a few words)."""


@dataclass
class Lane:
    """One generator with one kind of timers: where it stands, over every run so far."""

    generator: str
    timers: str
    next_seed: int = 0
    seeds: int = 0
    forks: int = 0
    """Seeds with a fork."""
    divergences: int = 0
    """Seeds with a divergence."""
    disagreements: int = 0
    """Seeds whose table did not end as one."""
    honest_excluded: int = 0
    """Honest members excluded, summed over the seeds."""
    honest_flagged: int = 0
    """Clock flags honest members raised against honest ones, summed over the seeds (a state
    written before they were counted starts from 0)."""
    honest_accused: int = 0
    """Pairs of honest laptops where one held clock grounds for the other's removal, summed
    over the seeds (a state written before they were counted starts from 0)."""
    failing: list[int] = field(default_factory=list)
    """Every seed that ever failed (to keep in the suite)."""
    flagged: list[int] = field(default_factory=list)
    """Every seed in which an honest member flagged an honest one's clock (to look at again: a
    flag convicts nobody, but says a clock lagged the table by more than the bound)."""
    ran_now: int = 0
    failed_now: list[int] = field(default_factory=list)
    flagged_now: list[int] = field(default_factory=list)
    _pending: set[int] = field(default_factory=set)
    _dispatched: int | None = None

    @property
    def name(self) -> str:
        return f"{self.generator}/{self.timers}"

    def dispatch(self) -> int:
        """The next seed to hand out this run."""
        seed = self.next_seed if self._dispatched is None else self._dispatched
        self._dispatched = seed + 1
        self._pending.add(seed)
        return seed

    def add(self, record: dict[str, Any]) -> None:
        """Count one finished seed; the next seed is the first one not finished yet."""
        seed = int(record["seed"])
        self._pending.discard(seed)
        self.next_seed = min(self._pending, default=self._dispatched or seed + 1)
        self.seeds += 1
        self.ran_now += 1
        self.forks += bool(record["forks"])
        self.divergences += bool(record["divergences"])
        self.disagreements += not record["final_agreement"]
        self.honest_excluded += int(record["honest_excluded"])
        self.honest_flagged += int(record.get("honest_flagged", 0))
        self.honest_accused += int(record.get("honest_accused", 0))
        if record["failed"]:
            self.failed_now.append(seed)
            if seed not in self.failing:
                self.failing.append(seed)
        if record.get("honest_flagged", 0):
            self.flagged_now.append(seed)
            if seed not in self.flagged:
                self.flagged.append(seed)

    def to_json(self) -> dict[str, Any]:
        counts = {name: getattr(self, name) for name in COUNTS}
        seeds = {"failing": sorted(self.failing), "flagged": sorted(self.flagged)}
        return {"next_seed": self.next_seed, **counts, **seeds}


@dataclass
class SweepState:
    """Every lane's progress; lanes of generators this program does not know are kept as read."""

    lanes: dict[str, Lane] = field(default_factory=dict)
    foreign: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> SweepState:
        """The state in `path` (empty if there is no such file); `StateError` if it is not one."""
        try:
            with path.open("rb") as file:
                data = file.read(MAX_STATE_BYTES + 1)
        except FileNotFoundError:
            return cls()
        except OSError as error:
            raise StateError(f"cannot be read ({error.strerror or error})") from None
        if len(data) > MAX_STATE_BYTES:
            raise StateError("is too large to be a sweep state")
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise StateError("is not JSON") from None
        return cls.from_json(document)

    @classmethod
    def from_json(cls, document: Any) -> SweepState:
        """Parse `document` strictly; `StateError` names the first thing wrong."""
        if not isinstance(document, dict) or document.get("version") != STATE_VERSION:
            raise StateError(f"is not a version {STATE_VERSION} sweep state")
        lanes = document.get("lanes")
        if not isinstance(lanes, dict):
            raise StateError("has no 'lanes' object")
        state = cls()
        for name, fields in lanes.items():
            generator, _, timers = str(name).rpartition("/")
            if timers not in TIMERS or not generator:
                raise StateError(f"has a lane {name!r} that is not GENERATOR/fast or /real")
            lane = _lane_from_json(generator, timers, fields)
            if generator in GENERATORS:
                state.lanes[name] = lane
            else:
                state.foreign[name] = fields
        return state

    def lane(self, generator: str, timers: str) -> Lane:
        return self.lanes.setdefault(f"{generator}/{timers}", Lane(generator, timers))

    def to_json(self) -> dict[str, Any]:
        lanes = {**self.foreign, **{name: lane.to_json() for name, lane in self.lanes.items()}}
        return {"version": STATE_VERSION, "lanes": dict(sorted(lanes.items()))}

    def save(self, path: Path) -> None:
        """Write the state through a temporary file (a crash leaves the old or the new one)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, path)


def sweep(
    lanes: list[Lane],
    budget_s: float,
    jobs: int,
    on_record: Callable[[Lane, dict[str, Any]], None],
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Run the lanes' next seeds round-robin until `budget_s` seconds have passed (the seeds
    under way then are finished), `jobs` at once; `on_record` gets each finished seed."""
    deadline = clock() + budget_s
    tasks = _round_robin(lanes)
    if jobs == 1:
        while clock() < deadline:
            lane, seed = next(tasks)
            on_record(lane, run_record(lane.generator, seed, lane.timers == "real"))
        return
    import multiprocessing

    # fork where it is safe (Linux); macOS and Windows spawn. multiprocessing.Pool, not
    # concurrent.futures: under Wine, ProcessPoolExecutor's spawned workers were seen to wait
    # forever on their call queue (any even number of tasks on 2 workers), Pool's do not.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    finished: queue.SimpleQueue[tuple[Lane, dict[str, Any] | BaseException]] = queue.SimpleQueue()
    with multiprocessing.get_context(method).Pool(jobs) as pool:
        running = 0
        while running or clock() < deadline:
            while running < jobs and clock() < deadline:
                lane, seed = next(tasks)
                report = functools.partial(_report, finished, lane)
                arguments = (lane.generator, seed, lane.timers == "real")
                pool.apply_async(run_record, arguments, callback=report, error_callback=report)
                running += 1
            lane, outcome = finished.get()
            running -= 1
            if isinstance(outcome, BaseException):
                raise outcome
            on_record(lane, outcome)


def run_record(generator: str, seed: int, real_timers: bool) -> dict[str, Any]:
    """One seed's result as JSON, with ``failed`` and the CPU seconds it took."""
    started = time.process_time()
    result = run_generator(generator, seed, real_timers)
    record = result.to_json()
    record["failed"] = result.failed
    record["cpu_s"] = round(time.process_time() - started, 3)
    return record


# --- helpers ---------------------------------------------------------------------------------


def _report(
    finished: queue.SimpleQueue[tuple[Lane, dict[str, Any] | BaseException]],
    lane: Lane,
    outcome: dict[str, Any] | BaseException,
) -> None:
    finished.put((lane, outcome))


def _round_robin(lanes: list[Lane]) -> Iterator[tuple[Lane, int]]:
    while True:
        for lane in lanes:
            yield lane, lane.dispatch()


def _lane_from_json(generator: str, timers: str, fields: Any) -> Lane:
    name = f"{generator}/{timers}"
    if not isinstance(fields, dict):
        raise StateError(f"has a lane {name!r} that is not an object")
    values: dict[str, int] = {}
    for key in ("next_seed", *COUNTS):
        value = fields.get(key, 0)
        if type(value) is not int or not 0 <= value <= MAX_SEED:
            raise StateError(f"has {name}'s {key!r} not a whole number from 0 to {MAX_SEED}")
        values[key] = value
    failing, flagged = _seeds(name, fields, "failing"), _seeds(name, fields, "flagged")
    return Lane(
        generator,
        timers,
        next_seed=values["next_seed"],
        seeds=values["seeds"],
        forks=values["forks"],
        divergences=values["divergences"],
        disagreements=values["disagreements"],
        honest_excluded=values["honest_excluded"],
        honest_flagged=values["honest_flagged"],
        honest_accused=values["honest_accused"],
        failing=failing,
        flagged=flagged,
    )


def _seeds(name: str, fields: dict[str, Any], key: str) -> list[int]:
    """A lane's list of seeds under `key` (none in a state written before it was kept)."""
    seeds = fields.get(key, [])
    if not isinstance(seeds, list) or any(
        type(seed) is not int or not 0 <= seed <= MAX_SEED for seed in seeds
    ):
        raise StateError(f"has {name}'s {key!r} not a list of seeds")
    return list(dict.fromkeys(seeds))
