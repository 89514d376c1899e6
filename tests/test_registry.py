"""The graph registry: both graphs, each with its buttons, and a press routed by them."""

from __future__ import annotations

from graphs.medical import nodes as medical_nodes
from graphs.medical import records as medical_records
from graphs.registry import GRAPHS, LEGAL, MEDICAL


def test_the_registry_holds_both_graphs_and_each_builds() -> None:
    assert set(GRAPHS) == {"legal", "medical"}
    for spec in GRAPHS.values():
        assert spec.build().nodes  # a graph with its nodes, not yet compiled


def test_each_graph_claims_its_own_buttons_and_no_other() -> None:
    removal = medical_records.removable(
        {
            "items": [
                {
                    "key": "medications:metformin",
                    "name": "metformin",
                    "name_ko": "메트포르민",
                    "slot": "medications",
                    "value": "메트포르민",
                    "details": [],
                    "said": "메트포르민",
                }
            ]
        },
        "ko",
    )[0]["data"]
    assert removal == "m:del:medications:metformin"
    assert MEDICAL.button_action(removal) == "remove_item"
    assert MEDICAL.button_action(medical_nodes.YES) == "answer"
    assert MEDICAL.button_action(medical_nodes.NO) == "answer"
    assert LEGAL.button_action("a:deposit_amount:unknown") == "answer"
    assert LEGAL.button_action("a:changes:confirm") == "answer"
    for data in (removal, medical_nodes.YES):
        assert LEGAL.button_action(data) is None
    assert MEDICAL.button_action("a:evidence:yes") is None
    for steering in ("cmd:continue", "lang:ko", "domain:medical"):  # the engine's own
        assert all(spec.button_action(steering) is None for spec in GRAPHS.values())
