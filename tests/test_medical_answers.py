"""Answers that fit the question and the person, through the real engine: an interaction the
question touches leads the answer with its source; an entry never reaches a person it does not
fit; a description reaches its topic; a rejected answer is never given twice."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.engine import Engine, Inbound
from knowledge.medical_corpus import load_medical_corpus
from tests.support import NOW

CHAT = 5151


async def _play(engine: Engine, messages: list[str], *, later: int = 0) -> tuple[str, dict]:
    """Every message in one medical chat (`later`: minutes on, in a chat already started); the
    last reply's answer text and the thread state."""
    if not later:
        start = Inbound(
            chat_id=CHAT, kind="command", command="start", args=("medical",), user_id=5, at=NOW
        )
        await engine.handle(start)
    reply = None
    for minute, text in enumerate(messages):
        at = NOW + timedelta(minutes=later + minute + 1)
        reply = await engine.handle(Inbound(chat_id=CHAT, kind="text", text=text, user_id=5, at=at))
    assert reply is not None
    answers = [m["text"] for m in reply.messages if "출처:" in m["text"] or "Sources:" in m["text"]]
    _, values = await engine.medical.values_of(CHAT)
    return (answers[-1] if answers else ""), values


def _entries(values: dict) -> list[str]:
    return [pid.removeprefix("med:") for pid in values.get("last_entries") or []]


# --- interactions lead the answer ------------------------------------------------------------

LEADS_WITH_WARNING = [
    pytest.param(
        ["와파린 먹고 있어요", "이부프로펜 먹어도 돼요?"],
        "소염진통제를 피하세요",
        id="ibuprofen-on-warfarin-ko",
    ),
    pytest.param(
        ["I take apixaban for my heart.", "Can I take naproxen for my back?"],
        "avoid anti-inflammatory painkillers",
        id="naproxen-on-a-doac-en",
    ),
    pytest.param(
        ["I have kidney disease and take lisinopril. Can I take ibuprofen?"],
        "If you have kidney disease, avoid",
        id="ibuprofen-with-kidney-disease-en",
    ),
    pytest.param(
        ["아마릴 먹는데 막걸리 한잔 해도 되나요?"],
        "저혈당",
        id="makgeolli-on-glimepiride-ko",
    ),
    pytest.param(
        ["I'm on amlodipine. Is grapefruit ok?"],
        "grapefruit",
        id="grapefruit-on-amlodipine-en",
    ),
    pytest.param(
        ["심바스타틴 먹는데 자몽 주스 마셔도 돼요?"],
        "심바스타틴을 드시는 분은 자몽",
        id="grapefruit-on-simvastatin-ko",
    ),
    pytest.param(
        ["임신 24주예요", "두통이 심한데 이부프로펜 먹어도 돼요?"],
        "임신 중에는",
        id="ibuprofen-in-pregnancy-ko",
    ),
]


@pytest.mark.parametrize(("messages", "warning"), LEADS_WITH_WARNING)
async def test_an_interaction_leads_the_answer_with_its_source(
    engine: Engine, messages: list[str], warning: str
) -> None:
    answer, _ = await _play(engine, messages)
    first = answer.split("\n\n")[0]
    assert first.startswith("⚠️") and warning in first, answer
    assert first.rstrip().endswith(")")  # "(NHS)", "(FDA)": the body it follows
    assert "출처:" in answer or "Sources:" in answer


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param(["이부프로펜 먹어도 돼요?"], id="nothing-held"),
        pytest.param(["메트포르민 먹어요", "이부프로펜 먹어도 돼요?"], id="nothing-paired"),
        pytest.param(["저는 45세 남자예요", "Can pregnant women take ibuprofen?"], id="a-man"),
    ],
)
async def test_no_warning_when_no_rule_pairs_the_question_with_the_person(
    engine: Engine, messages: list[str]
) -> None:
    answer, _ = await _play(engine, messages)
    assert "⚠️" not in answer


# --- entries fit the person ------------------------------------------------------------------

PREGNANCY = {e.id for e in load_medical_corpus().entries if e.applies_to.pregnancy is True}
WEIGHT_LOSS = {"lifestyle-weight-management", "test-bmi-and-waist"}


