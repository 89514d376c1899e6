"""The graphs the engine runs, by domain name: the legal intake and the medical assistant, each
with how to build its nodes and which buttons are its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from langgraph.graph import StateGraph

from graphs.legal import amend as legal_amend
from graphs.legal import deadlines as legal_deadlines
from graphs.legal import graph as legal_graph
from graphs.legal import records as legal_records
from graphs.medical import graph as medical_graph
from graphs.medical import nodes as medical_nodes
from graphs.medical import records as medical_records
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge


@dataclass(frozen=True)
class ButtonRule:
    """The graph's buttons whose data starts with `prefix`, and what a press of one does: an
    `action` the engine answers with its handler of that name (bot/engine.py)."""

    prefix: str
    action: str


@dataclass(frozen=True, kw_only=True)
class GraphSpec:
    """One domain's graph: its name, how to build it, and its buttons (first matching rule)."""

    name: str
    build: Callable[[], StateGraph]
    buttons: tuple[ButtonRule, ...] = ()

    def button_action(self, data: str) -> str | None:
        """What a press with this data does in this graph; None for a button not its own."""
        return next((rule.action for rule in self.buttons if data.startswith(rule.prefix)), None)


@dataclass(frozen=True, kw_only=True)
class IntakeSpec(GraphSpec):
    """A form-like intake domain: also how to read, render and amend its state."""

    snapshot: Callable[[Knowledge, dict[str, Any], str], dict[str, Any]]
    status_text: Callable[[Knowledge, dict[str, Any], str], str]
    current_prompt: Callable[
        [Knowledge, dict[str, Any], str, str | None, str], dict[str, Any] | None
    ]
    draft_text: Callable[[KnowledgeBase, dict[str, Any], str, date], str | None]
    # A message (text, or the data of a pressed button) to a finished intake: (state updates,
    # replies), or None when it changes nothing.
    amend: Callable[[Any, dict[str, Any], str, str], Awaitable[tuple[dict[str, Any], list] | None]]
    # The deadlines of a case (knowledge, sub-type, facts, language, today, memo items): those
    # its memo says the person told, and those its facts give.
    deadlines: Callable[
        [Knowledge, str | None, dict[str, Any], str, date, list[dict[str, Any]] | None], list[Any]
    ]


LEGAL = IntakeSpec(
    name="legal",
    build=legal_graph.build_graph,
    buttons=(ButtonRule("a:", "answer"),),  # the question's choices, a correction's yes / no
    snapshot=legal_records.case_snapshot,
    status_text=legal_records.status_text,
    current_prompt=legal_records.current_prompt,
    draft_text=legal_records.draft_text,
    amend=legal_amend.amend,
    deadlines=legal_deadlines.listed,
)
# The medical assistant is no form: the engine reads its state through graphs/medical/records.py.
MEDICAL = GraphSpec(
    name="medical",
    build=medical_graph.build_graph,
    buttons=(
        ButtonRule(medical_records.REMOVE, "remove_item"),  # /profile's delete buttons
        ButtonRule(medical_nodes.BUTTON, "answer"),  # yes / no to what the graph asked
    ),
)

GRAPHS: dict[str, GraphSpec] = {spec.name: spec for spec in (LEGAL, MEDICAL)}
