"""Match scoring over rounds: to the target, another round on a tie at the top."""

from __future__ import annotations

import pytest

from nerts_lan.rules.scoring import Match


def test_the_match_goes_on_until_someone_reaches_the_target() -> None:
    match = Match(("red", "blue"), target=30).with_round({"red": 20, "blue": 5})
    assert not match.over and match.winner is None
    match = match.with_round({"red": 15, "blue": -2})
    assert match.over and match.winner == "red"
    assert match.totals == {"red": 35, "blue": 3}
    assert match.differences() == {"red": 0, "blue": -32}


def test_a_tie_at_the_top_means_another_round() -> None:
    match = Match(("a", "b", "c"), target=10).with_round({"a": 12, "b": 12, "c": 3})
    assert not match.over and match.winner is None
    match = match.with_round({"a": 1, "b": 0, "c": 0})
    assert match.winner == "a" and match.differences() == {"a": 0, "b": -1, "c": -10}


def test_the_highest_total_wins_even_if_several_pass_the_target() -> None:
    match = Match(("a", "b"), target=10).with_round({"a": 11, "b": 14})
    assert match.winner == "b"


def test_round_scores_must_name_the_match_teams() -> None:
    with pytest.raises(ValueError, match="exactly the match's teams"):
        Match(("a", "b")).with_round({"a": 1})
