"""The accessibility options without a window (issue 25): the settings that hold them (a damaged
file says so and gives the defaults), the move readout's sentences and its speech command.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.rules.actions import DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.cards import Card
from nerts_lan.rules.engine import apply
from nerts_lan.rules.piles import Pile
from nerts_lan.rules.state import State
from nerts_lan.table.replica import ActionApplied
from tests.kit import layout, team
from ui.config import Settings, read_settings, save_settings
from ui.kit.speech import SAY_ENV, Speaker, speech_command, spoken
from ui.kit.wording import move_sentence
from ui.table.message_kind import MessageKind
from ui.table.readout import MoveReadout


@pytest.fixture
def settings_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("NERTS_LAN_CONFIG_DIR", str(folder))
    return folder


# --- settings --------------------------------------------------------------------------------


def test_the_accessibility_options_are_remembered(settings_dir: Path) -> None:
    chosen = Settings().with_(
        left_handed=True,
        high_visibility=True,
        reduced_motion=True,
        readout="yours",
        speak_moves=True,
    )
    save_settings(chosen)
    saved = json.loads((settings_dir / "settings.json").read_text("utf-8"))
    assert saved["left_handed"] is True and saved["readout"] == "yours"
    assert read_settings() == (chosen, None)


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"[" * 100_000 + b"]" * 100_000,
        b'"a string"',
        b"null",
    ],
    ids=["not-json", "not-utf8", "nested-too-deep", "a-string", "null"],
)
def test_a_damaged_settings_file_says_so_and_gives_the_defaults(
    settings_dir: Path, content: bytes
) -> None:
    settings_dir.mkdir(parents=True)
    (settings_dir / "settings.json").write_bytes(content)
    settings, problem = read_settings()
    assert settings == Settings()
    assert problem is not None and "settings file" in problem and "defaults" in problem
    assert len(problem) < 300 + len(str(settings_dir))


def test_hostile_values_are_named_and_replaced_by_their_defaults(settings_dir: Path) -> None:
    settings_dir.mkdir(parents=True)
    hostile = {
        "left_handed": "yes",
        "readout": "everything; rm -rf /",
        "reduced_motion": True,
        "speak_moves": 1,
        "high_visibility": None,
    }
    (settings_dir / "settings.json").write_text(json.dumps(hostile), "utf-8")
    settings, problem = read_settings()
    assert settings == Settings().with_(reduced_motion=True)
    assert problem is not None
    for name in ("left_handed", "readout", "speak_moves", "high_visibility"):
        assert name in problem
    assert "reduced_motion" not in problem


def test_no_settings_file_is_no_problem(settings_dir: Path) -> None:
    assert read_settings() == (Settings(), None)


# --- the readout's sentences -------------------------------------------------------------------


def _table() -> State:
    return layout(
        team("You", ("You",), nerts="9C AH", work=("5H", "6S", "", "2C"), stock="3S 4S 5S"),
        team("Bo", ("Bo",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D"),
        foundations=(("AS", "Bo"),),
    )


def _after(state: State, action: Any) -> State:
    result = apply(state, action)
    assert isinstance(result, State), result
    return result


def test_a_move_is_one_plain_sentence_naming_the_foundation_it_reached() -> None:
    state = _table()
    ace = Play("You", Card.parse("AH"), Pile.parse("nerts"), Pile.parse("f"))
    assert move_sentence("You", ace, _after(state, ace)) == (
        "You: A♥ from the nerts pile to foundation 2"
    )
    five = Play("You", Card.parse("5H"), Pile.parse("w1"), Pile.parse("w2"))
    assert (
        move_sentence("You", five, _after(state, five)) == "You: 5♥ from work pile 1 to work pile 2"
    )
    flip = Flip("You")
    assert move_sentence("You", flip, _after(state, flip)) == "You: flipped, 3♠ on the waste"
    under = SlideUnder("Bo", Card.parse("QD"), Pile.parse("nerts"), Pile.parse("w1"))
    assert move_sentence("Bo", under, state) == "Bo: Q♦ slid under work pile 1"
    assert move_sentence("Bo", DeclareStuck("Bo"), state) == "Bo: stuck"


def test_the_readout_reads_whose_moves_the_option_says_once_each() -> None:
    state = _table()
    mine = Play("You", Card.parse("AH"), Pile.parse("nerts"), Pile.parse("f"))
    theirs = Play("Bo", Card.parse("KD"), Pile.parse("nerts"), Pile.parse("w5"))
    flip = Flip("Bo")
    lines: list[str] = []
    strip: list[tuple[MessageKind, str]] = []
    readout = MoveReadout(
        Settings().with_(readout="yours"), "You", lines.append, lambda *line: strip.append(line)
    )
    assert readout.applied(ActionApplied((2, "Bo"), theirs, False), state) is None
    said = readout.applied(ActionApplied((1, "You"), mine, True), _after(state, mine))
    assert said == "You: A♥ from the nerts pile to foundation 2" and lines == [said]
    assert strip == [(MessageKind.MOVE, said)]
    assert readout.applied(ActionApplied((1, "You"), mine, True), state) is None  # a reorder
    readout.use(Settings().with_(readout="everyone"))
    assert readout.applied(ActionApplied((3, "Bo"), theirs, False), state) is not None
    assert readout.applied(ActionApplied((4, "Bo"), flip, False), state) is None  # their flips
    assert len(lines) == 2
    readout.news(MessageKind.REFUSAL, "5♥ goes on a black 6, not on 9♦")
    readout.news(MessageKind.MOVE, "not twice")
    assert lines[-1] == "5♥ goes on a black 6, not on 9♦" and len(lines) == 3


def test_started_with_readout_everyone_s_moves_are_printed_while_the_option_is_off() -> None:
    state = _table()
    theirs = Play("Bo", Card.parse("KD"), Pile.parse("nerts"), Pile.parse("w5"))
    lines: list[str] = []
    MoveReadout(Settings(), "You", lines.append, lambda *line: None).applied(
        ActionApplied((1, "Bo"), theirs, False), state
    )
    assert lines == ["Bo: K♦ from the nerts pile to work pile 5"]
    quiet = MoveReadout(Settings(), "You", None, lambda *line: None)
    assert quiet.applied(ActionApplied((1, "Bo"), theirs, False), state) is None


# --- speaking -----------------------------------------------------------------------------------


def _which(*present: str) -> Any:
    return lambda name: f"/usr/bin/{name}" if name in present else None


def test_the_speech_command_for_each_platform() -> None:
    assert speech_command("darwin", _which("say")) == ["/usr/bin/say"]
    assert speech_command("darwin", _which()) is None
    windows = speech_command("win32", _which("powershell"))
    assert windows is not None and windows[0] == "/usr/bin/powershell"
    script = windows[-1]
    assert "System.Speech" in script and "$env:" + SAY_ENV in script
    assert speech_command("win32", _which("pwsh")) is not None
    assert speech_command("win32", _which()) is None
    assert speech_command("linux", _which("spd-say", "espeak")) == ["/usr/bin/spd-say"]
    assert speech_command("linux", _which("espeak")) == ["/usr/bin/espeak"]
    assert speech_command("linux", _which("espeak-ng")) == ["/usr/bin/espeak-ng"]
    assert speech_command("linux", _which()) is None


def test_what_is_spoken_names_the_cards_and_is_never_an_option() -> None:
    assert spoken("You: A♥ from the nerts pile to foundation 2") == (
        "You: ace of hearts from the nerts pile to foundation 2"
    )
    assert spoken("Bo: 10♣ slid under work pile 1") == "Bo: 10 of clubs slid under work pile 1"
    assert spoken("--rate=999: K♠\nrm") == " --rate=999: king of spades rm"


class _FakeProcess:
    def __init__(self, arguments: list[str], **options: Any) -> None:
        self.arguments = arguments
        self.options = options
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code

    def terminate(self) -> None:
        self.code = -15


def test_the_speaker_passes_the_sentence_as_an_argument_one_at_a_time() -> None:
    started: list[_FakeProcess] = []

    def start(arguments: list[str], **options: Any) -> _FakeProcess:
        started.append(_FakeProcess(arguments, **options))
        return started[-1]

    problems: list[str] = []
    speaker = Speaker(["/usr/bin/spd-say"], problems.append, platform="linux", start=start)
    speaker.say("Bo; rm -rf ~: 5♥")
    speaker.say("You: flipped")
    assert [p.arguments for p in started] == [["/usr/bin/spd-say", "Bo; rm -rf ~: 5 of hearts"]]
    started[0].code = 0
    speaker.poll()
    assert started[-1].arguments[-1] == "You: flipped" and not problems


def test_on_windows_the_sentence_goes_in_the_environment_not_the_script() -> None:
    started: list[_FakeProcess] = []

    def start(arguments: list[str], **options: Any) -> _FakeProcess:
        started.append(_FakeProcess(arguments, **options))
        return started[-1]

    command = speech_command("win32", _which("powershell"))
    speaker = Speaker(command, print, platform="win32", start=start)
    speaker.say("Bo'); Remove-Item C:\\ ;('")
    assert started[0].arguments == command
    assert started[0].options["env"][SAY_ENV] == "Bo'); Remove-Item C:\\ ;('"


def test_a_speech_command_that_fails_says_so_once_and_the_game_goes_on() -> None:
    problems: list[str] = []

    def missing(arguments: list[str], **options: Any) -> Any:
        raise FileNotFoundError(2, "No such file or directory", arguments[0])

    speaker = Speaker(["/nowhere/say"], problems.append, platform="darwin", start=missing)
    speaker.say("You: stuck")
    speaker.say("You: called Nerts!")
    speaker.poll()
    assert len(problems) == 1 and "cannot be spoken" in problems[0]
    nothing: list[str] = []
    voiceless = Speaker(None, nothing.append)
    assert not nothing  # said when there is something to say
    voiceless.say("You: stuck")
    voiceless.say("Bo: stuck")
    assert len(nothing) == 1 and "no speech command" in nothing[0]


def test_the_real_speech_command_runs_without_blocking() -> None:
    command = speech_command(sys.platform, shutil.which)
    if command is None:
        pytest.skip(f"no speech command on this {sys.platform} machine")
    problems: list[str] = []
    speaker = Speaker(command, problems.append)
    speaker.say("You: 5♥ from work pile 2 to foundation 3")
    process = speaker.process
    assert process is not None
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    finally:
        speaker.close()
    assert not problems or "status" in problems[0]


def test_a_readout_line_is_utf8_on_a_stdout_of_another_code_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from ui.kit.speech import print_readout

    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="cp1252"))
    print_readout("You: 5♥ from work pile 2 to foundation 3")
    assert raw.getvalue() == "You: 5♥ from work pile 2 to foundation 3\n".encode()
