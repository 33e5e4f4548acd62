"""``nerts-lan faults GENERATOR --seeds A-B``: run a named fault generator over a range of seeds
in the simulator, with the stable-is-final oracle, one result per seed and a summary; and
``nerts-lan faults --budget 60m [GENERATOR...]``: every generator (or the named ones) in turn for
a time budget, resuming where the last run stopped (``nerts_lan.lab.faults.sweep``), with a
summary table per generator.

The parser part loads nothing of the simulator; the generators load when the command runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nerts_lan.folders import data_folder
from nerts_lan.usage import UsageError

if TYPE_CHECKING:
    from nerts_lan.lab.faults.sweep import Lane

__all__ = ["parse_budget", "parse_seeds", "register", "run_faults"]

MAX_SEEDS = 1_000_000
MAX_BUDGET_S = 7 * 24 * 3600
STATE_FILE = "faults-sweep.json"
"""The budget mode's state file in the data folder, unless ``--state`` names another."""
COMPILED_CHILD = "NERTS_FAULTS_COMPILED_CHILD"
"""Set in the child process that runs a ``--compiled`` sweep on the build."""
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([smh]?)")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600}


def register(subcommands: Any) -> None:
    """Add the ``faults`` subcommand to the ``nerts-lan`` parser."""
    parser = subcommands.add_parser(
        "faults",
        help="run a fault generator over seeds in the simulator and judge every run",
        description=(
            "Simulated laptops play the real table under a named fault generator, then a "
            "perfect network heals them. Per seed: forks (a stable entry undone, reordered or "
            "told differently), divergences (one stable index, two states), final agreement "
            "(one view, one state in the end), the worst stall of stability, honest members "
            "excluded. Exit status 1 when any seed forks, diverges or does not agree."
        ),
    )
    parser.add_argument(
        "generators",
        nargs="*",
        metavar="GENERATOR",
        help="the generator's name (an unknown one lists them); with --budget, any number",
    )
    parser.add_argument(
        "--seeds", default=None, metavar="A-B", help="seeds A to B, both included (0-9)"
    )
    parser.add_argument(
        "--budget",
        type=parse_budget,
        default=None,
        metavar="DURATION",
        help=(
            "run every generator (or the named ones) in turn for this long (90s, 60m, 1.5h),"
            " resuming at the seeds the last run stopped at; a table per generator at the end"
        ),
    )
    parser.add_argument(
        "--state",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"the budget mode's progress (default: {STATE_FILE} in the data folder)",
    )
    parser.add_argument(
        "--real-timers",
        action="store_true",
        help="the real game's timers (suspect after 1 s, exclude after 3 s), not the fast ones",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="run N seeds at once (processes) (1)"
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per seed, then the summary's"
    )
    parser.add_argument(
        "--compiled",
        action="store_true",
        help=(
            "run the seeds on the same source compiled with mypyc (built once per change of"
            " the source, needs the test extra and a C compiler), after checking that one seed"
            " of each generator gives the same result both ways: several times faster"
        ),
    )
    parser.set_defaults(command="faults", run=run_faults)


def run_faults(args: argparse.Namespace) -> int:
    """Run the generator over the seeds; 1 if any seed failed, else 0."""
    from nerts_lan.lab.faults.generators import GENERATORS

    for name in args.generators:
        if name not in GENERATORS:
            known = ", ".join(GENERATORS)
            raise UsageError("faults", f"unknown generator {name!r} (known: {known})")
    if args.jobs < 1:
        raise UsageError("faults", f"--jobs must be at least 1, not {args.jobs}")
    if args.compiled and os.environ.get(COMPILED_CHILD) != "1":
        return _run_compiled(args)
    if args.compiled:
        from nerts_lan.lab.faults.compiled import is_compiled

        if not is_compiled():
            raise UsageError("faults", "the compiled build did not load (its folder is gone?)")
    if args.budget is not None:
        return _run_budget(args)
    if args.state is not None:
        raise UsageError("faults", "--state goes with --budget")
    if len(args.generators) != 1:
        raise UsageError(
            "faults",
            "the following arguments are required: generator (one; or --budget for several)",
        )
    (generator,) = args.generators
    seeds = parse_seeds(args.seeds or "0-9")
    summary = _Summary(generator, "real" if args.real_timers else "fast")
    for result in _results(generator, seeds, args.real_timers, args.jobs):
        summary.add(result)
        line = json.dumps(result) if args.json else _text(result)
        print(line, flush=True)
    print(json.dumps(summary.to_json()) if args.json else summary.text(), flush=True)
    return 1 if summary.failing else 0


def parse_seeds(text: str) -> range:
    """``"A-B"`` (both included) or ``"A"`` as a range; ``UsageError`` names a bad one."""
    first, dash, last = text.strip().partition("-")
    try:
        low = int(first)
        high = int(last) if dash else low
    except ValueError:
        raise UsageError(
            "faults", f"--seeds wants A-B or A (whole numbers), not {text!r}"
        ) from None
    if low < 0 or high < low:
        raise UsageError("faults", f"--seeds {text!r}: A-B with 0 <= A <= B")
    if high - low + 1 > MAX_SEEDS:
        raise UsageError("faults", f"--seeds {text!r}: at most {MAX_SEEDS:,} seeds at once")
    return range(low, high + 1)


