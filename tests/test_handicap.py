"""Handicaps (issue 25): a team's own nerts-pile size, work piles and score multiplier, dealt
and scored by the engine, read from scenarios to the letter, and invisible when unused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nerts_lan.rules.actions import MalformedError
from nerts_lan.rules.codec import state_from_snapshot, state_snapshot
from nerts_lan.rules.engine import deal_round
from nerts_lan.rules.handicap import Handicap, multiplier_text, scaled_score
from nerts_lan.rules.scenario import parse_scenario_text, run_scenario
from nerts_lan.rules.state import Options, Table, state_digest
from nerts_lan.table.commands import Create, TableSettings, command_from_wire

PLAYERS = (("ann",), ("bob",), ("cy",))
NAMES = ("Red", "Blue", "Green")


def _table(options: Options) -> Table:
    return Table(options, NAMES, PLAYERS)


def test_a_table_without_handicaps_deals_and_hashes_as_before_handicaps() -> None:
    # Pinned on main before handicaps existed: fingerprint, digests and the Create wire form.
    table = _table(Options())
    assert table.fingerprint.hex() == "3d3d3948969fb1d2a4c2a417823b6c95"
    assert state_digest(deal_round(table, "pinned handicaps")).hex() == (
        "59b7d163e9720708f9921723bc1f016a"
    )
    other = Table(Options(pile=9, work=5, caller_bonus=10), NAMES[:2], PLAYERS[:2])
    assert state_digest(deal_round(other, "pinned handicaps")).hex() == (
        "80414977b6c94637dd0e783a478b5a3e"
    )
    assert "handicaps" not in Create(TableSettings("Kitchen")).to_wire()["settings"]["options"]
    # A handicap equal to the default is no handicap: same options, same digest.
    same = Options(handicaps=(("Blue", Handicap()), ("Red", Handicap(pile=13, work=None))))
    assert same.handicaps == (("Red", Handicap(pile=13)),)
    assert Options(handicaps=(("Blue", Handicap()),)) == Options()


def test_the_deal_gives_a_handicapped_team_its_own_pile_and_work_piles() -> None:
    head_start = Handicap(pile=10, work=5, score=150)
    table = _table(Options(handicaps=(("Blue", head_start),)))
    plain = deal_round(_table(Options()), "sizes")
    state = deal_round(table, "sizes")
    sizes = [(len(t.nerts), len(t.work), len(t.stock)) for t in state.teams]
    assert sizes == [(13, 4, 35), (10, 5, 37), (13, 4, 35)]
    # Other teams' decks are untouched; the handicapped team's deck is the same shuffle, split
    # differently (the extra work pile's card comes from what would have been the stock).
    assert state.teams[0] == plain.teams[0] and state.teams[2] == plain.teams[2]
    assert sorted(state.teams[1].cards()) == sorted(plain.teams[1].cards())
    assert state.teams[1].nerts == plain.teams[1].nerts[:10]
    assert state_digest(state) != state_digest(plain)


def test_the_multiplier_scales_positive_round_scores_with_half_a_point_rounding_up() -> None:
    assert [scaled_score(p, 150) for p in (0, 1, 3, 5, 10)] == [0, 2, 5, 8, 15]
    assert [scaled_score(p, 125) for p in (1, 2, 3, 4)] == [1, 3, 4, 5]
    assert [scaled_score(p, 200) for p in (-6, -1, 7)] == [-6, -1, 14]
    assert scaled_score(7, 100) == 7
    assert [multiplier_text(p) for p in (100, 125, 150, 200, 110, 105)] == [
        "×1",
        "×1.25",
        "×1.5",
        "×2",
        "×1.1",
        "×1.05",
    ]


def _scored_scenario(handicaps: dict[str, Any]) -> dict[str, Any]:
    teams = [
        {"name": "red", "players": ["ann"], "nerts": [], "work": [[], [], [], []], "stock": []},
        {"name": "blue", "players": ["bo"], "nerts": ["KC"], "work": [[], [], [], []], "stock": []},
    ]
    return {
        "options": {"caller_bonus": 10, "handicaps": handicaps},
        "teams": teams,
        "foundations": [{"cards": ["AS", "2S", "3S"], "owners": ["red", "red", "red"]}],
        "actions": [{"by": "ann", "do": "nerts"}],
    }


def test_round_scores_take_each_teams_multiplier_after_the_caller_bonus() -> None:
    result = run_scenario(parse_scenario_text(json.dumps(_scored_scenario({}))))
    assert result["scores"] == {"red": 13, "blue": -2}
    scenario = _scored_scenario({"red": {"score": 150}, "blue": {"score": 200}})
    result = run_scenario(parse_scenario_text(json.dumps(scenario)))
    # red: 13 x 1.5 = 19.5, which rounds up to 20; blue's -2 is never scaled.
    assert result["scores"] == {"red": 20, "blue": -2}


def test_a_scenario_with_a_work_handicap_needs_that_many_work_piles() -> None:
    scenario = _scored_scenario({"blue": {"work": 5}})
    with pytest.raises(MalformedError, match=r"teams\[1\]\.work has 4 piles but .* is 5"):
        parse_scenario_text(json.dumps(scenario))
    scenario["teams"][1]["work"].append([])
    state = parse_scenario_text(json.dumps(scenario)).initial
    assert [len(t.work) for t in state.teams] == [4, 5]


BAD_HANDICAPS = [
    ({"red": {"pile": 0}}, "handicap of team 'red': handicap field 'pile' must be from 1 to 49"),
    ({"red": {"pile": "10"}}, "handicap field 'pile' must be a whole number"),
    ({"red": {"work": 7}}, "handicap field 'work' must be from 3 to 6"),
    ({"red": {"work": True}}, "handicap field 'work' must be a whole number"),
    ({"red": {"score": 99}}, "handicap field 'score' must be from 100 to 400"),
    ({"red": {"score": 1.5}}, "handicap field 'score' must be a whole number"),
    ({"red": {"speed": 2}}, "unknown handicap field 'speed'"),
    ({"red": 150}, "handicap of team 'red' must be an object"),
    ({"green": {"score": 150}}, "option 'handicaps' names 'green', not a team at this table"),
    ([{"score": 150}], "option 'handicaps' must map team names to handicaps"),
    ({"red": {"pile": 47, "work": 6}}, "a nerts pile of 47 and 6 work piles need more than 52"),
]


@pytest.mark.parametrize("handicaps, message", BAD_HANDICAPS)
def test_a_bad_handicap_in_a_scenario_is_refused_naming_the_field(
    handicaps: Any, message: str
) -> None:
    with pytest.raises(MalformedError) as refused:
        parse_scenario_text(json.dumps(_scored_scenario(handicaps)))
    assert message in str(refused.value)


def test_a_snapshot_carries_the_handicaps_and_reads_back_to_the_same_digest() -> None:
    table = _table(Options(handicaps=(("Green", Handicap(pile=8, score=125)),)))
    state = deal_round(table, "snap")
    wire = state_snapshot(state)
    assert wire["options"]["handicaps"] == {"Green": {"pile": 8, "score": 125}}
    again = state_from_snapshot(wire)
    assert state_digest(again) == state_digest(state)
    wire["options"]["handicaps"]["Green"]["score"] = 1000
    with pytest.raises(MalformedError, match="handicap field 'score'"):
        state_from_snapshot(wire)


def test_table_settings_carry_handicaps_only_for_the_tables_teams() -> None:
    options = Options(handicaps=(("Blue", Handicap(work=5)),))
    settings = TableSettings("Kitchen", options, teams=2)
    wire = Create(settings).to_wire()
    assert wire["settings"]["options"]["handicaps"] == {"Blue": {"work": 5}}
    assert command_from_wire(wire) == Create(settings)
    wire["settings"]["teams"] = 1
    with pytest.raises(MalformedError, match="names 'Blue', not one of this table's teams"):
        command_from_wire(wire)
    wire["settings"]["teams"] = 2
    wire["settings"]["options"]["handicaps"] = {"Blue": {"work": 9}}
    with pytest.raises(MalformedError, match="handicap field 'work' must be from 3 to 6"):
        command_from_wire(wire)


_HANDICAPS = st.builds(
    Handicap,
    pile=st.none() | st.integers(1, 40),
    work=st.none() | st.integers(3, 6),
    score=st.integers(100, 400),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_HANDICAPS, min_size=3, max_size=3), st.text(max_size=12))
def test_any_handicaps_deal_whole_decks_the_same_everywhere(
    handicaps: list[Handicap], seed: str
) -> None:
    options = Options(handicaps=tuple(zip(NAMES, handicaps)))
    state = deal_round(_table(options), seed)
    for name, handicap, tableau in zip(NAMES, handicaps, state.teams):
        assert sorted(tableau.cards()) == list(range(52))
        assert len(tableau.nerts) == (handicap.pile or 13)
        assert len(tableau.work) == (handicap.work or 4)
        assert options.handicap_of(name) == handicap
    again = deal_round(_table(Options.from_wire(options.to_wire())), seed)
    assert state_digest(again) == state_digest(state)
    assert state_digest(state_from_snapshot(state_snapshot(state))) == state_digest(state)


@given(st.integers(-200, 200), st.integers(100, 400))
def test_the_multiplier_is_exact_and_never_deepens_a_loss(points: int, percent: int) -> None:
    scaled = scaled_score(points, percent)
    if points <= 0:
        assert scaled == points
    else:
        # The nearest whole number to points x percent / 100, half a point rounding up.
        assert scaled * 100 - 50 <= points * percent < scaled * 100 + 50
