"""The medical assistant graph: one run per message, on the chat's medical thread.

extract_slots → store_memory → reconfirm → store_response                  (a stale item first)
                             → check_similarity → store_response           (a cached answer)
                                                → classify_intent → generate_answer (greeting)
                                                                  → retrieve → assemble_context
   → generate_answer → refine → quality_check → retrieve (again, at most twice) | store_response

The slots are read and stored before the cache is checked: a cached answer is keyed by the
profile items it used, so the profile must already hold what this message said.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from graphs.common.context import Context
from graphs.common.loop import on_loop
from graphs.medical import nodes
from graphs.medical.state import MedicalState

NAME = "medical"


def route_after_memory(state: MedicalState) -> str:
    return "reconfirm" if state.get("reconfirm") else "check_similarity"


def route_after_cache(state: MedicalState) -> str:
    return "store_response" if state.get("cached") else "classify_intent"


def route_after_intent(state: MedicalState) -> str:
    return "generate_answer" if state.get("intent") in nodes.NO_LOOKUP else "retrieve"


def build_graph() -> StateGraph:
    """The uncompiled graph; the caller compiles it with its own checkpointer."""
    graph = StateGraph(MedicalState, context_schema=Context)
    for name in (
        "extract_slots",
        "store_memory",
        "reconfirm",
        "check_similarity",
        "classify_intent",
        "retrieve",
        "assemble_context",
        "generate_answer",
        "refine",
        "quality_check",
        "store_response",
    ):
        graph.add_node(name, getattr(nodes, name))
    graph.add_edge(START, "extract_slots")
    graph.add_edge("extract_slots", "store_memory")
    branches: dict[str, Any] = {
        "store_memory": (route_after_memory, ["reconfirm", "check_similarity"]),
        "check_similarity": (route_after_cache, ["store_response", "classify_intent"]),
        "classify_intent": (route_after_intent, ["generate_answer", "retrieve"]),
        "quality_check": (nodes.route_after_quality, ["retrieve", "store_response"]),
    }
    for source, (route, targets) in branches.items():
        graph.add_conditional_edges(source, on_loop(route), targets)
    graph.add_edge("reconfirm", "store_response")
    graph.add_edge("retrieve", "assemble_context")
    graph.add_edge("assemble_context", "generate_answer")
    graph.add_edge("generate_answer", "refine")
    graph.add_edge("refine", "quality_check")
    graph.add_edge("store_response", END)
    return graph


def mermaid() -> str:
    """The graph as a Mermaid diagram (committed as graph.mmd; a test keeps it current)."""
    return build_graph().compile().get_graph().draw_mermaid()


if __name__ == "__main__":
    print(mermaid(), end="")
