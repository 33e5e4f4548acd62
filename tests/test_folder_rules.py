"""The folders are the architecture: each package is a stack of folders, and an import may only
point down the stack (or stay in its own folder). The rules a newcomer reads in
docs/architecture.md are checked here, from the source, every import counted (those inside
functions too), so a change that breaks one fails with the file and the import that did.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Each package's folders (and top-level modules), lowest first. A module may import from its own
# entry and from any entry listed before it, never from one listed after it.
STACKS: dict[str, list[set[str]]] = {
    "nerts_lan": [
        {"__init__", "folders", "usage"},
        {"rules"},
        {"bots"},
        {"table"},
        {"matchlog"},
        {"practice", "replay", "lan"},
        {"history", "doctor"},
        {"headless"},
        {"lab"},
        {"cli"},
        {"__main__"},
    ],
    "net": [
        {"errors", "events", "_codec", "_identity", "refusals", "interfaces"},
        {"_order", "_mesh", "discovery"},
        {"node", "runtime"},
        {"testing", "__init__"},
    ],
    "ui": [
        {"__init__", "config", "screen", "quitting", "kit"},
        {"table"},
        {"lobby"},
        {"screens"},
        {"app"},
        {"bench"},
    ],
}

# Who may import what, across the stacks: (importer's prefix, forbidden prefix, why).
FORBIDDEN: list[tuple[str, str, str]] = [
    ("nerts_lan.table", "asyncio", "the table is sans-IO: its drivers own the loop"),
    ("net._order", "asyncio", "the ordering core is sans-IO"),
    ("net._order", "socket", "the ordering core is sans-IO"),
    ("net._order", "net._mesh", "the two halves of net meet only in net.node"),
    ("net._mesh", "net._order", "the two halves of net meet only in net.node"),
    ("net", "nerts_lan", "net knows nothing of Nerts"),
    ("net", "ui", "net knows nothing of the window"),
    ("ui", "net", "the window reaches the network only through nerts_lan"),
    ("ui", "zeroconf", "the window reaches the network only through nerts_lan"),
    ("ui", "socket", "the window reaches the network only through nerts_lan"),
    ("ui", "nerts_lan.lan.agent", "the window talks to a LAN table through its Session"),
    ("ui", "nerts_lan.lab", "only the cli imports the lab"),
    ("nerts_lan", "ui", "the game runs headless; only the cli opens the window"),
    ("nerts_lan", "pyglet", "the game runs headless; only the cli opens the window"),
]
ALLOWED: set[tuple[str, str]] = {
    # The composition root wires the window in (lazily, when a window is asked for).
    ("nerts_lan.cli", "ui"),
    ("nerts_lan.__main__", "ui"),
}
# Outside net, only these faces of it may be imported.
NET_FACES = ("net", "net.events", "net.errors", "net.testing")


def test_the_rules_import_only_the_standard_library() -> None:
    found = []
    for path, imported in _each_module_imports("nerts_lan/rules"):
        outside = {
            name
            for name in imported
            if name.split(".")[0] not in sys.stdlib_module_names
            and not name.startswith("nerts_lan.rules")
            and name != "__future__"
        }
        found += [f"{path}: {name}" for name in sorted(outside)]
    assert not found, "the rules import more than the standard library:\n" + "\n".join(found)


def test_only_the_cli_imports_the_lab() -> None:
    found = [
        f"{path}: {name}"
        for path, imported in _each_module_imports("nerts_lan", "ui", "net")
        for name in sorted(imported)
        if name.startswith("nerts_lan.lab")
        and not _module_of(path).startswith(("nerts_lan.lab", "nerts_lan.cli"))
    ]
    assert not found, "the lab imported outside the cli:\n" + "\n".join(found)


@pytest.mark.parametrize("package", sorted(STACKS))
def test_every_import_points_down_its_package_stack(package: str) -> None:
    floors = {entry: floor for floor, entries in enumerate(STACKS[package]) for entry in entries}
    found = []
    for path, imported in _each_module_imports(package):
        mine = _entry(package, _module_of(path))
        assert mine in floors, f"{path} is in no floor of the {package} stack: add it"
        for name in sorted(imported):
            theirs = _entry(package, name) if name.split(".")[0] == package else None
            if theirs is None or theirs == mine:
                continue
            if floors.get(theirs, -1) > floors[mine]:
                found.append(f"{path}: {name} ({theirs} is above {mine})")
    assert not found, f"imports that run back up {package}:\n" + "\n".join(found)


@pytest.mark.parametrize(("importer", "forbidden", "why"), FORBIDDEN)
def test_no_folder_imports_what_it_must_not(importer: str, forbidden: str, why: str) -> None:
    found = []
    for path, imported in _each_module_imports(importer.split(".")[0]):
        module = _module_of(path)
        if not _within(module, importer):
            continue
        for name in sorted(imported):
            if _within(name, forbidden) and not any(
                _within(module, a) and _within(name, b) for a, b in ALLOWED
            ):
                found.append(f"{path}: {name}")
    assert not found, f"{why}:\n" + "\n".join(found)


def test_outside_net_only_its_faces_are_imported() -> None:
    found = [
        f"{path}: {name}"
        for path, imported in _each_module_imports("nerts_lan", "ui", "scripts")
        for name in sorted(imported)
        if _within(name, "net") and name not in NET_FACES and not path.startswith("scripts/")
    ]
    assert not found, "net's private modules imported from outside it:\n" + "\n".join(found)


def test_the_stack_check_sees_an_import_that_runs_back_up(tmp_path: Path) -> None:
    """The rule's own check: a rules module importing the table is caught."""
    source = tmp_path / "engine.py"
    source.write_text("from nerts_lan.table.machine import TableMachine\n", encoding="utf-8")
    imported = _imports(source, "nerts_lan.rules.engine")
    floors = {e: f for f, entries in enumerate(STACKS["nerts_lan"]) for e in entries}
    assert any(floors[_entry("nerts_lan", n) or ""] > floors["rules"] for n in imported)


# --- helpers -------------------------------------------------------------------------------------


def _each_module_imports(*folders: str) -> list[tuple[str, set[str]]]:
    out = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            out.append((relative, _imports(path, _module_of(relative))))
    return out


def _module_of(relative: str) -> str:
    parts = list(Path(relative).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _entry(package: str, module: str) -> str | None:
    """The stack entry of ``module`` in ``package``: its folder or top-level module."""
    parts = module.split(".")
    if parts[0] != package:
        return None
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _imports(path: Path, module: str) -> set[str]:
    """Every module ``path`` imports, as full dotted names ("from P import m" names P.m when
    that is a module of the tree, else P)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module in NET_FACES:
            found.add(node.module)  # a face's names: "refusals" is its function, not its module
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                as_path = ROOT / Path(*candidate.split("."))
                is_module = (
                    as_path.with_suffix(".py").exists() or (as_path / "__init__.py").exists()
                )
                found.add(candidate if is_module else node.module)
    return found
