"""The layers hold: a lower layer never imports a higher one, and only bot/ knows Telegram.

clock/ (the one clock) imports nothing of the project, and any layer may import it; knowledge/
and db/ import nothing of the project above them; graphs/ imports knowledge/ only;
`telegram` (python-telegram-bot) is imported under bot/ alone. Imports inside functions count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {  # package -> project packages it may import
    "clock": {"clock"},
    "knowledge": {"knowledge", "clock"},
    "db": {"db", "clock"},
    "graphs": {"graphs", "knowledge", "clock"},
    "bot": {"bot", "graphs", "knowledge", "db", "clock"},
}


def imported(path: Path) -> set[str]:
    """Top-level names of every module a file imports (relative imports resolve to its own)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module.split(".")[0] if node.level == 0 and node.module else "")
    return names - {""}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_layer_imports_only_what_is_below_it(package: str) -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted((imported(path) & set(ALLOWED)) - ALLOWED[package])
        for path in (ROOT / package).rglob("*.py")
    }
    assert {path: names for path, names in wrong.items() if names} == {}


def test_telegram_is_imported_only_under_bot() -> None:
    outside = [
        str(path.relative_to(ROOT))
        for package in ALLOWED
        if package != "bot"
        for path in (ROOT / package).rglob("*.py")
        if "telegram" in imported(path)
    ]
    assert outside == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The checker itself finds an import hidden inside a function."""
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from graphs.common.text import lemmas\n    import telegram\n")
    assert {"graphs", "telegram"} <= imported(source)


# Inside graphs/: what each sub-package may import of the others. The two graphs never import
# each other; safety and the shared code import neither graph; the staff's research assistant
# imports neither either.
GRAPHS_ALLOWED = {
    "common": {"common"},
    "safety": {"common", "safety"},
    "legal": {"common", "legal"},
    "medical": {"common", "medical"},
    "research": {"common", "research"},
}


def imported_modules(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names imported from it) for every import of a file, inside functions too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def test_graph_sub_packages_import_only_what_they_may() -> None:
    wrong = {}
    for package, allowed in GRAPHS_ALLOWED.items():
        for path in (ROOT / "graphs" / package).rglob("*.py"):
            subs = {
                module.split(".")[1]
                for module, names in imported_modules(path)
                if module.startswith("graphs.")
            } | {
                name
                for module, names in imported_modules(path)
                if module == "graphs"
                for name in names
            }
            if subs - allowed:
                wrong[str(path.relative_to(ROOT))] = sorted(subs - allowed)
    assert wrong == {}
    assert set(GRAPHS_ALLOWED) == {
        p.name for p in (ROOT / "graphs").iterdir() if (p / "__init__.py").exists()
    }


def test_no_module_imports_another_modules_private_names() -> None:
    """A leading underscore means "this module's own": other modules use the public names."""
    wrong = []
    for package in ALLOWED:
        for path in (ROOT / package).rglob("*.py"):
            for module, names in imported_modules(path):
                if module.split(".")[0] in ALLOWED:
                    wrong += [
                        f"{path.relative_to(ROOT)}: {module}.{n}" for n in names if n[0] == "_"
                    ]
    assert wrong == []
