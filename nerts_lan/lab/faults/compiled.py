"""``nerts-lan faults --compiled``: the sweep's seeds on the same source compiled with mypyc.

A seed is thousands of frames through the real core, table and bots, all pure Python; the
profile is flat (no function over a few per cent), so no single hot spot stands between a seed
and issue 24's 0.1 s. mypyc (part of mypy, which the test extra installs) compiles the
type-checked modules that a seed runs (`COMPILED`) to C extensions, unchanged: the same source,
the same semantics, several times fewer CPU cycles. The game itself never runs them: only a
sweep, a benchmark or a test that asks for them.

The build is a copy of the source tree with the extensions beside their modules, in a folder
named by a digest of every source file, the Python and the mypy version (`build_tree`): a change
to any source builds afresh, so an extension is never older than its source. A compiled run is
a child process with that folder first on its path (`child_environment`).

Trust is checked, not assumed: `canary` runs one seed of each generator in the compiled child and
compares its whole result with the same seed run from source; any difference stops the sweep.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

__all__ = [
    "COMPILED",
    "CompileError",
    "build_tree",
    "canary",
    "child_command",
    "child_environment",
    "is_compiled",
    "run_on_build",
    "tree_digest",
]

COMPILED: Final = (
    "net/_order/",
    "net/_codec.py",
    "net/_identity.py",
    "net/events.py",
    "net/errors.py",
    "net/testing/models.py",
    "net/testing/simnet.py",
    "nerts_lan/rules/codec.py",
    "nerts_lan/rules/deal.py",
    "nerts_lan/rules/engine.py",
    "nerts_lan/rules/handicap.py",
    "nerts_lan/rules/piles.py",
    "nerts_lan/rules/scoring.py",
    "nerts_lan/rules/state.py",
    "nerts_lan/table/drawing.py",
    "nerts_lan/table/effects.py",
    "nerts_lan/table/lobby_view.py",
    "nerts_lan/table/machine.py",
    "nerts_lan/table/peer.py",
    "nerts_lan/table/replica.py",
    "nerts_lan/table/seating.py",
    "nerts_lan/bots/bot.py",
    "nerts_lan/bots/lookahead.py",
    "nerts_lan/bots/values.py",
    "nerts_lan/lab/simgame.py",
    "nerts_lan/lab/faults/malicious.py",
    "nerts_lan/lab/faults/oracle.py",
    "nerts_lan/lab/faults/run.py",
)
"""What a seed runs, compiled. Left as source: modules mypyc cannot compile as they are
(dataclasses with class variables: ``rules/actions.py``, ``table/commands.py``; a str subclass:
``rules/cards.py``; classes the source subclasses: ``table/session.py``) and those a seed
spends little time in."""

PACKAGES: Final = ("nerts_lan", "net", "ui")
"""The source folders copied into a build (the child runs ``python -m nerts_lan``), with
``pyproject.toml`` (mypy's settings)."""

KEPT_BUILDS: Final = 3
"""Builds kept in the cache, the newest (about 20 MB each): one per source change would fill
a disk, and a sweep still running on the one before keeps its own."""

CANARY_SEED: Final = 70_000
"""The seed of each generator that the canary runs both ways (any seed would do)."""


class CompileError(Exception):
    """The compiled build could not be made here (the message says why, in a few words)."""


def is_compiled() -> bool:
    """Whether this process runs the compiled ordering core (a child of `--compiled`)."""
    from net import OrderingCore

    return not str(sys.modules[OrderingCore.__module__].__file__).endswith(".py")


def tree_digest(source: Path) -> str:
    """A digest of every source file of `source` (the repository or install root), the Python
    and the mypy version: the name of the build made from them."""
    import mypy.version

    digest = hashlib.sha256(f"{sys.version}\n{mypy.version.__version__}\n".encode())
    digest.update("\n".join(COMPILED).encode())
    for path in _inputs(source):
        digest.update(path.relative_to(source).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:20]


def build_tree(cache: Path, source: Path | None = None) -> Path:
    """The compiled build of `source` (the folder holding ``nerts_lan/``: this checkout or
    install by default) under `cache`, made now if it is not there yet; `CompileError` when
    mypyc or a C compiler is missing or the build fails."""
    source = source or Path(__file__).resolve().parents[3]
    try:
        digest = tree_digest(source)
    except ModuleNotFoundError:
        raise CompileError("mypyc is not installed (pip install -e '.[test]')") from None
    tree = cache / f"compiled-{digest}"
    if (tree / "BUILT").is_file():
        os.utime(tree)  # the newest: the last to be pruned
        _prune(cache, keep=tree)
        return tree
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="compiling-", dir=cache))
    try:
        for path in _inputs(source):
            target = work / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        _compile(work)
        shutil.rmtree(work / "build", ignore_errors=True)
        (work / "BUILT").write_text(digest + "\n", encoding="utf-8")
        try:
            os.replace(work, tree)  # whole or not at all: a tree that exists is complete
        except OSError:
            if not (tree / "BUILT").is_file():
                raise
            # Another sweep built the same source at the same time: take its build.
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _prune(cache, keep=tree)
    return tree