def parse_budget(text: str) -> float:
    """``"90s"``, ``"60m"``, ``"1.5h"`` or plain seconds as seconds, above 0 and at most a
    week; ``argparse.ArgumentTypeError`` names a bad one."""
    match = _DURATION.fullmatch(text.strip().lower())
    seconds = float(match[1]) * _UNIT_S[match[2]] if match else math.nan
    if not 0 < seconds <= MAX_BUDGET_S:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration above 0 and at most a week (e.g. 90s, 60m, 1.5h)"
        )
    return seconds


# --- helpers ---------------------------------------------------------------------------------


def _run_budget(args: argparse.Namespace) -> int:
    """Every generator (or the named ones) in turn for the budget; 1 if a seed failed."""
    import time

    from nerts_lan.lab.faults.generators import GENERATORS
    from nerts_lan.lab.faults.sweep import StateError, SweepState, sweep

    if args.seeds is not None:
        raise UsageError("faults", "--seeds and --budget do not go together (it resumes)")
    path = args.state if args.state is not None else data_folder() / STATE_FILE
    try:
        state = SweepState.load(path)
    except StateError as error:
        raise UsageError("faults", f"the state file {path} {error}") from None
    timers = "real" if args.real_timers else "fast"
    names = list(dict.fromkeys(args.generators)) or list(GENERATORS)
    lanes = [state.lane(name, timers) for name in names]
    first = {lane.name: lane.next_seed for lane in lanes}
    saved = [time.monotonic()]

    def on_record(lane: Lane, record: dict[str, Any]) -> None:
        lane.add(record)
        if record["failed"]:
            print(json.dumps(record) if args.json else _text(record), flush=True)
        if time.monotonic() - saved[0] >= 1.0:
            state.save(path)
            saved[0] = time.monotonic()

    started = time.monotonic()
    try:
        sweep(lanes, args.budget, args.jobs, on_record)
    finally:
        state.save(path)
    elapsed = time.monotonic() - started
    print(_budget_table(lanes, first, elapsed, path, args.json), flush=True)
    return 1 if any(lane.failed_now for lane in lanes) else 0


def _run_compiled(args: argparse.Namespace) -> int:
    """Build the compiled tree (once per source change), check it against the source on one
    seed of each generator, then run the same command in a child process on the build."""
    from nerts_lan.lab.faults.compiled import (
        CompileError,
        build_tree,
        canary,
        child_command,
        child_environment,
    )
    from nerts_lan.lab.faults.generators import GENERATORS

    print("faults --compiled: building (once per change of the source) ...", file=sys.stderr)
    try:
        tree = build_tree(data_folder() / "compiled")
    except CompileError as error:
        raise UsageError("faults", f"--compiled: {error}; run without it") from None
    names = list(dict.fromkeys(args.generators)) or list(GENERATORS)
    differences = canary(tree, names, args.real_timers)
    if differences:
        for line in differences:
            print(f"faults --compiled: {line}", file=sys.stderr)
        raise UsageError("faults", "--compiled: the build disagrees with the source; run without")
    print(f"faults --compiled: {tree} computes what the source does", file=sys.stderr)
    env = child_environment(tree) | {COMPILED_CHILD: "1"}
    code = "from nerts_lan.cli.main import main\nraise SystemExit(main(sys.argv[1:]))\n"
    command = child_command(code, *_child_arguments(args))
    return subprocess.run(command, env=env, check=False).returncode


def _child_arguments(args: argparse.Namespace) -> list[str]:
    """The ``faults`` command line that `args` came from (``--compiled`` included)."""
    arguments = ["faults", *args.generators, "--compiled", "--jobs", str(args.jobs)]
    if args.seeds is not None:
        arguments += ["--seeds", args.seeds]
    if args.budget is not None:
        arguments += ["--budget", f"{args.budget}s"]
    if args.state is not None:
        arguments += ["--state", str(args.state)]
    arguments += ["--real-timers"] * args.real_timers + ["--json"] * args.json
    return arguments


def _seed_list(seeds: list[int], shown: int = 12) -> str:
    """The first `shown` seeds (the state file has them all)."""
    text = ", ".join(map(str, seeds[:shown])) or "none"
    return text if len(seeds) <= shown else f"{text} ... ({len(seeds)} in all)"


