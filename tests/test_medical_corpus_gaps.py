"""Questions testers asked that once got an unrelated passage: each reaches the entry written
for it, through the real engine, typed as people type; and an entry written for some people
(children, new mothers, warfarin) is not served to someone it does not fit."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.engine import Engine, Inbound
from graphs.medical.fit import Person, asked_of
from graphs.medical.leads import led_entries
from tests.support import NOW

CHAT = 6262


async def _play(engine: Engine, messages: list[str]) -> tuple[str, list[str]]:
    """Every message in one medical chat; the last answer's text and the entries it was built
    from."""
    start = Inbound(
        chat_id=CHAT, kind="command", command="start", args=("medical",), user_id=6, at=NOW
    )
    await engine.handle(start)
    reply = None
    for minute, text in enumerate(messages):
        at = NOW + timedelta(minutes=minute + 1)
        reply = await engine.handle(Inbound(chat_id=CHAT, kind="text", text=text, user_id=6, at=at))
    assert reply is not None
    answers = [m["text"] for m in reply.messages if "출처:" in m["text"] or "Sources:" in m["text"]]
    _, values = await engine.medical.values_of(CHAT)
    served = [pid.removeprefix("med:") for pid in values.get("last_entries") or []]
    return (answers[-1] if answers else ""), served


def _case(entry: str, messages: list[str], name: str) -> object:
    return pytest.param(messages, entry, id=f"{entry}-{name}")


TOP_ANSWER = [
    _case("child-croup", ["3살 아들이 밤만 되면 컹컹 개짖는소리처럼 기침해요ㅠㅠ"], "ko"),
    _case("child-croup", ["my 2 year old has a barky cough like a seal, worse at night"], "en"),
    _case(
        "heat-exhaustion-self-care",
        ["공사장에서 일하다가 더위먹은거 같아요 어지럽고 토할거같음"],
        "ko",
    ),
    _case(
        "heat-exhaustion-self-care",
        ["Working outside all day in the heat, now dizzy and sweating loads"],
        "en",
    ),
    _case("tension-type-headache", ["야근만 하면 머리를 띠로 조이는것처럼 아파요"], "ko"),
    _case(
        "tension-type-headache",
        ["I get a tight band around my head after long days at the office"],
        "en",
    ),
    _case(
        "postnatal-depression-and-baby-blues", ["애 낳고 한달째 계속 눈물만 나고 우울해요"], "ko"
    ),
    _case(
        "postnatal-depression-and-baby-blues",
        ["since the baby was born 5 weeks ago i feel so low, is this postnatal depression?"],
        "en",
    ),
    _case("hives-after-food", ["새우 먹고 나서 온몸에 두드러기 올라왔어요 어떡해요"], "ko"),
    _case("hives-after-food", ["broke out in hives after dinner, think its the peanuts"], "en"),
    _case(
        "decongestants-blood-pressure-heart-kidneys",
        ["코가 꽉 막혔는데 수도에페드린 먹어도 되나요?"],
        "ko",
    ),
    _case(
        "decongestants-blood-pressure-heart-kidneys",
        ["which decongestant is best for a blocked nose"],
        "en",
    ),
    _case("combination-cold-remedies", ["판콜 먹고 타이레놀도 같이 먹어도됨?"], "ko"),
    _case("combination-cold-remedies", ["can I take theraflu and tylenol together"], "en"),
    _case(
        "nicotine-replacement-with-heart-disease",
        ["심장병 있는데 금연패치 붙여도 괜찮을까요"],
        "ko",
    ),
    _case(
        "nicotine-replacement-with-heart-disease",
        ["is nicotine gum safe if i have high blood pressure"],
        "en",
    ),
    _case(
        "over-the-counter-sleep-aids", ["약국에서 파는 수면유도제 아론정 매일 먹어도 되나요"], "ko"
    ),
    _case(
        "over-the-counter-sleep-aids",
        ["is it ok to take doxylamine every night to fall asleep"],
        "en",
    ),
    _case(
        "warfarin-supplements-and-herbal-products",
        ["와파린 먹는중인데 나물반찬 많이 먹어도 되요?"],
        "ko",
    ),
    _case(
        "warfarin-supplements-and-herbal-products",
        ["on coumadin, do i have to stop eating spinach and kale?"],
        "en",
    ),
    _case(
        "paracetamol-on-warfarin-or-kidney-disease",
        ["와파린 먹는데 머리아플때 무슨 진통제 먹어요?"],
        "ko",
    ),
    _case(
        "paracetamol-on-warfarin-or-kidney-disease",
        ["I have kidney disease, what painkiller can i take for my knee"],
        "en",
    ),
    _case(
        "blood-pressure-high-reading-extra-dose",
        ["혈압이 160 나왔는데 혈압약 한알 더 먹어도 되나요"],
        "ko",
    ),
    _case(
        "blood-pressure-high-reading-extra-dose",
        ["my bp is high this morning, should I take an extra amlodipine?"],
        "en",
    ),
    _case("child-head-bump", ["18개월 아기가 침대에서 떨어져서 머리 쿵 했어요ㅠ"], "ko"),
    _case(
        "child-head-bump", ["my son bumped his head on the table, big egg on his forehead"], "en"
    ),
    _case("infant-vomiting", ["생후 4주 아기가 먹을때마다 분수처럼 토해요"], "ko"),
    _case("infant-vomiting", ["my 3 week old baby has projectile vomiting after every feed"], "en"),
    _case(
        "hand-foot-and-mouth-disease",
        ["어린이집 다니는 딸이 입안에 물집이랑 손발에 발진이 있어요 수족구인가요"],
        "ko",
    ),
    _case(
        "hand-foot-and-mouth-disease",
        ["toddler has spots on his hands and feet and mouth ulcers, is it hand foot and mouth?"],
        "en",
    ),
    _case(
        "antidepressants-while-breastfeeding",
        ["모유수유중인데 우울증약 먹어도 되나요? 졸로푸트 처방받았어요"],
        "ko",
    ),
    _case(
        "antidepressants-while-breastfeeding",
        ["can i keep breastfeeding if my doctor starts me on sertraline"],
        "en",
    ),
    _case(
        "sleep-for-new-parents", ["신생아 밤중수유때문에 잠을 하나도 못자요 ㅠㅠ 너무 피곤"], "ko"
    ),
    _case(
        "sleep-for-new-parents",
        ["night feeds every 2 hours and i'm a total zombie, how do people get any sleep"],
        "en",
    ),
    _case(
        "regular-doses-after-a-hypo-or-emergency-visit",
        ["인슐린 맞는데 오늘 낮에 저혈당 와서 응급실 다녀왔어요 저녁 인슐린 맞아도 되나요"],
        "ko",
    ),
    _case(
        "regular-doses-after-a-hypo-or-emergency-visit",
        [
            "I'm on insulin and had a bad hypo this afternoon, should I still take my evening dose tonight?"
        ],
        "en",
    ),
    _case(
        "copd-flare-up-same-day-contact",
        ["COPD 있는데 요즘 흡입기를 평소보다 훨씬 자주 써요 가래도 초록색이고요"],
        "ko",
    ),
    _case(
        "copd-flare-up-same-day-contact",
        ["I have COPD and I'm using my reliever way more than usual, phlegm is green"],
        "en",
    ),
    _case(
        "home-blood-pressure-targets",
        ["집에서 재는 혈압은 몇까지가 정상이에요? 목표가 궁금해요"],
        "ko",
    ),
    _case("home-blood-pressure-targets", ["what should my home blood pressure target be?"], "en"),
]


@pytest.mark.parametrize(("messages", "entry"), TOP_ANSWER)
async def test_a_question_reaches_the_entry_written_for_it(
    engine: Engine, messages: list[str], entry: str
) -> None:
    _, served = await _play(engine, messages)
    assert served[:1] == [entry], served


NOT_FOR_THEM = [
    _case("child-croup", ["저는 70세예요", "기침이 밤에 심해요"], "older-adult-cough"),
    _case("child-croup", ["I'm 45 and have a barking cough at night"], "adult-cough"),
    _case(
        "postnatal-depression-and-baby-blues", ["저는 40세 남자예요", "요즘 계속 우울해요"], "a-man"
    ),
    _case("infant-vomiting", ["저는 35살이에요", "밥 먹고 자꾸 토해요"], "an-adult"),
    _case(
        "hand-foot-and-mouth-disease",
        ["저는 32살 직장인이에요", "손바닥에 빨간 발진이 생기고 열이 나요 왜그럴까요"],
        "an-adult",
    ),
    _case("warfarin-supplements-and-herbal-products", ["홍삼 먹어도 되나요?"], "not-on-warfarin"),
    _case(
        "over-the-counter-sleep-aids",
        ["6살 아이가 밤에 기침을 해서 잠을 못 자요 어떻게 해줘야 해요?"],
        "a-child",
    ),
    _case(
        "antidepressants-while-breastfeeding",
        ["저는 50세 남자예요", "우울증약 먹어도 되나요?"],
        "a-man",
    ),
    _case(
        "regular-doses-after-a-hypo-or-emergency-visit",
        ["어제 응급실 다녀왔는데 저녁에 비타민 먹어도 되나요?"],
        "no-insulin-or-blood-thinner",
    ),
]


@pytest.mark.parametrize(("messages", "entry"), NOT_FOR_THEM)
async def test_an_entry_is_not_served_to_someone_it_does_not_fit(
    engine: Engine, messages: list[str], entry: str
) -> None:
    _, served = await _play(engine, messages)
    assert served, "the question was answered"
    assert entry not in served, served


LEADS_WITH_WARNING = [
    pytest.param(
        ["고혈압약 먹는데 코막힘 약 먹어도 되나요? 수도에페드린이요"],
        "코막힘 성분",
        "decongestants-blood-pressure-heart-kidneys",
        id="decongestant-on-blood-pressure-pills-ko",
    ),
    pytest.param(
        ["I have heart failure.", "Is Sudafed ok for my stuffy nose?"],
        "decongestant such as pseudoephedrine",
        "decongestants-blood-pressure-heart-kidneys",
        id="sudafed-with-heart-failure-en",
    ),
    pytest.param(
        ["와파린 복용중이에요", "홍삼 선물받았는데 먹어도 돼요??"],
        "항응고 클리닉",
        "warfarin-supplements-and-herbal-products",
        id="red-ginseng-on-warfarin-ko",
    ),
    pytest.param(
        ["I'm on warfarin, can I start taking ginkgo and fish oil?"],
        "change your INR",
        "warfarin-supplements-and-herbal-products",
        id="ginkgo-and-fish-oil-on-warfarin-en",
    ),
]


@pytest.mark.parametrize(("messages", "warning", "entry"), LEADS_WITH_WARNING)
async def test_an_interaction_leads_and_its_entry_is_not_said_twice(
    engine: Engine, messages: list[str], warning: str, entry: str
) -> None:
    answer, served = await _play(engine, messages)
    first = answer.split("\n\n")[0]
    assert first.startswith("⚠️") and warning in first, answer
    assert entry not in served, served


@pytest.mark.parametrize(
    ("question", "tags", "entry"),
    [
        ("I've had a headache since Sunday", ["headache"], "heat-exhaustion-self-care"),
        ("my blood pressure is 170 and I have a headache", ["headache"], "tension-type-headache"),
        ("How much should my newborn sleep?", [], "sleep-for-new-parents"),
        (
            "Should I get another blood pressure check?",
            ["blood pressure"],
            "blood-pressure-high-reading-extra-dose",
        ),
        ("I have a blocked nose, what helps?", [], "decongestants-blood-pressure-heart-kidneys"),
        ("아이가 기침을 해요", ["cough"], "child-croup"),
    ],
)
def test_a_near_description_does_not_lead_to_the_new_entry(
    question: str, tags: list[str], entry: str
) -> None:
    asked = asked_of(question, tags)
    assert entry not in led_entries(question, asked, Person()), question
