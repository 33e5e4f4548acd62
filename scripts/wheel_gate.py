"""The wheel gate: every laptop at the table installs nerts-lan from wheels, never from source.

A player's plain ``pip install`` takes, for every dependency, the newest version the requirements
allow; when that version has no wheel for the player's platform, pip builds it from source (for
cryptography that needs Rust, which no player has). For each pick of laptop kind and Python
version, this resolves the project's runtime dependencies as pip would on that laptop, wheels
only, and fails when a package's newest allowed version is not the one that resolved: that newest
version has no wheel there.

    python3 scripts/wheel_gate.py            # every pick; exit 1 naming what would build
    python3 scripts/wheel_gate.py --jobs 4   # at most 4 pip processes at a time

How it asks pip (and only pip, with the machine's own pip configuration set aside so that local
wheel folders and extra indexes do not hide what a player sees):
- ``pip install --dry-run --only-binary=:all: --platform ... --python-version ... --report`` per
  pick gives what resolves from wheels;
- ``pip index versions NAME`` gives every version with a file pip would take (a wheel or an
  sdist); the newest of them that the resolved requirements allow is what a plain install picks.
pip evaluates environment markers for the machine it runs on, not for ``--platform``: the gate
evaluates them itself for each pick (the top-level ones before asking, the transitive ones after)
and asks again with what the pick needs added.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version
except ImportError:  # a bare interpreter: pip carries packaging inside
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[assignment]
    from pip._vendor.packaging.specifiers import SpecifierSet  # type: ignore[assignment]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[assignment]
    from pip._vendor.packaging.version import (  # type: ignore[assignment]
        InvalidVersion,
        Version,
    )

ROOT = Path(__file__).resolve().parent.parent
# 3.10 to 3.13 as issue 22 asked, and 3.14, which python.org offers first today.
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")


@dataclass(frozen=True)
class Laptop:
    """A kind of laptop a player brings: the wheel tags its Python takes and its markers."""

    name: str
    platforms: tuple[str, ...]
    sys_platform: str
    platform_system: str
    machine: str


def _manylinux(arch: str, glibc_minor: int) -> tuple[str, ...]:
    """The manylinux tags a Linux with glibc 2.``glibc_minor`` takes, newest first (pip does not
    widen ``manylinux_2_X`` by itself, so every tag is named)."""
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(glibc_minor, 4, -1)]
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    aliases = [
        f"{alias}_{arch}" for minor, alias in legacy.items() if arch == "x86_64" or minor == 17
    ]
    return (*tags, *aliases)


# The oldest systems still common at a game night, since a wheel built for a newer one does not
# install on them: macOS 12 on Intel (the last macOS of the 2015-2016 Macs; pip widens a macOS tag
# to every older one itself), macOS 11 on Apple silicon (the first they shipped with), glibc 2.31
# on Linux (Ubuntu 20.04, Debian 11).
LAPTOPS = (
    Laptop("macOS Intel (x86_64)", ("macosx_12_0_x86_64",), "darwin", "Darwin", "x86_64"),
    Laptop("macOS Apple (arm64)", ("macosx_11_0_arm64",), "darwin", "Darwin", "arm64"),
    Laptop("Windows x64", ("win_amd64",), "win32", "Windows", "AMD64"),
    Laptop("Windows ARM64", ("win_arm64",), "win32", "Windows", "ARM64"),
    Laptop("Linux x86_64", _manylinux("x86_64", 31), "linux", "Linux", "x86_64"),
    Laptop("Linux aarch64", _manylinux("aarch64", 31), "linux", "Linux", "aarch64"),
)

# Picks no player can have, checked all the same (a build may appear elsewhere, e.g. conda).
NOT_REAL = {("Windows ARM64", "3.10"): "python.org has no Windows ARM64 build of CPython 3.10"}


@dataclass(frozen=True)
class Pick:
    laptop: Laptop
    python: str

    @property
    def label(self) -> str:
        return f"{self.laptop.name}, CPython {self.python}"

    def markers(self) -> dict[str, str]:
        """The environment markers pip would see on this laptop."""
        return {
            "implementation_name": "cpython",
            "implementation_version": f"{self.python}.0",
            "os_name": "nt" if self.laptop.sys_platform == "win32" else "posix",
            "platform_machine": self.laptop.machine,
            "platform_python_implementation": "CPython",
            "platform_release": "",
            "platform_system": self.laptop.platform_system,
            "platform_version": "",
            "python_full_version": f"{self.python}.0",
            "python_version": self.python,
            "sys_platform": self.laptop.sys_platform,
        }


PICKS = tuple(Pick(laptop, python) for laptop in LAPTOPS for python in PYTHONS)


@dataclass(frozen=True)
class Resolved:
    """One package of a resolution: its version and what it requires."""

    version: Version
    requires: tuple[Requirement, ...]


@dataclass(frozen=True)
class Lag:
    """A package that would build from source: the newest allowed version has no wheel."""

    name: str
    newest: Version
    with_wheel: Version


@dataclass
class Walk:
    """What the requirements reach from the top for one pick."""

    specifiers: dict[str, SpecifierSet] = field(default_factory=dict)
    unresolved: list[Requirement] = field(default_factory=list)


def applies(requirement: Requirement, markers: Mapping[str, str], extras: Iterable[str]) -> bool:
    """Whether `requirement` holds on a laptop with `markers`, for a package asked with `extras`."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({**markers, "extra": extra}) for extra in ("", *extras))