def _budget_table(
    lanes: list[Lane], first: dict[str, int], elapsed: float, path: Path, as_json: bool
) -> str:
    ran = sum(lane.ran_now for lane in lanes)
    if as_json:
        rows = [
            {"lane": lane.name, "first_seed": first[lane.name], "ran": lane.ran_now}
            | lane.to_json()
            | {"failed_now": sorted(lane.failed_now), "flagged_now": sorted(lane.flagged_now)}
            for lane in lanes
        ]
        return json.dumps({"summary": True, "seconds": round(elapsed, 1), "lanes": rows})
    header: tuple[str, ...] = ("generator", "timers", "seeds now", "from", "seeds in all")
    header += ("forks", "divergences")
    header += ("disagreements", "honest excluded", "honest flagged", "honest accused")
    header += ("failing seeds (all runs)",)
    table = [header]
    for lane in lanes:
        failing = _seed_list(sorted(lane.failing))
        counts: tuple[int, ...] = (lane.ran_now, first[lane.name], lane.seeds, lane.forks)
        counts += (lane.divergences,)
        counts += (lane.disagreements, lane.honest_excluded, lane.honest_flagged)
        counts += (lane.honest_accused,)
        table.append((lane.generator, lane.timers, *map(str, counts), failing))
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1] for row in table]
    failed = [f"{x.generator} {_seed_list(sorted(x.failed_now))}" for x in lanes if x.failed_now]
    flagged = [f"{x.name} {_seed_list(sorted(x.flagged_now))}" for x in lanes if x.flagged_now]
    rate = ran / elapsed * 60 if elapsed > 0 else 0.0
    lines.append(
        f"{ran} seeds in {elapsed:.0f} s ({rate:.0f} a minute); state in {path};"
        f" failed this run: {'; '.join(failed) or 'none'};"
        f" honest clocks flagged this run in: {'; '.join(flagged) or 'none'}"
    )
    from nerts_lan.lab.faults.compiled import is_compiled

    lines.append(
        "checks: stable is final (the oracle); every installed snapshot holds the table as of"
        " the (index, epoch) it is labelled with (StableOracle.observe_snapshot); run on the"
        + (" mypyc build (--compiled)" if is_compiled() else " source")
    )
    return "\n".join(lines)


def _run_one(task: tuple[str, int, bool]) -> dict[str, Any]:
    from nerts_lan.lab.faults.generators import run_generator

    name, seed, real = task
    result = run_generator(name, seed, real)
    record = result.to_json()
    record["failed"] = result.failed
    return record


def _results(name: str, seeds: range, real: bool, jobs: int) -> Iterator[dict[str, Any]]:
    tasks = [(name, seed, real) for seed in seeds]
    if jobs == 1 or len(tasks) == 1:
        yield from map(_run_one, tasks)
        return
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with multiprocessing.get_context(method).Pool(min(jobs, len(tasks))) as pool:
        yield from pool.imap(_run_one, tasks)


def _text(record: dict[str, Any]) -> str:
    verdict = "FAILED" if record["failed"] else "ok"
    agreement = "yes" if record["final_agreement"] else f"no ({record['disagreement']})"
    if record.get("quorum_lost"):
        agreement += ": a quorum of the last view died for good, the survivors wait"
    return (
        f"{record['generator']} seed {record['seed']}: {verdict}; forks {record['forks']},"
        f" divergences {record['divergences']}, final agreement {agreement},"
        f" worst stall {record['worst_stall_s']:.2f} s,"
        f" honest members excluded {record['honest_excluded']},"
        f" honest clocks flagged {record['honest_flagged']},"
        f" honest clocks accused {record['honest_accused']}, faults {record['events']}"
    )


class _Summary:
    """Counts over the seeds run so far."""

    def __init__(self, generator: str, timers: str) -> None:
        self.generator = generator
        self.timers = timers
        self.seeds = 0
        self.forks: list[int] = []
        self.divergences: list[int] = []
        self.disagreements: list[int] = []
        self.failing: list[int] = []
        self.flagged: list[int] = []  # seeds where an honest clock was flagged
        self.accused: list[int] = []  # seeds where an honest laptop held grounds on one
        self.worst_stall = 0.0

    def add(self, record: dict[str, Any]) -> None:
        seed = int(record["seed"])
        self.seeds += 1
        if record["forks"]:
            self.forks.append(seed)
        if record["divergences"]:
            self.divergences.append(seed)
        if not record["final_agreement"]:
            self.disagreements.append(seed)
        if record["failed"]:
            self.failing.append(seed)
        if record.get("honest_flagged"):
            self.flagged.append(seed)
        if record.get("honest_accused"):
            self.accused.append(seed)
        self.worst_stall = max(self.worst_stall, float(record["worst_stall_s"]))

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": True,
            "generator": self.generator,
            "timers": self.timers,
            "seeds": self.seeds,
            "forks": len(self.forks),
            "divergences": len(self.divergences),
            "no_final_agreement": len(self.disagreements),
            "failed": len(self.failing),
            "failing_seeds": self.failing,
            "honest_flagged_seeds": self.flagged,
            "honest_accused_seeds": self.accused,
            "worst_stall_s": self.worst_stall,
        }

    def text(self) -> str:
        failing = ", ".join(map(str, self.failing)) or "none"
        return (
            f"{self.generator} ({self.timers} timers): {self.seeds} seeds, {len(self.forks)} with"
            f" forks, {len(self.divergences)} with divergences, {len(self.disagreements)}"
            f" without final agreement; worst stall {self.worst_stall:.2f} s;"
            f" failing seeds: {failing}; honest clocks flagged in {_seed_list(self.flagged)},"
            f" accused in {_seed_list(self.accused)}"
        )
