"""Where a message is cut into sentences and clauses (graphs/common/text.py), the one splitter
the legal, medical and safety readings share: Korean and English, emphatic endings, numbers
with dots, a full stop after 다 against the word 다, and the two clause cuts."""

from __future__ import annotations

import re

import pytest

from graphs.common.text import clause_spans, clauses, sentence_spans, sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Korean endings before a space end a sentence, as chats leave out the full stop
        ("열이 나요 기침도 해요", ["열이 나요", "기침도 해요"]),
        ("합의금 받았습니다 그런데 또 연락이 와요", ["합의금 받았습니다", "그런데 또 연락이 와요"]),
        # 까 before a space asks inside a sentence or is no ending; particles that end in 다
        ("회식 때 먹을까 봐 걱정돼요", ["회식 때 먹을까 봐 걱정돼요"]),
        ("혈압약 시작할까 고민이에요", ["혈압약 시작할까 고민이에요"]),
        ("아까 말했는데 7월6일이요", ["아까 말했는데 7월6일이요"]),
        ("일주일마다 이자 40만원씩 냈어요", ["일주일마다 이자 40만원씩 냈어요"]),
        ("어제보다 더 아파요", ["어제보다 더 아파요"]),
        ("열이 나요.기침도 해요", ["열이 나요.", "기침도 해요"]),
        # emphatic endings: the sentence ends after 요, not inside "다니까"
        ("돈을 받은 적이 없다니까요 진짜로", ["돈을 받은 적이 없다니까요", "진짜로"]),
        ("받은 적 없다니까 왜 자꾸 물어봐요", ["받은 적 없다니까 왜 자꾸 물어봐요"]),
        ("혈압 재보니까 150에 95예요", ["혈압 재보니까 150에 95예요"]),
        # numbers with dots are no sentence ends
        ("체온이 37.5도예요. 약은 1.5알 먹었어요", ["체온이 37.5도예요.", "약은 1.5알 먹었어요"]),
        ("3.5억 빌려줬어요", ["3.5억 빌려줬어요"]),
        ("2024.6.1에 빌려줬어요", ["2024.6.1에 빌려줬어요"]),
        # "다." and a 다 that ends a word end a sentence; the word 다 ("all") does not
        ("돈을 다 갚았다. 그런데 또 빌렸어요", ["돈을 다 갚았다.", "그런데 또 빌렸어요"]),
        ("다 갚았다 그런데 또 빌렸어요", ["다 갚았다", "그런데 또 빌렸어요"]),
        ("이거 다 갚아야돼요", ["이거 다 갚아야돼요"]),
        ("둘 다 당뇨가 있어요", ["둘 다 당뇨가 있어요"]),
        # nouns that end in 요, dots typed between syllables, crying
        ("약은 필요 없어요", ["약은 필요 없어요"]),
        ("죽.고.싶.어", ["죽.고.싶.어"]),
        ("37.8이에요ㅠ 남편은 괜찮아요", ["37.8이에요ㅠ", "남편은 괜찮아요"]),
        # English, punctuation, line breaks
        ("I have a fever. No cough!", ["I have a fever.", "No cough!"]),
        ("Is it serious?? what should I do", ["Is it serious??", "what should I do"]),
        ("첫째 줄\n\n둘째 줄", ["첫째 줄", "둘째 줄"]),
        ("", []),
        ("  \n ", []),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize(
    "text",
    ["열이 나요 기침도 해요", "돈을 다 갚았다. 그런데 또 빌렸어요", "a. b? c!\n d", "3.5억이요"],
)
def test_sentence_spans_stand_where_the_sentences_are(text: str) -> None:
    spans = sentence_spans(text)
    assert [text[s.start : s.end].strip() for s in spans] == sentences(text)
    assert [s.sentence for s in spans] == list(range(len(spans)))
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:], strict=False))


@pytest.mark.parametrize(
    ("text", "connective", "turn"),
    [
        # every Korean connective cuts for the medical reading; only a turn cuts for safety
        (
            "열이 나고 기침은 없는데 두통이 있어요",
            ["열이 나고", "기침은 없는데", "두통이 있어요"],
            ["열이 나고 기침은 없는데", "두통이 있어요"],
        ),
        (
            "남편이 칼 들고 죽인다고 해요",
            ["남편이 칼 들고", "죽인다고", "해요"],
            ["남편이 칼 들고 죽인다고 해요"],
        ),
        (
            "예전에 맞은 적 있는데 지금 또 때려요",
            ["예전에 맞은 적 있는데", "지금 또 때려요"],
            ["예전에 맞은 적 있는데", "지금 또 때려요"],
        ),
        # a turn glued on ("그랬는데지금은"), but not before the number it measured
        ("아팠는데지금은 괜찮아요", ["아팠는데지금은 괜찮아요"], ["아팠는데", "지금은 괜찮아요"]),
        ("혈압 쟀는데 180이에요", ["혈압 쟀는데", "180이에요"], ["혈압 쟀는데 180이에요"]),
        # listed nouns stay one clause for the medical reading (one negation covers both)
        ("당뇨, 고혈압은 없어요", ["당뇨, 고혈압은 없어요"], ["당뇨,", "고혈압은 없어요"]),
        ("아프고, 숨이 차요", ["아프고,", "숨이 차요"], ["아프고,", "숨이 차요"]),
        # "…에서 " is a place, not a connective
        ("집에서 넘어졌어요", ["집에서 넘어졌어요"], ["집에서 넘어졌어요"]),
        # English conjunctions
        (
            "I take metformin but I stopped aspirin",
            ["I take metformin but", "I stopped aspirin"],
            ["I take metformin", "but I stopped aspirin"],
        ),
        (
            "my calf is swollen and I am short of breath",
            ["my calf is swollen and", "I am short of breath"],
            ["my calf is swollen and I am short of breath"],
        ),
        # clauses never cross a sentence end
        ("다 갚았다 그런데 또 빌렸어요", ["다 갚았다", "그런데", "또 빌렸어요"], None),
    ],
)
def test_clauses(text: str, connective: list[str], turn: list[str] | None) -> None:
    assert clauses(text) == connective
    if turn is not None:
        assert clauses(text, at="turn") == turn


def test_clause_spans_number_their_sentences_and_take_a_callers_cues() -> None:
    text = "열이 나고 기침은 없어요. 두통은 심해요"
    spans = clause_spans(text)
    assert [(text[c.start : c.end].strip(), c.sentence) for c in spans] == [
        ("열이 나고", 0),
        ("기침은 없어요.", 0),
        ("두통은 심해요", 1),
    ]
    aside = "알약 대신 주사를 맞았어요"
    assert len(clause_spans(aside)) == 1  # no cut of its own
    more = clause_spans(aside, more=re.compile("대신"))
    assert [aside[c.start : c.end].strip() for c in more] == ["알약 대신", "주사를 맞았어요"]
    assert clauses("") == clauses("  \n ") == []
    (whole,) = clause_spans("")  # a text without clauses is one
    assert (whole.start, whole.end) == (0, 0)
