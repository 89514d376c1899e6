"""The legal intake graph.

INIT → CASE_CLASSIFICATION (→ CONFIRM_CASE_TYPE)* → FACT_COLLECTION (→ RE_QUESTION)*
     → FACT_COLLECTION … → SUMMARY → COMPLETED

FACT_COLLECTION and RE_QUESTION ask, wait (interrupt) and, when the answer comes, validate it in
the same step: an answer and the next question are two steps.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graphs.common.context import Context
from graphs.common.loop import on_loop
from graphs.legal import nodes, routing
from graphs.legal.state import LegalState

NAME = "legal"


def build_graph() -> StateGraph:
    """The uncompiled graph; the caller compiles it with its own checkpointer."""
    graph = StateGraph(LegalState, context_schema=Context)
    graph.add_node("INIT", nodes.greet_user)
    graph.add_node("CASE_CLASSIFICATION", nodes.classify_case)
    graph.add_node("CONFIRM_CASE_TYPE", nodes.confirm_case_type)
    graph.add_node("FACT_COLLECTION", nodes.ask_next_fact)
    graph.add_node("RE_QUESTION", nodes.ask_again)
    graph.add_node("SUMMARY", nodes.write_summary)
    graph.add_node("COMPLETED", nodes.close_intake)

    graph.add_edge(START, "INIT")
    graph.add_conditional_edges("INIT", on_loop(routing.route_after_init))
    graph.add_conditional_edges("CASE_CLASSIFICATION", on_loop(routing.route_after_classification))
    graph.add_conditional_edges("CONFIRM_CASE_TYPE", on_loop(routing.route_after_confirmation))
    graph.add_conditional_edges("FACT_COLLECTION", on_loop(routing.route_after_collection))
    graph.add_conditional_edges("RE_QUESTION", on_loop(routing.route_after_re_question))
    graph.add_edge("SUMMARY", "COMPLETED")
    graph.add_edge("COMPLETED", END)
    return graph


def mermaid() -> str:
    """The graph as a Mermaid diagram (committed as graph.mmd; a test keeps it current)."""
    return build_graph().compile().get_graph().draw_mermaid()


if __name__ == "__main__":
    print(mermaid(), end="")
