"""The JSON scenario contract of docs/rules.md: a layout or seed, ordered actions, results out.

``load_scenario`` checks hostile input to the letter and raises ``MalformedError`` with one line
that names what is wrong; ``run_scenario`` replays the actions and returns the result object
(per-action results, final state, scores). The state's shapes are the engine's wire codec,
``nerts_lan.rules.codec``; ``state_to_json`` is re-exported from it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from nerts_lan.rules.actions import Action, MalformedError, action_from_wire
from nerts_lan.rules.codec import json_field, opening_from_json, state_to_json, table_from_json
from nerts_lan.rules.engine import apply, round_scores
from nerts_lan.rules.state import Rejection, State, Table

__all__ = [
    "Scenario",
    "load_scenario",
    "parse_scenario_text",
    "run_scenario",
]

MAX_ACTIONS: Final = 1_000_000


@dataclass(frozen=True)
class Scenario:
    """A checked scenario: the opening state and the ordered actions."""

    initial: State
    actions: tuple[Action, ...]


def parse_scenario_text(text: str) -> Scenario:
    """Parse and check a scenario from JSON text."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise MalformedError(
            f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None
    except RecursionError:
        raise MalformedError("not valid JSON: nested too deeply") from None
    return load_scenario(data)


def load_scenario(data: Any) -> Scenario:
    """Check a decoded scenario object and build its opening state and actions."""
    if not isinstance(data, dict):
        raise MalformedError("a scenario must be a JSON object")
    table = table_from_json(data)
    initial = opening_from_json(table, data)
    return Scenario(initial, _actions(data, table))


def run_scenario(scenario: Scenario) -> dict[str, Any]:
    """Replay the scenario; the contract's result object."""
    state = scenario.initial
    results: list[dict[str, Any]] = []
    for action in scenario.actions:
        after = apply(state, action)
        if isinstance(after, Rejection):
            results.append({"ok": False, "reason": after.reason})
        else:
            state = after
            results.append({"ok": True})
    return {"results": results, "state": state_to_json(state), "scores": round_scores(state)}


# --- helpers ------------------------------------------------------------------------------------


def _actions(data: dict[str, Any], table: Table) -> tuple[Action, ...]:
    """The scenario's actions, each by a player at ``table``."""
    actions_data = json_field(data, "actions", list, "the scenario")
    if len(actions_data) > MAX_ACTIONS:
        raise MalformedError(f"'actions' has more than {MAX_ACTIONS} entries")
    actions = []
    for index, wire in enumerate(actions_data):
        try:
            action = action_from_wire(wire)
        except MalformedError as error:
            raise MalformedError(f"actions[{index}]: {error}") from None
        if action.by not in table.player_team:
            raise MalformedError(f"actions[{index}]: unknown player {action.by!r}")
        actions.append(action)
    return tuple(actions)


def _refuse_constant(name: str) -> Any:
    raise MalformedError(f"not valid JSON: {name} is not a number")