@pytest.mark.parametrize(
    ("messages", "never"),
    [
        pytest.param(
            ["저는 45세 남자예요", "감기약이랑 진통제 먹어도 되나요? 임신 중 약도 궁금해요"],
            PREGNANCY,
            id="a-man-asking-about-pregnancy",
        ),
        pytest.param(
            ["I'm a 50 year old woman", "Which painkillers are safe to take?"],
            PREGNANCY,
            id="a-woman-not-said-pregnant",
        ),
        pytest.param(
            ["우리 애가 5살이에요", "애 몸무게 18키로"], WEIGHT_LOSS, id="a-childs-weight"
        ),
        pytest.param(
            ["5살 아이가 열이 나요. 어떻게 해야 하나요?"],
            {"child-febrile-seizure"},
            id="a-feverish-5-year-old",
        ),
    ],
)
async def test_an_entry_never_reaches_someone_it_does_not_fit(
    engine: Engine, messages: list[str], never: set[str]
) -> None:
    _, values = await _play(engine, messages)
    served = _entries(values)
    assert served, "the question was answered"
    assert not set(served) & never, served


# Texts written for adults (drinking, early pregnancy, adult medicines), whatever their
# applies_to says, and every entry whose applies_to is for adults only.
ADULT_VOMITING = {"symptom-nausea-vomiting", "symptom-diarrhoea", "gerd-overview"}
FOR_ADULTS = ADULT_VOMITING | {
    e.id for e in load_medical_corpus().entries if not {"infant", "child"} & set(e.applies_to.ages)
}


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param(["3주 된 아기가 자꾸 토해요"], id="a-3-week-old-ko"),
        pytest.param(["신생아가 토해요"], id="a-newborn-of-unknown-age-ko"),
        pytest.param(["My 3 week old baby keeps vomiting"], id="a-3-week-old-en"),
        pytest.param(
            ["저는 34세 여자예요", "생후 3주 된 아기가 먹고 나면 자꾸 토해요"],
            id="a-mother-asking-for-her-3-week-old",
        ),
    ],
)
async def test_a_babys_vomiting_never_gets_an_entry_for_adults(
    engine: Engine, messages: list[str]
) -> None:
    _, values = await _play(engine, messages)
    served = _entries(values)
    assert served, "the question was answered"
    assert not set(served) & FOR_ADULTS, served


async def test_a_pregnant_woman_asking_about_medicines_gets_the_pregnancy_entry(
    engine: Engine,
) -> None:
    _, values = await _play(engine, ["임신 중인데 열이 나면 무슨 약을 먹어야 하나요?"])
    assert set(_entries(values)) & PREGNANCY


async def test_a_childs_weight_is_read_for_dosing(engine: Engine) -> None:
    _, values = await _play(engine, ["우리 애가 열이 나요", "애 몸무게 18키로"])
    assert _entries(values)[0] == "child-medicines-by-weight"


# --- descriptions reach their topic ------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "entry"),
    [
        pytest.param(
            ["72세이고 글리메피리드 먹어요", "점심때쯤 손이 떨리고 식은땀이 나요"],
            "emergency-hypoglycaemia",
            id="tremor-and-cold-sweat-on-a-sulfonylurea",
        ),
        pytest.param(
            ["I use insulin", "I feel shaky, sweaty and really hungry"],
            "emergency-hypoglycaemia",
            id="shaky-sweaty-hungry-on-insulin",
        ),
        pytest.param(
            ["아버지가 80세이신데 어제부터 갑자기 엉뚱한 소리를 하세요"],
            "delirium-sudden-confusion",
            id="sudden-confusion-in-an-older-person",
        ),
        pytest.param(
            ["I'm 64. My chest gets tight when I climb stairs, it goes away when I rest"],
            "angina-chest-tightness-on-exertion",
            id="chest-tightness-on-stairs",
        ),
        pytest.param(
            ["When should I call 119?"], "emergency-when-to-call-119", id="when-to-call-119"
        ),
        pytest.param(
            ["어떤 경우에 119를 불러야 하나요?"],
            "emergency-when-to-call-119",
            id="when-to-call-119-ko",
        ),
    ],
)
async def test_a_description_reaches_its_topic(
    engine: Engine, messages: list[str], entry: str
) -> None:
    _, values = await _play(engine, messages)
    assert _entries(values)[:1] == [entry], _entries(values)


async def test_tremor_without_a_sulfonylurea_or_insulin_is_not_read_as_a_hypo(
    engine: Engine,
) -> None:
    _, values = await _play(engine, ["손이 떨리고 식은땀이 나요"])
    assert "emergency-hypoglycaemia" not in _entries(values)[:1]


# --- a rejected answer is never given twice ----------------------------------------------------


