"""The committed Mermaid diagram of each graph is current (the README's picture never lies)."""

from __future__ import annotations

from pathlib import Path

from graphs.legal.graph import mermaid
from graphs.medical.graph import mermaid as medical_mermaid

ROOT = Path(__file__).resolve().parents[1]


def test_legal_graph_diagram_is_current() -> None:
    committed = (ROOT / "graphs" / "legal" / "graph.mmd").read_text(encoding="utf-8")
    assert committed == mermaid(), (
        "run: .venv/bin/python -m graphs.legal.graph > graphs/legal/graph.mmd"
    )
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert committed.strip() in readme


def test_medical_graph_diagram_is_current() -> None:
    committed = (ROOT / "graphs" / "medical" / "graph.mmd").read_text(encoding="utf-8")
    assert committed == medical_mermaid(), (
        "run: .venv/bin/python -m graphs.medical.graph > graphs/medical/graph.mmd"
    )
    assert committed.strip() in (ROOT / "README.md").read_text(encoding="utf-8")
