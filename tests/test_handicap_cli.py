"""``nerts-lan host --handicap TEAM=pile:N,work:N,score:PERCENT`` (issue 25): read into the
table's settings, and every bad value refused with one line naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nerts_lan.cli.parser import build_parser
from nerts_lan.cli.rules import handicaps_from_args
from nerts_lan.rules.handicap import Handicap

ROOT = Path(__file__).resolve().parent.parent


def test_the_flag_gives_teams_by_number_or_colour_their_handicaps() -> None:
    args = build_parser().parse_args(
        [
            "host",
            "--headless",
            "--teams",
            "3",
            "--handicap",
            "2=pile:10,work:5,score:150",
            "--handicap",
            "green=score:125",
        ]
    )
    assert handicaps_from_args(args.handicap, args.teams) == (
        ("Blue", Handicap(pile=10, work=5, score=150)),
        ("Green", Handicap(score=125)),
    )
    assert handicaps_from_args(None, 4) == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("Blue", "--handicap 'Blue': write TEAM=pile:N,work:N,score:PERCENT"),
        ("5=pile:10", "no team '5' at a table of 4 teams (a number from 1 to 4 or one of Red,"),
        ("Pink=pile:10", "no team 'Pink' at a table of 4 teams"),
        ("1=lives:3", "'lives:3' is not one of pile:N, work:N, score:PERCENT"),
        ("1=score:1.5", "--handicap '1=score:1.5': score must be a whole number"),
        ("1=pile:10,pile:9", "pile is given twice"),
        ("1=score:90", "handicap field 'score' must be from 100 to 400 (a percent)"),
        ("1=work:7", "handicap field 'work' must be from 3 to 6"),
        ("1=pile:0", "handicap field 'pile' must be from 1 to 49"),
    ],
)
def test_a_bad_handicap_flag_is_refused_naming_it(value: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        handicaps_from_args([value], 4)
    assert message in str(refused.value)


def test_the_same_team_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="team Red is given twice"):
        handicaps_from_args(["1=pile:10", "red=score:150"], 4)


def test_a_bad_handicap_exits_2_with_one_line_in_a_fresh_process(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NERTS_LAN_CONFIG_DIR": str(tmp_path / "config"),
        "NERTS_LAN_DATA": str(tmp_path / "data"),
    }
    args = ["host", "--headless", "--interface", "127.0.0.1", "--teams", "2"]
    for value, message in [
        ("2=score:500", "nerts-lan host: error: --handicap '2=score:500': handicap field 'score'"),
        ("1=pile:47,work:6", "nerts-lan host: error: handicap of team 'Red': a nerts pile of 47"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "nerts_lan", *args, "--handicap", value],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