@pytest.mark.parametrize(
    ("question", "rejection", "topic"),
    [
        pytest.param(
            "체중 관리는 어떻게 하나요?",
            "다이어트 얘기가 아닌데",
            "weight management",
            id="not-about-diet-ko",
        ),
        pytest.param("요즘 잠이 안 와요", "그 얘기가 아닌데", None, id="not-that-ko"),
        pytest.param(
            "I get breathless and cough a lot", "that's not what I asked", None, id="not-asked-en"
        ),
        pytest.param(
            "I smoke and I am short of breath with a cough every morning",
            "I don't have COPD",
            "copd",
            id="i-do-not-have-it-en",
        ),
    ],
)
async def test_a_rejected_answer_is_not_given_again(
    engine: Engine, question: str, rejection: str, topic: str | None
) -> None:
    _, first = await _play(engine, [question])
    before = _entries(first)
    assert before, "the question was answered"
    if topic is not None:
        corpus = load_medical_corpus()
        assert any(topic in corpus.by_id(e).concepts for e in before), before
    answer, second = await _play(engine, [rejection], later=10)
    after = _entries(second)
    assert answer and after, "the question was answered again"
    assert not set(after) & set(before), (before, after)
    if topic is not None:
        assert all(topic not in load_medical_corpus().by_id(e).concepts for e in after), after


# --- what is asked, and what is not ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        (
            "오늘 아침엔 153에 95요. 잠 못자면 머리가 묵직해요. 근데 혈압약 한알 더 먹어도 돼요?",
            "근데 혈압약 한알 더 먹어도 돼요?",
        ),
        (
            "Trying to quit smoking, I sleep badly. Is nicotine gum ok with high blood pressure?",
            "Is nicotine gum ok with high blood pressure?",
        ),
        # near-misses: the asking sentence names nothing, or the whole message asks
        ("애가 열이 나요. 어떡해요?", "애가 열이 나요. 어떡해요?"),
        ("메트포르민 먹는데 운동해도 되나요?", "메트포르민 먹는데 운동해도 되나요?"),
        ("잠 못자면 머리가 아파요.", "잠 못자면 머리가 아파요."),
    ],
)
def test_the_sentences_that_ask_are_what_is_answered(text: str, asked: str) -> None:
    from graphs.medical.about import asked_part

    assert asked_part(text) == asked


async def test_a_question_beside_other_news_is_answered_on_what_it_asks(engine: Engine) -> None:
    _, values = await _play(
        engine,
        ["오늘 아침엔 153에 95요. 잠 못자면 머리가 묵직해요. 근데 혈압약 한알 더 먹어도 돼요?"],
    )
    assert _entries(values)  # answered, and on the pill, not on sleep
    assert not any("sleep" in e or "insomnia" in e for e in _entries(values))


async def test_a_message_that_asks_nothing_gets_no_unsure_passage(engine: Engine) -> None:
    start = Inbound(
        chat_id=CHAT, kind="command", command="start", args=("medical",), user_id=5, at=NOW
    )
    await engine.handle(start)
    said = "작년에 사촌형이 놀이터에서 떨어져서 머리 꿰매고 응급실 갔었거든요 그때 생각나서 더 걱정돼요"
    at = NOW + timedelta(minutes=1)
    reply = await engine.handle(Inbound(chat_id=CHAT, kind="text", text=said, user_id=5, at=at))
    text = " ".join(m["text"] for m in reply.messages)
    assert "출처:" not in text and "치매" not in text and "확실하지 않은" not in text


@pytest.mark.parametrize(
    ("rejection", "denied"),
    [
        ("수면무호흡 아니고요;; 잠이 안 오는 거요", False),
        ("sleep apnoea? no, not that. I just can't fall asleep", False),
        # near-miss: a denial of having it is kept
        ("수면무호흡은 없어요 검사했어요", True),
    ],
)
async def test_setting_the_answers_topic_aside_is_no_denial(
    engine: Engine, rejection: str, denied: bool
) -> None:
    _, first = await _play(engine, ["코를 심하게 골고 자다가 숨이 멈춘대요"])
    assert any("apnoea" in e or "apnea" in e for e in _entries(first)), _entries(first)
    _, second = await _play(engine, [rejection], later=10)
    items = (second.get("profile") or {}).get("items") or []
    said_not = {i["name"] for i in items if i.get("status") == "denied" or i.get("negated")}
    assert ("sleep apnea" in said_not) is denied, items