def for_pick(requirements: Iterable[str], markers: Mapping[str, str]) -> list[str]:
    """The requirements that hold for a pick, their markers dropped (pip would evaluate them for
    the machine the gate runs on)."""
    held = []
    for line in requirements:
        requirement = Requirement(line)
        if applies(requirement, markers, ()):
            requirement.marker = None
            held.append(str(requirement))
    return held


def resolved_from_report(report: Mapping[str, object]) -> dict[str, Resolved]:
    """The packages of a ``pip install --report``, by canonical name."""
    resolved: dict[str, Resolved] = {}
    for item in report["install"]:  # type: ignore[attr-defined]
        metadata = item["metadata"]
        resolved[canonicalize_name(metadata["name"])] = Resolved(
            Version(metadata["version"]),
            tuple(Requirement(line) for line in metadata.get("requires_dist", ())),
        )
    return resolved


def walk(top: Iterable[str], resolved: Mapping[str, Resolved], markers: Mapping[str, str]) -> Walk:
    """Follow the requirements that hold for the pick from `top` through `resolved`: every
    package reached with the specifiers all its requirers put on it, and the requirements whose
    package pip did not resolve (it evaluated their markers for another machine)."""
    found = Walk()
    asked: dict[str, set[str]] = {}
    queue: list[tuple[Requirement, tuple[str, ...]]] = [(Requirement(line), ()) for line in top]
    while queue:
        requirement, extras = queue.pop()
        if not applies(requirement, markers, extras):
            continue
        name = canonicalize_name(requirement.name)
        found.specifiers[name] = found.specifiers.get(name, SpecifierSet()) & requirement.specifier
        if name not in resolved:
            found.unresolved.append(requirement)
            continue
        new = name not in asked or not set(requirement.extras) <= asked[name]
        asked.setdefault(name, set()).update(requirement.extras)
        if new:
            queue.extend((needed, tuple(asked[name])) for needed in resolved[name].requires)
    return found


def newest_allowed(versions: Iterable[Version], specifier: SpecifierSet) -> Version | None:
    """The version a plain ``pip install`` takes from `versions` (no pre-releases)."""
    return max(specifier.filter(versions), default=None)


def lags(
    found: Walk,
    resolved: Mapping[str, Resolved],
    versions_of: Callable[[str], Iterable[Version]],
    only: Iterable[str] | None = None,
) -> list[Lag]:
    """The reached packages (of `only`, if given) whose newest allowed version (from
    `versions_of`: every version with a file pip would take, wheel or sdist) is not the version
    that resolved from wheels."""
    behind = []
    judged = set(found.specifiers if only is None else only)
    for name, specifier in sorted(found.specifiers.items()):
        if name not in resolved or name not in judged:
            continue
        newest = newest_allowed(versions_of(name), specifier)
        if newest is not None and newest != resolved[name].version:
            behind.append(Lag(name, newest, resolved[name].version))
    return behind


# ---------------------------------------------------------------------------------------------
# Asking pip (the thin part: everything above decides, everything below runs pip).

KEPT_PIP_SETTINGS = {
    "PIP_INDEX_URL", "PIP_CERT", "PIP_CLIENT_CERT", "PIP_TRUSTED_HOST", "PIP_PROXY",
    "PIP_DEFAULT_TIMEOUT", "PIP_RETRIES", "PIP_CACHE_DIR",
}  # fmt: skip


