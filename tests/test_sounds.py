"""The table's sounds, measured as a player would hear them (there is no speaker here): rendered
to WAV files by ``nerts-lan sounds``, read back, and their lengths and loudness compared."""

from __future__ import annotations

import math
import wave
from array import array
from pathlib import Path

import pytest

from nerts_lan.cli.main import main
from nerts_lan.rules.actions import Flip, Play
from nerts_lan.rules.cards import Card
from nerts_lan.rules.piles import Pile
from nerts_lan.rules.state import RejectionKind
from ui.kit.soundbank import RATE, SOUND_NAMES, levels, render, wav_bytes
from ui.kit.sounds import Sounds, refusal_sound, sounds_of


def _written(folder: Path) -> dict[str, tuple[float, float, float]]:
    """Each WAV file's length (ms), peak and loudness (dBFS), read back from disk."""
    measured = {}
    for path in sorted(folder.glob("*.wav")):
        with wave.open(str(path), "rb") as file:
            assert (file.getnchannels(), file.getsampwidth(), file.getframerate()) == (1, 2, RATE)
            samples = array("h", file.readframes(file.getnframes()))
        figures = levels(samples)
        measured[path.stem] = (figures.length_ms, figures.peak_dbfs, figures.rms_dbfs)
    return measured


def test_every_sound_is_written_and_the_layers_are_heard_in_the_games_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sounds", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    sounds = _written(tmp_path)
    assert set(sounds) == set(SOUND_NAMES)
    assert all(name in printed for name in SOUND_NAMES)
    loudness = {name: rms for name, (_, _, rms) in sounds.items()}
    # flips quieter than work-pile moves, quieter than foundation plays, the Nerts call loudest
    assert loudness["flip"] < loudness["play"] < loudness["foundation"] < loudness["nerts"]
    assert loudness["nerts"] == max(loudness.values())
    # someone else's foundation play is heard, softly: well under yours (6 dB is half as loud)
    assert loudness["foundation_other"] < loudness["foundation"] - 6
    for name, (length, peak, _) in sounds.items():
        assert peak < -0.1, f"{name} clips"
        assert 20 <= length <= 1000, f"{name} lasts {length:.0f} ms"
    assert sounds["flip"][0] < 60  # heard many times a round: a tick
    assert sounds["nerts"][0] >= 400  # the call is held


def test_a_sound_renders_to_the_same_bytes_every_time() -> None:
    for name in SOUND_NAMES:
        assert wav_bytes(render(name)) == wav_bytes(render(name))
    heard = [levels(render(name)).rms_dbfs for name in SOUND_NAMES]
    assert all(math.isfinite(value) for value in heard)


def test_a_folder_that_is_a_file_is_named_in_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("x", encoding="utf-8")
    assert main(["sounds", "--out", str(blocker)]) == 2
    error = capsys.readouterr().err.strip()
    assert "--out" in error and "is not a folder" in error and len(error.splitlines()) == 1


def test_which_moves_are_heard_yours_all_others_only_on_a_foundation() -> None:
    flip = Flip("You")
    to_work = Play("You", Card.parse("5H"), Pile.parse("nerts"), Pile.parse("w2"))
    to_foundation = Play("You", Card.parse("2S"), Pile.parse("nerts"), Pile.parse("f1"))
    assert sounds_of(flip, own=True, callouts=False) == ["flip"]
    assert sounds_of(to_work, own=True, callouts=False) == ["play"]
    assert sounds_of(to_foundation, own=True, callouts=False) == ["foundation"]
    assert sounds_of(to_foundation, own=True, callouts=True) == ["foundation", "suit_spades"]
    assert sounds_of(flip, own=False, callouts=True) == []
    assert sounds_of(to_work, own=False, callouts=True) == []
    assert sounds_of(to_foundation, own=False, callouts=True) == ["foundation_other"]


def test_a_lost_race_sounds_unlike_a_refusal_and_muted_is_silent() -> None:
    assert refusal_sound(RejectionKind.LOST_RACE) == "race_lost"
    assert refusal_sound(RejectionKind.ILLEGAL) == refusal_sound(None) == "refused"
    muted = Sounds(enabled=False)
    muted.play_refusal(RejectionKind.LOST_RACE)
    assert muted.played == []
