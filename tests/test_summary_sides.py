"""The summary's first steps fit the person's side of the case: someone accused is not told
to gather evidence against the other party and file a complaint."""

from __future__ import annotations

from datetime import date

import pytest

from graphs.legal.summary import build_summary
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge


@pytest.mark.parametrize("sub_type", ["FRAUD", "ASSAULT", "DEFAMATION", "THEFT"])
def test_first_steps_follow_the_party_role(
    knowledge: Knowledge, kb: KnowledgeBase, sub_type: str
) -> None:
    info = knowledge.k3.info[sub_type]
    ct = knowledge.k1.sub_type(sub_type)[0].code

    def steps(role: str) -> list[str]:
        state = {"sub_type": sub_type, "case_type": ct, "facts": {"party_role": role}}
        summary = build_summary(kb, state, "ko", today=date(2026, 11, 24))
        return summary["structured"]["legal_info"]["first_steps"]

    assert steps("accused") == [t.ko for t in info.role_steps["accused"]]
    assert steps("victim") == [t.ko for t in info.first_steps]
    assert steps("accused") != steps("victim")