def _pip_environment() -> dict[str, str]:
    """This process's environment less the pip settings a player does not have (local wheel
    folders, extra indexes, constraints): what pip finds is what the index offers."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PIP_") or key in KEPT_PIP_SETTINGS
    }
    environment.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return environment


def _target_options(pick: Pick) -> list[str]:
    options = ["--python-version", pick.python, "--implementation", "cp"]
    for platform in pick.laptop.platforms:
        options += ["--platform", platform]
    return options


def _pip(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *arguments],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_pip_environment(),
        check=False,
    )


def resolve_with_wheels(pick: Pick, requirements: list[str]) -> dict[str, object]:
    """pip's report of what `requirements` resolve to from wheels only, on the pick's laptop."""
    with tempfile.TemporaryDirectory() as work:
        report = Path(work, "report.json")
        options = ["--dry-run", "--quiet", "--ignore-installed", "--only-binary=:all:"]
        options += ["--target", str(Path(work, "target")), "--report", str(report)]
        done = _pip(["install", *options, *_target_options(pick), *requirements])
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            raise RuntimeError(lines[-1] if lines else f"pip exited {done.returncode}")
        return json.loads(report.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def index_versions(name: str, python: str | None, platforms: tuple[str, ...]) -> list[Version]:
    """Every version of `name` with a file pip would take: an sdist, or a wheel for `platforms`
    (this machine's when none) and `python` (any Python, Requires-Python ignored, when None)."""
    target = ["--python-version", python, "--implementation", "cp"] if python else []
    target += ["--ignore-requires-python"] if python is None else []
    for platform in platforms:
        target += ["--platform", platform]
    done = _pip(["index", "versions", name, *target])
    for line in done.stdout.splitlines():
        if line.startswith("Available versions:"):
            return list(_versions(line.split(":", 1)[1].split(",")))
    # Never an empty list: that would pass every package silently.
    said = [line for line in done.stderr.splitlines() if line.strip()] or ["no versions listed"]
    raise RuntimeError(f"pip index versions {name} failed: {said[-1]}")


def _versions(texts: Iterable[str]) -> Iterable[Version]:
    for text in texts:
        try:
            yield Version(text.strip())
        except InvalidVersion:  # a pre-PEP 440 release pip lists but never picks
            continue


@dataclass
class Outcome:
    """What one pick came to: how many packages it installs, and what would build from source
    (or why it did not resolve at all)."""

    pick: Pick
    packages: int = 0
    lags: list[Lag] = field(default_factory=list)
    error: str = ""

    @property
    def counts(self) -> bool:
        """Whether the pick's result decides the gate: a pick no player can have does not."""
        return (self.pick.laptop.name, self.pick.python) not in NOT_REAL

    @property
    def failed(self) -> bool:
        return bool(self.error or self.lags)

    def line(self) -> str:
        note = NOT_REAL.get((self.pick.laptop.name, self.pick.python))
        suffix = f" (not counted, not a real platform: {note})" if note else ""
        if self.error:
            return f"FAIL {self.pick.label}: {self.error}{suffix}"
        if self.lags:
            platform = self.pick.laptop.platforms[0]
            told = "; ".join(
                f"{lag.name} {lag.newest} (newest allowed) has no wheel for {platform} "
                f"cp{self.pick.python.replace('.', '')}, pip would build it from source "
                f"(newest with a wheel: {lag.with_wheel})"
                for lag in self.lags
            )
            return f"FAIL {self.pick.label}: {told}{suffix}"
        return f"pass {self.pick.label}: {self.packages} packages, all from wheels{suffix}"


def resolve_pick(pick: Pick, requirements: list[str]) -> tuple[Walk, dict[str, Resolved]]:
    """Resolve from wheels until every requirement that holds on the pick's laptop is in. What
    pip left out (its markers held for this machine, not for the pick) is resolved on its own,
    bounded by what the rest asks of it, which is quick (the big index pages are not read again);
    if that disagrees with a version already resolved, everything is resolved again with it."""
    markers = pick.markers()
    asked = for_pick(requirements, markers)
    resolved = resolved_from_report(resolve_with_wheels(pick, asked))
    for _ in range(5):
        found = walk(asked, resolved, markers)
        if not found.unresolved:
            return found, resolved
        missing = sorted({_unmarked(r, found.specifiers) for r in found.unresolved})
        more = resolved_from_report(resolve_with_wheels(pick, missing))
        if any(resolved[n].version != more[n].version for n in more.keys() & resolved.keys()):
            asked += missing
            resolved = resolved_from_report(resolve_with_wheels(pick, asked))
        else:
            resolved.update(more)
    raise RuntimeError(f"requirements still unresolved: {found.unresolved}")


def _unmarked(requirement: Requirement, specifiers: Mapping[str, SpecifierSet]) -> str:
    """`requirement` without its marker, with every specifier its package is held to."""
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras}{specifiers[canonicalize_name(requirement.name)]}"


