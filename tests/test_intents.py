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
    ("몇 달 걸려요?", "duration"),
    ("이미 늦었나요?", "limitation"),
    ("주의할 점이 있나요?", "notes"),
    ("Is there anything I should know?", "notes"),
    ("He still hasn't paid. Can I sue him?", "chances"),
    ("감사합니다. 그런데 비용은 얼마예요?", "cost"),
    # the plain "-나" ending, typed without a mark (legal_set13 R4)
    ("작년에온거 차용증없어도되나", None),
]
NOT_QUESTIONS = [
    "한 천만원?",
    "작년 3월이었나?",
    "작년 3월이었나",
    "증거는 하나",
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
    "작년 3월이었나요?",
    "몇 년 전이었지?",
    "언제였더라?",
    "얼마 전에 빌려줬어요",
    "어떻게 된 거냐면 친구가 돈을 빌려 갔어요",
    "아까 말했잖아요?",
    "김철수?",
    "about 3 million?",
    "last March?",
    "I told you, two!",
    "ㅠㅠ",
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
        "지워달라니까요 제 정보 전부요",  # the verb first, emphatic (a tester's second try)
        "delete everything about me please",
        "상담 내용 전부 지워 주세요",
        "Can you delete my data?",
        "탈퇴",
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
        "상대방이 제 정보를 지워 달라고 했어요",
        "회사가 제 개인정보를 삭제해 주지 않아요",
        "통화 기록을 삭제했어요",
        "기록이 다 지워졌어요",
        "She told me to delete my messages",
        # the outcome wanted of a shop that leaked data, not of this service
        "뭐가 유출됐는지 알고 제 정보 지워줬으면 좋겠어요",
        "쇼핑몰이 제 개인정보 삭제해 줬으면 해요",
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
        "진통제 먹어도 돼요?",
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
        "수술 후 부작용이 생겼는데 병원이 책임을 안 져요",
        "약사가 약을 잘못 줘서 부작용이 생겼어요",
        "두통약 먹을 정도로 스트레스받았는데 월급을 안 줘요",
        "날씨가 추운 날 그가 저를 때렸어요",
        "The city ordered my restaurant closed for 15 days after a health inspection",
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
        ("하하하", "small_talk"),
        ("hahaha", "small_talk"),
        ("ㄳ", "thanks"),
        ("오늘 날씨 어때요?", "out_of_scope"),
        ("맛집 추천해 주세요", "out_of_scope"),
        ("what's the weather like?", "out_of_scope"),
    ],
)
def test_small_talk_thanks_and_spam(text, kind, knowledge) -> None:
    assert read_intent(text, knowledge).kind == kind


def test_other_everyday_topics_are_out_of_scope_other(knowledge) -> None:
    assert read_intent("오늘 날씨 어때요?", knowledge) == Intent("out_of_scope", "other")


@pytest.mark.parametrize("lang", ["ko", "en"])
@pytest.mark.parametrize("sub_type", ["LOAN", "DRIVER_LICENSE"])
def test_k3_topics_are_answered_and_others_are_left_for_the_lawyer(sub_type, lang, knowledge):
    info = knowledge.k3.info[sub_type]

    def answer(topic: str | None, code: str | None = sub_type) -> str | None:
        return answer_question(knowledge, code, Intent("question", topic), lang)

    assert answer("limitation") == info.limitation.get(lang)
    assert answer("venue") == info.venue.get(lang)
    for topic in ("first_steps", "typical_evidence", "notes"):
        items = getattr(info, topic)
        text = answer(topic)
        assert text and items[0].get(lang) in text and len(text) < 600, topic
    for topic in ("chances", "cost", "duration", "lawyer", None):
        assert answer(topic) is None, topic
    assert answer("venue", None) is None and answer("venue", "") is None
    assert answer_question(knowledge, sub_type, Intent("none"), lang) is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # a worry whether is a question for the lawyer (legal_set19 A3 had it nowhere)
        ("어머니가 처벌받을 수도 있는 건지 걱정됩니다", "question"),
        ("I am worried whether my mother will be punished", "question"),
        # a worry alone is a feeling, not a question
        ("보복할까봐 걱정돼요", "none"),
        ("걱정돼요", "none"),
    ],
)
def test_a_worry_whether_asks_and_a_worry_alone_does_not(text, kind, knowledge) -> None:
    assert read_intent(text, knowledge).kind == kind
