"""The wheel gate's decisions (scripts/wheel_gate.py), on reports pip really gave, with no network.

The recordings in tests/wheel_gate/ are trimmed ``pip install --dry-run --report`` outputs of the
gate's own ``resolve_with_wheels`` and ``index_versions`` (December 2026), made on this Linux
machine with CPython 3.11, for the requirements of pyproject.toml before it capped anything:
- macos_intel_312_main.json: macOS Intel, CPython 3.12, wheels only: cryptography 48.0.1 and
  zeroconf 0.148.0 (their newest releases have no x86_64 macOS wheel);
- macos_intel_312_versions.json: every version with a file pip would take there (wheel or sdist);
- windows_x64_310_first_round.json: Windows x64, CPython 3.10, wheels only, first round: pip
  evaluated the markers for this machine, so tqdm's colorama (Windows only) and cryptography's
  typing-extensions (Python < 3.11) are missing.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
RECORDED = Path(__file__).resolve().parent / "wheel_gate"
MAIN_REQUIREMENTS = [
    "zeroconf>=0.130", "msgpack>=1.0.5", "spake2>=0.9", "cryptography>=41", "ifaddr>=0.2",
    "pyglet>=2.1,<3", "platformdirs>=3", "tqdm>=4.60",
]  # fmt: skip


def _gate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("wheel_gate", ROOT / "scripts" / "wheel_gate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["wheel_gate"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gate = _gate()


def _pick(laptop: str, python: str) -> object:
    return next(p for p in gate.PICKS if p.laptop.name.startswith(laptop) and p.python == python)


def _recorded(name: str) -> dict[str, object]:
    return json.loads((RECORDED / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _versions() -> dict[str, list[object]]:
    recorded = _recorded("macos_intel_312_versions.json")
    return {name: [gate.Version(v) for v in vs] for name, vs in recorded.items()}  # type: ignore[attr-defined]


def _judge(requirements: list[str]) -> object:
    pick = _pick("macOS Intel", "3.12")
    asked = gate.for_pick(requirements, pick.markers())
    resolved = gate.resolved_from_report(_recorded("macos_intel_312_main.json"))
    found = gate.walk(asked, resolved, pick.markers())
    assert not found.unresolved
    versions = _versions()
    outcome = gate.Outcome(pick, len(found.specifiers))
    outcome.lags = gate.lags(found, resolved, versions.__getitem__)
    return outcome


def _project_requirements() -> list[str]:
    return gate.project_requirements(ROOT / "pyproject.toml")  # type: ignore[no-any-return]


def test_an_intel_mac_with_the_old_requirements_would_build_cryptography_and_zeroconf() -> None:
    outcome = _judge(MAIN_REQUIREMENTS)
    assert outcome.failed
    told = {(lag.name, str(lag.newest), str(lag.with_wheel)) for lag in outcome.lags}
    assert told == {("cryptography", "50.0.2", "48.0.1"), ("zeroconf", "0.154.0", "0.148.0")}
    line = outcome.line()
    assert line.startswith("FAIL macOS Intel (x86_64), CPython 3.12: cryptography 50.0.2")
    assert "no wheel for macosx_12_0_x86_64 cp312" in line and "build it from source" in line


def test_the_project_caps_keep_an_intel_mac_on_wheels() -> None:
    outcome = _judge(_project_requirements())
    assert not outcome.failed, outcome.line()
    assert outcome.line().startswith("pass macOS Intel (x86_64), CPython 3.12: 10 packages")


def test_the_caps_hold_only_where_the_wheels_are_missing() -> None:
    requirements = _project_requirements()
    picks = [
        _pick("macOS Intel", "3.12"), _pick("Windows ARM64", "3.13"), _pick("macOS Apple", "3.12"),
        _pick("Linux aarch64", "3.10"), _pick("Windows x64", "3.13"),
    ]  # fmt: skip
    crypto = {
        pick.label: [r for r in gate.for_pick(requirements, pick.markers()) if "cryptography" in r]
        for pick in picks
    }
    assert crypto == {
        "macOS Intel (x86_64), CPython 3.12": ["cryptography<49,>=41"],
        "Windows ARM64, CPython 3.13": ["cryptography<46.0.4,>=41"],
        "macOS Apple (arm64), CPython 3.12": ["cryptography>=41"],
        "Linux aarch64, CPython 3.10": ["cryptography>=41"],
        "Windows x64, CPython 3.13": ["cryptography>=41"],
    }


def test_markers_are_evaluated_for_the_pick_not_for_this_machine() -> None:
    report = gate.resolved_from_report(_recorded("windows_x64_310_first_round.json"))
    windows = _pick("Windows x64", "3.10")
    found = gate.walk(
        gate.for_pick(MAIN_REQUIREMENTS, windows.markers()), report, windows.markers()
    )
    assert sorted(str(r) for r in found.unresolved) == [
        'colorama; platform_system == "Windows"',
        'typing-extensions>=4.13.2; python_full_version < "3.11"',
    ]
    linux = _pick("Linux x86_64", "3.12")
    found = gate.walk(gate.for_pick(MAIN_REQUIREMENTS, linux.markers()), report, linux.markers())
    assert found.unresolved == []
    assert "colorama" not in found.specifiers and "bcrypt" not in found.specifiers  # an extra


def test_a_pick_no_player_can_have_is_reported_but_does_not_decide() -> None:
    outcome = gate.Outcome(_pick("Windows ARM64", "3.10"), error="no msgpack wheel")
    assert outcome.failed and not outcome.counts
    assert "not a real platform: python.org has no Windows ARM64 build" in outcome.line()
    assert gate.Outcome(_pick("Windows ARM64", "3.11")).counts


def test_a_version_list_pip_cannot_give_fails_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty list would pass every package: pip failing (no network) must fail instead."""
    failed = subprocess.CompletedProcess([], 1, "", "ERROR: Could not fetch the index\n")
    monkeypatch.setattr(gate, "_pip", lambda arguments: failed)
    with pytest.raises(RuntimeError, match="pip index versions zeroconf failed: ERROR: Could not"):
        gate.index_versions("zeroconf", "3.12", ())
