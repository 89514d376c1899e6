"""What a message is when it is not an answer (knowledge/intents.yaml, graphs/common/intents.py)."""

from __future__ import annotations

import pytest

from graphs.common.intents import Intent, answer_question, read_intent

QUESTIONS = [
    ("이거 고소 가능해요?", "chances"),
    ("소송하면 이길 수 있어요?", "chances"),
    ("얼마나 걸려요?", "duration"),
    ("비용은 얼마예요?", "cost"),
    ("변호사 선임해야 하나요?", "lawyer"),
    ("시효가 있나요?", "limitation"),
    ("어디에 신고해요?", "venue"),
    ("뭐부터 해야 돼요?", "first_steps"),
    ("증거가 없어도 되나요?", "typical_evidence"),
    ("Can I sue him?", "chances"),
    ("Do I need a lawyer?", "lawyer"),
    ("is there a deadline?", "limitation"),
    ("what should I do first?", "first_steps"),
    ("How long does it take?", "duration"),
    ("Where do I file this?", "venue"),
]
NOT_QUESTIONS = [
    "한 천만원?",
    "작년 3월이었나?",
    "2주 전쯤?",
    "300만원이요?",
    "있다니까요",
    "둘이라고 했잖아요",
    "당연한 거 아니에요?",
    "네 못받았어요",
    "형편 될 때요",
    "I moved out?",
    "no, I don't have anything",
    "ㅠㅠ 너무 억울해요",
]


@pytest.mark.parametrize(("text", "topic"), QUESTIONS)
def test_questions_back_are_recognised_with_their_topic(text, topic, knowledge) -> None:
    assert read_intent(text, knowledge) == Intent("question", topic)


@pytest.mark.parametrize("text", NOT_QUESTIONS)
def test_unsure_and_emphatic_answers_are_not_questions(text, knowledge) -> None:
    assert read_intent(text, knowledge).kind == "none"


@pytest.mark.parametrize(
    "text",
    [
        "제 정보 다 삭제해 주세요",
        "기록 지워 주세요",
        "개인정보 삭제해 주세요",
        "delete my data",
        "please erase my information",
        "forget everything about me",
    ],
)
def test_requests_to_delete_are_recognised(text, knowledge) -> None:
    assert read_intent(text, knowledge).kind == "forget"


@pytest.mark.parametrize(
    "text",
    [
        "문자를 삭제했어요",
        "he deleted the messages",
        "게시글을 지워 달라고 했는데 안 지워요",
        "카톡 대화를 다 지웠대요",
        "the post was removed",
    ],
)
def test_deleting_as_part_of_the_story_is_not_a_request(text, knowledge) -> None:
    assert read_intent(text, knowledge).kind != "forget"


@pytest.mark.parametrize(
    "text",
    [
        "머리가 아픈데 무슨 약 먹어요?",
        "혈압약 부작용이 뭐예요?",
        "what should I take for a fever?",
        "열이 나는데 병원에 가야 할까요?",
        "두통이 너무 심해요",
        "does this medicine have side effects?",
    ],
)
def test_health_questions_are_out_of_scope(text, knowledge) -> None:
    assert read_intent(text, knowledge) == Intent("out_of_scope", "medical")


@pytest.mark.parametrize(
    "text",
    [
        "의료사고로 다쳤어요",
        "병원비 300만원",
        "진단서 있어요",
        "폭행당해서 머리가 아파요",
        "교통사고 치료비를 못 받았어요",
        "I was injured and the medical bills are high",
    ],
)
def test_legal_matters_with_medical_words_are_not_out_of_scope(text, knowledge) -> None:
    assert read_intent(text, knowledge).kind != "out_of_scope"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("ㅋㅋㅋ", "small_talk"),
        ("너 AI야?", "small_talk"),
        ("are you a bot?", "small_talk"),
        ("고마워요", "thanks"),
        ("thanks!", "thanks"),
        ("감사합니다", "thanks"),
        ("Buy cheap followers at http://x.example", "spam"),
        ("www.casino.example 클릭", "spam"),
    ],
)
def test_small_talk_thanks_and_spam(text, kind, knowledge) -> None:
    assert read_intent(text, knowledge).kind == kind


@pytest.mark.parametrize("lang", ["ko", "en"])
@pytest.mark.parametrize("sub_type", ["LOAN", "DRIVER_LICENSE"])
def test_k3_topics_are_answered_and_others_are_left_for_the_lawyer(sub_type, lang, knowledge):
    info = knowledge.k3.info[sub_type]
    limitation = answer_question(knowledge, sub_type, Intent("question", "limitation"), lang)
    assert limitation == info.limitation.get(lang)
    first = answer_question(knowledge, sub_type, Intent("question", "first_steps"), lang)
    assert first and info.first_steps[0].get(lang) in first
    for topic in ("chances", "cost", "duration", "lawyer", None):
        assert answer_question(knowledge, sub_type, Intent("question", topic), lang) is None
    assert answer_question(knowledge, None, Intent("question", "venue"), lang) is None