def run_gate(requirements: list[str], picks: Iterable[Pick], jobs: int) -> list[Outcome]:
    """Resolve every pick from wheels, then judge each package reached against its newest
    allowed version, from lists of versions that go from cheap to exact (``VersionLists``): a
    package is asked about again, one level more exact, only while it seems behind."""
    picks = list(picks)
    outcomes = {pick: Outcome(pick) for pick in picks}
    walks: dict[Pick, tuple[Walk, dict[str, Resolved]]] = {}

    def resolve(pick: Pick) -> None:
        try:
            walks[pick] = resolve_pick(pick, requirements)
        except RuntimeError as error:
            outcomes[pick].error = str(error)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(resolve, picks))
        lists = VersionLists(pool)
        behind = {pick: set(found.specifiers) for pick, (found, _) in walks.items()}
        for level in VersionLists.LEVELS:
            lists.prefetch(level, [(name, pick) for pick in behind for name in behind[pick]])
            for pick, (found, resolved) in walks.items():
                versions = lists.of(level, pick)
                judged = lags(found, resolved, versions, only=behind[pick])
                outcomes[pick].lags = judged
                behind[pick] = {lag.name for lag in judged}
    for pick, (found, _) in walks.items():
        outcomes[pick].packages = len(found.specifiers)
    return [outcomes[pick] for pick in picks]


class VersionLists:
    """The versions of each package with a file pip would take (a wheel or an sdist), from cheap
    to exact. ``rough``: one list per package, for this machine's platform, whatever the Python
    (the same list for every laptop when each version has an sdist, as nearly all do);
    ``python``: for this machine's platform and one Python version (its Requires-Python);
    ``exact``: for a pick's laptop and Python. When a cheaper list's newest allowed version is
    the one that resolved from wheels, the package is sound: a newer version only the exact list
    holds would have a wheel for the pick, and would have resolved."""

    LEVELS = ("rough", "python", "exact")

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.lists: dict[tuple[str, str, str], list[Version]] = {}

    def of(self, level: str, pick: Pick) -> Callable[[str], list[Version]]:
        """The lists of `level` that hold for `pick` (fetched first with ``prefetch``)."""
        return lambda name: self.lists[self._key(level, name, pick)]

    def prefetch(self, level: str, wanted: Iterable[tuple[str, Pick]]) -> None:
        """Ask pip, in parallel, for every list of `level` that `wanted` needs and lacks."""
        asks = {self._key(level, name, pick): (name, pick) for name, pick in wanted}
        asks = {key: ask for key, ask in asks.items() if key not in self.lists}
        found = self.pool.map(lambda ask: self._ask(level, *ask), asks.values())
        self.lists.update(zip(asks, found))

    @staticmethod
    def _key(level: str, name: str, pick: Pick) -> tuple[str, str, str]:
        return (level, name, {"rough": "", "python": pick.python}.get(level, pick.label))

    @staticmethod
    def _ask(level: str, name: str, pick: Pick) -> list[Version]:
        if level == "rough":
            return index_versions(name, None, ())
        return index_versions(name, pick.python, pick.laptop.platforms if level == "exact" else ())


def project_requirements(pyproject: Path) -> list[str]:
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # Python 3.10
        from pip._vendor import tomli as tomllib
    with pyproject.open("rb") as file:
        return list(tomllib.load(file)["project"]["dependencies"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pyproject", type=Path, default=ROOT / "pyproject.toml")
    parser.add_argument("--jobs", type=int, default=6, help="pip processes at a time")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        outcomes = run_gate(project_requirements(args.pyproject), PICKS, args.jobs)
    except RuntimeError as error:
        print(f"wheel gate: FAIL, the versions cannot be known: {error}")
        return 1
    for outcome in outcomes:
        print(outcome.line(), flush=True)
    counted = [outcome for outcome in outcomes if outcome.counts]
    failed = sum(1 for outcome in counted if outcome.failed)
    took = time.monotonic() - started
    print(
        f"wheel gate: {len(counted) - failed} of {len(counted)} picks install from wheels"
        f" ({len(outcomes) - len(counted)} not a real platform, not counted; {took:.0f} s)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
