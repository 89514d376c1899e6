"""Questions the person asks back, as the lawyer receives them: one item per question, each a
sentence that reads alone; the facts told around them, and answers said with a rising tone,
are no questions (legal_set19: three questions and their message were one item in both modes,
"I think so?" and "i did answer??" were listed, "유류분?" cut a question in half)."""

from __future__ import annotations

import pytest

from graphs.legal.asked import asked_sentences
from graphs.legal.rules_brain import RulesBrain
from tests.support import NOW
from tests.test_graph import Driver


async def asked(brain: RulesBrain, text: str) -> list[str]:
    return asked_sentences(await brain.read(text, sub_type="LOAN", asked=None, now=NOW))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a lead-in and a bare noun with a mark are said with the question after them
        (
            "궁금한게 있는데요 해고예고수당? 그런것도 받을수 있나요? 저는 1년 넘게 일했어요",
            ["궁금한게 있는데요 해고예고수당? 그런것도 받을수 있나요?"],
        ),
        # a question pointing back carries what it points at; the statement between is no
        # question
        (
            "Can I sue? I am from India and my korean is not good. "
            "Also what about the 25 Dec instalment? is that legal?",
            ["Can I sue?", "Also what about the 25 Dec instalment? is that legal?"],
        ),
        # a mark inside brackets ends nothing
        (
            "제 법적인 몫(유류분?)이 얼마나 되는지 궁금해요",
            ["제 법적인 몫(유류분?)이 얼마나 되는지 궁금해요"],
        ),
        (
            "임차권등기명령이 뭐예요? HUG는 2024년 10월 15일에 가입했어요. 이사 가도 되나요?",
            ["임차권등기명령이 뭐예요?", "이사 가도 되나요?"],
        ),
        # answers with a rising tone (near-misses): no question
        ("I think so? the agent did something at the community center", []),
        ("i did answer?? march 14 2026", []),
        # but a question opening with "I think" still asks
        ("I think he can sue me for this?", ["I think he can sue me for this?"]),
    ],
)
async def test_each_question_is_its_own_sentence(
    brain: RulesBrain, text: str, expected: list[str]
) -> None:
    assert await asked(brain, text) == expected


async def test_a_message_of_questions_and_facts_lists_each_question(driver: Driver) -> None:
    await driver.send("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요")
    await driver.send(
        "궁금한게 있어요. 이 사람 처벌도 받을 수 있나요? 저는 차용증은 없어요. "
        "변호사 비용은 얼마나 들어요?"
    )
    texts = [q["text"] for q in (await driver.values())["questions"]]
    assert "궁금한게 있어요. 이 사람 처벌도 받을 수 있나요?" in texts  # with its lead-in
    assert "변호사 비용은 얼마나 들어요?" in texts
    assert not any("차용증" in t for t in texts)
