"""The prep countdown after a deal: a table setting agreed in the log (on the wire only when
set); every laptop holds its bots until it is over, so nobody starts before "go"."""

from __future__ import annotations

from typing import Any

import pytest

from nerts_lan.lab.simgame import play_game
from nerts_lan.rules.actions import MalformedError
from nerts_lan.table.commands import TableSettings


def test_a_countdown_travels_with_the_tables_settings_and_only_when_set() -> None:
    plain = TableSettings("Den")
    assert "countdown" not in plain.to_wire()  # a table without one is as before, byte for byte
    counted = TableSettings("Den", countdown=3)
    assert counted.to_wire()["countdown"] == 3
    assert TableSettings.from_wire(counted.to_wire()) == counted
    assert TableSettings.from_wire(plain.to_wire()).countdown == 0


@pytest.mark.parametrize("bad", [-1, 11, 2.5, "3", True])
def test_a_countdown_out_of_its_range_is_refused_naming_it(bad: Any) -> None:
    wire = {**TableSettings("Den").to_wire(), "countdown": bad}
    with pytest.raises(MalformedError, match="countdown"):
        TableSettings.from_wire(wire)


def _first_move(countdown: int) -> float:
    game = play_game(7, 3, until=12.0, countdown=countdown)
    return min(t for app in game.members() for t in app.submitted_at.values())


def test_bots_wait_for_go_on_every_laptop() -> None:
    at_once, counted = _first_move(0), _first_move(2)
    assert counted >= at_once + 1.9  # the same deal, everyone's first move 2 s later


def test_a_headless_host_with_a_countdown_out_of_range_is_told_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from nerts_lan.cli.main import main

    assert main(["host", "--headless", "--name", "Ann", "--countdown", "11"]) == 2
    error = capsys.readouterr().err.strip()
    assert "countdown" in error and len(error.splitlines()) == 1
