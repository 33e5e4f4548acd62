"""``nerts-lan faults --compiled``: the sweep's seeds on the mypyc build of the same source.

The build takes about two minutes of CPU, so the tests that make one are soak runs (marker
``slow``, run with NERTS_SLOW=1); ``.ci/run`` runs them after the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nerts_lan.cli.faults import _child_arguments
from nerts_lan.cli.parser import build_parser
from nerts_lan.lab.faults.compiled import COMPILED, CompileError, build_tree, tree_digest

ROOT = Path(__file__).resolve().parent.parent
BUILDS = pytest.mark.skipif(
    os.environ.get("NERTS_SLOW") != "1",
    reason="makes a mypyc build (2 minutes of CPU): set NERTS_SLOW=1",
)


def _faults(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nerts_lan", "faults", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NERTS_LAN_DATA": str(data)},
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(
    "line",
    [
        ["faults", "partial", "--seeds", "3-9", "--compiled"],
        ["faults", "--budget", "90s", "--jobs", "2", "--state", "s.json", "--compiled"],
        ["faults", "stalls", "churn", "--budget", "1.5h", "--real-timers", "--json", "--compiled"],
    ],
)
def test_the_child_runs_the_command_it_was_given(line: list[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(line)
    again = parser.parse_args(_child_arguments(args))
    assert vars(again) == vars(args)


def test_a_build_that_fails_is_one_error_naming_mypyc_and_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    pytest.importorskip("mypyc", reason="mypyc comes with mypy (the test extra)")
    source = tmp_path / "source"
    (source / "nerts_lan").mkdir(parents=True)
    (source / "nerts_lan" / "__init__.py").write_text("", encoding="utf-8")
    cache = tmp_path / "cache"
    with pytest.raises(CompileError, match="mypyc failed"):
        build_tree(cache, source)
    assert list(cache.iterdir()) == []


def test_the_build_is_named_by_every_source_file(tmp_path: Path) -> None:
    """A change to any source file names another build: an extension never outlives its source."""
    pytest.importorskip("mypy", reason="the test extra")
    for path in COMPILED:
        assert (ROOT / path).exists(), path
    source = tmp_path / "source"
    for package in ("nerts_lan", "net", "ui"):
        (source / package).mkdir(parents=True)
        (source / package / "__init__.py").write_text("", encoding="utf-8")
    first = tree_digest(source)
    assert tree_digest(source) == first
    (source / "net" / "__init__.py").write_text("# changed\n", encoding="utf-8")
    assert tree_digest(source) != first


def test_only_the_newest_builds_are_kept(tmp_path: Path) -> None:
    """A build per source change would fill the disk: the three newest stay, the one asked
    for among them."""
    pytest.importorskip("mypy", reason="the test extra")
    source = tmp_path / "source"
    (source / "net").mkdir(parents=True)
    (source / "net" / "__init__.py").write_text("", encoding="utf-8")
    cache = tmp_path / "cache"
    current = cache / f"compiled-{tree_digest(source)}"
    for age, name in enumerate(["compiled-new", "compiled-older", current.name, "compiled-oldest"]):
        (cache / name).mkdir(parents=True)
        (cache / name / "BUILT").write_text("x\n", encoding="utf-8")
        os.utime(cache / name, (1e9 - age * 1000, 1e9 - age * 1000))
    assert build_tree(cache, source) == current  # already built: nothing is compiled
    kept = sorted(path.name for path in cache.iterdir())
    assert kept == sorted([current.name, "compiled-new", "compiled-older"])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder shared by the module's compiled runs: the first one builds (two minutes),
    the others take its build."""
    return tmp_path_factory.mktemp("compiled-data")


@pytest.mark.slow
@pytest.mark.timeout(900)
@BUILDS
def test_a_compiled_budget_sweep_says_it_ran_on_the_build(tmp_path: Path, built: Path) -> None:
    state = tmp_path / "sweep.json"
    done = _faults(built, "pauses", "--budget", "2s", "--state", str(state), "--compiled")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].endswith("run on the mypyc build (--compiled)")
    lanes = json.loads(state.read_text(encoding="utf-8"))["lanes"]
    assert lanes["pauses/fast"]["seeds"] >= 1 and lanes["pauses/fast"]["forks"] == 0


@pytest.mark.slow
@pytest.mark.timeout(900)
@BUILDS
def test_the_compiled_seeds_give_what_the_source_gives_and_a_build_that_differs_stops(
    built: Path,
) -> None:
    from_source = _faults(built, "partial", "--seeds", "3-4", "--json")
    assert from_source.returncode == 0, from_source.stderr
    compiled = _faults(built, "partial", "--seeds", "3-4", "--json", "--compiled")
    assert compiled.returncode == 0, compiled.stderr
    assert "computes what the source does" in compiled.stderr
    assert compiled.stdout == from_source.stdout
    (tree,) = (built / "compiled").iterdir()
    assert (tree / "BUILT").is_file() and list((tree / "net" / "_order").glob("core.*.*"))

    # A second run takes the same build; one whose behaviour was changed is caught by the canary
    # (the last test of the module: it leaves the build changed).
    run = tree / "nerts_lan" / "lab" / "faults" / "honest.py"
    assert not list(run.parent.glob("honest.*.*")), "honest.py stays source in the build"
    text = run.read_text(encoding="utf-8")
    churn = 'FaultTable("churn", seed, config, peers)'
    assert churn in text
    run.write_text(text.replace(churn, churn.replace("peers)", "peers + 1)")), encoding="utf-8")
    tampered = _faults(built, "partial", "churn", "--budget", "1s", "--compiled")
    assert tampered.returncode == 2, tampered.stderr
    assert "disagrees with the source" in tampered.stderr
    assert "churn seed 70000 (fast)" in tampered.stderr
    assert [tree] == list((built / "compiled").iterdir())