def child_environment(tree: Path) -> dict[str, str]:
    """This process's environment with the build first on the module path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    return env


def run_on_build(tree: Path, code: str, *arguments: str) -> Any:
    """Run `code` (which binds ``result``; ``sys.argv[1:]`` are `arguments`) in a child Python
    on the build and return ``result`` through JSON; `CompileError` names the child's last
    word when the build did not load or the code failed."""
    code = (
        "from nerts_lan.lab.faults.compiled import _canary_records, is_compiled\n"
        "assert is_compiled(), 'the build did not load'\n"
        f"{code}\n"
        "import json\n"
        "print(json.dumps(result))\n"
    )
    child = subprocess.run(
        child_command(code, *arguments),
        env=child_environment(tree),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if child.returncode != 0:
        tail = (child.stderr.strip().splitlines() or ["no output"])[-1]
        raise CompileError(f"the compiled child failed: {tail}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def child_command(code: str, *arguments: str) -> list[str]:
    """The command that runs `code` in a child Python on the build (with `child_environment`).
    ``python -c`` puts the working directory first on the path, ahead of the build: in a
    checkout that is the source, so it comes off."""
    return [sys.executable, "-c", "import sys\ndel sys.path[0]\n" + code, *arguments]


def canary(tree: Path, generators: Sequence[str], real_timers: bool = False) -> list[str]:
    """Run `CANARY_SEED` of each generator compiled (a child process) and from source (here);
    the differences found, one line each (none: the build computes what the source does)."""
    from nerts_lan.lab.faults.sweep import run_record

    timers = "real" if real_timers else "fast"
    code = "result = _canary_records(sys.argv[2:], sys.argv[1] == 'real')"
    try:
        compiled = run_on_build(tree, code, timers, *generators)
    except CompileError as error:
        return [str(error)]
    differences = []
    for name, theirs in zip(generators, compiled):
        ours = _comparable(run_record(name, CANARY_SEED, real_timers))
        for key in sorted(set(ours) | set(theirs)):
            if ours.get(key) != theirs.get(key):
                differences.append(
                    f"{name} seed {CANARY_SEED} ({timers}): {key} is {theirs.get(key)!r} "
                    f"compiled, {ours.get(key)!r} from source"
                )
    return differences


# --- helpers ---------------------------------------------------------------------------------


def _canary_records(generators: Iterable[str], real_timers: bool) -> list[dict[str, Any]]:
    from nerts_lan.lab.faults.sweep import run_record

    return [_comparable(run_record(name, CANARY_SEED, real_timers)) for name in generators]


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A seed's record without what differs between two runs of the same code (its CPU time)."""
    return {key: value for key, value in record.items() if key != "cpu_s"}


def _inputs(source: Path) -> list[Path]:
    """What a build is made from: mypy's settings (in a checkout) and the source files."""
    settings = source / "pyproject.toml"
    return [settings, *_sources(source)] if settings.is_file() else _sources(source)


def _sources(source: Path) -> list[Path]:
    """The Python files of the packages under `source`, in a fixed order."""
    files: list[Path] = []
    for package in PACKAGES:
        files += sorted((source / package).rglob("*.py"))
    return [path for path in files if "__pycache__" not in path.parts]


def _prune(cache: Path, keep: Path) -> None:
    """Remove all but the `KEPT_BUILDS` newest builds (`keep`, just made or used, is one)."""
    builds = sorted(cache.glob("compiled-*"), key=lambda path: path.stat().st_mtime)
    old = [path for path in builds if path != keep][: max(0, len(builds) - KEPT_BUILDS)]
    for path in old:
        shutil.rmtree(path, ignore_errors=True)


def _compile(work: Path) -> None:
    """Compile `COMPILED` in place in `work` (extensions beside their modules)."""
    script = (
        "import sys\n"
        "from setuptools import setup\n"
        "from mypyc.build import mypycify\n"
        "setup(name='nerts-lan-compiled', ext_modules=mypycify(sys.argv[1:], opt_level='3'),\n"
        "      script_args=['build_ext', '--inplace'])\n"
    )
    build = subprocess.run(
        [sys.executable, "-c", script, *COMPILED],
        cwd=work,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if build.returncode != 0:
        lines = (build.stdout + build.stderr).strip().splitlines()
        errors = [line for line in lines if "error" in line.lower()] or lines[-3:]
        raise CompileError("mypyc failed: " + " | ".join(errors[:3]))
