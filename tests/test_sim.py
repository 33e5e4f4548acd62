"""The simulator: rounds end, levels differ in strength, runs repeat, arguments are checked."""

from __future__ import annotations

import json
import os

import pytest

from nerts_lan.cli.main import main
from nerts_lan.lab.sim import SimConfig, bench_bot_rounds, play_round, simulate
from nerts_lan.rules.state import Options

SLOW = os.environ.get("NERTS_SLOW") == "1"


def _sim_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["sim", "--json", *args]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


@pytest.mark.parametrize("players", [1, 2])
def test_every_simulated_round_ends(players: int) -> None:
    rounds_per_size = 60 if SLOW else 25
    for teams in range(1, 7):
        config = SimConfig(teams=teams, players=players, levels=("instant",))
        table = config.table()
        for number in range(rounds_per_size):
            result = play_round(table, f"ends/{teams}/{players}/{number}", ("instant",) * teams)
            assert result.ending in ("nerts", "dead"), result
            state = result.state
            assert state.outcome is not None
            if result.ending == "nerts":
                caller = state.outcome.caller
                assert caller is not None
                team = state.table.team_of(caller)
                assert team is not None and not state.teams[team].nerts


def test_rounds_end_with_every_level_and_table_option() -> None:
    variants = [
        Options(flip=1),
        Options(kings=True),
        Options(work=3, pile=20),
        Options(work=6, pile=5, caller_bonus=10),
    ]
    for number, options in enumerate(variants):
        config = SimConfig(
            teams=3,
            players=1 + number % 2,
            levels=("easy", "medium", "hard"),
            rounds=8,
            seed=f"variant{number}",
            options=options,
        )
        summary = simulate(config)
        rounds = summary["rounds"]
        assert rounds["count"] == 8
        assert rounds["nerts_share"] + rounds["dead_share"] == pytest.approx(1.0)
        assert rounds["capped"] == 0 and rounds["stalled"] == 0


def _match_wins(levels: tuple[str, str], seed: str, matches: int, delay: float) -> dict[str, int]:
    config = SimConfig(
        teams=2,
        levels=levels,
        matches=matches,
        seed=seed,
        options=Options(target=30),
        delay_scale=delay,
    )
    summary = simulate(config)
    assert summary["matches"]["unfinished"] == 0
    return {
        level: round(figures["match_win_rate"] * matches)
        for level, figures in summary["levels"].items()
    }


def test_hard_wins_clearly_more_matches_than_easy() -> None:
    matches = 60 if SLOW else 20
    hard = easy = 0
    for levels in (("hard", "easy"), ("easy", "hard")):
        wins = _match_wins(levels, f"strength-{levels[0]}", matches, delay=1.0)
        hard += wins["hard"]
        easy += wins["easy"]
    # Measured: 38 to 2 over these 40 matches (to 30 points, at the levels' real speeds),
    # 116 to 4 over the 120 of NERTS_SLOW=1.
    assert hard >= 32 * matches // 20 and hard >= 6 * easy


def test_hard_plays_better_than_easy_even_at_the_same_speed() -> None:
    matches = 60 if SLOW else 20
    hard = easy = 0
    for levels in (("hard", "easy"), ("easy", "hard")):
        wins = _match_wins(levels, f"strategy-{levels[0]}", matches, delay=0.0)
        hard += wins["hard"]
        easy += wins["easy"]
    # Measured: 31 to 9 over these 40 matches with every delay at 0, 98 to 22 over 120.
    assert hard >= 3 * easy


def test_races_happen_and_are_survived() -> None:
    summary = simulate(SimConfig(teams=4, players=2, levels=("hard",), rounds=6, seed="race"))
    rounds = summary["rounds"]
    assert rounds["rejected_mean"] > 0  # someone got there first, and the round went on
    assert rounds["capped"] == 0 and rounds["stalled"] == 0
    assert 0.1 < rounds["sim_minutes_mean"] < 10


def test_same_seed_same_summary_other_seed_another(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--teams", "3", "--players", "2", "--levels", "hard,medium,easy", "--rounds", "6")
    first = _sim_json(capsys, *args, "--seed", "alpha")
    again = _sim_json(capsys, *args, "--seed", "alpha")
    other = _sim_json(capsys, *args, "--seed", "beta")
    for summary in (first, again, other):
        del summary["speed"]  # wall-clock time
    assert first == again
    assert first["rounds"] != other["rounds"]


def test_summary_table_reads_like_a_report(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sim", "--matches", "2", "--target", "20", "--levels", "hard,easy", "--progress"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    for label in (
        "rounds per second",
        "actions per round",
        "simulated minutes",
        "ended by a Nerts call",
        "ended by a dead stock",
        "hit the action cap     0",
        "match wins",
    ):
        assert label in captured.out
    assert [line.split()[0] for line in captured.out.splitlines()[-2:]] == ["hard", "easy"]
    assert "2/2" in captured.err  # the progress bar, asked for
    assert main(["sim", "--rounds", "2", "--levels", "instant"]) == 0
    assert capsys.readouterr().err == ""  # not a terminal, not asked: no bar


def test_rounds_over_the_action_cap_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    summary = _sim_json(capsys, "--rounds", "3", "--max-actions", "100", "--levels", "easy")
    assert summary["rounds"]["capped"] == 3  # type: ignore[index]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--teams", "9"], "--teams must be from 1 to 8"),
        (["--teams", "0"], "--teams must be from 1 to 8"),
        (["--players", "0"], "--players must be from 1 to 4"),
        (["--levels", "hard,expert"], "unknown level 'expert'"),
        (["--teams", "2", "--levels", "hard,easy,easy"], "names 3 levels for 2 teams"),
        (["--rounds", "0"], "--rounds must be from 1"),
        (["--matches", "0"], "--matches must be"),
        (["--bot-delay", "-1"], "--bot-delay must be from 0 to 100"),
        (["--bot-delay", "nan"], "--bot-delay must be from 0 to 100"),
        (["--flip", "2"], "option 'flip' must be 1 or 3"),
        (["--work", "7"], "option 'work' must be from 3 to 6"),
        (["--rounds", "x"], "invalid int value"),
        (["--rounds", "2", "--matches", "2"], "not allowed with argument"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    try:
        status = main(["sim", *args])
    except SystemExit as exit_:
        status = exit_.code  # type: ignore[assignment]
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err


def test_bench_reports_bot_round_speed() -> None:
    figures = bench_bot_rounds(quick=True)
    assert figures["bot_rounds_per_s_4team_instant"] > 0
    assert 20 < figures["actions_per_round_mean"] < 5000
